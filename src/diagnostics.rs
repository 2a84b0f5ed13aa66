//! latte's diagnostics of itself: the anomaly counters and the memory footprint.
//!
//! Plain values that the recorder produces and every later stage carries to the report:
//! a leaf of the module graph, so the recorder (which counts) and the renderers (which
//! show) share one definition without the renderers importing the recorder.
//!
//! The anomaly counters are one list, below: each line names a counter (its field and
//! JSON key), its singular and plural label in the table, and its doc. From it come
//! [`Anomalies`] (the plain value), the per-thread atomic counters the recorder bumps,
//! and the table's labels. Adding a counter is adding a line.

#[cfg(feature = "agent")]
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A counter's metric kind: the name it was first published under in `/metrics` and
/// OTLP (`was`), else its field's name.
macro_rules! metric_kind {
    ($field:ident was $was:literal) => {
        $was
    };
    ($field:ident) => {
        stringify!($field)
    };
}

/// Builds [`Anomalies`], [`Counters`] and the label table from the list below.
macro_rules! anomaly_list {
    ($($field:ident $(was $was:literal)?: $one:literal / $many:literal, $doc:literal;)+) => {
        /// Counters of everything a thread did that could not be recorded as asked.
        ///
        /// ```
        /// let a = latte::collect::Anomalies { empty_stops: 2, ..Default::default() };
        /// assert_eq!(a.total(), 2);
        /// assert!(latte::collect::Anomalies::NAMES.contains(&"empty_stops"));
        /// assert_eq!(a.iter().find(|(name, _)| *name == "empty_stops"), Some(("empty_stops", 2)));
        /// ```
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #[cfg_attr(feature = "agent", derive(Serialize, Deserialize))]
        #[cfg_attr(feature = "agent", serde(default))]
        pub struct Anomalies {
            $(
                #[doc = $doc]
                $(#[cfg_attr(feature = "agent", serde(alias = $was))])?
                pub $field: u64,
            )+
        }

        /// One atomic per counter, written only by the thread it belongs to (a load and
        /// a store, no locked instruction), read by anyone.
        #[derive(Debug, Default)]
        pub(crate) struct Counters {
            $(pub(crate) $field: AtomicU64,)+
        }

        impl Counters {
            /// The counters' current values.
            pub(crate) fn read(&self) -> Anomalies {
                Anomalies { $($field: self.$field.load(Relaxed),)+ }
            }
        }

        impl Anomalies {
            /// Every counter's name, as in the JSON report, in the table's order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),+];

            /// Each counter's singular and plural label in the table, in the order of
            /// [`NAMES`](Self::NAMES).
            pub const LABELS: &'static [(&'static str, &'static str)] = &[$(($one, $many)),+];

            /// Each counter's kind in `/metrics` and OTLP, in the order of
            /// [`NAMES`](Self::NAMES): its name, but for the counters renamed since the
            /// kind was first published, which keep that first name there (dashboards
            /// and alerts query it) and read under it from older JSON reports.
            pub(crate) const METRIC_KINDS: &'static [&'static str] =
                &[$(metric_kind!($field $(was $was)?)),+];

            fn values(&self) -> [u64; COUNT] {
                [$(self.$field),+]
            }

            fn from_values(values: [u64; COUNT]) -> Anomalies {
                let [$($field),+] = values;
                Anomalies { $($field,)+ }
            }
        }

        /// How many counters the list has.
        const COUNT: usize = [$(stringify!($field)),+].len();
    };
}

