//! The seed's "Latency Report", reproduced: cycles per operation of the raw timer
//! reads, latte's Start+Stop in each mode, pulse and `Instant::now`, plus Fast
//! Start+Stop with 1, 64 and 1,000 ids live on the thread.
//!
//! `cargo bench --bench overhead`. 100 trials of 100,000 calls each after one warm-up
//! trial, thread pinned to one core. Trials of all rows are interleaved (trial 1 of
//! every row, then trial 2, ...) so that noise on a shared machine lands on every row
//! alike; ratios are computed from medians of this one run. Targets are printed, never
//! asserted.

#![allow(unsafe_code)] // the raw-instruction baselines below

use latte::{Id, Mode, clock, latte_pulse, latte_start, latte_stop};

/// The bare instructions, without latte's clock selection in front: the baselines.
#[cfg(target_arch = "x86_64")]
mod raw {
    use core::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};
    #[inline(always)]
    pub fn rdtsc() -> u64 {
        // SAFETY: RDTSC is available on every x86_64 CPU and reads a register only.
        unsafe { _rdtsc() }
    }
    #[inline(always)]
    pub fn rdtscp() -> u64 {
        let mut aux = 0;
        // SAFETY: `aux` is a valid u32 to write; RDTSCP is checked by latte's platform
        // detection, and this bench runs where latte chose the TSC.
        unsafe { __rdtscp(&mut aux) }
    }
    #[inline(always)]
    pub fn lfence_rdtscp() -> u64 {
        // SAFETY: LFENCE is in the x86_64 baseline (SSE2) and only orders execution.
        unsafe { _mm_lfence() };
        rdtscp()
    }
}

/// Elsewhere the baselines are latte's own reads.
#[cfg(not(target_arch = "x86_64"))]
mod raw {
    use latte::{Mode, clock};
    pub fn rdtsc() -> u64 {
        clock::read(Mode::Fast).ticks
    }
    pub fn rdtscp() -> u64 {
        clock::read(Mode::Mid).ticks
    }
    pub fn lfence_rdtscp() -> u64 {
        clock::read(Mode::Hard).ticks
    }
}
use std::hint::black_box;
use std::time::Instant;

const CALLS: u64 = 100_000;
const TRIALS: usize = 100;

#[latte::timed]
fn timed_identity(x: u64) -> u64 {
    x
}

fn scoped_identity(x: u64) -> u64 {
    let _scope = latte::latte_scope!("bench_scoped");
    x
}

struct Row {
    group: &'static str,
    name: String,
    run: Box<dyn FnMut()>,
    cycles: Vec<f64>,
}

fn row(group: &'static str, name: &str, run: impl FnMut() + 'static) -> Row {
    Row {
        group,
        name: name.to_owned(),
        run: Box::new(run),
        cycles: Vec::with_capacity(TRIALS),
    }
}

/// Cycles per call of one trial, between two fully ordered reads.
fn trial(run: &mut dyn FnMut()) -> f64 {
    let t0 = clock::read(Mode::Hard).ticks;
    run();
    let t1 = clock::read(Mode::Hard).ticks;
    t1.wrapping_sub(t0) as f64 / CALLS as f64
}

fn leaked_ids(prefix: &str, n: usize) -> Vec<&'static Id> {
    (0..n)
        .map(|i| {
            let name: &'static str = Box::leak(format!("{prefix}_{i}").into_boxed_str());
            &*Box::leak(Box::new(Id::new(name)))
        })
        .collect()
}

/// `n` ids with a live ring each on this thread; returns them.
fn live_ids(n: usize) -> Vec<&'static Id> {
    let ids = leaked_ids(&format!("bench_live{n}"), n);
    for id in &ids {
        latte::start(id, Mode::Fast);
        latte::stop(id, Mode::Fast);
    }
    ids
}

struct Stats {
    avg: f64,
    median: f64,
    sd: f64,
    min: f64,
    max: f64,
}

