//! `#[latte::timed]`: what the attribute records, under which name and modes, on
//! every way out of a function, and across awaits for an `async fn`.
//!
//! Each test times functions of its own (ids are function names, so unique per test)
//! and reads its own thread's part of a capture: libtest runs every test on a thread
//! named after it.

use latte::collect::{SampleKind, ThreadCapture};
use latte::{Mode, latte_start, latte_stop};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

/// The calling thread's part of a fresh capture.
fn mine() -> ThreadCapture {
    let name = std::thread::current()
        .name()
        .expect("test threads are named")
        .to_owned();
    latte::capture()
        .threads
        .into_iter()
        .find(|t| t.name == name && !t.exited)
        .expect("this thread has recorded")
}

/// The kinds of the calling thread's samples of `id`, oldest first.
fn my_kinds(id: &str) -> Vec<SampleKind> {
    mine()
        .component(id)
        .map(|c| c.samples.iter().map(|s| s.kind()).collect())
        .unwrap_or_default()
}

fn scope(start: Mode, stop: Mode) -> SampleKind {
    SampleKind::Scope { start, stop }
}

/// An `async` function's kind: a Timer, measured off the stack (wall time).
fn timer(start: Mode, stop: Mode) -> SampleKind {
    SampleKind::Timer { start, stop }
}

fn assert_no_anomalies(thread: &ThreadCapture) {
    assert_eq!(
        thread.anomalies.total(),
        0,
        "thread {}: {:?}",
        thread.name,
        thread.anomalies
    );
}

// ------------------------------------------------------------------------ names

#[latte::timed]
fn timed_default_name(x: u64) -> u64 {
    x.wrapping_mul(3)
}

#[test]
fn default_name_is_the_function_ident() {
    for x in 0..3 {
        assert_eq!(timed_default_name(x), x * 3);
    }
    assert_eq!(
        my_kinds("timed_default_name"),
        [scope(Mode::Fast, Mode::Fast); 3]
    );
    assert_no_anomalies(&mine());
}

#[latte::timed(name = "timed custom name")]
fn timed_custom_name_fn() {}

#[latte::timed]
fn r#timed_raw_ident() {}

#[test]
fn custom_name_replaces_the_ident_and_raw_idents_lose_their_prefix() {
    timed_custom_name_fn();
    timed_custom_name_fn();
    r#timed_raw_ident();
    assert_eq!(latte::snapshot("timed custom name").len(), 2);
    assert!(latte::snapshot("timed_custom_name_fn").is_empty());
    assert_eq!(latte::snapshot("timed_raw_ident").len(), 1);
}

// ------------------------------------------------------------------------ modes

#[latte::timed(mode = Mid)]
fn timed_mode_mid() {}

#[latte::timed(stop = Hard, start = Mid)]
fn timed_mid_hard() {}

#[latte::timed(stop = Hard)]
fn timed_stop_only() {}

#[latte::timed(start = Hard)]
fn timed_start_only() {}

#[latte::timed(name = "timed_named_mode", mode = Hard)]
fn timed_named_mode() {}

#[test]
fn modes_travel_with_the_samples() {
    timed_mode_mid();
    timed_mid_hard();
    timed_stop_only();
    timed_start_only();
    timed_named_mode();
    use Mode::*;
    assert_eq!(my_kinds("timed_mode_mid"), [scope(Mid, Mid)]);
    assert_eq!(my_kinds("timed_mid_hard"), [scope(Mid, Hard)]);
    assert_eq!(my_kinds("timed_stop_only"), [scope(Fast, Hard)]);
    assert_eq!(my_kinds("timed_start_only"), [scope(Hard, Fast)]);
    assert_eq!(my_kinds("timed_named_mode"), [scope(Hard, Hard)]);
    assert_no_anomalies(&mine());
}

// --------------------------------------------------------------- ways out of a fn

#[latte::timed]
fn timed_early_return(early: bool) -> &'static str {
    if early {
        return "early";
    }
    "late"
}

