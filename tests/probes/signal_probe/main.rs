//! Recording from a signal handler while the interrupted code records too.
//!
//! `tests/record/async_signal_safety.rs` builds this in release and runs it in two modes; it prints one
//! `key value` line per fact and the test checks the accounting (see
//! `docs/signal-safety.md`).
//!
//! - `storm`: a loop of nested Start/Stop, pulses and records runs while an interval
//!   timer sends SIGALRM every few microseconds; the handler records into prepared ids,
//!   some of them the loop's own. It runs until at least 10^6 signals were handled.
//! - `step`: the x86 trap flag single-steps every instruction of the probe functions
//!   (Start, Stop, pulse, record); a SIGTRAP handler runs at every instruction
//!   boundary, records like the storm's handler, and notes the address it interrupted.
//!   The test maps those addresses onto the disassembly.
//!
//! ```text
//! cargo run --release -p latte-telemetry-probes --bin signal_probe -- storm
//! ```
#![allow(unsafe_code)]

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod probe;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    match mode.as_str() {
        "storm" => probe::storm(),
        "step" => probe::step(),
        _ => {
            eprintln!("usage: signal_probe storm|step");
            std::process::exit(2);
        }
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn main() {
    println!("skipped: the signal probe needs Linux on x86_64");
}