anomaly_list! {
    abandoned_scopes was "abandoned_frames": "abandoned scope" / "abandoned scopes", "Open scopes given up because the stack was full: a Start on a full stack takes the oldest open scope's place (its Stop is absorbed later). Per id in `ThreadCapture::unpaired`. Format 6 and older reports, `/metrics` and OTLP call it `abandoned_frames`.";
    empty_stops: "empty stop" / "empty stops", "Stops with no open scope at all. Per id in `ThreadCapture::unpaired`.";
    unmatched_stops: "unmatched stop" / "unmatched stops", "Stops whose id matched no open scope (the stack was left as it was). Per id in `ThreadCapture::unpaired`.";
    orphaned_scopes was "orphaned_frames": "orphaned scope" / "orphaned scopes", "Open scopes discarded because a Stop for a scope below them arrived first. Per id in `ThreadCapture::unpaired`. Format 6 and older reports, `/metrics` and OTLP call it `orphaned_frames`.";
    clock_anomalies: "clock anomaly" / "clock anomalies", "Deltas discarded because the counter went backwards or jumped past `Sample::MAX_TICKS`.";
    cross_core: "cross-core delta" / "cross-core deltas", "Deltas discarded because they were read on two cores whose counters disagree: a `Timer` closed on another thread, or a scope whose Mid/Hard reads name two CPUs, whose counter appeared to go backwards or jump past `Sample::MAX_TICKS`. Not counted in `clock_anomalies`.";
    unordered_stops: "out-of-order span exit" / "out-of-order span exits", "Scopes closed out of LIFO order by the `tracing` bridge: recorded correctly, the scopes opened after them kept open.";
    open_at_exit: "scope open at exit" / "scopes open at exit", "Scopes still open (and not abandoned) when the thread exited. Per id in `ThreadCapture::unpaired`.";
    reentrant: "reentrant record" / "reentrant records", "Records made from inside another record on the same thread, dropped and counted: a signal handler's record into the ring whose push it interrupted (or during a cold path), or a record from an instrumented allocator inside latte's first-use path.";
    over_cap: "record past the memory cap" / "records past the memory cap", "Records dropped because the memory cap (`Builder::memory_cap`) refused their id a ring on this thread: such an id records nothing there. Per id in `ThreadCapture::unpaired` (`Unpaired::over_cap`).";
    folded_paths: "call path folded into its parent" / "call paths folded into their parents", "Call-tree paths the thread could not give a node of their own, past its node limit (`Builder::node_limit`): their scopes record under the enclosing scope's node (and in their id's flat row, as always). Counted once per path.";
    alloc_breaches: "allocation in an allocation-free scope" / "allocations in allocation-free scopes", "Allocations counted (by a `latte::alloc::Counting` allocator) while a scope declared allocation-free (`latte::alloc::forbid`), or a scope inside one, was the innermost open scope. The first one's scope and size are in the report (`ThreadReport::alloc_breach`).";
    frames_lost: "frame dropped" / "frames dropped", "Frames (from one `latte_frame!` mark to the next) dropped because the thread's queue of frames for the reader was full (`record::marks::QUEUED_FRAMES`, 4,096): no report came for that long. Their scopes are in every other figure; only the per-frame figures miss them.";
}

impl Anomalies {
    /// Every counter as (name, value), in the order of [`NAMES`](Self::NAMES).
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + use<> {
        Anomalies::NAMES.iter().copied().zip(self.values())
    }

    /// Every counter as (metric kind, value), in the order of [`NAMES`](Self::NAMES):
    /// what `/metrics` and OTLP label them (see `METRIC_KINDS`).
    pub(crate) fn metric_iter(&self) -> impl Iterator<Item = (&'static str, u64)> + use<> {
        Anomalies::METRIC_KINDS.iter().copied().zip(self.values())
    }

    /// Field-wise sum (saturating).
    pub fn plus(&self, other: &Anomalies) -> Anomalies {
        self.zip(other, u64::saturating_add)
    }

    /// Field-wise difference since an earlier reading of the same counters (saturating).
    pub fn since(&self, earlier: &Anomalies) -> Anomalies {
        self.zip(earlier, u64::saturating_sub)
    }

    /// The sum of all counters (saturating).
    pub fn total(&self) -> u64 {
        self.values().into_iter().fold(0, u64::saturating_add)
    }

    fn zip(&self, other: &Anomalies, f: impl Fn(u64, u64) -> u64) -> Anomalies {
        let (a, b) = (self.values(), other.values());
        Anomalies::from_values(std::array::from_fn(|i| f(a[i], b[i])))
    }
}

/// Adds `n` to a counter that only the calling thread writes (saturating; no locked
/// instruction).
pub(crate) fn bump(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Relaxed).saturating_add(n), Relaxed);
}

