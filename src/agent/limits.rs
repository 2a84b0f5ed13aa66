//! The [`Builder`] settings that bound what the recorder holds: ring capacity, stack
//! depth, the memory cap, the slowest samples, the frames kept whole, exited threads.

use super::builder::Builder;
use crate::config;
use crate::error::Error;

impl Builder {
    /// Samples kept per (thread, id), overwrite-oldest: a power of two within
    /// [`Limit::RING_CAPACITY`](crate::Limit::RING_CAPACITY)..=[`Limit::RING_CAPACITY`](crate::Limit::RING_CAPACITY)
    /// (default [`Limit::RING_CAPACITY`](crate::Limit::RING_CAPACITY)). Applies to
    /// rings created after [`start`](Builder::start), and stays after the agent stops.
    /// A ring starts at 1,024 slots (8 KiB; the capacity if smaller) and doubles on its
    /// thread's push that would first overwrite a sample, up to the capacity, so an id
    /// that records little holds little; [`prepare`](crate::collect::prepare) makes it
    /// whole at once. The OS backs a ring's pages only as samples reach them.
    pub fn ring_capacity(mut self, samples: usize) -> Builder {
        self.ring_capacity = Some(samples);
        self
    }

    /// Open scopes per thread, 1..=[`Limit::STACK_DEPTH`](crate::Limit::STACK_DEPTH)
    /// (default [`Limit::STACK_DEPTH`](crate::Limit::STACK_DEPTH)). A Start on a
    /// full stack gives up the oldest open scope, counted as abandoned under its id, so
    /// the newest scopes keep recording; the abandoned scope's Stop is absorbed. Applies
    /// to threads that start recording after [`start`](Builder::start), and stays after
    /// the agent stops.
    pub fn stack_depth(mut self, depth: usize) -> Builder {
        self.stack_depth = Some(depth);
        self
    }

