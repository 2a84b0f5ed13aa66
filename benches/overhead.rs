//! The seed's "Latency Report", reproduced: cycles per operation of the raw timer
//! reads, latte's Start+Stop in each mode, pulse and `Instant::now`, plus Fast
//! Start+Stop with 1, 64 and 1,000 ids live on the thread (and rotating over 1,000), and 8
//! Fast scopes nested.
//!
//! Each record path is also compared with its *limit model* (module [`model`]): the
//! least code that does the same job, written by hand here. A model's reads are the bare
//! instructions; its targets are printed as `mode / model` (ratios of medians).
//! Measurements, the machine and the method: docs/performance.md.
//!
//! `cargo bench --bench overhead -- --flight-recorder` measures every latte row with the
//! flight recorder on (each closed scope also goes to the thread's timeline) and prints
//! its own target line instead of the others.
//!
//! `cargo bench --bench overhead -- --only rotating,model` runs only the rows whose
//! name contains one of the comma-separated texts (and `RDTSC`, the unit), and prints
//! their table without target lines: for an experiment on a few rows, in seconds.
//!
//! `cargo bench --bench overhead`. 100 trials of 100,000 calls each after one warm-up
//! trial, thread pinned to one core. Trials of all rows are interleaved (trial 1 of
//! every row, then trial 2, ...) so that noise on a shared machine lands on every row
//! alike; ratios are computed from medians of this one run. Targets are printed, never
//! asserted.

#![allow(unsafe_code)] // the raw-instruction baselines below

mod switch;

#[global_allocator]
static ALLOCATOR: switch::Switch = switch::Switch;

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
    /// RDTSCP with its `IA32_TSC_AUX` word (the CPU id), as Mid uses it.
    #[inline(always)]
    pub fn rdtscp_cpu() -> (u64, u32) {
        let mut aux = 0;
        // SAFETY: as in `rdtscp`.
        let ticks = unsafe { __rdtscp(&mut aux) };
        (ticks, aux)
    }
    /// LFENCE; RDTSCP with the CPU id, as Hard uses it.
    #[inline(always)]
    pub fn lfence_rdtscp_cpu() -> (u64, u32) {
        // SAFETY: as in `lfence_rdtscp`.
        unsafe { _mm_lfence() };
        rdtscp_cpu()
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
    pub fn rdtscp_cpu() -> (u64, u32) {
        let s = clock::read(Mode::Mid);
        (s.ticks, s.cpu)
    }
    pub fn lfence_rdtscp_cpu() -> (u64, u32) {
        let s = clock::read(Mode::Hard);
        (s.ticks, s.cpu)
    }
}

/// Limit models: for each record path, the least code that does the same job, to say
/// how far latte is from the limit rather than only from the bare reads.
///
/// - a scope (`start` + `stop`): read the counter, push one frame (tag + ticks) onto a
///   `const`-initialised `thread_local!` stack with a depth cell; read the counter again,
///   pop the frame, build the same sample word latte stores (delta, both modes, the
///   migrated bit when both reads gave a CPU id) and store it in a ring;
/// - `pulse`: one read, swap a thread-local "last" value, store the delta.
///
/// The ring is a static buffer with a head index, of latte's default capacity (2^16
/// slots), so it touches as much memory per trial as latte's ring does. What the models
/// leave out is what latte needs beyond the job itself: the call-site id lookup, the
/// clock selection, a thread-local destructor (and its "registered" check), the id check
/// on Stop and the misuse and first-use paths, the per-id table, the implausible-delta
/// check. The id is a constant here.
mod model {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    const DEPTH: usize = 64;
    const SLOTS: usize = 1 << 16;
    // The sample word's layout (latte's `record/sample.rs`, private there).
    const START_SHIFT: u32 = 52;
    const STOP_SHIFT: u32 = 54;
    const START_MASK: u64 = 3 << START_SHIFT;
    const MIGRATED: u64 = 1 << 56;
    const PULSE: u64 = 3 << START_SHIFT;
    const CPU_SHIFT: u32 = 32;
    const CPU_MASK: u64 = (1 << 20) - 1;