#[test]
fn early_return_is_timed() {
    assert_eq!(timed_early_return(true), "early");
    assert_eq!(timed_early_return(false), "late");
    assert_eq!(timed_early_return(true), "early");
    assert_eq!(my_kinds("timed_early_return").len(), 3);
    assert_no_anomalies(&mine());
}

#[latte::timed]
fn timed_question_mark(text: &str) -> Result<u32, std::num::ParseIntError> {
    let value: u32 = text.parse()?;
    Ok(value * 2)
}

#[test]
fn question_mark_error_is_timed() {
    assert!(timed_question_mark("not a number").is_err());
    assert_eq!(timed_question_mark("21"), Ok(42));
    assert!(timed_question_mark("").is_err());
    assert_eq!(my_kinds("timed_question_mark").len(), 3);
    assert_no_anomalies(&mine());
}

#[latte::timed]
fn timed_panics_inner(n: u32) -> u32 {
    if n > 0 {
        panic!("timed_panics_inner: deliberate");
    }
    n
}

#[latte::timed]
fn timed_panics_outer(n: u32) -> u32 {
    timed_panics_inner(n) + 1
}

#[test]
fn panic_unwinds_through_timed_fns_and_leaves_the_stack_consistent() {
    latte_start!("timed_panic_around");
    let caught = std::panic::catch_unwind(|| timed_panics_outer(1));
    latte_stop!("timed_panic_around");
    assert!(caught.is_err());

    // Both frames closed while unwinding, innermost first, and the scope opened
    // around them paired with its stop: nothing was left on or torn off the stack.
    assert_eq!(my_kinds("timed_panics_inner").len(), 1);
    assert_eq!(my_kinds("timed_panics_outer").len(), 1);
    assert_eq!(my_kinds("timed_panic_around").len(), 1);

    latte_start!("timed_after_panic");
    latte_stop!("timed_after_panic");
    assert_eq!(timed_panics_outer(0), 1);
    let me = mine();
    assert_eq!(me.component("timed_after_panic").unwrap().samples.len(), 1);
    // Once under `timed_panic_around`, once at the root: two nodes.
    assert_eq!(me.samples("timed_panics_outer").len(), 2);
    assert_no_anomalies(&me);
}

#[latte::timed(mode = Hard)]
fn timed_recursive(n: u32) -> u32 {
    if n == 0 {
        0
    } else {
        1 + timed_recursive(n - 1)
    }
}

#[test]
fn recursion_records_one_nested_sample_per_call() {
    const CALLS: usize = 20;
    assert_eq!(timed_recursive(CALLS as u32 - 1), CALLS as u32 - 1);
    let me = mine();
    // One call-tree node per level, each under the one before, outermost first.
    let nodes: Vec<usize> = (0..me.components.len())
        .filter(|&i| me.components[i].name == "timed_recursive")
        .collect();
    assert_eq!(nodes.len(), CALLS);
    for pair in nodes.windows(2) {
        assert_eq!(me.components[pair[1]].parent, Some(pair[0]));
    }
    // Each call contains the one it makes, and the reads are ordered (Hard), so the
    // durations never increase inwards.
    let samples = me.samples("timed_recursive");
    assert_eq!(samples.len(), CALLS);
    let ticks: Vec<u64> = samples.iter().map(|s| s.ticks()).collect();
    assert!(ticks.windows(2).all(|w| w[0] >= w[1]), "{ticks:?}");
    assert_no_anomalies(&me);
}

// ------------------------------------------------------- methods, generics, forms
// (`unsafe fn` is covered by macros/tests/ui/pass: `unsafe_code` is denied here.)

#[derive(Debug, Default)]
struct Counter {
    n: u64,
}

impl Counter {
    #[latte::timed]
    fn timed_method_new() -> Self {
        Counter::default()
    }

    #[latte::timed]
    fn timed_method_bump(&mut self) -> u64 {
        self.n += 1;
        self.n
    }

    #[latte::timed]
    fn timed_method_get(&self) -> u64 {
        self.n
    }

    #[latte::timed]
    fn timed_method_into(self) -> u64 {
        self.n
    }

