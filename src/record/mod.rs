//! The hot path: what runs inside the user's loop, and what readers need to find it.
//!
//! Each function resolves its [`Id`] (one relaxed load once the call site is warm),
//! reaches the thread's recorder through a `const`-initialised thread-local, reads the
//! timer and writes two words. No lock, allocation or syscall after the first use of a
//! call site on a thread.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the public recording functions, [`Scope`] |
//! | `timer.rs` | [`Timer`]: a scope off the stack, which may close on another thread |
//! | `id.rs` | [`Id`]: a name and its dense index, the interner |
//! | `local.rs`, `cold.rs` | the per-thread recorder: stack and id table (hot), first use and [`prepare`] (cold) |
//! | `stack.rs` | the stack of open scopes: positions, the floor, a full stack and missed Stops (cold) |
//! | `node.rs` | the call tree: how a Start finds its node, self time, the node limit |
//! | `marks.rs` | frame marks: each node's calls and self time per frame, read off the rings' sums |
//! | `id_table.rs`, `word.rs` | the id table's entries; the words a signal handler may touch |
//! | `open.rs` | another thread's open scopes, read while it records |
//! | `unordered.rs` | the `tracing` bridge's exit: out of LIFO order, handing back the ticks |
//! | `sample.rs` | the sample word's private layout, [`Sample`] |
//! | `switch.rs` | [`set_recording`]: recording paused and resumed at run time |
//! | `alloc/` | [`alloc::Counting`]: allocations counted in the innermost open scope's node; allocation-free scopes (`rules.rs`) |
//! | `budget.rs` | the memory cap: bytes charged by rings, refused past the cap |
//! | `flight.rs` | the flight recorder's per-thread buffer of recent scopes; its loom model in `flight/` |
//! | `ring/` | the single-writer ring, its read protocol and its signal-safe claim; tests and loom model in `ring/tests.rs` |
//! | `registry/` | every thread that recorded, alive or exited; compaction and merging |
//! | `sync.rs` | the atomics, swapped for `loom`'s in model tests |
//! | `fork.rs` | process-wide state made afresh in a forked child |

pub mod alloc;
pub(crate) mod budget;
mod cold;
pub(crate) mod flight;
pub(crate) mod fork;
pub(crate) mod id;
mod id_table;
pub(crate) mod local;
pub(crate) mod marks;
pub(crate) mod node;
pub(crate) mod open;
pub(crate) mod registry;
pub(crate) mod ring;
pub(crate) mod sample;
mod stack;
pub(crate) mod switch;
pub(crate) mod sync;
mod timer;
#[cfg(feature = "tracing")]
mod unordered;
#[cfg(feature = "tracing")]
pub(crate) use unordered::Exit;
pub(crate) mod word;

// Without `record` the bodies that read the clock compile away.
#[cfg_attr(not(feature = "record"), allow(unused_imports))]
use crate::clock::{self, Mode};
use core::marker::PhantomData;
pub use id::Id;
pub use marks::frame_mark;
pub use sample::{Sample, SampleKind};
pub use switch::{Switch, recording, set_recording};
pub use timer::Timer;

/// Opens a scope of `id` on this thread, reading the timer in `mode`.
///
/// Scopes nest and are closed by [`stop`] with the same id. The
/// [`latte_start!`](crate::latte_start) macro makes the `static Id` for you.
///
/// The thread's stack holds the innermost [`Builder::stack_depth`](crate::Builder::stack_depth)
/// open scopes (64 by default). A Start on a full stack gives up the *oldest* open
/// scope, counted as abandoned under its id (`abandoned_scopes`, and per id in the
/// report's `unpaired` and the capture's `ThreadCapture::unpaired`), so the newest
/// scopes keep recording: a Stop missed on every call of some function fills the stack
/// with its scopes, and they are the ones given up. The Stop of an abandoned scope
/// records nothing and counts nothing more.
///
/// ```
/// use latte::{Id, Mode};
/// static FRAME: Id = Id::new("frame");
/// static PHYSICS: Id = Id::new("physics");
/// latte::start(&FRAME, Mode::Fast);
/// latte::start(&PHYSICS, Mode::Mid);
/// latte::stop(&PHYSICS, Mode::Mid);
/// latte::stop(&FRAME, Mode::Fast);
/// assert_eq!(latte::snapshot("physics").len(), 1);
/// ```
#[inline(always)]
pub fn start(id: &Id, mode: Mode) {
    #[cfg(feature = "record")]
    start_index(id.index(), mode);
    #[cfg(not(feature = "record"))]
    let _ = (id, mode);
}