    struct Frame {
        tag: Cell<u64>,
        ticks: Cell<u64>,
    }

    struct Frames {
        depth: Cell<usize>,
        frames: [Frame; DEPTH],
        last: Cell<u64>,
    }

    thread_local! {
        static FRAMES: Frames = const {
            Frames {
                depth: Cell::new(0),
                frames: [const {
                    Frame {
                        tag: Cell::new(0),
                        ticks: Cell::new(0),
                    }
                }; DEPTH],
                last: Cell::new(0),
            }
        };
    }

    // One writer (the bench thread); relaxed loads and stores are plain `mov`s, as
    // latte's ring push is on x86_64.
    static HEAD: AtomicU64 = AtomicU64::new(0);
    static RING: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];

    #[inline(always)]
    fn store(sample: u64) {
        let h = HEAD.load(Relaxed);
        RING[h as usize & (SLOTS - 1)].store(sample, Relaxed);
        HEAD.store(h.wrapping_add(1), Relaxed);
    }

    /// A timer read of one mode: ticks and, where the mode gives one, the CPU id.
    pub trait Read {
        const MODE: u64;
        /// Whether the read returns a CPU id (Mid, Hard).
        const CPU: bool;
        fn read() -> (u64, u32);
    }
    pub struct Fast;
    pub struct Mid;
    pub struct Hard;
    impl Read for Fast {
        const MODE: u64 = 0;
        const CPU: bool = false;
        #[inline(always)]
        fn read() -> (u64, u32) {
            (super::raw::rdtsc(), u32::MAX)
        }
    }
    impl Read for Mid {
        const MODE: u64 = 1;
        const CPU: bool = true;
        #[inline(always)]
        fn read() -> (u64, u32) {
            super::raw::rdtscp_cpu()
        }
    }
    impl Read for Hard {
        const MODE: u64 = 2;
        const CPU: bool = true;
        #[inline(always)]
        fn read() -> (u64, u32) {
            super::raw::lfence_rdtscp_cpu()
        }
    }

    /// Opens a scope of `id`: bookkeeping first, the timer read last.
    #[inline(always)]
    pub fn start<R: Read>(id: u32) {
        FRAMES.with(|f| {
            let d = f.depth.get();
            if let Some(frame) = f.frames.get(d) {
                let (ticks, cpu) = R::read();
                let tag = u64::from(id)
                    | (u64::from(cpu) & CPU_MASK) << CPU_SHIFT
                    | R::MODE << START_SHIFT;
                frame.tag.set(tag);
                frame.ticks.set(ticks);
            }
            f.depth.set(d + 1);
        });
    }

    /// Closes the innermost scope: the timer read first, then the bookkeeping.
    #[inline(always)]
    pub fn stop<R: Read>() {
        let (now, cpu) = R::read();
        FRAMES.with(|f| {
            let top = f.depth.get().wrapping_sub(1);
            if let Some(frame) = f.frames.get(top) {
                f.depth.set(top);
                let tag = frame.tag.get();
                let migrated = R::CPU
                    && tag & START_MASK != 0
                    && (tag >> CPU_SHIFT) & CPU_MASK != u64::from(cpu) & CPU_MASK;
                let meta =
                    tag & START_MASK | R::MODE << STOP_SHIFT | if migrated { MIGRATED } else { 0 };
                store(now.wrapping_sub(frame.ticks.get()) | meta);
            }
        });
    }

    /// Rings of the rotating-ids model: one per id, each with its own head, of the
    /// length latte's ring of an id reaches in the bench (a hundred samples a trial).
    pub struct Rings {
        rings: Vec<(AtomicU64, Box<[AtomicU64]>)>,
    }

    /// Slots of one of [`Rings`]' rings.
    const ROTATING_SLOTS: usize = 1 << 14;

    impl Rings {
        /// `n` rings, every page written.
        pub fn new(n: usize) -> Rings {
            Rings {
                rings: (0..n)
                    .map(|_| {
                        let slots = (0..ROTATING_SLOTS).map(|_| AtomicU64::new(0)).collect();
                        (AtomicU64::new(0), slots)
                    })
                    .collect(),
            }
        }
    }

    /// [`stop`], storing into ring `i` of `rings`: the model of a Stop whose id has a
    /// ring of its own.
    #[inline(always)]
    pub fn stop_into<R: Read>(rings: &Rings, i: usize) {
        let (now, cpu) = R::read();
        FRAMES.with(|f| {
            let top = f.depth.get().wrapping_sub(1);
            if let Some(frame) = f.frames.get(top) {
                f.depth.set(top);
                let tag = frame.tag.get();
                let migrated = R::CPU
                    && tag & START_MASK != 0
                    && (tag >> CPU_SHIFT) & CPU_MASK != u64::from(cpu) & CPU_MASK;
                let meta =
                    tag & START_MASK | R::MODE << STOP_SHIFT | if migrated { MIGRATED } else { 0 };
                let (head, slots) = &rings.rings[i];
                let h = head.load(Relaxed);
                slots[h as usize & (ROTATING_SLOTS - 1)]
                    .store(now.wrapping_sub(frame.ticks.get()) | meta, Relaxed);
                head.store(h.wrapping_add(1), Relaxed);
            }
        });
    }

    /// The ticks since the previous pulse (none on the first).
    #[inline(always)]
    pub fn pulse() {
        let now = super::raw::rdtsc();
        FRAMES.with(|f| {
            let last = f.last.replace(now);
            if last != 0 {
                store(now.wrapping_sub(last) | PULSE);
            }
        });
    }
}
use std::hint::black_box;
use std::time::Instant;

