//! Any OS but Linux and Windows (macOS lets no thread set its own affinity): asking
//! for a placement is an error. The CPU time comes from `posix.rs` on Unix and reads 0
//! elsewhere.

use std::io;

pub(super) fn pin(_: &[usize]) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "pinning the drain thread needs Linux or Windows",
    ))
}

/// The lowest priority there is: as [`lower_priority`] at 19.
pub(in crate::agent) fn idle_priority() -> io::Result<()> {
    lower_priority(19)
}

/// Nothing to ask for here: the drain keeps the OS's slice.
pub(in crate::agent) fn short_slice() -> io::Result<()> {
    Ok(())
}

pub(in crate::agent) fn lower_priority(_: i32) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "lowering the drain thread's priority needs Linux or Windows",
    ))
}

#[cfg(not(unix))]
pub(super) fn thread_cpu_ns() -> u64 {
    0
}

#[cfg(unix)]
pub(super) use super::posix::thread_cpu_ns;
