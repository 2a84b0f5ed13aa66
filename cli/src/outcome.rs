//! What a subcommand ends with: the exit status's source.

/// Something that stops a subcommand: bad input, or a file that cannot be written.
#[derive(Debug)]
pub struct Failure(pub String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a subcommand that ran to its end found.
pub enum Outcome {
    /// Nothing to flag.
    Done,
    /// `diff` found a regression beyond the threshold.
    Regressed,
    /// `diff --strict` found an inconclusive interval (and no regression).
    Inconclusive,
}

/// A write to stdout: a reader that closed the pipe (`| head`) took what it wanted, so
/// that is no failure, and the subcommand's outcome (a regression) stands.
pub fn to_stdout(written: std::io::Result<()>) -> Result<(), Failure> {
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure(format!("writing to stdout failed: {e}")))
        }
        _ => Ok(()),
    }
}