    #[latte::timed(name = "Counter::timed_method_iter")]
    fn timed_method_iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.n).map(move |i| i * self.n)
    }
}

trait Describe {
    #[latte::timed]
    fn timed_trait_default(&self) -> String {
        "default".to_owned()
    }

    fn timed_trait_required(&self) -> u8;
}

impl Describe for Counter {
    #[latte::timed]
    fn timed_trait_required(&self) -> u8 {
        7
    }
}

#[latte::timed]
fn timed_generic_sum<T, I>(items: I) -> u64
where
    T: Into<u64>,
    I: IntoIterator<Item = T>,
{
    items.into_iter().map(Into::into).sum()
}

#[latte::timed]
extern "C" fn timed_extern_c(x: i32) -> i32 {
    x + 1
}

#[test]
fn methods_generics_and_other_forms() {
    let mut c = Counter::timed_method_new();
    assert_eq!(c.timed_method_bump(), 1);
    assert_eq!(c.timed_method_bump(), 2);
    assert_eq!(c.timed_method_get(), 2);
    assert_eq!(c.timed_method_iter().collect::<Vec<_>>(), [0, 2]);
    assert_eq!(c.timed_trait_default(), "default");
    assert_eq!(c.timed_trait_required(), 7);
    assert_eq!(c.timed_method_into(), 2);

    // Two instantiations share the function's one static id.
    assert_eq!(timed_generic_sum([1u8, 2, 3]), 6);
    assert_eq!(timed_generic_sum(vec![10u32, 20]), 30);

    assert_eq!(timed_extern_c(1), 2);

    let me = mine();
    let count = |id: &str| me.component(id).map_or(0, |c| c.samples.len());
    for (id, n) in [
        ("timed_method_new", 1),
        ("timed_method_bump", 2),
        ("timed_method_get", 1),
        ("Counter::timed_method_iter", 1),
        ("timed_trait_default", 1),
        ("timed_trait_required", 1),
        ("timed_method_into", 1),
        ("timed_generic_sum", 2),
        ("timed_extern_c", 1),
    ] {
        assert_eq!(count(id), n, "{id}");
    }
    assert_no_anomalies(&me);
}

// ---------------------------------------------------------------------- async fn

/// A sync timed fn, called between awaits, so workers use their stacks meanwhile.
#[latte::timed]
fn timed_async_helper(i: u64) -> u64 {
    i.rotate_left(3)
}

#[latte::timed]
async fn timed_async_hop(i: u64) -> u64 {
    let mut acc = i;
    for _ in 0..3 {
        tokio::task::yield_now().await;
        acc = timed_async_helper(acc);
    }
    tokio::time::sleep(Duration::from_micros(50)).await;
    acc
}

#[latte::timed(name = "timed_async_hop_mid", mode = Mid)]
async fn timed_async_hop_mid(i: u64) -> u64 {
    tokio::task::yield_now().await;
    i
}

fn runtime(workers: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(workers)
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn async_fn_is_timed_across_awaits_on_a_multi_thread_runtime() {
    const TASKS: u64 = 32;
    const CALLS: u64 = 8;
    const WORKERS: &str = "timed-async-hop-worker";
    let rt = runtime(WORKERS);
    rt.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|t| {
                tokio::spawn(async move {
                    let mut sum = 0u64;
                    for c in 0..CALLS {
                        sum = sum.wrapping_add(timed_async_hop(t * CALLS + c).await);
                        sum = sum.wrapping_add(timed_async_hop_mid(c).await);
                    }
                    sum
                })
            })
            .collect();
        // One more on this thread, interleaved with the rest.
        timed_async_hop(0).await;
        for task in tasks {
            task.await.unwrap();
        }
    });
    drop(rt); // joins the workers

    let expected = (TASKS * CALLS) as usize;
    assert_eq!(latte::snapshot("timed_async_hop").len(), expected + 1);
    assert_eq!(latte::snapshot("timed_async_hop_mid").len(), expected);
    assert_eq!(
        latte::snapshot("timed_async_helper").len(),
        3 * (expected + 1)
    );

    let capture = latte::capture();
    let workers: Vec<&ThreadCapture> = capture
        .threads
        .iter()
        .filter(|t| t.name == WORKERS)
        .collect();
    assert!(!workers.is_empty());
    let mut on_workers = 0;
    for worker in &workers {
        // Interleaved tasks would corrupt a stack scope's pairing; a Timer never
        // touches the stack, and the sync helper pairs within one poll.
        assert_no_anomalies(worker);
        if let Some(c) = worker.component("timed_async_hop") {
            assert!(
                c.samples
                    .iter()
                    .all(|s| s.kind() == timer(Mode::Fast, Mode::Fast))
            );
            on_workers += c.samples.len();
        }
        if let Some(c) = worker.component("timed_async_hop_mid") {
            assert!(
                c.samples
                    .iter()
                    .all(|s| s.kind() == timer(Mode::Mid, Mode::Mid))
            );
        }
    }
    // Spawned tasks finish on the workers, where their timers drop.
    assert_eq!(on_workers, expected);
    let me = mine();
    assert_eq!(me.component("timed_async_hop").unwrap().samples.len(), 1);
    assert_no_anomalies(&me);
}