    /// Call-tree nodes a thread may make below the root, at most
    /// [`Limit::NODE_LIMIT`](crate::Limit::NODE_LIMIT) (default
    /// [`Limit::NODE_LIMIT`](crate::Limit::NODE_LIMIT), 4,096). Each scope records
    /// under the scope open below it on its thread: a node per distinct path, each
    /// with a ring of its own (starting at 1,024 slots, 8 KiB, charged against the
    /// [`memory_cap`](Builder::memory_cap); a node of a [`prepare`](crate::collect::prepare)d
    /// id is made whole when its path first runs). Past the limit, a new path is
    /// counted once as `folded_paths` (the report names it) and records under its
    /// parent's node when the parent is the same id (deep recursion), else under the
    /// id at the root: deep recursion and paths made from data stay bounded. The flat
    /// per-id rows are the same whatever the limit; 0 makes a flat profile (every
    /// scope a root). Applies to paths made after [`start`](Builder::start), and stays after
    /// the agent stops.
    ///
    /// ```
    /// use latte::{Id, Mode};
    /// static DIVE: Id = Id::new("doc_node_limit");
    /// fn dive(depth: u32) {
    ///     latte::start(&DIVE, Mode::Fast);
    ///     if depth > 0 {
    ///         dive(depth - 1);
    ///     }
    ///     latte::stop(&DIVE, Mode::Fast);
    /// }
    /// let guard = latte::builder().node_limit(8).final_report(false).start()?;
    /// let thread = std::thread::Builder::new().name("diver".into());
    /// thread.spawn(|| dive(20))?.join().unwrap();
    /// guard.stop()?;
    ///
    /// let capture = latte::capture();
    /// let diver = capture.thread("diver").unwrap();
    /// // The root's node and 8 below it; the 12 deepest calls share the 8th, and the
    /// // path that could not have a node is counted once. Every call recorded.
    /// assert_eq!(diver.components.len(), 9);
    /// assert_eq!(diver.samples("doc_node_limit").len(), 21);
    /// assert_eq!(diver.anomalies.folded_paths, 1);
    ///
    /// let refused = latte::builder().node_limit(usize::MAX).start().unwrap_err();
    /// assert!(refused.to_string().contains("node limit"), "{refused}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn node_limit(mut self, nodes: usize) -> Builder {
        self.node_limit = Some(nodes);
        self
    }

    /// Bytes the rings of all the user's threads and the whole run's histograms may
    /// take together (default [`Limit::MEMORY_CAP`](crate::Limit::MEMORY_CAP); a
    /// ring reserves 8 bytes per sample of [`ring_capacity`](Builder::ring_capacity)).
    /// Ids are not known in advance, so the cap is enforced at an id's first use on a
    /// thread: past it, no ring is made, the id records nothing on that thread, and
    /// every record it drops is counted under its name (the report's `over_cap`
    /// anomaly and a line naming the ids;
    /// [`FrameCounts::over_cap`](crate::collect::FrameCounts::over_cap) per id). It is
    /// charged again each time a ring doubles; a doubling it refuses leaves the ring at
    /// its size, wrapping there (counted in `Footprint::rings_kept_small`, named in
    /// the report). Rings
    /// of exited threads are pooled for reuse or freed, giving their bytes back.
    /// Histograms hold samples already recorded, so they are never refused: past the
    /// cap, pooled rings are freed for them, and beyond that the total passes the cap
    /// by what they grow (see [`Footprint`](crate::collect::Footprint)'s
    /// `memory_cap_used`). latte's own calibration threads are not charged. Applies from
    /// [`start`](Builder::start) on, and stays after the agent stops; a cap smaller
    /// than one ring makes `start` return [`Error::MemoryCap`](crate::Error::MemoryCap).
    ///
    /// ```
    /// // A ring of 1,024 samples takes 8 KiB: a 4 KiB cap could never hold one.
    /// let err = latte::builder().ring_capacity(1024).memory_cap(4096).start().unwrap_err();
    /// assert_eq!(err, latte::Error::MemoryCap { cap: 4096, ring_bytes: 8192 });
    /// ```
    pub fn memory_cap(mut self, bytes: u64) -> Builder {
        self.memory_cap = Some(bytes);
        self
    }

    /// How many of the slowest samples of each (thread, id) the whole run keeps, with
    /// their thread and when they were recorded (default
    /// [`Limit::SLOWEST`](crate::Limit::SLOWEST), at most
    /// [`Limit::SLOWEST`](crate::Limit::SLOWEST); 0 keeps none). Reports list them per
    /// component, slowest first ([`Row::slowest`](crate::report::Row::slowest)).
    /// Applies from [`start`](Builder::start) on, and stays after the agent stops.
    ///
    /// ```
    /// let err = latte::builder().slowest(1_000_000).start().unwrap_err();
    /// assert!(err.to_string().contains("slowest"));
    /// ```
    pub fn slowest(mut self, samples: usize) -> Builder {
        self.slowest = samples;
        self
    }

    /// Exited threads kept individually in reports (default
    /// [`Limit::EXITED_THREADS`](crate::Limit::EXITED_THREADS)); older ones are merged
    /// into one `<exited threads>` entry per id, which keeps memory bounded under
    /// thread churn.
    pub fn max_exited_threads(mut self, threads: usize) -> Builder {
        self.max_exited_threads = threads;
        self
    }

    /// How many of the longest frames each thread keeps whole (default
    /// [`Limit::FRAMES_LISTED`](crate::Limit::FRAMES_LISTED), at most
    /// [`Limit::FRAMES_LISTED`](crate::Limit::FRAMES_LISTED)): a report lists every frame
    /// over budget among them, with what ate it
    /// ([`PerFrame::worst`](crate::report::PerFrame::worst)), and counts those beyond
    /// ([`PerFrame::unlisted`](crate::report::PerFrame::unlisted)); the table names the
    /// worst few. Applies from [`start`](Builder::start) on, and stays after the agent
    /// stops.
    ///
    /// ```
    /// let err = latte::builder().frames_listed(1 << 30).start().unwrap_err();
    /// assert!(err.to_string().contains("frames listed"));
    /// ```
    pub fn frames_listed(mut self, frames: usize) -> Builder {
        self.frames_listed = frames;
        self
    }

    /// The recorder's limits, each within its bounds, or the error naming it.
    pub(super) fn validate_limits(&self) -> Result<(), Error> {
        if let Some(n) = self.ring_capacity.filter(|&n| !config::ring_capacity_ok(n)) {
            return Err(Error::RingCapacity { requested: n });
        }
        if let Some(n) = self.stack_depth.filter(|&n| !config::stack_depth_ok(n)) {
            return Err(Error::StackDepth { requested: n });
        }
        if let Some(n) = self.node_limit.filter(|&n| !config::node_limit_ok(n)) {
            return Err(Error::NodeLimit { requested: n });
        }
        if !config::Limit::SLOWEST.accepts(self.slowest) {
            return Err(Error::Slowest {
                requested: self.slowest,
            });
        }
        if !config::Limit::FRAMES_LISTED.accepts(self.frames_listed) {
            return Err(Error::FramesListed {
                requested: self.frames_listed,
            });
        }
        Ok(())
    }
}