/// What happened to one id on one thread besides its samples: its scopes that ended
/// without their Stop, its Stops that found no scope, its records dropped past the
/// memory cap, and its timers cancelled. All but `cancelled_timers` are the per-id
/// split of the thread's `abandoned_scopes`, `orphaned_scopes`, `open_at_exit`,
/// `empty_stops`, `unmatched_stops` and `over_cap` [anomalies](Anomalies) (each thread
/// total is the sum over its ids); a cancelled [`Timer`](crate::Timer) is not misuse
/// and has no thread counter.
///
/// ```
/// use latte::collect::Unpaired;
/// let leak = Unpaired { abandoned: 936, open_at_exit: 64, ..Default::default() };
/// assert_eq!(leak.total(), 1_000);
/// assert_eq!(leak.plus(&leak).abandoned, 1_872);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "agent", derive(Serialize, Deserialize))]
pub struct Unpaired {
    /// Frames given up because the stack was full: a newer Start took their place.
    pub abandoned: u64,
    /// Frames discarded because a Stop for a scope below them arrived first.
    pub orphaned: u64,
    /// Frames still open (and not abandoned) when the thread exited.
    pub open_at_exit: u64,
    /// Records dropped because the memory cap ([`Builder::memory_cap`](crate::Builder::memory_cap))
    /// refused the id a ring on this thread. Not frames: the scopes ended normally,
    /// there was nowhere to keep them.
    #[cfg_attr(feature = "agent", serde(default))]
    pub over_cap: u64,
    /// Timers of this id cancelled on this thread ([`Timer::cancel`](crate::Timer::cancel)):
    /// they recorded nothing, on purpose. Information, not misuse: no anomaly counts it.
    #[cfg_attr(feature = "agent", serde(default))]
    pub cancelled_timers: u64,
    /// Stops of this id on a stack with no open scope at all.
    #[cfg_attr(feature = "agent", serde(default))]
    pub empty_stops: u64,
    /// Stops of this id that matched no open scope (the stack was left as it was).
    #[cfg_attr(feature = "agent", serde(default))]
    pub unmatched_stops: u64,
}

/// Which way a frame ended without its Stop, or a Stop without its frame: selects a
/// field of [`Unpaired`] and the thread counter it adds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnpairedKind {
    Abandoned,
    Orphaned,
    OpenAtExit,
    /// A Stop on a stack with no open scope.
    EmptyStop,
    /// A Stop whose id matched no open scope.
    UnmatchedStop,
}

impl Unpaired {
    /// Field-wise sum (saturating).
    pub fn plus(&self, other: &Unpaired) -> Unpaired {
        Unpaired {
            abandoned: self.abandoned.saturating_add(other.abandoned),
            orphaned: self.orphaned.saturating_add(other.orphaned),
            open_at_exit: self.open_at_exit.saturating_add(other.open_at_exit),
            over_cap: self.over_cap.saturating_add(other.over_cap),
            cancelled_timers: self.cancelled_timers.saturating_add(other.cancelled_timers),
            empty_stops: self.empty_stops.saturating_add(other.empty_stops),
            unmatched_stops: self.unmatched_stops.saturating_add(other.unmatched_stops),
        }
    }

    /// Field-wise difference since an earlier reading of the same counts (saturating).
    pub fn since(&self, earlier: &Unpaired) -> Unpaired {
        Unpaired {
            abandoned: self.abandoned.saturating_sub(earlier.abandoned),
            orphaned: self.orphaned.saturating_sub(earlier.orphaned),
            open_at_exit: self.open_at_exit.saturating_sub(earlier.open_at_exit),
            over_cap: self.over_cap.saturating_sub(earlier.over_cap),
            cancelled_timers: self
                .cancelled_timers
                .saturating_sub(earlier.cancelled_timers),
            empty_stops: self.empty_stops.saturating_sub(earlier.empty_stops),
            unmatched_stops: self.unmatched_stops.saturating_sub(earlier.unmatched_stops),
        }
    }