#[latte::timed(mode = Hard)]
async fn timed_async_waits(started: std::sync::mpsc::Sender<()>, done: Arc<AtomicBool>) {
    // The timer started before this line: everything after it is inside the sample.
    started.send(()).unwrap();
    while !done.load(Ordering::Acquire) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[test]
fn async_sample_covers_the_sleeps_between_first_poll_and_completion() {
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let done = Arc::new(AtomicBool::new(false));
    // A reference scope, on another thread, strictly inside the async fn's run:
    // opened after the fn signalled its start, closed before it is told to finish.
    let reference = std::thread::Builder::new()
        .name("timed-async-reference".into())
        .spawn({
            let done = done.clone();
            move || {
                started_rx.recv().unwrap();
                {
                    let _spin = latte::latte_scope!("timed_async_reference", Hard);
                    let t0 = Instant::now();
                    while t0.elapsed() < Duration::from_millis(3) {
                        std::hint::spin_loop();
                    }
                }
                done.store(true, Ordering::Release);
            }
        })
        .unwrap();
    runtime("timed-async-waits-worker")
        .block_on(async { tokio::spawn(timed_async_waits(started_tx, done)).await })
        .unwrap();
    reference.join().unwrap();

    let waited = latte::snapshot("timed_async_waits");
    let spun = latte::snapshot("timed_async_reference");
    assert_eq!((waited.len(), spun.len()), (1, 1));
    assert!(
        waited[0] >= spun[0],
        "the async sample ({}) must contain the reference scope ({})",
        waited[0],
        spun[0]
    );
}

#[latte::timed]
async fn timed_async_pending() {
    std::future::pending::<()>().await;
}

#[test]
fn async_timer_starts_at_first_poll_and_records_when_dropped_unfinished() {
    // Created and dropped without a poll: the body never ran, nothing is timed.
    drop(timed_async_pending());
    latte_start!("timed_async_pending_probe"); // so this thread shows in a capture
    latte_stop!("timed_async_pending_probe");
    assert!(my_kinds("timed_async_pending").is_empty());

    let mut future = Box::pin(timed_async_pending());
    let mut cx = Context::from_waker(Waker::noop());
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert!(my_kinds("timed_async_pending").is_empty());
    drop(future);
    assert_eq!(
        my_kinds("timed_async_pending"),
        [timer(Mode::Fast, Mode::Fast)]
    );
    assert_no_anomalies(&mine());
}

fn assert_send<T: Send>(_: &T) {}

#[test]
fn timed_async_futures_stay_send() {
    let hop = timed_async_hop(1);
    assert_send(&hop);
    let (tx, _rx) = std::sync::mpsc::channel();
    let waits = timed_async_waits(tx, Arc::new(AtomicBool::new(true)));
    assert_send(&waits);
    // Its state across the await holds the timer.
    assert_send(&timed_async_pending());
    // And it can be handed to a multi-thread runtime (compile-time check only).
    let _ = || tokio::spawn(timed_async_hop(2));
}
