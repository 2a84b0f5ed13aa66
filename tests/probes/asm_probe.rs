//! Disassembly probe: one out-of-line function per record path, so the release
//! build's machine code for each can be inspected (`tests/record/disassembly.rs` does, with
//! `objdump`).
//!
//! Each `probe_*` function is `#[inline(never)]` and contains exactly one record path,
//! fully inlined into it; the cold paths it may call (first use of a thread or call
//! site, misuse, a non-hardware clock) stay out of line, in other functions. `main`
//! calls every probe a few times, through `black_box`, so none is optimised away.
//!
//! ```text
//! cargo build --release -p latte-telemetry-probes --bin asm_probe
//! objdump -d --no-show-raw-insn -C target/release/asm_probe | less
//! ```

use latte::{latte_pulse, latte_scope, latte_start, latte_stop};
use std::hint::black_box;

/// `latte_start!`/`latte_stop!` in Fast mode: `RDTSC` at both ends.
#[inline(never)]
pub fn probe_fast_pair(x: u64) -> u64 {
    latte_start!("asm_fast");
    let y = black_box(x).wrapping_mul(3);
    latte_stop!("asm_fast");
    y
}

/// `latte_start!`/`latte_stop!` in Mid mode: `RDTSCP` at both ends.
#[inline(never)]
pub fn probe_mid_pair(x: u64) -> u64 {
    latte_start!("asm_mid", Mid);
    let y = black_box(x).wrapping_mul(5);
    latte_stop!("asm_mid", Mid);
    y
}

/// `latte_start!`/`latte_stop!` in Hard mode: `LFENCE; RDTSCP` at both ends.
#[inline(never)]
pub fn probe_hard_pair(x: u64) -> u64 {
    latte_start!("asm_hard", Hard);
    let y = black_box(x).wrapping_mul(7);
    latte_stop!("asm_hard", Hard);
    y
}

/// `latte_pulse!`: one `RDTSC`, the delta since the previous pulse.
#[inline(never)]
pub fn probe_pulse() {
    latte_pulse!("asm_pulse");
}

/// `latte_scope!` (Fast, Fast): Start now, Stop when the guard drops.
#[inline(never)]
pub fn probe_scope(x: u64) -> u64 {
    let _scope = latte_scope!("asm_scope");
    black_box(x).wrapping_mul(11)
}

fn main() {
    let mut acc = 0u64;
    for i in 0..4u64 {
        acc = acc.wrapping_add(black_box(probe_fast_pair)(black_box(i)));
        acc = acc.wrapping_add(black_box(probe_mid_pair)(black_box(i)));
        acc = acc.wrapping_add(black_box(probe_hard_pair)(black_box(i)));
        black_box(probe_pulse)();
        acc = acc.wrapping_add(black_box(probe_scope)(black_box(i)));
    }
    black_box(acc);
    for id in ["asm_fast", "asm_mid", "asm_hard", "asm_pulse", "asm_scope"] {
        println!("{id}: {} samples", latte::snapshot(id).len());
    }
}
