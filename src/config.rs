//! The recorder's limits, as plain data: ring capacity, stack depth, memory cap,
//! exited threads kept, slowest samples kept.
//!
//! A leaf of the module graph: it imports nothing from the crate, so the recorder and
//! the agent read the same definitions. The agent's builder validates and applies them.
//! The options of a report live with the report (`report/options.rs`).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

// ----------------------------------------------------------------- recorder settings

/// A recorder setting's default and the values [`Builder`](crate::Builder) accepts for
/// it (a capacity or buffer size is also a power of two), declared once here for the
/// recorder, the builder's checks and its docs.
///
/// ```
/// use latte::collect::Limit;
/// assert_eq!(Limit::RING_CAPACITY.default, 1 << 16);
/// assert!(Limit::SLOWEST.accepts(10) && !Limit::SLOWEST.accepts(Limit::SLOWEST.max + 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The value unless configured.
    pub default: usize,
    /// The smallest accepted value.
    pub min: usize,
    /// The largest accepted value.
    pub max: usize,
}

impl Limit {
    /// Samples kept per (thread, id), overwrite-oldest ([`Builder::ring_capacity`](crate::Builder::ring_capacity)):
    /// 2^16 unless configured, as in the C++ original; 2 to 2^28 (2 GiB of address
    /// space per ring), a power of two.
    pub const RING_CAPACITY: Limit = Limit {
        default: 1 << 16,
        min: 2,
        max: 1 << 28,
    };
    /// Open scopes per thread ([`Builder::stack_depth`](crate::Builder::stack_depth)): 64
    /// unless configured, as in the C++ original; 1 to 4,096.
    pub const STACK_DEPTH: Limit = Limit {
        default: 64,
        min: 1,
        max: 4096,
    };
    /// Call-tree nodes below the root per thread ([`Builder::node_limit`](crate::Builder::node_limit)):
    /// 4,096 unless configured; 0 (a flat profile) to 2^20. New paths past it fold into
    /// their parent's node (counted as `folded_paths`).
    pub const NODE_LIMIT: Limit = Limit {
        default: 4096,
        min: 0,
        max: 1 << 20,
    };
    /// Bytes the rings of the user's threads and the whole run's histograms may take
    /// together ([`Builder::memory_cap`](crate::Builder::memory_cap)): 1 GiB unless
    /// configured, 2,048 rings grown to the default capacity (say 64 threads x 32 busy
    /// ids), or 131,072 rings at their first 1,024 slots; at least one ring's bytes.
    pub const MEMORY_CAP: Limit = Limit {
        default: 1 << 30,
        min: 0,
        max: usize::MAX,
    };
    /// Exited threads kept individually ([`Builder::max_exited_threads`](crate::Builder::max_exited_threads)):
    /// 256 unless configured; older ones are folded.
    pub const EXITED_THREADS: Limit = Limit {
        default: 256,
        min: 0,
        max: usize::MAX,
    };
    /// Slowest samples kept per (thread, id) ([`Builder::slowest`](crate::Builder::slowest)):
    /// 10 unless configured; 0 to 1,000.
    pub const SLOWEST: Limit = Limit {
        default: 10,
        min: 0,
        max: 1_000,
    };
    /// The longest frames each thread keeps whole ([`Builder::frames_listed`](crate::Builder::frames_listed)):
    /// 1,000 unless configured; 0 to 100,000. The JSON lists the frames over budget
    /// among them.
    pub const FRAMES_LISTED: Limit = Limit {
        default: 1_000,
        min: 0,
        max: 100_000,
    };
    /// Entries of a thread's flight-recorder buffer, when the flight recorder is on
    /// ([`Builder::flight_entries`](crate::Builder::flight_entries)):
    /// 2^14 closed scopes unless configured (384 KiB a thread, 24 bytes an entry); 1 to
    /// 2^24 (384 MiB a thread), a power of two.
    pub const FLIGHT_ENTRIES: Limit = Limit {
        default: 1 << 14,
        min: 1,
        max: 1 << 24,
    };

    /// Whether `value` is within the bounds.
    pub const fn accepts(&self, value: usize) -> bool {
        self.min <= value && value <= self.max
    }
}

/// Bytes a flight-recorder entry takes: its start and end ticks, its id and depth.
pub const FLIGHT_ENTRY_BYTES: usize = 24;

/// Slots a ring starts with (or its capacity, if smaller): 8 KiB, two pages. It
/// doubles on the writer's side each time it would first overwrite a sample, up to its
/// capacity, so an id that records a few thousand samples never holds more.
pub const RING_START: usize = 1 << 10;

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

static SLOWEST: AtomicUsize = AtomicUsize::new(Limit::SLOWEST.default);
static FRAMES_LISTED: AtomicUsize = AtomicUsize::new(Limit::FRAMES_LISTED.default);
static RING_CAPACITY: AtomicUsize = AtomicUsize::new(Limit::RING_CAPACITY.default);
static STACK_DEPTH: AtomicUsize = AtomicUsize::new(Limit::STACK_DEPTH.default);
static MAX_EXITED_THREADS: AtomicUsize = AtomicUsize::new(Limit::EXITED_THREADS.default);
static MEMORY_CAP: AtomicU64 = AtomicU64::new(Limit::MEMORY_CAP.default as u64);
static NODE_LIMIT: AtomicUsize = AtomicUsize::new(Limit::NODE_LIMIT.default);
/// 0: the flight recorder is off.
static FLIGHT_ENTRIES: AtomicUsize = AtomicUsize::new(0);
static FLIGHT_WINDOW_NS: AtomicU64 = AtomicU64::new(0);

/// Whether `samples` is a valid ring capacity: a power of two within the limits (the
/// ring wraps with a bit mask).
pub(crate) fn ring_capacity_ok(samples: usize) -> bool {
    samples.is_power_of_two() && Limit::RING_CAPACITY.accepts(samples)
}

/// Whether `depth` is a valid stack depth.
pub(crate) fn stack_depth_ok(depth: usize) -> bool {
    Limit::STACK_DEPTH.accepts(depth)
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
    Limit::NODE_LIMIT.accepts(n)
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

/// Whether `entries` is a valid flight-recorder buffer size: a power of two within
/// [`Limit::FLIGHT_ENTRIES`] (the buffer wraps with a bit mask).
pub(crate) fn flight_entries_ok(entries: usize) -> bool {
    entries.is_power_of_two() && Limit::FLIGHT_ENTRIES.accepts(entries)
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

/// Sets [`frames_listed`] (validated by the caller: within [`Limit::FRAMES_LISTED`]).
pub(crate) fn set_frames_listed(n: usize) {
    debug_assert!(Limit::FRAMES_LISTED.accepts(n));
    FRAMES_LISTED.store(n, Relaxed);
}

/// Sets [`slowest`] (validated by the caller: within [`Limit::SLOWEST`]).
pub(crate) fn set_slowest(n: usize) {
    debug_assert!(Limit::SLOWEST.accepts(n));
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
