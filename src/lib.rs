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
//! # Design
//!
//! * **Hot path.** A call site resolves its `&'static str` id once to a dense index
//!   (cached in a `static` the macro generates), so the hot path never hashes or
//!   compares strings, and two call sites with the same text are one component. Start
//!   pushes (tick, tag) on a per-thread structure-of-arrays stack; Stop reads the timer
//!   first, checks the top's id (one compare), and stores the delta in the ring found
//!   by indexing the thread's table with the id — O(1) in the number of ids.
//! * **Rings.** 65,536 samples per (thread, id) by default ([`set_ring_capacity`]),
//!   overwrite-oldest, with a count of every sample ever recorded. A ring is created on
//!   an id's first sample on a thread; its pages are backed by the OS only as samples
//!   reach them.
//! * **Concurrency.** Each ring has one writer. Readers ([`capture`], [`snapshot`])
//!   use a fence-based protocol, model-checked with `loom`, that never returns a torn
//!   or mislabelled sample and never slows the writer: on x86_64 a push is two plain
//!   stores.
//! * **Misuse is counted, never fatal.** A Start past the stack limit, a Stop with
//!   nothing open, a Stop whose id is not on top (the frames above are discarded as
//!   orphans, and the right component is recorded), a delta from a counter that went
//!   backwards, a record during thread teardown: each has a counter in [`Anomalies`].
//! * **Threads.** Samples of an exited thread stay readable under its name; its memory
//!   is compacted to the retained samples, and beyond [`Builder::max_exited_threads`]
//!   the oldest exited threads are folded together, so thread churn cannot grow memory
//!   without bound.
//! * **Agent.** [`init`] or [`builder`] start one named drain thread: calibration at
//!   start-up, periodic reports of only the new samples, reports and snapshots on
//!   request through the [`Guard`], the final report when the guard drops (also while
//!   unwinding from a panic). Without it, everything above still works synchronously.
//!
//! See `docs/design.md` in the repository for the full picture with measurements.
//!
//! # Platform support
//!
//! | target | counter | Mid/Hard CPU id |
//! |---|---|---|
//! | x86_64 | `RDTSC` / `RDTSCP` / `LFENCE; RDTSCP` | yes (`IA32_TSC_AUX`) |
//! | aarch64 | `CNTVCT_EL0` (with `ISB` when ordered) | no |
//! | others | OS monotonic clock, nanoseconds | no |
//!
//! # Caveats
//!
//! * Samples are raw counter ticks; converting to time and subtracting the
//!   instrumentation's own overhead is the analysis side's job.
//! * A scope is per thread: a Start on one thread cannot be closed on another
//!   ([`Scope`] is `!Send`).
//! * Configuration ([`set_ring_capacity`], [`set_stack_depth`]) applies to rings and
//!   threads created afterwards; set it before the instrumented code runs.
#![deny(missing_docs)]
// Without `record` the recorder's internals are compiled but, by design, never called.
#![cfg_attr(not(feature = "record"), allow(dead_code))]
#![deny(clippy::undocumented_unsafe_blocks)]

// `#[latte::timed]` expands to `::latte::...` paths; this makes them resolve inside
// this crate too.
extern crate self as latte;

mod agent;
mod analysis;
mod capture;
pub mod clock;
mod config;
mod error;
mod macros;
pub mod platform;
mod record;
mod registry;
mod report;
mod sync;
#[cfg(feature = "tracing")]
#[path = "integrations/tracing.rs"]
pub mod tracing;

pub use agent::{Builder, DEFAULT_MAX_EXITED_THREADS, Format, Guard, builder, init};
pub use analysis::{
    Bypass, Calibration, Cleaning, Fences, ReportOptions, calibrate, calibration, dump,
};
pub use capture::{
    Anomalies, Capture, ComponentCapture, Cursor, Footprint, ThreadCapture, capture, footprint,
    snapshot,
};
pub use clock::Mode;
pub use config::{
    DEFAULT_RING_CAPACITY, DEFAULT_STACK_DEPTH, MAX_RING_CAPACITY, MAX_STACK_DEPTH,
    MIN_RING_CAPACITY, ring_capacity, set_ring_capacity, set_stack_depth, stack_depth,
};
pub use error::Error;
#[doc(inline)]
pub use latte_telemetry_macros::timed;
pub use record::sample::{MAX_DELTA, Sample, SampleKind};
pub use record::{Id, Scope, Timer, pulse, record, scope, start, stop};
#[cfg(feature = "csv")]
pub use report::write_csv;
pub use report::{Data, Overhead, Report, Row, Summary, ThreadReport, Unit, format_value};

/// Exact statistics and the cleaning rule, usable on any tick samples (for example
/// the output of [`snapshot`]).
pub mod stats {
    pub use crate::analysis::clean::{Cleaned, clean};
    pub use crate::analysis::stats::{Moments, moments, quantile};
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[allow(clippy::needless_doctest_main)] // `fn main` reads better in a README
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;

/// Items the macros expand to. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use crate::clock::Mode;
    pub use crate::record::{Id, Timer, pulse, scope, start, stop};

    /// Test support: whether the calling thread holds one of latte's registry locks
    /// (debug builds; always `false` in release).
    pub fn registry_lock_held() -> bool {
        crate::registry::lock_held()
    }
}