const CALLS: u64 = 100_000;
const TRIALS: usize = 100;
/// The id the models push (a constant: the least code).
const MODEL_ID: u32 = 7;

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
    // `--counting-allocator`: the rows again with `latte::alloc::Counting` counting
    // every allocation (the Start/Stop paths allocate nothing: their lines should not
    // move).
    let counting = std::env::args().any(|a| a == "--counting-allocator");
    switch::count(counting);
    if counting {
        println!("allocator: latte::alloc::Counting<System>, counting");
    }
    let flight = std::env::args().any(|a| a == "--flight-recorder");
    if flight {
        // The setting applies to threads whose stack is made after it, and stays
        // after the agent stops: this thread's, made by its first row. No agent runs
        // during the rows, as in the default run.
        latte::builder()
            .flight_recorder(std::time::Duration::from_millis(50))
            .final_report(false)
            .sink(std::io::sink())
            .start()
            .and_then(latte::Guard::stop)
            .expect("the flight recorder starts");
    }
    let pinned = pin();

    let mut rows = raw_reads();
    rows.extend(recording());
    rows.extend(switched_off());
    rows.extend(nested());
    rows.extend(baselines());
    rows.extend(front_ends());
    rows.extend(span_lives());
    rows.extend(ids());
    // A Timer (the way to time a message across threads), here closed on its own
    // thread: against the stack scope it is the alternative to.
    static BENCH_TIMER: Id = Id::new("bench_timer");
    rows.push(row("Latte", "Fast Timer start+drop", || {
        for _ in 0..CALLS {
            drop(latte::Timer::start(&BENCH_TIMER, Mode::Fast, Mode::Fast));
        }
    }));

    let only = only();
    if let Some(only) = &only {
        rows.retain(|r| r.name == "RDTSC" || only.split(',').any(|p| r.name.contains(p)));
    }
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
    print_table(&rows, pinned, median("RDTSC"));
    if only.is_some() {
        return;
    }
    if flight {
        flight_target(&median);
        return;
    }
    targets(&median);
    models_against_reads(&median);
    infos(&median);
}