/// Makes the calling thread ready to record `ids` without a page fault or an
/// allocation: registers the thread, makes its stack, its table entries and one ring
/// per id, and writes every page of them. Call it before a hot loop whose first
/// iterations matter; it records nothing (a prepared ring reports 0 samples). It also
/// makes the ids safe to record from a signal handler on this thread (see
/// `docs/signal-safety.md`): nothing left for a first use to allocate or lock.
///
/// Without it, all of this happens on first use instead: the thread's first Start
/// makes its stack, an id's first sample on the thread makes its ring (a cold path
/// that allocates and takes a lock), and the OS backs each 4 KiB page of a ring (512
/// samples) when the first sample reaches it, a minor page fault inside the loop.
/// Memory: a prepared ring is made at its capacity, not grown from 1,024 slots as
/// it fills, so the default 2^16 samples are 512 KiB resident per (thread, id) at
/// once; a smaller [`Builder::ring_capacity`](crate::Builder::ring_capacity) costs
/// less.
///
/// ```
/// use latte::{Id, Mode};
/// static PARSE: Id = Id::new("doc_prepare_parse");
/// static SEND: Id = Id::new("doc_prepare_send");
/// latte::collect::prepare(&[&PARSE, &SEND]);
/// assert_eq!(latte::capture().component("doc_prepare_parse").unwrap().seen, 0);
/// for _ in 0..3 {
///     latte::start(&PARSE, Mode::Fast); // no allocation, lock or page fault
///     latte::stop(&PARSE, Mode::Fast);
/// }
/// assert_eq!(latte::snapshot("doc_prepare_parse").len(), 3);
/// ```
pub fn prepare(ids: &[&Id]) {
    #[cfg(feature = "record")]
    {
        // Resolved first: a first use interns the name, outside the recorder.
        let indices: Vec<u32> = ids.iter().map(|id| id.index()).collect();
        local::with(|l| l.prepare(&indices));
    }
    #[cfg(not(feature = "record"))]
    let _ = ids;
}

/// Closes the innermost open scope of `id` on this thread and records its duration.
///
/// The timer is read first, before any bookkeeping. If the innermost open scope has a
/// different id (a Stop was missed), the stack is searched down for `id`; the scopes
/// above it are discarded and counted as orphans under their ids. A Stop with no open
/// scope of `id` is counted and changes nothing; the Stop of a scope abandoned on a
/// full stack (see [`start`]) is absorbed. Nothing here panics.
#[inline(always)]
pub fn stop(id: &Id, mode: Mode) {
    #[cfg(feature = "record")]
    {
        let now = clock::read(mode);
        let idx = id.index();
        local::with(
            #[inline(always)]
            |l| l.stop(idx, mode, now),
        );
    }
    #[cfg(not(feature = "record"))]
    let _ = (id, mode);
}

/// [`start`] of an id already resolved to its index (the `tracing` bridge keeps each
/// span's index, not an [`Id`]).
#[cfg(any(feature = "record", feature = "tracing"))]
#[inline(always)]
pub(crate) fn start_index(idx: u32, mode: Mode) {
    #[cfg(feature = "record")]
    local::with(
        #[inline(always)]
        |l| l.start(idx, mode),
    );
    #[cfg(not(feature = "record"))]
    let _ = (idx, mode);
}

/// Like [`stop`], for scopes that may close out of LIFO order (the `tracing` bridge),
/// of an id already resolved to its index:
/// closes the innermost open scope of `idx` wherever it is on the stack, keeps the ones
/// above it open, and counts an `unordered_stops` anomaly when it was not on top.
/// Returns what the scope measured when plausible; records its ticks as a sample of
/// `record_as`, if given. `now` is the stop read, taken by the caller before any
/// lookup of its own.
#[cfg(feature = "tracing")]
#[inline(always)]
pub(crate) fn stop_unordered(
    idx: u32,
    mode: Mode,
    now: clock::Stamp,
    record_as: Option<u32>,
) -> Option<Exit> {
    #[cfg(feature = "record")]
    {
        let mut exit = None;
        local::with(
            #[inline(always)]
            |l| exit = l.stop_unordered(idx, mode, now, record_as),
        );
        exit
    }
    #[cfg(not(feature = "record"))]
    {
        let _ = (idx, mode, now, record_as);
        None
    }
}

