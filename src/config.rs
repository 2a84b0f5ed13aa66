//! The recorder's limits, as plain data: ring capacity, stack depth, memory cap,
//! exited threads kept, slowest samples kept.
//!
//! A leaf of the module graph: it imports nothing from the crate, so the recorder and
//! the agent read the same definitions. The agent's builder validates and applies them.
//! The options of a report live with the report (`report/options.rs`).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

// ----------------------------------------------------------------- recorder settings

/// Samples kept per (thread, id) unless configured: 2^16, as in the C++ original.
pub const DEFAULT_RING_CAPACITY: usize = 1 << 16;
/// Smallest accepted ring capacity.
pub const MIN_RING_CAPACITY: usize = 2;
/// Largest accepted ring capacity (2^28 samples, 2 GiB of address space per ring).
pub const MAX_RING_CAPACITY: usize = 1 << 28;
/// Open scopes per thread unless configured: 64, as in the C++ original.
pub const DEFAULT_STACK_DEPTH: usize = 64;
/// Largest accepted stack depth.
pub const MAX_STACK_DEPTH: usize = 4096;
/// Call-tree nodes below the root per thread unless configured; new paths past it
/// fold into their parent's node (counted as `folded_paths`).
pub const DEFAULT_NODE_LIMIT: usize = 4096;
/// Largest accepted node limit.
pub const MAX_NODE_LIMIT: usize = 1 << 20;
/// Exited threads kept individually unless configured; older ones are folded.
pub const DEFAULT_MAX_EXITED_THREADS: usize = 256;

/// Entries of a thread's flight-recorder buffer unless configured, when the flight
/// recorder is on: 2^14 closed scopes, 384 KiB a thread (24 bytes an entry).
pub const DEFAULT_FLIGHT_ENTRIES: usize = 1 << 14;
/// Largest accepted flight-recorder buffer: 2^24 entries, 384 MiB a thread.
pub const MAX_FLIGHT_ENTRIES: usize = 1 << 24;
/// Bytes a flight-recorder entry takes: its start and end ticks, its id and depth.
pub const FLIGHT_ENTRY_BYTES: usize = 24;

/// Slots a ring starts with (or its capacity, if smaller): 8 KiB, two pages. It
/// doubles on the writer's side each time it would first overwrite a sample, up to its
/// capacity, so an id that records a few thousand samples never holds more.
pub const RING_START: usize = 1 << 10;

/// Bytes all rings of the user's threads may reserve together unless configured:
/// 1 GiB, 2,048 rings grown to the default capacity (say 64 threads x 32 ids), or
/// 131,072 rings that have not grown.
pub const DEFAULT_MEMORY_CAP: u64 = 1 << 30;

/// Shortest accepted periodic report interval.
pub const MIN_PERIODIC: std::time::Duration = std::time::Duration::from_millis(1);

/// Significant decimal digits of latte's histograms: the recorder's whole-run tallies
/// and the histogram a report row carries. Every value below 2,048 ticks has a bucket of
/// its own; above, a bucket is at most 1/1,024 of its values wide.
pub(crate) const SIGNIFICANT_DIGITS: u8 = 3;

/// The length of a block of the run's time series (`Report::series`) until it merges
/// blocks, ms.
pub(crate) const SERIES_BLOCK_MS: u64 = 50;
/// The most blocks the run's time series holds: past it, adjacent blocks merge in pairs.
pub(crate) const SERIES_MAX_BLOCKS: usize = 64;

/// Slowest samples kept per (thread, id) unless configured.
pub const DEFAULT_SLOWEST: usize = 10;
/// Largest accepted number of slowest samples kept per (thread, id).
pub const MAX_SLOWEST: usize = 1_000;

/// The longest frames each thread keeps whole unless configured: the JSON lists the
/// frames over budget among them.
pub const DEFAULT_FRAMES_LISTED: usize = 1_000;
/// Largest accepted number of frames kept whole per thread.
pub const MAX_FRAMES_LISTED: usize = 100_000;

static SLOWEST: AtomicUsize = AtomicUsize::new(DEFAULT_SLOWEST);
static FRAMES_LISTED: AtomicUsize = AtomicUsize::new(DEFAULT_FRAMES_LISTED);
static RING_CAPACITY: AtomicUsize = AtomicUsize::new(DEFAULT_RING_CAPACITY);
static STACK_DEPTH: AtomicUsize = AtomicUsize::new(DEFAULT_STACK_DEPTH);
static MAX_EXITED_THREADS: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_EXITED_THREADS);
static MEMORY_CAP: AtomicU64 = AtomicU64::new(DEFAULT_MEMORY_CAP);
static NODE_LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_NODE_LIMIT);
/// 0: the flight recorder is off.
static FLIGHT_ENTRIES: AtomicUsize = AtomicUsize::new(0);
static FLIGHT_WINDOW_NS: AtomicU64 = AtomicU64::new(0);