/// The argument after `--only`: the texts of the rows to run, or `None` for all.
fn only() -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--only")?;
    let Some(texts) = args.get(at + 1) else {
        eprintln!("--only needs the texts of the rows to run, as in `--only rotating,model`");
        std::process::exit(2);
    };
    Some(texts.clone())
}

/// Pins this thread to the last core; whether the OS agreed.
fn pin() -> bool {
    core_affinity::get_core_ids()
        .and_then(|ids| ids.last().copied())
        .is_some_and(core_affinity::set_for_current)
}

/// The bare counter reads, one and two per call, and latte's clock read in front of them.
fn raw_reads() -> Vec<Row> {
    vec![
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
        row("ASM", "2 x RDTSC", || {
            for _ in 0..CALLS {
                black_box(raw::rdtsc());
                black_box(raw::rdtsc());
            }
        }),
        row("ASM", "2 x RDTSCP", || {
            for _ in 0..CALLS {
                black_box(raw::rdtscp());
                black_box(raw::rdtscp());
            }
        }),
        row("ASM", "2 x LFENCE+RDTSCP", || {
            for _ in 0..CALLS {
                black_box(raw::lfence_rdtscp());
                black_box(raw::lfence_rdtscp());
            }
        }),
        row("ASM", "latte::clock::read(Fast)", || {
            for _ in 0..CALLS {
                black_box(clock::read(Mode::Fast));
            }
        }),
    ]
}

/// latte's Start+Stop in each mode and pulse, each beside its limit model.
/// The runtime switch off (`latte::set_recording`): once per trial, outside the loop.
/// Off, a pair stores nothing and may cost no more than on.
fn switched_off() -> Vec<Row> {
    vec![
        row("Latte", "Fast Start+Stop, recording off", || {
            latte::set_recording(false);
            for _ in 0..CALLS {
                latte_start!("bench_fast_off");
                latte_stop!("bench_fast_off");
            }
            latte::set_recording(true);
        }),
        row("Latte", "pulse, recording off", || {
            latte::set_recording(false);
            for _ in 0..CALLS {
                latte_pulse!("bench_pulse_off");
            }
            latte::set_recording(true);
        }),
    ]
}

fn recording() -> Vec<Row> {
    vec![
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
        row("Model", "model Fast Start+Stop", || {
            for _ in 0..CALLS {
                model::start::<model::Fast>(MODEL_ID);
                model::stop::<model::Fast>();
            }
        }),
        row("Model", "model Mid Start+Stop", || {
            for _ in 0..CALLS {
                model::start::<model::Mid>(MODEL_ID);
                model::stop::<model::Mid>();
            }
        }),
        row("Model", "model Hard Start+Stop", || {
            for _ in 0..CALLS {
                model::start::<model::Hard>(MODEL_ID);
                model::stop::<model::Hard>();
            }
        }),
        row("Model", "model pulse", || {
            for _ in 0..CALLS {
                model::pulse();
            }
        }),
    ]
}

/// Levels of the nested case: the call tree's cost is per level (issue 26).
const NESTED: u32 = 8;

/// 8 Fast scopes nested, each Stop closing the innermost, beside 8 nested model pairs:
/// what a call tree costs per level shows here.
fn nested() -> Vec<Row> {
    vec![
        row("Latte", "Fast Start+Stop, 8 nested", || {
            for _ in 0..CALLS {
                latte_start!("bench_nest_0");
                latte_start!("bench_nest_1");
                latte_start!("bench_nest_2");
                latte_start!("bench_nest_3");
                latte_start!("bench_nest_4");
                latte_start!("bench_nest_5");
                latte_start!("bench_nest_6");
                latte_start!("bench_nest_7");
                latte_stop!("bench_nest_7");
                latte_stop!("bench_nest_6");
                latte_stop!("bench_nest_5");
                latte_stop!("bench_nest_4");
                latte_stop!("bench_nest_3");
                latte_stop!("bench_nest_2");
                latte_stop!("bench_nest_1");
                latte_stop!("bench_nest_0");
            }
        }),
        row("Model", "model Fast Start+Stop, 8 nested", || {
            for _ in 0..CALLS {
                for level in 0..NESTED {
                    model::start::<model::Fast>(MODEL_ID + level);
                }
                for _ in 0..NESTED {
                    model::stop::<model::Fast>();
                }
            }
        }),
    ]
}

