//! The release build of the record path, disassembled: no `lock`-prefixed instruction,
//! no `mfence` (nor an implicitly locked `xchg` with memory), each mode reads the timer
//! with exactly the instructions it promises (Fast: `rdtsc`; Mid: `rdtscp`; Hard:
//! `lfence; rdtscp`), and the whole record path is inlined at the call site.
//!
//! The test builds `tests/probes/asm_probe.rs` in release (as `async_signal_safety.rs` builds its
//! probe: `objdump::build_probe`), disassembles it with
//! `objdump -d --no-show-raw-insn -C` and checks each `asm_probe::probe_*` function:
//! one record path, inlined into it.
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

use crate::objdump::{Insn, build_probe, by_name, disassemble, functions, objdump_or_skip};

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
    "latte::record::local::Local::grow",
    "latte::record::local::Local::clock_anomaly",
    "latte::record::local::Local::reentrant",
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
    let Some(objdump) = objdump_or_skip("disassembly") else {
        return;
    };
    let exe = build_probe("asm_probe");
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
