//! The release build of the record path, disassembled: no `lock`-prefixed instruction,
//! no `mfence` (nor an implicitly locked `xchg` with memory), each mode reads the timer
//! with exactly the instructions it promises (Fast: `rdtsc`; Mid: `rdtscp`; Hard:
//! `lfence; rdtscp`), and the whole record path is inlined at the call site.
//!
//! The test builds `examples/asm_probe.rs` with `cargo build --release` into
//! `target/asm-probe` (its own target directory, so it never waits on the lock of the
//! build running this test), disassembles it with `objdump -d --no-show-raw-insn -C`
//! and checks each `asm_probe::probe_*` function: one record path, inlined into it.
//!
//! What is checked: each probe function's own body, and that it calls no function of its
//! crate directly except the cold paths in [`COLD`]. Until the Stop was inlined whole,
//! its ring store sat in one out-of-line `LocalKey::try_with` shared by every Stop, with
//! the mode and the stamp passed through memory (docs/performance.md); such a callee
//! now fails the test. What is not checked: the out-of-line cold functions the hot path
//! may branch to (first use of a thread or id, `store_slow` and the other misuse paths,
//! thread teardown, `latte::clock::read_other` for a non-hardware clock, panics). Those
//! may take locks; they are reached through the GOT or named in [`COLD`], and are not
//! followed.
//!
//! Skips itself (with a message) off x86_64 and when `objdump` is missing — unless the
//! `CI` environment variable is set, where a missing `objdump` fails the test. Set
//! `OBJDUMP` to use another binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Callees that are cold paths by design, allowed as direct calls from a probe
/// (prefixes of demangled names). Today they are all called through the GOT; the list
/// keeps it so if the linker turns those calls into direct ones.
const COLD: &[&str] = &[
    "latte::clock::read_other",
    "latte::clock::select",
    "latte::record::id::Id::resolve",
    "latte::record::local::torn_down",
    "latte::record::local::Local::start_slow",
    "latte::record::local::Local::stop_slow",
    "latte::record::local::Local::stop_unordered_slow",
    "latte::record::local::Local::pulse_slow",
    "latte::record::local::Local::store_slow",
    "latte::record::local::Local::clock_anomaly",
    "latte::registry::",
    "core::panicking::",
    "core::option::expect_failed",
    "core::result::unwrap_failed",
    "std::sys::thread_local::",
    "std::thread::local::panic_access_error",
];

/// One probe: its name and its timer instructions, in order.
struct Probe {
    name: &'static str,
    timer: &'static [&'static str],
}

const PROBES: &[Probe] = &[
    Probe {
        name: "probe_fast_pair",
        timer: &["rdtsc", "rdtsc"],
    },
    Probe {
        name: "probe_mid_pair",
        timer: &["rdtscp", "rdtscp"],
    },
    Probe {
        name: "probe_hard_pair",
        timer: &["lfence", "rdtscp", "lfence", "rdtscp"],
    },
    Probe {
        name: "probe_pulse",
        timer: &["rdtsc"],
    },
    Probe {
        name: "probe_scope",
        timer: &["rdtsc", "rdtsc"],
    },
];

/// Instruction prefixes objdump prints before the mnemonic.
const PREFIXES: &[&str] = &[
    "lock", "rep", "repz", "repe", "repnz", "repne", "data16", "addr32", "notrack", "bnd",
    "xacquire", "xrelease", "cs", "ds", "es", "fs", "gs", "ss", "rex", "rex.w",
];

/// One decoded line of a function body.
#[derive(Debug)]
struct Insn {
    /// The whole line as objdump printed it, for messages.
    line: String,
    /// Prefixes, lower case (`lock`, `rep`, ...).
    prefixes: Vec<String>,
    /// The mnemonic, lower case.
    mnemonic: String,
    /// The operand text, without objdump's `# ...` comment.
    operands: String,
}

impl Insn {
    fn parse(line: &str) -> Option<Insn> {
        // "   1f68d:\tlfence" / "   1f0f1:\tmov    %rax,(%r12,%r14,8)"
        let (addr, text) = line.split_once(":\t")?;
        if !addr.trim().chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
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
            line: line.trim().to_owned(),
            prefixes,
            mnemonic,
            operands,
        })
    }

    /// Locked by a prefix, or implicitly (`xchg` with a memory operand).
    fn is_locked(&self) -> bool {
        self.prefixes.iter().any(|p| p == "lock")
            || (self.mnemonic.starts_with("xchg") && self.operands.contains('('))
    }

    /// The target of a direct `call`, as (address, name):
    /// `call   1e990 <std::thread::local::LocalKey<T>::try_with>`.
    fn direct_call(&self) -> Option<(u64, String)> {
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
struct Function {
    /// Demangled name (without the hash, so generic instances share it).
    name: String,
    insns: Vec<Insn>,
}

/// Every function in the disassembly, by start address.
fn functions(disassembly: &str) -> BTreeMap<u64, Function> {
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
fn by_name<'a>(functions: &'a BTreeMap<u64, Function>, name: &str) -> Option<&'a Function> {
    let mut found = functions.values().filter(|f| f.name == name);
    let f = found.next()?;
    assert!(found.next().is_none(), "more than one <{name}>");
    Some(f)
}

