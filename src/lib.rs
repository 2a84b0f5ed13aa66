//! In-process latency telemetry for hot paths measured in nanoseconds.
//!
//! Put `latte_start!`/`latte_stop!`, a scope guard or `latte_pulse!` around the code
//! you care about; latte reads the CPU's time-stamp counter at each end and stores the
//! delta in a per-thread ring. Reading the rings — for a snapshot or a report — is safe
//! while the threads keep recording.
//!
//! ```
//! use latte::{latte_pulse, latte_scope, latte_start, latte_stop};
//!
//! fn handle(order: u64) -> u64 {
//!     let _scope = latte_scope!("handle"); // closes on every return path
//!     latte_start!("risk", Mid);           // RDTSCP: ordered, knows the CPU
//!     let risk = order.rotate_left(7) ^ 0x9e37;
//!     latte_stop!("risk", Mid);
//!     risk
//! }
//!
//! for order in 0..1_000 {
//!     std::hint::black_box(handle(order));
//!     latte_pulse!("loop"); // time between successive iterations
//! }
//!
//! assert_eq!(latte::snapshot("handle").len(), 1_000);
//! assert_eq!(latte::snapshot("loop").len(), 999); // the first pulse is the baseline
//! let capture = latte::capture();
//! let risk = capture.component("risk").unwrap();
//! assert_eq!(risk.seen, 1_000);
//! ```
//!
//! # The API by purpose
//!
//! | purpose | items |
//! |---|---|
//! | **Record** (the hot path) | [`latte_start!`], [`latte_stop!`], [`latte_pulse!`], [`latte_scope!`], [`#[timed]`](timed), [`start`], [`stop`], [`pulse`], [`record`], [`scope`], [`Scope`], [`Timer`], [`Id`] ([`Id::intern`] for ids known only at run time), [`Mode`] |
//! | **Run the agent** | [`init`], [`builder`], [`Builder`], [`Guard`], [`Format`] |
//! | **Read the rings** (raw samples, the newest window) | [`capture`], [`snapshot`], [`Capture`], [`collect::footprint`]; the parts in [`collect`], and [`collect::prepare`] to make a thread's rings ahead of its hot loop |
//! | **Report** (statistics) | [`Report`], [`ReportOptions`], [`Unit`], [`Data`], [`Cleaning`]; the parts in [`report`]; the statistics and calibration in [`analyze`] |
//! | **Clocks** | [`clock`]: reads, the clock in use and why |
//! | **Export** (dashboards, many processes) | [`Exporter`], [`Builder::exporter`]; the parts in [`exporter`]. Prometheus `/metrics` and OTLP pushes are crates of their own: `latte-telemetry-prometheus`, `latte-telemetry-otlp` |
//! | **Integrations** | [`tracing`] (feature `tracing`): spans as scopes |
//! | **Errors** | [`Error`] |
//!
//! Each read says its scope: *ring window* ([`capture`], [`snapshot`]: what the rings
//! still hold), *whole run* ([`Report::collect`], [`Guard::report`]), *interval*
//! ([`Guard::report_interval`], periodic reports: since the previous one).
//! `docs/api.md` in the repository lists every public item.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `record` | yes | recording: without it every macro and function compiles to nothing. With `default-features = false, features = ["record"]` a library gets the lean core: the record API and the ring-window reads, one third-party crate |
//! | `agent` | yes | [`Report`], the statistics ([`analyze`]), the renderers and the agent ([`init`], [`builder`]), with its [`exporter`] trait (Prometheus and OTLP are the crates `latte-telemetry-prometheus` and `latte-telemetry-otlp`) |
//! | `json`, `csv` | yes | JSON reports ([`Format::Json`], [`report::JsonStyle`]); [`Capture::write_csv`] |
//! | `tracing` | yes | [`tracing`]: `tracing` spans as scopes |
//!
//! # Design
//!
//! * **Hot path.** A call site resolves its `&'static str` name once to a dense index
//!   (cached in the `static Id` the macro generates), so the hot path never hashes or
//!   compares strings, and two call sites with the same text are one component. Start
//!   pushes (tick, tag) on a per-thread structure-of-arrays stack; Stop reads the timer
//!   first, checks the top's id (one compare), and stores the delta in the ring found
//!   by indexing the thread's table with the index — O(1) in the number of ids.
//! * **Rings.** 65,536 samples per (thread, id) by default
//!   ([`Builder::ring_capacity`]), overwrite-oldest, with a count of every sample ever
//!   recorded. A ring is created on an id's first sample on a thread; its pages are
//!   backed by the OS only as samples reach them ([`collect::prepare`] does both ahead
//!   of a hot loop).
//! * **Concurrency.** Each ring has one writer. Readers ([`capture`], [`snapshot`])
//!   use a fence-based protocol, model-checked with `loom`, that never returns a torn
//!   or mislabelled sample and never slows the writer: on x86_64 a push is two plain
//!   stores.
//! * **Misuse is counted, never fatal.** A Start on a full stack (the oldest open scope
//!   is given up, so a missed Stop never stops the newest scopes from recording), a
//!   Stop with nothing open, a Stop whose id is not on top (the frames above are
//!   discarded as orphans, and the right component is recorded), a delta from a
//!   counter that went backwards, a record during thread teardown: each has a counter
//!   in [`collect::Anomalies`], and the frames that ended without their Stop are also
//!   counted per id ([`collect::ThreadCapture::unpaired`]).
//! * **Threads.** Samples of an exited thread stay readable under its name; its memory
//!   is compacted to the retained samples, and beyond [`Builder::max_exited_threads`]
//!   the oldest exited threads are folded together, so thread churn cannot grow memory
//!   without bound.
//! * **Across threads.** A [`Timer`] times what starts on one thread and ends on
//!   another: a `Timer<'static>` (`Send`, 32 bytes) travels inside the message and
//!   records on the thread that drops it. A delta between two cores whose counters
//!   disagree is counted as `cross_core`, apart from clock anomalies (see [`Timer`];
//!   `examples/pipeline.rs` times a producer/consumer queue per stage).
//! * **Agent.** [`init`] or [`builder`] start one named drain thread: calibration at
//!   start-up, periodic reports of only the new samples, reports on request through
//!   the [`Guard`], the final report when the guard drops (also while unwinding from a
//!   panic), and on SIGTERM and SIGINT (Windows: Ctrl-C and console close), unless the program
//!   handles those itself ([`Builder::final_report_on_signals`]). Without it,
//!   everything above still works synchronously.
//!
//! See `docs/architecture.md` for the module map and `docs/design.md` for the full
//! picture with measurements.
//!
//! # Platform support
//!
//! | target | counter | frequency | Mid/Hard CPU id |
//! |---|---|---|---|
//! | x86_64 Linux, Windows | `RDTSC` / `RDTSCP` / `LFENCE; RDTSCP` | measured against the OS clock | yes (`IA32_TSC_AUX`) |
//! | x86_64 macOS | the same | `sysctl machdep.tsc.frequency`, else measured | as macOS leaves it |
//! | aarch64 Linux, macOS | `CNTVCT_EL0` (with `ISB` when ordered) | `CNTFRQ_EL0` (24 MHz on Apple M1 to M3) | no |
//! | others | OS monotonic clock, nanoseconds | 1 tick = 1 ns | no |
//!
//! `docs/platforms.md` has the ordering instructions, the frequency sources, what
//! differs by OS, and what CI tests where (aarch64: cross-built, under qemu-user;
//! Windows: under Wine; macOS: type-checked). The final report on termination needs
//! POSIX signals or Windows console events; elsewhere it is off by default.
//!
//! # Caveats
//!
//! * Samples are raw counter ticks; converting to time and subtracting the
//!   instrumentation's own overhead is the analysis side's job.
//! * A [`Scope`] is per thread (it is `!Send`); a [`Timer`] may close on another thread,
//!   and is the way to time a message from producer to consumer.
//! * Recorder settings ([`Builder::ring_capacity`], [`Builder::stack_depth`]) apply to
//!   rings and threads created after [`Builder::start`]; start the agent before the
//!   instrumented code runs.
#![deny(missing_docs)]
// Without `record` the recorder's internals are compiled but, by design, never called;
// without `agent`, neither are the recorder's parts only the agent calls (the limits it
// applies, the exited threads it folds, the open scopes it reports).
#![cfg_attr(not(all(feature = "record", feature = "agent")), allow(dead_code))]
#![deny(clippy::undocumented_unsafe_blocks)]