/// The calling thread's serial (see `registry`), which an [`Exit`] names its thread
/// by; 0 before the thread records.
#[cfg(feature = "tracing")]
pub(crate) fn thread_serial() -> u64 {
    #[cfg(feature = "record")]
    {
        let mut serial = 0;
        local::with(|l| serial = l.serial());
        serial
    }
    #[cfg(not(feature = "record"))]
    0
}

/// Records a span's busy total under `idx` on this thread as one scope of (`start`,
/// `stop`) modes, which calibration corrects like one scope: the sum of its polls'
/// ticks and self times, into the call-tree node of its last measured poll when that
/// was on this thread (else at the id's root).
#[cfg(feature = "tracing")]
#[inline(always)]
pub(crate) fn record_span(idx: u32, busy: Exit, start: Mode, stop: Mode) {
    #[cfg(feature = "record")]
    {
        let meta = (start as u64) << sample::START_SHIFT
            | (stop as u64) << sample::STOP_SHIFT
            | sample::BUSY;
        if switch::paused() {
            return;
        }
        let at = (busy.node, busy.serial);
        local::with(
            #[inline(always)]
            |l| l.record_span(idx, at, busy.ticks, busy.own, meta),
        );
    }
    #[cfg(not(feature = "record"))]
    let _ = (idx, busy, start, stop);
}

/// Records the ticks since this thread's previous `pulse` of `id` (Fast read).
///
/// The first pulse of an id on a thread only sets the baseline, so `n` pulses record
/// `n - 1` samples.
///
/// ```
/// use latte::Id;
/// static TICK: Id = Id::new("doc_pulse");
/// for _ in 0..5 {
///     latte::pulse(&TICK);
/// }
/// assert_eq!(latte::snapshot("doc_pulse").len(), 4);
/// ```
#[inline(always)]
pub fn pulse(id: &Id) {
    #[cfg(feature = "record")]
    {
        // The timer is read inside, once this thread's ring for `id` is claimed (see
        // `docs/signal-safety.md`).
        let idx = id.index();
        local::with(
            #[inline(always)]
            |l| l.pulse(idx),
        );
    }
    #[cfg(not(feature = "record"))]
    let _ = id;
}

/// Records a tick count measured some other way, under `id` on this thread.
///
/// Such samples are never overhead-corrected. Values above
/// [`Sample::MAX_TICKS`] are counted as clock anomalies and dropped.
///
/// ```
/// use latte::Id;
/// static EXTERNAL: Id = Id::new("doc_record");
/// latte::record(&EXTERNAL, 1_500);
/// assert_eq!(latte::snapshot("doc_record"), [1_500]);
/// ```
#[inline]
pub fn record(id: &Id, ticks: u64) {
    #[cfg(feature = "record")]
    {
        let idx = id.index();
        local::with(
            #[inline(always)]
            |l| l.record(idx, ticks),
        );
    }
    #[cfg(not(feature = "record"))]
    let _ = (id, ticks);
}

/// Opens a scope of `id` that closes when the returned guard drops.
///
/// ```
/// use latte::{Id, Mode};
/// static LOAD: Id = Id::new("doc_scope");
/// {
///     let _scope = latte::scope(&LOAD, Mode::Fast, Mode::Mid);
///     // ... work ...
/// }
/// assert_eq!(latte::snapshot("doc_scope").len(), 1);
/// ```
#[inline(always)]
pub fn scope(id: &Id, start_mode: Mode, stop_mode: Mode) -> Scope<'_> {
    start(id, start_mode);
    Scope {
        id,
        stop_mode,
        _not_send: PhantomData,
    }
}

/// Guard of an open scope; dropping it records the scope. See [`scope`].
///
/// It is `!Send`: a scope opened on one thread must close on the same thread.
#[must_use = "the scope closes when this guard drops; bind it with `let _scope = ...`"]
pub struct Scope<'a> {
    id: &'a Id,
    stop_mode: Mode,
    _not_send: PhantomData<*const ()>,
}

impl Drop for Scope<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        stop(self.id, self.stop_mode);
    }
}

impl core::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Scope")
            .field("id", &self.id.name())
            .field("stop_mode", &self.stop_mode)
            .finish()
    }
}