    /// Frames that ended without their Stop, all ways together (saturating).
    pub fn scopes(&self) -> u64 {
        self.abandoned
            .saturating_add(self.orphaned)
            .saturating_add(self.open_at_exit)
    }

    /// Stops of the id that found no scope to close: empty and unmatched (saturating).
    pub fn stops(&self) -> u64 {
        self.empty_stops.saturating_add(self.unmatched_stops)
    }

    /// Every count of the id: [`scopes`](Self::scopes), [`stops`](Self::stops),
    /// [`over_cap`](Self::over_cap) and [`cancelled_timers`](Self::cancelled_timers)
    /// (saturating). An id is listed with its counts when this is not zero.
    pub fn total(&self) -> u64 {
        self.scopes()
            .saturating_add(self.stops())
            .saturating_add(self.over_cap)
            .saturating_add(self.cancelled_timers)
    }

    /// Adds `n` frames that ended `end`'s way (saturating).
    pub(crate) fn add(&mut self, end: UnpairedKind, n: u64) {
        let field = match end {
            UnpairedKind::Abandoned => &mut self.abandoned,
            UnpairedKind::Orphaned => &mut self.orphaned,
            UnpairedKind::OpenAtExit => &mut self.open_at_exit,
            UnpairedKind::EmptyStop => &mut self.empty_stops,
            UnpairedKind::UnmatchedStop => &mut self.unmatched_stops,
        };
        *field = field.saturating_add(n);
    }
}

impl Counters {
    /// The thread counter that sums [`Unpaired`] of `end`'s field over ids.
    pub(crate) fn unpaired(&self, end: UnpairedKind) -> &AtomicU64 {
        match end {
            UnpairedKind::Abandoned => &self.abandoned_scopes,
            UnpairedKind::Orphaned => &self.orphaned_scopes,
            UnpairedKind::OpenAtExit => &self.open_at_exit,
            UnpairedKind::EmptyStop => &self.empty_stops,
            UnpairedKind::UnmatchedStop => &self.unmatched_stops,
        }
    }
}

/// One id's scopes open on a live thread when a report was taken (its
/// `report::ThreadReport::open`): frames the thread's
/// stack held then, whose Stop had not come yet.
///
/// ```
/// use latte::{Id, Mode, Report, ReportOptions};
/// static FRAME: Id = Id::new("doc_open_frame");
/// latte::start(&FRAME, Mode::Fast);
/// let report = Report::collect(&ReportOptions::default());
/// latte::stop(&FRAME, Mode::Fast);
/// let me = std::thread::current().name().unwrap().to_owned();
/// let section = report.threads.iter().find(|t| t.name == me && !t.exited).unwrap();
/// let open = latte::report::OpenScopes { component: "doc_open_frame".into(), count: 1 };
/// assert!(section.open.contains(&open));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "agent", derive(Serialize, Deserialize))]
pub struct OpenScopes {
    /// The id's name.
    pub component: String,
    /// How many of its scopes were open (more than 1 when nested: a recursion).
    pub count: u64,
}

