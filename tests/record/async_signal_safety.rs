//! Recording from signal handlers, in a release build (`tests/probes/signal_probe/`).
//!
//! Both tests run the probe, which records from a loop while a signal handler on the
//! same thread records too (into prepared ids, some of them the loop's own), and check
//! its accounting:
//!
//! - the loop's counts are exact: every scope, pulse and record it made is there, each
//!   with its own kind or value, whatever the handler did in between;
//! - every handler sample is either there or counted as re-entrant: in the ids both
//!   record, a handler that interrupted a push into the same ring; in any id, a handler
//!   that interrupted one of the loop's cold paths (a ring growing, say); the
//!   re-entrant count is exactly the number missing;
//! - no other anomaly is counted: none happened.
//!
//! `storm` interrupts a loop with at least 10^6 timer signals. `step` single-steps the
//! probe functions of Start, Stop, pulse and record with the x86 trap flag: a first
//! round notes the path (every instruction executed), then in three more a recording
//! handler runs at every instruction boundary; the test checks that every instruction
//! of the path was interrupted, and names the functions it lies in from the
//! disassembly (each probe's own, and `latte::record::record`, which `probe_record`
//! jumps to).
//!
//! Linux on x86_64 only (the trap flag, `ucontext_t`'s RIP); skips itself elsewhere, and
//! without `objdump` outside CI.

use crate::objdump::{self, build_probe, disassemble, functions, objdump_or_skip};
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Runs the probe in `mode`; returns its output lines.
fn run(exe: &std::path::Path, mode: &str) -> Vec<String> {
    let out = Command::new(exe)
        .arg(mode)
        .output()
        .expect("run signal_probe");
    assert!(
        out.status.success(),
        "signal_probe {mode}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The `key number` lines.
fn counts(lines: &[String]) -> BTreeMap<String, u64> {
    lines
        .iter()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_owned(), v.parse().ok()?))
        })
        .collect()
}

/// Checks the accounting described at the top; `loop_kind` is the kind of the loop's
/// inner scopes. Returns the re-entrant count.
fn check_accounting(c: &BTreeMap<String, u64>, loop_kind: &str) -> u64 {
    let get = |k: &str| c.get(k).copied().unwrap_or(0);
    let (loops, handled) = (get("iterations"), get("handled"));
    assert!(loops > 0 && handled > 0, "{c:#?}");
    for (k, &v) in c {
        if k.starts_with("anomaly_") && k != "anomaly_reentrant" {
            assert_eq!(v, 0, "{k}: no such anomaly happened\n{c:#?}");
        }
    }
    // The loop's own samples: all there.
    assert_eq!(get("seen_sig_outer"), loops, "{c:#?}");
    assert_eq!(get("kind_sig_outer_Fast_Fast"), loops, "{c:#?}");
    assert_eq!(get(&format!("kind_sig_inner_{loop_kind}")), loops, "{c:#?}");
    assert_eq!(get("kind_sig_record_value1"), loops, "{c:#?}");
    // The handler's own ids: a handler does not interrupt itself, so only one that
    // interrupted a cold path of the loop records nothing there (counted).
    let own = get("seen_sig_handler");
    assert_eq!(get("kind_sig_handler_Mid_Mid"), own, "{c:#?}");
    let own_pulse = get("seen_sig_handler_pulse");
    assert!(own <= handled && own_pulse < handled, "{c:#?}");
    // The shared ids: each handler sample there or counted.
    let inner = get("kind_sig_inner_Mid_Mid");
    let record = get("kind_sig_record_value2");
    assert_eq!(get("seen_sig_inner"), loops + inner, "{c:#?}");
    assert_eq!(get("seen_sig_record"), loops + record, "{c:#?}");
    let pulses = loops + handled - 1; // the first pulse only sets the baseline
    let pulse = get("seen_sig_pulse");
    assert!(
        inner <= handled && record <= handled && pulse <= pulses,
        "{c:#?}"
    );
    let missing = (handled - own)
        + (handled - 1 - own_pulse)
        + (handled - inner)
        + (handled - record)
        + (pulses - pulse);
    assert_eq!(
        get("anomaly_reentrant"),
        missing,
        "every handler sample missing is counted as re-entrant, and nothing else\n{c:#?}"
    );
    missing
}

