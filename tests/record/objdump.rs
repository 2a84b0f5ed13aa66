//! Reading `objdump -d` output, and building a probe in release to read, for the
//! tests that inspect the machine code of the record path (`disassembly.rs`,
//! `async_signal_safety.rs`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Instruction prefixes objdump prints before the mnemonic.
pub const PREFIXES: &[&str] = &[
    "lock", "rep", "repz", "repe", "repnz", "repne", "data16", "addr32", "notrack", "bnd",
    "xacquire", "xrelease", "cs", "ds", "es", "fs", "gs", "ss", "rex", "rex.w",
];

/// One decoded line of a function body.
#[derive(Debug)]
pub struct Insn {
    /// Its address, as objdump printed it (the file's, before relocation).
    pub addr: u64,
    /// The whole line as objdump printed it, for messages.
    pub line: String,
    /// Prefixes, lower case (`lock`, `rep`, ...).
    pub prefixes: Vec<String>,
    /// The mnemonic, lower case.
    pub mnemonic: String,
    /// The operand text, without objdump's `# ...` comment.
    pub operands: String,
}

impl Insn {
    pub fn parse(line: &str) -> Option<Insn> {
        // "   1f68d:\tlfence" / "   1f0f1:\tmov    %rax,(%r12,%r14,8)"
        let (addr, text) = line.split_once(":\t")?;
        let addr = u64::from_str_radix(addr.trim(), 16).ok()?;
        let text = text.split('#').next().unwrap_or("").trim();
        let mut words = text.split_whitespace().peekable();
        let mut prefixes = Vec::new();
        while let Some(w) = words.peek() {
            let lw = w.to_ascii_lowercase();
            if PREFIXES.contains(&lw.as_str()) {
                prefixes.push(lw);
                words.next();
            } else {
                break;
            }
        }
        let mnemonic = words.next().unwrap_or("").to_ascii_lowercase();
        let operands = words.collect::<Vec<_>>().join(" ");
        Some(Insn {
            addr,
            line: line.trim().to_owned(),
            prefixes,
            mnemonic,
            operands,
        })
    }

    /// Locked by a prefix, or implicitly (`xchg` with a memory operand).
    pub fn is_locked(&self) -> bool {
        self.prefixes.iter().any(|p| p == "lock")
            || (self.mnemonic.starts_with("xchg") && self.operands.contains('('))
    }

    /// The target of a direct `call`, as (address, name):
    /// `call   1e990 <std::thread::local::LocalKey<T>::try_with>`.
    pub fn direct_call(&self) -> Option<(u64, String)> {
        if !self.mnemonic.starts_with("call") || self.operands.starts_with('*') {
            return None;
        }
        let (addr, rest) = self.operands.split_once(" <")?;
        let name = rest.rsplit_once('>')?.0;
        // `<f+0x12>` is a call into the middle of a function: not a function entry.
        if name.contains('+') {
            return None;
        }
        Some((u64::from_str_radix(addr.trim(), 16).ok()?, name.to_owned()))
    }
}

/// One function of the disassembly.
#[derive(Debug)]
pub struct Function {
    /// Demangled name (without the hash, so generic instances share it).
    pub name: String,
    pub insns: Vec<Insn>,
}

/// Every function in the disassembly, by start address.
pub fn functions(disassembly: &str) -> BTreeMap<u64, Function> {
    let mut map = BTreeMap::new();
    let mut current = None;
    for line in disassembly.lines() {
        if line.trim().is_empty() {
            current = None;
        } else if let Some(label) = line.strip_suffix(">:") {
            // "000000000001f3f0 <asm_probe::probe_fast_pair>:"
            current = label.split_once(" <").and_then(|(addr, name)| {
                let addr = u64::from_str_radix(addr.trim(), 16).ok()?;
                let name = name.to_owned();
                map.insert(
                    addr,
                    Function {
                        name,
                        insns: Vec::new(),
                    },
                );
                Some(addr)
            });
        } else if let (Some(addr), Some(insn)) = (current, Insn::parse(line)) {
            map.get_mut(&addr)
                .expect("made at the label")
                .insns
                .push(insn);
        }
    }
    map
}

/// The one function called `name`.
pub fn by_name<'a>(functions: &'a BTreeMap<u64, Function>, name: &str) -> Option<&'a Function> {
    let mut found = functions.values().filter(|f| f.name == name);
    let f = found.next()?;
    assert!(found.next().is_none(), "more than one <{name}>");
    Some(f)
}

pub fn objdump() -> Option<String> {
    let bin = std::env::var("OBJDUMP").unwrap_or_else(|_| "objdump".to_owned());
    match Command::new(&bin).arg("--version").output() {
        Ok(out) if out.status.success() => Some(bin),
        _ => None,
    }
}

/// Builds the probe binary `probe` (the `latte-telemetry-probes` package, `tests/probes/`)
/// in release, into the target directory the test runs from; returns the binary.
///
/// `cargo test` releases its lock on the target directory before it runs the tests,
/// so this build does not wait on it. The probes are a package of their own, with the
/// library's default features as a program gets them: as examples of the library they
/// would compile its dev-dependencies in release too (63 s from a fresh clone, against
/// 32 s so).
pub fn build_probe(probe: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO"))
        .current_dir(root)
        .args([
            "build",
            "--release",
            "--package",
            "latte-telemetry-probes",
            "--bin",
            probe,
            "--message-format=json-render-diagnostics",
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "cargo build --bin {probe}: {}",
        out.status
    );
    println!(
        "built {probe} (release) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // The executable as cargo names it: the target directory may be anywhere
    // (`CARGO_TARGET_DIR`, a workspace's `target/`).
    let exe = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == probe)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo named no executable for {probe}"));
    assert!(exe.is_file(), "{} missing after the build", exe.display());
    exe
}

pub fn disassemble(objdump: &str, exe: &Path) -> String {
    let out = Command::new(objdump)
        .args(["-d", "--no-show-raw-insn", "-C"])
        .arg(exe)
        .output()
        .expect("run objdump");
    assert!(
        out.status.success(),
        "objdump failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("objdump prints UTF-8")
}

/// Whether the test may skip for lack of `objdump`: never in CI.
pub fn objdump_or_skip(test: &str) -> Option<String> {
    let found = objdump();
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "objdump is required in CI (apt-get install -y binutils)"
        );
        println!("SKIPPED {test}: objdump not found (install binutils, or set OBJDUMP)");
    }
    found
}