// `#[latte::timed]` expands to `::latte::...` paths; this makes them resolve inside
// this crate too.
extern crate self as latte;

// The data flow, one way: agent -> analyze -> collect -> record -> clock -> platform,
// and analyze -> report, agent -> exporter -> report; the features' folders (flight,
// frames, series, tree) between the agent and analyze. `config`, `diagnostics` and `error` are leaves every stage may
// use. `tests/architecture.rs` checks it; `docs/architecture.md` explains it.
#[cfg(feature = "agent")]
mod agent;
mod allocs;
#[cfg(feature = "agent")]
pub mod analyze;
pub mod clock;
pub mod collect;
mod config;
mod diagnostics;
mod error;
#[cfg(feature = "agent")]
pub mod exporter;
#[cfg(feature = "agent")]
pub mod flight;
#[cfg(feature = "agent")]
mod frames;
mod integrations;
mod macros;
mod packed;
mod platform;
mod record;
#[cfg(feature = "agent")]
pub mod report;
#[cfg(feature = "agent")]
mod series;
#[cfg(feature = "agent")]
mod tree;

// Record.
pub use clock::Mode;
#[doc(inline)]
pub use latte_telemetry_macros::timed;
pub use record::{Id, Scope, Timer, alloc, pulse, record, scope, set_recording, start, stop};
// Run the agent.
#[cfg(feature = "agent")]
pub use agent::{Builder, Guard, builder, init};
#[cfg(feature = "agent")]
pub use exporter::Exporter;
#[cfg(feature = "agent")]
pub use report::Format;
// Read the rings.
pub use collect::{Capture, capture, snapshot};
// Report.
#[cfg(feature = "agent")]
pub use report::Report;
#[cfg(feature = "agent")]
pub use report::{Cleaning, Data, ReportOptions, Unit};
// Integrations.
#[cfg(feature = "tracing")]
pub use integrations::tracing;
// Errors.
pub use error::Error;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[allow(clippy::needless_doctest_main)] // `fn main` reads better in a README
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;