/// `Instant::now`, and the cost of reaching per-thread state.
fn baselines() -> Vec<Row> {
    let mut rows = vec![row("Std", "Instant::now", || {
        for _ in 0..CALLS {
            black_box(Instant::now());
        }
    })];
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
    rows
}

/// The other ways in: the attribute, the scope macro, the tracing bridge.
fn front_ends() -> Vec<Row> {
    let mut rows = Vec::new();
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
    // latte's layer on the registry.
    use tracing_subscriber::layer::SubscriberExt;
    let plain = tracing::Dispatch::new(tracing_subscriber::registry());
    let bridged = tracing::Dispatch::new(
        tracing_subscriber::registry().with(latte::tracing::LatteLayer::new()),
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
    rows
}

/// A layer that does nothing: the registry's cost with a layer on it, the span-life
/// baseline.
struct NoopLayer;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for NoopLayer {}

/// A span's whole life as a program makes them: a new span per call, made, entered,
/// exited and closed (dropped), on the registry with a layer that does nothing, with
/// `LatteLayer::new()` as shipped (Fast reads, one busy sample per span: no lifetimes,
/// per-poll samples or event pulses), and with its lifetimes on (a second measurement
/// per span).
fn span_lives() -> Vec<Row> {
    use tracing_subscriber::layer::SubscriberExt;
    let noop = tracing::Dispatch::new(tracing_subscriber::registry().with(NoopLayer));
    let bridged = tracing::Dispatch::new(
        tracing_subscriber::registry().with(latte::tracing::LatteLayer::new()),
    );
    let with_lifetimes = tracing::Dispatch::new(
        tracing_subscriber::registry().with(latte::tracing::LatteLayer::new().span_lifetimes(true)),
    );
    [
        ("span life, registry + no-op layer", noop),
        ("span life, LatteLayer", bridged),
        ("span life, LatteLayer, lifetimes on", with_lifetimes),
    ]
    .into_iter()
    .map(|(name, dispatch)| {
        row("Trace", name, move || {
            tracing::dispatcher::with_default(&dispatch, || {
                for _ in 0..CALLS {
                    let _entered = tracing::info_span!("bench_span_life").entered();
                }
            })
        })
    })
    .collect()
}

/// Fast Start+Stop with many ids live, interned and static ids, and interning itself.
fn ids() -> Vec<Row> {
    let mut rows = Vec::new();
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
    // Run-time ids: interning a text already interned (what a caller that does not keep
    // the `&'static Id` pays), and recording through an interned id vs a static one.
    let text = String::from("bench_interned");
    rows.push(row("Ids", "Id::intern of a known text", move || {
        for _ in 0..CALLS {
            black_box(Id::intern(black_box(&text)).ok());
        }
    }));
    let interned = Id::intern("bench_interned").expect("under the limit");
    rows.push(row("Ids", "Fast S+S, interned id", move || {
        for _ in 0..CALLS {
            latte::start(interned, Mode::Fast);
            latte::stop(interned, Mode::Fast);
        }
    }));
    static STATIC_ID: Id = Id::new("bench_static");
    rows.push(row("Ids", "Fast S+S, static Id", || {
        for _ in 0..CALLS {
            latte::start(&STATIC_ID, Mode::Fast);
            latte::stop(&STATIC_ID, Mode::Fast);
        }
    }));
    rows.extend(rotating());
    rows
}

/// Ids live on the thread in the rotating case.
const ROTATING: usize = 1000;

/// A Start+Stop whose id rotates over 1,000 live ids (each call a different id, so each
/// touches its id's entry and ring cold), beside the model of the same: 1,000 rings
/// indexed by a rotating counter, every page written. The target's ids are prepared
/// ([`latte::collect::prepare`]: rings at their capacity, every page written), as the
/// model's rings are; the other row's rings grow from 1,024 slots while the bench runs
/// and the OS backs each page when the first sample reaches it (an `info` line).
fn rotating() -> Vec<Row> {
    let ids = live_ids(ROTATING);
    let prepared = leaked_ids("bench_prepared", ROTATING);
    latte::collect::prepare(&prepared);
    let rings = model::Rings::new(ROTATING);
    vec![
        row("Ids", "Fast S+S, rotating 1,000 ids", move || {
            for i in 0..CALLS as usize {
                let id = ids[i % ROTATING];
                latte::start(id, Mode::Fast);
                latte::stop(id, Mode::Fast);
            }
        }),
        row("Ids", "Fast S+S, rotating 1,000 prepared ids", move || {
            for i in 0..CALLS as usize {
                let id = prepared[i % ROTATING];
                latte::start(id, Mode::Fast);
                latte::stop(id, Mode::Fast);
            }
        }),
        row("Model", "model Fast S+S, rotating 1,000", move || {
            for i in 0..CALLS as usize {
                let i = i % ROTATING;
                model::start::<model::Fast>(i as u32);
                model::stop_into::<model::Fast>(&rings, i);
            }
        }),
    ]
}

/// The table: every row's statistics over the trials, and its median in RDTSCs.
fn print_table(rows: &[Row], pinned: bool, rdtsc: f64) {
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
    for r in rows {
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
}

/// With the flight recorder on, its target: Fast Start+Stop against the model of the
/// same job without a timeline.
fn flight_target(median: &dyn Fn(&str) -> f64) {
    println!("\nflight recorder on: every latte row above also keeps its scopes' timeline");
    let value = median("Fast Start+Stop") / median("model Fast Start+Stop");
    println!(
        "target {:<46} {value:>6.3}  (target <= 1.3) {}",
        "Fast Start+Stop, flight recorder on / model",
        if value <= 1.3 { "met" } else { "MISSED" }
    );
}

/// The targets: each record path against the reads it needs and against its model.
fn targets(median: &dyn Fn(&str) -> f64) {
    let rdtsc = median("RDTSC");
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
    for (latte_row, model_row, label) in [
        (
            "Fast Start+Stop",
            "model Fast Start+Stop",
            "Fast Start+Stop / model",
        ),
        (
            "Mid Start+Stop",
            "model Mid Start+Stop",
            "Mid Start+Stop / model",
        ),
        (
            "Hard Start+Stop",
            "model Hard Start+Stop",
            "Hard Start+Stop / model",
        ),
        ("pulse", "model pulse", "pulse / model"),
        (
            "Fast Start+Stop, 8 nested",
            "model Fast Start+Stop, 8 nested",
            "Fast 8 nested Start+Stop / model",
        ),
        (
            "Fast S+S, rotating 1,000 prepared ids",
            "model Fast S+S, rotating 1,000",
            "Fast S+S rotating 1,000 ids / model",
        ),
    ] {
        target(label, median(latte_row) / median(model_row), 1.05);
    }
    front_end_targets(median, &target);
    switch_targets(median, &target);
    target(
        "Fast S+S 1,000 ids / 1 id",
        median("Fast S+S, 1000 ids live") / median("Fast S+S, 1 ids live"),
        1.1,
    );
    let layer_cost =
        median("span enter+exit, LatteLayer") - median("span enter+exit, registry only");
    target(
        "LatteLayer's own cost / Fast Start+Stop",
        layer_cost / median("Fast Start+Stop"),
        1.3,
    );
    span_life_target(median, &target);
}

/// What LatteLayer adds to a span's whole life (made, entered, exited, closed) over the
/// registry with a no-op layer, against a Fast Start+Stop.
fn span_life_target(median: &dyn Fn(&str) -> f64, target: &dyn Fn(&str, f64, f64)) {
    let base = median("span life, registry + no-op layer");
    target(
        "LatteLayer's cost per span life / Fast S+S",
        (median("span life, LatteLayer") - base) / median("Fast Start+Stop"),
        1.3,
    );
}

/// The scope guard and the attribute cost what the pair of macros they stand for costs.
fn front_end_targets(median: &dyn Fn(&str) -> f64, target: &dyn Fn(&str, f64, f64)) {
    for (row, label) in [
        (
            "latte_scope! fn call",
            "latte_scope! call / Fast Start+Stop",
        ),
        (
            "#[latte::timed] fn call",
            "#[latte::timed] call / Fast Start+Stop",
        ),
    ] {
        target(label, median(row) / median("Fast Start+Stop"), 1.02);
    }
}

/// Off, the hot path does no more than on (5% for the noise between two rows).
fn switch_targets(median: &dyn Fn(&str) -> f64, target: &dyn Fn(&str, f64, f64)) {
    target(
        "Fast Start+Stop, recording off / on",
        median("Fast Start+Stop, recording off") / median("Fast Start+Stop"),
        1.05,
    );
    target(
        "pulse, recording off / on",
        median("pulse, recording off") / median("pulse"),
        1.05,
    );
}

/// Each limit model against the bare reads it needs, for information.
fn models_against_reads(median: &dyn Fn(&str) -> f64) {
    for (model_row, reads, label) in [
        (
            "model Fast Start+Stop",
            "2 x RDTSC",
            "model Fast S+S / 2 x RDTSC",
        ),
        (
            "model Mid Start+Stop",
            "2 x RDTSCP",
            "model Mid S+S / 2 x RDTSCP",
        ),
        (
            "model Hard Start+Stop",
            "2 x LFENCE+RDTSCP",
            "model Hard S+S / 2 x LFENCE+RDTSCP",
        ),
        ("model pulse", "RDTSC", "model pulse / RDTSC"),
    ] {
        println!(
            "info   {label:<46} {:>6.3}",
            median(model_row) / median(reads)
        );
    }
}

/// Other ratios printed for information, without a target.
fn infos(median: &dyn Fn(&str) -> f64) {
    let rdtsc = median("RDTSC");
    let layer_cost =
        median("span enter+exit, LatteLayer") - median("span enter+exit, registry only");
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
        "info   span enter+exit via LatteLayer / Fast S+S      {:>6.3}",
        median("span enter+exit, LatteLayer") / median("Fast Start+Stop")
    );
    println!("info   LatteLayer's own cost per enter+exit          {layer_cost:>6.1} cycles");
    println!(
        "info   span life, lifetimes on: cost / Fast S+S       {:>6.3}",
        (median("span life, LatteLayer, lifetimes on")
            - median("span life, registry + no-op layer"))
            / median("Fast Start+Stop")
    );
    println!(
        "info   rotating 1,000 ids, rings growing / model      {:>6.3}",
        median("Fast S+S, rotating 1,000 ids") / median("model Fast S+S, rotating 1,000")
    );
    println!(
        "info   Id::intern of a known text                    {:>6.1} cycles",
        median("Id::intern of a known text")
    );
    println!(
        "info   Fast S+S interned id / static Id              {:>6.3}",
        median("Fast S+S, interned id") / median("Fast S+S, static Id")
    );
    println!(
        "info   Fast Timer start+drop / Fast S+S               {:>6.3}",
        median("Fast Timer start+drop") / median("Fast Start+Stop")
    );
    println!(
        "info   ThreadLocal::get_or_default - std TLS access  {:>6.1} cycles",
        median("thread_local::ThreadLocal") - median("std thread_local! (const)")
    );
}
