//! What counting allocations per scope costs the allocations: allocation-heavy work
//! (small `Vec`s, `Box`es, a growing `HashMap`) with the system allocator against
//! `latte::alloc::Counting` around it, in the same process, trials interleaved.
//!
//! `cargo bench --bench alloc`
//!
//! The work runs inside a scope (each allocation counted in its node), with no scope
//! open (the thread's bucket), and on a thread without a recorder (the process
//! bucket, the one place counted with read-modify-writes). One `target` line: in a
//! scope, at most 1.10x the system allocator.

mod switch;

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: switch::Switch = switch::Switch;

/// Rounds of work per trial, and trials per mode.
const ROUNDS: usize = 200;
const TRIALS: usize = 41;

/// One round: 64 small `Vec`s, 64 `Box`es, a `HashMap` grown to 256 entries.
fn work(round: u64) {
    for i in 0..64_u64 {
        let mut v: Vec<u64> = Vec::with_capacity(4);
        v.extend([i, round, i ^ round]);
        black_box(&v);
        black_box(Box::new([i as u8; 32]));
    }
    let mut map: HashMap<u64, u64> = HashMap::new();
    for k in 0..256 {
        map.insert(k ^ round, k);
    }
    black_box(&map);
}

/// Nanoseconds per round of `trial` over `ROUNDS` rounds.
fn time(trial: &dyn Fn()) -> f64 {
    let at = Instant::now();
    trial();
    at.elapsed().as_nanos() as f64 / ROUNDS as f64
}

/// Median nanoseconds per round with the system allocator and with the counting one,
/// trials taking turns.
fn compare(trial: &dyn Fn()) -> (f64, f64) {
    let (mut plain, mut counted) = (Vec::new(), Vec::new());
    for mode in [false, true] {
        switch::count(mode);
        trial(); // warm-up
    }
    for _ in 0..TRIALS {
        for (mode, out) in [(false, &mut plain), (true, &mut counted)] {
            switch::count(mode);
            out.push(time(trial));
        }
    }
    switch::count(false);
    (median(&mut plain), median(&mut counted))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let in_scope = || {
        for r in 0..ROUNDS as u64 {
            let _scope = latte::latte_scope!("bench_alloc_work");
            work(r);
        }
    };
    let no_scope = || (0..ROUNDS as u64).for_each(work);
    latte::latte_pulse!("bench_alloc_registers"); // this thread has a recorder
    let rows = [
        ("in a scope", compare(&in_scope)),
        ("no scope open", compare(&no_scope)),
        (
            "thread without a recorder",
            std::thread::spawn(move || compare(&no_scope))
                .join()
                .unwrap(),
        ),
    ];
    println!("allocation-heavy work, ns per round (64 Vecs, 64 Boxes, a HashMap to 256)");
    println!(
        "{:<28} {:>10} {:>10} {:>7}",
        "where", "System", "Counting", "ratio"
    );
    for (name, (plain, counted)) in &rows {
        let ratio = counted / plain;
        println!("{name:<28} {plain:>10.0} {counted:>10.0} {ratio:>7.3}");
    }
    let (plain, counted) = rows[0].1;
    let ratio = counted / plain;
    let verdict = if ratio <= 1.10 { "met" } else { "MISSED" };
    println!("target Counting<System> / System, in a scope  {ratio:.3}  (target <= 1.1) {verdict}");
    let calls = latte::capture()
        .component("bench_alloc_work")
        .and_then(|c| c.allocs)
        .map_or(0, |a| a.count());
    println!("info allocations counted in the scope: {calls}");
}