/// docs/flight-recorder.md's example, compiled as a doctest.
#[cfg(all(doctest, feature = "json"))]
#[doc = include_str!("../docs/flight-recorder.md")]
struct FlightRecorderDoctest;

/// Items the macros expand to. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use crate::clock::FastMidOrHard;
    pub use crate::clock::Mode;
    pub use crate::record::{Id, Timer, frame_mark, pulse, scope, start, stop};

    /// The loom models of the cross-thread protocols (ring, flight buffer, registry,
    /// the `tracing` bridge's span parts),
    /// each with its name: built with `--cfg latte_loom`, run by the `loom/` package's
    /// harness.
    #[cfg(latte_loom)]
    pub fn loom_models() -> Vec<(&'static str, fn())> {
        use crate::record::{flight, registry, ring};
        [
            ring::loom_model::MODELS,
            flight::loom_model::MODELS,
            registry::loom_model::MODELS,
            registry::loom_model::THREAD_MODELS,
            #[cfg(feature = "tracing")]
            crate::integrations::span_cache::loom_model::MODELS,
        ]
        .concat()
    }
}

/// Hooks for latte's own tests (feature `test-hooks`, off by default; its integration
/// tests turn it on). Not for production, and no stability promise.
#[cfg(feature = "test-hooks")]
pub mod test_hooks {
    /// From now on every clock read returns the mock counter ([`set_mock_ticks`]).
    /// Only possible before anything has read the clock: returns whether the mock is
    /// in use.
    pub fn install_mock_clock() -> bool {
        crate::clock::install_mock()
    }