fn objdump() -> Option<String> {
    let bin = std::env::var("OBJDUMP").unwrap_or_else(|_| "objdump".to_owned());
    match Command::new(&bin).arg("--version").output() {
        Ok(out) if out.status.success() => Some(bin),
        _ => None,
    }
}

/// Builds the probe example in release into its own target directory; returns the
/// binary.
fn build_probe() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("target").join("asm-probe");
    let started = std::time::Instant::now();
    let status = Command::new(env!("CARGO"))
        .current_dir(root)
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "build",
            "--release",
            "--package",
            env!("CARGO_PKG_NAME"),
            "--example",
            "asm_probe",
        ])
        .status()
        .expect("run cargo");
    assert!(
        status.success(),
        "cargo build --example asm_probe: {status}"
    );
    println!(
        "built asm_probe (release) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let exe = target
        .join("release")
        .join("examples")
        .join(format!("asm_probe{}", std::env::consts::EXE_SUFFIX));
    assert!(exe.is_file(), "{} missing after the build", exe.display());
    exe
}

fn disassemble(objdump: &str, exe: &Path) -> String {
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

fn listing(insns: &[Insn]) -> String {
    insns
        .iter()
        .map(|i| i.line.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn record_path_has_no_locks_or_mfence_and_the_right_timer_instructions() {
    if !cfg!(target_arch = "x86_64") {
        println!("SKIPPED: the disassembly checks are for x86_64 only");
        return;
    }
    let Some(objdump) = objdump() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "objdump is required in CI (apt-get install -y binutils)"
        );
        println!("SKIPPED: objdump not found (install binutils, or set OBJDUMP)");
        return;
    };
    let exe = build_probe();
    let functions = functions(&disassemble(&objdump, &exe));

    let mut failures = Vec::new();
    for probe in PROBES {
        let name = format!("asm_probe::{}", probe.name);
        let function = by_name(&functions, &name)
            .filter(|f| !f.insns.is_empty())
            .unwrap_or_else(|| panic!("<{name}> not found in the disassembly of {exe:?}"));
        let body = &function.insns;

        // The whole record path is in the probe: no direct call but to a cold path.
        for (_, callee) in body.iter().filter_map(Insn::direct_call) {
            if !COLD.iter().any(|c| callee.starts_with(c)) {
                failures.push(format!(
                    "{name}: calls <{callee}>: the record path is not inlined whole"
                ));
            }
        }
        for i in body {
            if i.is_locked() {
                failures.push(format!("{name}: locked: {}", i.line));
            }
            if i.mnemonic == "mfence" {
                failures.push(format!("{name}: {}", i.line));
            }
        }

        let timer: Vec<&str> = body
            .iter()
            .filter(|i| matches!(i.mnemonic.as_str(), "rdtsc" | "rdtscp" | "lfence"))
            .map(|i| i.mnemonic.as_str())
            .collect();
        if timer != probe.timer {
            failures.push(format!(
                "{name}: timer instructions {timer:?}, expected {:?}\n{}",
                probe.timer,
                listing(body)
            ));
        }
        println!("{name}: {} instructions, timer {timer:?}", body.len());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn parser_reads_objdump_lines() {
    let i = Insn::parse("   1f0f1:\tlock cmpxchg %rcx,(%rdx)").unwrap();
    assert!(i.is_locked());
    assert_eq!(i.mnemonic, "cmpxchg");
    let i = Insn::parse("   1f0f1:\txchg   %rax,0x8(%rdi)").unwrap();
    assert!(i.is_locked());
    let i = Insn::parse("   1f0f1:\txchg   %ax,%ax").unwrap();
    assert!(!i.is_locked());
    // A comment naming a lock is not a lock.
    let i = Insn::parse("   1f0f1:\tcall   *0x1(%rip)        # 78188 <std::sync::Mutex::lock>")
        .unwrap();
    assert!(!i.is_locked());
    assert_eq!(i.direct_call(), None);
    let i =
        Insn::parse("   1f178:\tcall   1e990 <std::thread::local::LocalKey<T>::try_with>").unwrap();
    assert_eq!(
        i.direct_call(),
        Some((
            0x1e990,
            "std::thread::local::LocalKey<T>::try_with".to_owned()
        ))
    );
    let f = functions(
        "0000000000001000 <asm_probe::probe_x>:\n    1000:\tlfence\n    1003:\trdtscp\n\n\
         0000000000002000 <other>:\n    2000:\tmfence\n",
    );
    let x: Vec<&str> = by_name(&f, "asm_probe::probe_x")
        .unwrap()
        .insns
        .iter()
        .map(|i| i.mnemonic.as_str())
        .collect();
    assert_eq!(x, ["lfence", "rdtscp"]);
    assert_eq!(f[&0x2000].name, "other");
    assert_eq!(f[&0x2000].insns[0].mnemonic, "mfence");
}