fn supported() -> bool {
    if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return true;
    }
    println!("SKIPPED: the signal probe needs Linux on x86_64");
    false
}

#[test]
fn a_million_timer_signals_lose_and_corrupt_nothing() {
    if !supported() {
        return;
    }
    let exe = build_probe("signal_probe");
    let c = counts(&run(&exe, "storm"));
    assert!(c["handled"] >= 1_000_000, "{c:#?}");
    let missing = check_accounting(&c, "Fast_Fast");
    println!(
        "storm: {} signals against {} loop iterations: {} handler samples refused and counted",
        c["handled"], c["iterations"], missing
    );
}

/// The binary is position independent: what to take off a run-time address (as the
/// probe prints one, `fn NAME ADDRESS`) to find it in the file.
fn load_shift(lines: &[String], functions: &BTreeMap<u64, objdump::Function>) -> u64 {
    let (name, runtime) = lines
        .iter()
        .find_map(|l| l.strip_prefix("fn "))
        .and_then(|l| l.split_once(' '))
        .unwrap();
    let full = format!("signal_probe::probe::{name}");
    let file_addr = *functions
        .iter()
        .find(|(_, f)| f.name == full)
        .unwrap_or_else(|| panic!("<{full}> not in the disassembly"))
        .0;
    let runtime = u64::from_str_radix(runtime.trim_start_matches("0x"), 16).unwrap();
    runtime.wrapping_sub(file_addr)
}

/// Every probe function (Start and Stop in two modes, pulse, record) is on the path.
fn assert_every_probe_on_the_path(per_function: &BTreeMap<&str, (usize, usize)>) {
    for probe in [
        "probe_start_fast",
        "probe_stop_fast",
        "probe_start_hard",
        "probe_stop_hard",
        "probe_pulse",
        "probe_record",
    ] {
        let name = format!("signal_probe::probe::{probe}");
        assert!(
            per_function.contains_key(name.as_str()),
            "{name} not on the path"
        );
    }
}

#[test]
fn every_instruction_of_start_stop_and_pulse_interrupted_disturbs_nothing() {
    if !supported() {
        return;
    }
    let Some(objdump) = objdump_or_skip("signals") else {
        return;
    };
    let exe = build_probe("signal_probe");
    let lines = run(&exe, "step");
    let c = counts(&lines);
    let missing = check_accounting(&c, "Hard_Hard");

    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let addresses = |key: &str| -> BTreeSet<u64> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix(key))
            .map(hex)
            .collect()
    };
    // The reference round's path (every instruction it executed, single-stepped with
    // a handler that only noted it), and the boundaries a recording handler hit.
    let (path, hits) = (addresses("path "), addresses("hit "));
    let functions = functions(&disassemble(&objdump, &exe));
    let shift = load_shift(&lines, &functions);
    let function_of = |runtime: u64| -> &str {
        let addr = runtime.wrapping_sub(shift);
        functions
            .range(..=addr)
            .next_back()
            .map_or("?", |(_, f)| f.name.as_str())
    };
    // Per function on the path: its instructions on the path, and how many of them a
    // recording handler interrupted.
    // Only the record path: the probes and latte's functions, not the loop around them.
    let record_path = |a: &u64| {
        let f = function_of(*a);
        f.starts_with("signal_probe::probe::probe_") || f.starts_with("latte::")
    };
    let path: BTreeSet<u64> = path.into_iter().filter(record_path).collect();
    let mut per_function = BTreeMap::<&str, (usize, usize)>::new();
    for &a in &path {
        let e = per_function.entry(function_of(a)).or_default();
        e.0 += 1;
        e.1 += usize::from(hits.contains(&a));
    }
    for (f, (on_path, hit)) in &per_function {
        println!("{f}: {hit} of {on_path} instructions interrupted");
    }
    println!(
        "{} traps, {missing} handler samples refused and counted",
        c["traps"]
    );
    assert_every_probe_on_the_path(&per_function);
    let unhit: Vec<String> = path
        .difference(&hits)
        .map(|&a| format!("{:#x} in {}", a.wrapping_sub(shift), function_of(a)))
        .collect();
    assert!(
        unhit.is_empty(),
        "instructions of the path never interrupted:\n{}",
        unhit.join("\n")
    );
}