fn stats(v: &[f64]) -> Stats {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len() as f64;
    let avg = s.iter().sum::<f64>() / n;
    let sd = (s.iter().map(|x| (x - avg).powi(2)).sum::<f64>() / n).sqrt();
    let median = if s.len() % 2 == 1 {
        s[s.len() / 2]
    } else {
        (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
    };
    Stats {
        avg,
        median,
        sd,
        min: s[0],
        max: s[s.len() - 1],
    }
}

fn main() {
    let pinned = core_affinity::get_core_ids()
        .and_then(|ids| ids.last().copied())
        .is_some_and(core_affinity::set_for_current);

    let mut rows = vec![
        row("ASM", "RDTSC", || {
            for _ in 0..CALLS {
                black_box(raw::rdtsc());
            }
        }),
        row("ASM", "RDTSCP", || {
            for _ in 0..CALLS {
                black_box(raw::rdtscp());
            }
        }),
        row("ASM", "LFENCE+RDTSCP", || {
            for _ in 0..CALLS {
                black_box(raw::lfence_rdtscp());
            }
        }),
        row("ASM", "latte::clock::read(Fast)", || {
            for _ in 0..CALLS {
                black_box(clock::read(Mode::Fast));
            }
        }),
        row("Latte", "Fast Start+Stop", || {
            for _ in 0..CALLS {
                latte_start!("bench_fast");
                latte_stop!("bench_fast");
            }
        }),
        row("Latte", "Mid Start+Stop", || {
            for _ in 0..CALLS {
                latte_start!("bench_mid", Mid);
                latte_stop!("bench_mid", Mid);
            }
        }),
        row("Latte", "Hard Start+Stop", || {
            for _ in 0..CALLS {
                latte_start!("bench_hard", Hard);
                latte_stop!("bench_hard", Hard);
            }
        }),
        row("Latte", "pulse", || {
            for _ in 0..CALLS {
                latte_pulse!("bench_pulse");
            }
        }),
        row("Std", "Instant::now", || {
            for _ in 0..CALLS {
                black_box(Instant::now());
            }
        }),
    ];
    // Why the recorder's per-thread state is a std `thread_local!` with `const` init
    // rather than the `thread_local` crate: the cost of reaching per-thread state.
    thread_local! {
        static STD_TLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    rows.push(row("TLS", "std thread_local! (const)", || {
        for _ in 0..CALLS {
            STD_TLS.with(|c| c.set(black_box(c.get() + 1)));
        }
    }));
    let crate_tls = thread_local::ThreadLocal::<std::cell::Cell<u64>>::new();
    rows.push(row("TLS", "thread_local::ThreadLocal", move || {
        for _ in 0..CALLS {
            let c = crate_tls.get_or_default();
            c.set(black_box(c.get() + 1));
        }
    }));
    rows.push(row("Attr", "#[latte::timed] fn call", || {
        for i in 0..CALLS {
            black_box(timed_identity(black_box(i)));
        }
    }));
    rows.push(row("Attr", "latte_scope! fn call", || {
        for i in 0..CALLS {
            black_box(scoped_identity(black_box(i)));
        }
    }));
    // The tracing bridge: entering and exiting an existing span, with and without
    // latte's layer on the registry (lifetimes off: that is per span, not per enter).
    use tracing_subscriber::layer::SubscriberExt;
    let plain = tracing::Dispatch::new(tracing_subscriber::registry());
    let bridged = tracing::Dispatch::new(
        tracing_subscriber::registry()
            .with(latte::tracing::LatteLayer::new().span_lifetimes(false)),
    );
    for (name, dispatch) in [
        ("span enter+exit, registry only", plain),
        ("span enter+exit, LatteLayer", bridged),
    ] {
        let span =
            tracing::dispatcher::with_default(&dispatch, || tracing::info_span!("bench_span"));
        rows.push(row("Trace", name, move || {
            tracing::dispatcher::with_default(&dispatch, || {
                for _ in 0..CALLS {
                    let _entered = span.enter();
                }
            })
        }));
    }
    for n in [1usize, 64, 1000] {
        let ids = live_ids(n);
        let last = ids[n - 1];
        rows.push(row("Ids", &format!("Fast S+S, {n} ids live"), move || {
            for _ in 0..CALLS {
                latte::start(last, Mode::Fast);
                latte::stop(last, Mode::Fast);
            }
        }));
    }
    let ids = live_ids(1000);
    rows.push(row("Ids", "Fast S+S, cycling 1,000 ids", move || {
        for i in 0..CALLS as usize {
            let id = ids[i % 1000];
            latte::start(id, Mode::Fast);
            latte::stop(id, Mode::Fast);
        }
    }));

    for r in &mut rows {
        trial(&mut r.run); // warm-up: first-use paths, caches, branch predictors
    }
    for _ in 0..TRIALS {
        for r in &mut rows {
            let c = trial(&mut r.run);
            r.cycles.push(c);
        }
    }

    let median = |name: &str| stats(&rows.iter().find(|r| r.name == name).unwrap().cycles).median;
    let rdtsc = median("RDTSC");
    println!(
        "latte overhead bench: {TRIALS} trials x {CALLS} calls, 1 warm-up trial, {}, counter: {}",
        if pinned {
            "pinned to one core"
        } else {
            "NOT pinned (affinity refused)"
        },
        clock::source()
    );
    println!(
        "{:<6} {:<28} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "group",
        "operation (cycles/call)",
        "avg",
        "median",
        "std dev",
        "min",
        "max",
        "range",
        "x RDTSC"
    );
    for r in &rows {
        let s = stats(&r.cycles);
        println!(
            "{:<6} {:<28} {:>9.1} {:>9.1} {:>9.2} {:>9.1} {:>9.1} {:>9.1} {:>9.2}",
            r.group,
            r.name,
            s.avg,
            s.median,
            s.sd,
            s.min,
            s.max,
            s.max - s.min,
            s.median / rdtsc
        );
    }
    let target = |label: &str, value: f64, limit: f64| {
        println!(
            "target {label:<46} {value:>6.3}  (target <= {limit}) {}",
            if value <= limit { "met" } else { "MISSED" }
        );
    };
    println!();
    target(
        "Fast Start+Stop / (2 x RDTSC)",
        median("Fast Start+Stop") / (2.0 * rdtsc),
        1.2,
    );
    target("pulse / RDTSC", median("pulse") / rdtsc, 1.2);
    target(
        "Fast S+S 1,000 ids / 1 id",
        median("Fast S+S, 1000 ids live") / median("Fast S+S, 1 ids live"),
        1.1,
    );
    println!(
        "info   clock::read(Fast) / RDTSC (clock selection)    {:>6.3}",
        median("latte::clock::read(Fast)") / rdtsc
    );
    println!(
        "info   Instant::now / RDTSC                          {:>6.3}",
        median("Instant::now") / rdtsc
    );
    println!(
        "info   #[latte::timed] call / latte_scope! call       {:>6.3}",
        median("#[latte::timed] fn call") / median("latte_scope! fn call")
    );
    println!(
        "info   #[latte::timed] call / Fast S+S                {:>6.3}",
        median("#[latte::timed] fn call") / median("Fast Start+Stop")
    );
    println!(
        "info   span enter+exit via LatteLayer / Fast S+S      {:>6.3}",
        median("span enter+exit, LatteLayer") / median("Fast Start+Stop")
    );
    println!(
        "info   LatteLayer's own cost per enter+exit          {:>6.1} cycles",
        median("span enter+exit, LatteLayer") - median("span enter+exit, registry only")
    );
    println!(
        "info   ThreadLocal::get_or_default - std TLS access  {:>6.1} cycles",
        median("thread_local::ThreadLocal") - median("std thread_local! (const)")
    );
}
