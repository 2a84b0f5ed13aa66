//! The two runs of the signal probe, and the accounting they print.

use latte::collect::SampleKind;
use latte::{Id, Mode};
use std::hint::black_box;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};

/// Recorded by the loop only.
static OUTER: Id = Id::new("sig_outer");
/// Recorded by the loop (Fast scopes, value 1, pulses) and by the handler (Mid scopes,
/// value 2, pulses): the handler can interrupt a push into these very rings.
static INNER: Id = Id::new("sig_inner");
static RECORD: Id = Id::new("sig_record");
static PULSE: Id = Id::new("sig_pulse");
/// Recorded by the handler only.
static HANDLER: Id = Id::new("sig_handler");
static HANDLER_PULSE: Id = Id::new("sig_handler_pulse");

/// Handler runs that recorded.
static HANDLED: AtomicU64 = AtomicU64::new(0);

/// Signals the storm waits for.
const STORM_SIGNALS: u64 = 1_000_000;
/// A bound on the loop, so the shared rings never wrap (every sample stays readable).
const MAX_ITERATIONS: u64 = 12_000_000;
const RING: usize = 1 << 24;

/// What the handler records, each time: one sample into each id, five in all.
fn handler_records() {
    latte::start(&HANDLER, Mode::Mid);
    latte::record(&RECORD, 2);
    latte::start(&INNER, Mode::Mid);
    latte::stop(&INNER, Mode::Mid);
    latte::pulse(&PULSE);
    latte::pulse(&HANDLER_PULSE);
    latte::stop(&HANDLER, Mode::Mid);
    HANDLED.fetch_add(1, Relaxed);
}

/// Rings large enough to keep every sample, and every id prepared on this thread, so
/// neither the loop nor the handler allocates or takes a lock.
fn setup() {
    // A flat profile: the handler's scopes open under whatever scope it interrupted,
    // and each such path would be a call-tree node made (allocated) in the handler.
    // The hot path is the same instructions either way (the node memo is read).
    latte::builder()
        .ring_capacity(RING)
        .node_limit(0)
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .and_then(|guard| guard.stop())
        .expect("configure latte");
    latte::collect::prepare(&[&OUTER, &INNER, &RECORD, &PULSE, &HANDLER, &HANDLER_PULSE]);
}

type Action = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

fn install(signal: libc::c_int, action: Action) {
    // SAFETY: a zeroed `sigaction` is a valid empty one; the handler is an `extern "C"`
    // function of the signature `SA_SIGINFO` asks for, and it only does what is safe
    // in a handler (atomics and latte's recording into prepared ids).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = action as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(signal, &sa, std::ptr::null_mut()), 0);
    }
}

/// Busy-waits about `ticks` counter ticks.
fn spin(ticks: u64) {
    let t = latte::clock::ticks();
    while latte::clock::ticks().wrapping_sub(t) < ticks {
        std::hint::spin_loop();
    }
}

extern "C" fn on_alarm(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    handler_records();
}

fn set_timer(micros: libc::suseconds_t) {
    let t = libc::timeval {
        tv_sec: 0,
        tv_usec: micros,
    };
    let it = libc::itimerval {
        it_interval: t,
        it_value: t,
    };
    // SAFETY: plain call with a valid `itimerval`; the old value is not asked for.
    let status = unsafe { libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) };
    assert_eq!(status, 0);
}