/// Memory latte holds for its samples, and the threads behind it.
///
/// ```
/// latte::latte_pulse!("doc_footprint");
/// latte::latte_pulse!("doc_footprint");
/// let f = latte::collect::footprint();
/// assert!(f.live_threads >= 1 && f.rings >= 1 && f.bytes > 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "agent", derive(Serialize, Deserialize))]
pub struct Footprint {
    /// Estimated bytes in use: ring pages samples have reached, compacted samples of
    /// exited threads, pooled rings, and ~2 KiB per live thread.
    pub bytes: u64,
    /// Address space reserved by live rings (backed by memory only where written).
    pub ring_bytes_reserved: u64,
    /// Bytes charged against the memory cap: every ring of the user's threads that
    /// exists, live or pooled for reuse, and the whole-run histograms
    /// (`histogram_bytes`). The histograms cannot be refused, so this can pass the cap
    /// by what they grew after it was reached.
    #[cfg_attr(feature = "agent", serde(default))]
    pub memory_cap_used: u64,
    /// The memory cap ([`Builder::memory_cap`](crate::Builder::memory_cap)).
    #[cfg_attr(feature = "agent", serde(default))]
    pub memory_cap: u64,
    /// Live rings.
    pub rings: u64,
    /// Times the memory cap refused a ring the doubling of its slots: that ring keeps
    /// what it has and wraps sooner than its capacity says (a run whose reports keep
    /// up loses nothing by it; one that falls behind loses more).
    #[cfg_attr(feature = "agent", serde(default))]
    pub rings_kept_small: u64,
    /// Threads still running that have recorded.
    pub live_threads: u64,
    /// Exited threads kept individually (compacted to their retained samples).
    pub exited_threads: u64,
    /// Exited threads merged into the `<exited threads>` entry.
    #[cfg_attr(feature = "agent", serde(alias = "folded_threads"))]
    pub merged_threads: u64,
    /// Whole-run histograms (one per thread, id and sample kind, and as many again
    /// for the open interval once interval reports are used), and one per id and
    /// sample kind for the open block of the run's series (`Report::series`). One with
    /// few buckets in use is kept as a table of them, a few hundred bytes.
    pub histograms: u64,
    /// Bytes those histograms hold on the heap, and the series' closed blocks
    /// (included in `bytes` and in `memory_cap_used`).
    pub histogram_bytes: u64,
    /// CPU time the agent's drain thread has used, in nanoseconds (0 without an agent,
    /// or off Linux).
    #[cfg_attr(feature = "agent", serde(default))]
    pub drain_cpu_ns: u64,
    /// Closed scopes a new thread's flight-recorder buffer holds, 0 with the flight
    /// recorder off ([`Builder::flight_recorder`](crate::Builder::flight_recorder)).
    #[cfg_attr(
        feature = "agent",
        serde(default, skip_serializing_if = "crate::diagnostics::is_zero")
    )]
    pub flight_entries: u64,
    /// How far back a flight-recorder timeline reaches, in nanoseconds (0: off).
    #[cfg_attr(
        feature = "agent",
        serde(default, skip_serializing_if = "crate::diagnostics::is_zero")
    )]
    pub flight_window_ns: u64,
    /// Bytes the live threads' flight-recorder buffers take (included in `bytes`;
    /// fixed per thread, not charged against the memory cap).
    #[cfg_attr(
        feature = "agent",
        serde(default, skip_serializing_if = "crate::diagnostics::is_zero")
    )]
    pub flight_bytes: u64,
}

/// Whether a count is zero (fields left out of JSON when so).
#[cfg(feature = "agent")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// CPU time of the latest agent's drain thread, in nanoseconds, as of its last fold
/// (written by the agent, read into [`Footprint::drain_cpu_ns`]).
pub(crate) static DRAIN_CPU_NS: AtomicU64 = AtomicU64::new(0);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_list_serves_value_counters_and_labels() {
        assert_eq!(Anomalies::NAMES.len(), Anomalies::LABELS.len());
        let distinct: [u64; COUNT] = std::array::from_fn(|i| i as u64 + 1);
        let a = Anomalies::from_values(distinct);
        assert_eq!(a.values(), distinct);
        assert_eq!(a.iter().map(|(_, v)| v).collect::<Vec<_>>(), distinct);
        assert_eq!(
            Anomalies::LABELS[0],
            ("abandoned scope", "abandoned scopes")
        );
        // The metric kinds are the names, but for the two renamed counters' first names.
        let renamed: Vec<(&str, &str)> = (Anomalies::NAMES.iter().copied())
            .zip(Anomalies::METRIC_KINDS.iter().copied())
            .filter(|(name, kind)| name != kind)
            .collect();
        assert_eq!(
            renamed,
            [
                ("abandoned_scopes", "abandoned_frames"),
                ("orphaned_scopes", "orphaned_frames")
            ]
        );
        assert_eq!(
            a.metric_iter().map(|(_, v)| v).collect::<Vec<_>>(),
            distinct
        );
        assert_eq!(a.since(&a), Anomalies::default());
        assert_eq!(a.plus(&a).total(), 2 * a.total());
        let counters = Counters::default();
        bump(&counters.reentrant, 3);
        assert_eq!(counters.read().reentrant, 3);
    }
}