/// Whether `samples` is a valid ring capacity: a power of two within the limits (the
/// ring wraps with a bit mask).
pub(crate) fn ring_capacity_ok(samples: usize) -> bool {
    samples.is_power_of_two() && (MIN_RING_CAPACITY..=MAX_RING_CAPACITY).contains(&samples)
}

/// Whether `depth` is a valid stack depth.
pub(crate) fn stack_depth_ok(depth: usize) -> bool {
    (1..=MAX_STACK_DEPTH).contains(&depth)
}

/// The bytes a ring of `capacity` samples reserves (8 per sample): what the memory
/// cap charges and the footprint counts.
pub(crate) fn ring_bytes(capacity: usize) -> u64 {
    capacity as u64 * 8
}

/// The capacity new rings get.
pub(crate) fn ring_capacity() -> usize {
    RING_CAPACITY.load(Relaxed)
}

/// The stack depth new threads get.
pub(crate) fn stack_depth() -> usize {
    STACK_DEPTH.load(Relaxed)
}

/// Call-tree nodes below the root a thread may make.
pub(crate) fn node_limit() -> usize {
    NODE_LIMIT.load(Relaxed)
}

/// Whether `n` is a valid node limit (0: no node below the root, a flat profile).
pub(crate) fn node_limit_ok(n: usize) -> bool {
    n <= MAX_NODE_LIMIT
}

/// Bytes the rings of the user's threads may reserve together.
pub(crate) fn memory_cap() -> u64 {
    MEMORY_CAP.load(Relaxed)
}

/// Entries of the flight-recorder buffer new threads get; 0 when it is off.
pub(crate) fn flight_entries() -> usize {
    FLIGHT_ENTRIES.load(Relaxed)
}

/// How far back a flight-recorder timeline reaches, ns; 0 when it is off.
pub(crate) fn flight_window_ns() -> u64 {
    FLIGHT_WINDOW_NS.load(Relaxed)
}

/// Whether `entries` is a valid flight-recorder buffer size: a power of two up to
/// [`MAX_FLIGHT_ENTRIES`] (the buffer wraps with a bit mask).
pub(crate) fn flight_entries_ok(entries: usize) -> bool {
    entries.is_power_of_two() && entries <= MAX_FLIGHT_ENTRIES
}

/// Exited threads kept individually before the oldest are folded.
pub(crate) fn max_exited_threads() -> usize {
    MAX_EXITED_THREADS.load(Relaxed)
}

/// How many of the slowest samples of each (thread, id) the whole run keeps.
pub(crate) fn slowest() -> usize {
    SLOWEST.load(Relaxed)
}

/// How many of the longest frames each thread keeps whole.
pub(crate) fn frames_listed() -> usize {
    FRAMES_LISTED.load(Relaxed)
}

/// Sets [`frames_listed`] (validated by the caller: at most [`MAX_FRAMES_LISTED`]).
pub(crate) fn set_frames_listed(n: usize) {
    debug_assert!(n <= MAX_FRAMES_LISTED);
    FRAMES_LISTED.store(n, Relaxed);
}

/// Sets [`slowest`] (validated by the caller: at most [`MAX_SLOWEST`]).
pub(crate) fn set_slowest(n: usize) {
    debug_assert!(n <= MAX_SLOWEST);
    SLOWEST.store(n, Relaxed);
}

/// The recorder's limits, applied together by [`apply`]; `None` keeps the current
/// value.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Limits {
    pub(crate) ring_capacity: Option<usize>,
    pub(crate) stack_depth: Option<usize>,
    pub(crate) memory_cap: Option<u64>,
    pub(crate) node_limit: Option<usize>,
    pub(crate) max_exited: usize,
    /// Entries of new threads' flight-recorder buffers, 0 for none, and how far back
    /// a timeline reaches (always applied).
    pub(crate) flight_entries: usize,
    pub(crate) flight_window: std::time::Duration,
}

/// The recorder settings, applied together. Values must have been validated
/// ([`ring_capacity_ok`], [`stack_depth_ok`]); they apply to rings and threads created
/// afterwards.
pub(crate) fn apply(limits: Limits) {
    debug_assert!(limits.ring_capacity.is_none_or(ring_capacity_ok));
    debug_assert!(limits.stack_depth.is_none_or(stack_depth_ok));
    debug_assert!(limits.flight_entries == 0 || flight_entries_ok(limits.flight_entries));
    if let Some(n) = limits.ring_capacity {
        RING_CAPACITY.store(n, Relaxed);
    }
    if let Some(n) = limits.stack_depth {
        STACK_DEPTH.store(n, Relaxed);
    }
    if let Some(n) = limits.memory_cap {
        MEMORY_CAP.store(n, Relaxed);
    }
    if let Some(n) = limits.node_limit {
        NODE_LIMIT.store(n, Relaxed);
    }
    MAX_EXITED_THREADS.store(limits.max_exited, Relaxed);
    FLIGHT_ENTRIES.store(limits.flight_entries, Relaxed);
    let window_ns = u64::try_from(limits.flight_window.as_nanos()).unwrap_or(u64::MAX);
    FLIGHT_WINDOW_NS.store(window_ns, Relaxed);
}