fn block(signal: libc::c_int) {
    // SAFETY: a set made by `sigemptyset`/`sigaddset`, applied to this thread only.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// The loop's body: nested scopes, a pulse and a record.
#[inline(always)]
fn iteration() {
    latte::start(&OUTER, Mode::Fast);
    latte::start(&INNER, Mode::Fast);
    spin(1_000);
    latte::stop(&INNER, Mode::Fast);
    latte::pulse(&PULSE);
    latte::record(&RECORD, 1);
    spin(1_000);
    latte::stop(&OUTER, Mode::Fast);
}

pub fn storm() {
    setup();
    install(libc::SIGALRM, on_alarm);
    set_timer(10);
    let mut iterations = 0;
    while HANDLED.load(Relaxed) < STORM_SIGNALS && iterations < MAX_ITERATIONS {
        iteration();
        iterations += 1;
    }
    set_timer(0);
    block(libc::SIGALRM);
    account(iterations);
}

// ------------------------------------------------------------------ single-stepping

/// Addresses the trap handler interrupted, in order: while it recorded (`HITS`), and
/// in the reference round, where it only notes the path (`PATH`).
static HITS: [AtomicU64; 1 << 16] = [const { AtomicU64::new(0) }; 1 << 16];
static HIT_COUNT: AtomicUsize = AtomicUsize::new(0);
static PATH: [AtomicU64; 1 << 12] = [const { AtomicU64::new(0) }; 1 << 12];
static PATH_COUNT: AtomicUsize = AtomicUsize::new(0);
/// Whether the trap handler records (off in the reference round).
static RECORDING: AtomicBool = AtomicBool::new(false);
/// While set, the trap flag stays on; the first trap after it is cleared turns it off.
static STEPPING: AtomicBool = AtomicBool::new(false);
const TRAP_FLAG: i64 = 0x100;

extern "C" fn on_trap(_: libc::c_int, _: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: with `SA_SIGINFO` the third argument is the interrupted `ucontext_t`,
    // valid (and ours to change) for the duration of the handler.
    let regs = unsafe { &mut (*context.cast::<libc::ucontext_t>()).uc_mcontext.gregs };
    let recording = RECORDING.load(SeqCst);
    let (addresses, count) = if recording {
        (&HITS[..], &HIT_COUNT)
    } else {
        (&PATH[..], &PATH_COUNT)
    };
    if let Some(slot) = addresses.get(count.fetch_add(1, Relaxed)) {
        slot.store(regs[libc::REG_RIP as usize] as u64, Relaxed);
    }
    if !STEPPING.load(SeqCst) {
        regs[libc::REG_EFL as usize] &= !TRAP_FLAG;
    }
    if recording {
        handler_records();
    }
}

fn trace_on() {
    STEPPING.store(true, SeqCst);
    // SAFETY: sets the trap flag in RFLAGS through the stack (balanced push and pop);
    // each following instruction then raises SIGTRAP, which `on_trap` handles.
    unsafe {
        std::arch::asm!("pushfq", "or qword ptr [rsp], 0x100", "popfq");
    }
}

fn trace_off() {
    // The next trap's handler clears the flag in the context it returns to.
    STEPPING.store(false, SeqCst);
}

#[inline(never)]
fn probe_start_fast(id: &Id) {
    latte::start(id, Mode::Fast);
}

#[inline(never)]
fn probe_stop_fast(id: &Id) {
    latte::stop(id, Mode::Fast);
}

#[inline(never)]
fn probe_start_hard(id: &Id) {
    latte::start(id, Mode::Hard);
}

#[inline(never)]
fn probe_stop_hard(id: &Id) {
    latte::stop(id, Mode::Hard);
}

#[inline(never)]
fn probe_pulse(id: &Id) {
    latte::pulse(id);
}

#[inline(never)]
fn probe_record(id: &Id, ticks: u64) {
    latte::record(id, ticks);
}

/// The probes' addresses, by name, for the test to find in the disassembly.
fn probes() -> [(&'static str, usize); 6] {
    [
        ("probe_start_fast", probe_start_fast as *const () as usize),
        ("probe_stop_fast", probe_stop_fast as *const () as usize),
        ("probe_start_hard", probe_start_hard as *const () as usize),
        ("probe_stop_hard", probe_stop_hard as *const () as usize),
        ("probe_pulse", probe_pulse as *const () as usize),
        ("probe_record", probe_record as *const () as usize),
    ]
}

/// One round: every probe once, single-stepped if `traced`.
fn round(traced: bool) {
    if traced {
        trace_on();
    }
    probe_start_fast(black_box(&OUTER));
    probe_start_hard(black_box(&INNER));
    probe_stop_hard(black_box(&INNER));
    probe_pulse(black_box(&PULSE));
    probe_record(black_box(&RECORD), 1);
    probe_stop_fast(black_box(&OUTER));
    trace_off();
}

/// Prints the distinct addresses of `addresses[..count]`, one `{key} 0x...` line each.
fn print_addresses(key: &str, addresses: &[AtomicU64], count: &AtomicUsize) {
    let n = count.load(Relaxed);
    assert!(n <= addresses.len(), "more traps than slots for {key}");
    let mut seen: Vec<u64> = addresses[..n].iter().map(|h| h.load(Relaxed)).collect();
    seen.sort_unstable();
    seen.dedup();
    for a in seen {
        println!("{key} {a:#x}");
    }
}

pub fn step() {
    setup();
    install(libc::SIGTRAP, on_trap);
    // A warm-up round (the first pulse only sets a baseline), then the reference
    // round: the path each probe takes in the steady state, noted without recording.
    round(false);
    round(true);
    // Then every boundary of that path is interrupted by a recording handler.
    RECORDING.store(true, SeqCst);
    const ROUNDS: u64 = 3;
    for _ in 0..ROUNDS {
        round(true);
    }
    block(libc::SIGTRAP);
    for (name, addr) in probes() {
        println!("fn {name} {addr:#x}");
    }
    println!("traps {}", HIT_COUNT.load(Relaxed));
    print_addresses("path", &PATH, &PATH_COUNT);
    print_addresses("hit", &HITS, &HIT_COUNT);
    // The outer scopes are Fast/Fast and the inner ones Hard/Hard; the warm-up and
    // reference rounds recorded too.
    account(ROUNDS + 2);
}

// ------------------------------------------------------------------------ accounting

/// Prints what the test checks: the loop's own counts, the handler's counts, and the
/// re-entrant records, from this thread's capture.
fn account(iterations: u64) {
    let capture = latte::capture();
    let me = capture
        .threads
        .iter()
        .find(|t| t.name == "main")
        .expect("the main thread recorded");
    println!("iterations {iterations}");
    println!("handled {}", HANDLED.load(Relaxed));
    for (name, n) in me.anomalies.iter() {
        println!("anomaly_{name} {n}");
    }
    for c in &me.components {
        println!("seen_{} {}", c.name, c.seen);
        assert_eq!(c.samples.len() as u64, c.seen, "{}: a ring wrapped", c.name);
        let mut kinds = std::collections::BTreeMap::<String, u64>::new();
        for s in &c.samples {
            let kind = match s.kind() {
                SampleKind::Scope { start, stop } => format!("{start:?}_{stop:?}"),
                SampleKind::Timer { start, stop } => format!("timer_{start:?}_{stop:?}"),
                SampleKind::Busy { start, stop } => format!("busy_{start:?}_{stop:?}"),
                SampleKind::Pulse => "Pulse".to_owned(),
                SampleKind::Recorded => format!("value{}", s.ticks()),
            };
            *kinds.entry(kind).or_default() += 1;
        }
        for (kind, n) in kinds {
            println!("kind_{}_{kind} {n}", c.name);
        }
    }
}