    /// Sets the mock counter's value.
    pub fn set_mock_ticks(ticks: u64) {
        crate::clock::set_mock(ticks)
    }

    /// Puts the calling thread on a mock core: its reads of the mock counter return
    /// the counter plus `offset` (wrapping, so `offset.wrapping_neg()` reads behind:
    /// cores whose counters disagree), and its Mid and Hard reads return CPU id `cpu`
    /// (Fast reads never know the CPU). A new thread starts at offset 0, CPU unknown.
    pub fn set_mock_core(offset: u64, cpu: u32) {
        crate::clock::set_mock_core(offset, cpu)
    }

    /// Makes the agent's drain thread panic after the command it is working on, as a
    /// bug would: every command still queued must then be answered `AgentStopped`.
    #[cfg(feature = "agent")]
    pub fn kill_drain(guard: &crate::Guard) {
        guard.kill_drain()
    }

    /// Commands queued for the agent's drain thread.
    #[cfg(feature = "agent")]
    pub fn queued_commands(guard: &crate::Guard) -> usize {
        guard.queued()
    }

    /// Whether the calling thread holds one of latte's registry locks (debug builds;
    /// always `false` in release).
    pub fn registry_lock_held() -> bool {
        crate::record::registry::lock_held()
    }

    /// Runs `f` while holding the locks the drain takes on every fold (housekeeping,
    /// the list of frame queues) and the reader turn of every ring of the calling
    /// thread, as a reader copying them would: a child forked inside `f` must not
    /// inherit them held.
    pub fn while_fold_locks_held<T>(f: impl FnOnce() -> T) -> T {
        let rings: Vec<_> = crate::record::local::current_shared()
            .map(|t| t.rings().iter().map(|(_, r)| r.clone()).collect())
            .unwrap_or_default();
        let _turns: Vec<_> = rings.iter().map(|r| r.hold_reader_turn()).collect();
        crate::record::registry::while_housekeeping(|| crate::record::marks::while_queues_held(f))
    }

    /// Bounds the final report on a signal (`Builder::SIGNAL_REPORT_TIMEOUT` unless
    /// set) for every agent of the process from now on.
    #[cfg(feature = "agent")]
    pub fn set_signal_report_timeout(timeout: std::time::Duration) {
        crate::agent::set_signal_report_timeout(timeout)
    }

    /// Sets the clock the run's time series counts its blocks by (`Report::series`),
    /// in milliseconds, for every fold from now on; `None` goes back to the monotonic
    /// clock. Blocks count from the first fold or the last `collect::reset`: reset
    /// after changing it.
    ///
    /// ```
    /// use latte::{Report, ReportOptions};
    /// latte::test_hooks::set_block_clock(Some(1_000));
    /// latte::collect::reset(); // block 0 begins at 1,000 ms
    /// latte::latte_pulse!("doc_block_clock");
    /// latte::latte_pulse!("doc_block_clock");
    /// latte::test_hooks::set_block_clock(Some(1_120)); // block 2
    /// let report = Report::collect(&ReportOptions::default());
    /// assert_eq!(report.series.unwrap().blocks, 3);
    /// latte::test_hooks::set_block_clock(None);
    /// ```
    #[cfg(feature = "agent")]
    pub fn set_block_clock(ms: Option<u64>) {
        crate::collect::fold_clock::set(ms)
    }
}
