//! The settings that bound what the recorder holds (ring capacity, stack depth, the
//! memory cap, the slowest samples, exited threads) and the validation of every
//! setting, before [`Builder::start`] changes anything.

use super::builder::Builder;
use crate::config;
use crate::error::Error;
use std::sync::Arc;
use std::time::Duration;

impl Builder {
    /// Samples kept per (thread, id), overwrite-oldest: a power of two within
    /// [`MIN_RING_CAPACITY`](Builder::MIN_RING_CAPACITY)..=[`MAX_RING_CAPACITY`](Builder::MAX_RING_CAPACITY)
    /// (default [`DEFAULT_RING_CAPACITY`](Builder::DEFAULT_RING_CAPACITY)). Applies to
    /// rings created after [`start`](Builder::start), and stays after the agent stops.
    /// Memory is reserved lazily: the OS backs a ring's pages only as samples reach
    /// them.
    pub fn ring_capacity(mut self, samples: usize) -> Builder {
        self.ring_capacity = Some(samples);
        self
    }

    /// Open scopes per thread, 1..=[`MAX_STACK_DEPTH`](Builder::MAX_STACK_DEPTH)
    /// (default [`DEFAULT_STACK_DEPTH`](Builder::DEFAULT_STACK_DEPTH)). A Start on a
    /// full stack gives up the oldest open scope, counted as abandoned under its id, so
    /// the newest scopes keep recording; the abandoned scope's Stop is absorbed. Applies
    /// to threads that start recording after [`start`](Builder::start), and stays after
    /// the agent stops.
    pub fn stack_depth(mut self, depth: usize) -> Builder {
        self.stack_depth = Some(depth);
        self
    }

    /// Bytes the rings of all the user's threads may reserve together (default
    /// [`DEFAULT_MEMORY_CAP`](Builder::DEFAULT_MEMORY_CAP); a ring reserves 8 bytes per
    /// sample of [`ring_capacity`](Builder::ring_capacity)). Ids are not known in
    /// advance, so the cap is enforced at an id's first use on a thread: past it, no
    /// ring is made, the id records nothing on that thread, and every record it drops
    /// is counted under its name (the report's `over_cap` anomaly and a line naming
    /// the ids; [`FrameCounts::over_cap`](crate::collect::FrameCounts::over_cap) per
    /// id). Rings of exited threads are pooled for reuse or freed, giving their bytes
    /// back. latte's own calibration threads are not charged. Applies from
    /// [`start`](Builder::start) on, and stays after the agent stops; a cap smaller
    /// than one ring makes `start` return [`Error::MemoryCap`].
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
    /// [`DEFAULT_SLOWEST`](Builder::DEFAULT_SLOWEST), at most
    /// [`MAX_SLOWEST`](Builder::MAX_SLOWEST); 0 keeps none). Reports list them per
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
    /// [`DEFAULT_MAX_EXITED_THREADS`](Builder::DEFAULT_MAX_EXITED_THREADS)); older ones are merged
    /// into one `<exited threads>` entry per id, which keeps memory bounded under
    /// thread churn.
    pub fn max_exited_threads(mut self, threads: usize) -> Builder {
        self.max_exited_threads = threads;
        self
    }

    /// Every setting's error, before anything changes.
    pub(super) fn validate(&self) -> Result<(), Error> {
        if let Some(n) = self.ring_capacity.filter(|&n| !config::ring_capacity_ok(n)) {
            return Err(Error::RingCapacity { requested: n });
        }
        if let Some(n) = self.stack_depth.filter(|&n| !config::stack_depth_ok(n)) {
            return Err(Error::StackDepth { requested: n });
        }
        let capacity = self.ring_capacity.unwrap_or_else(config::ring_capacity);
        let (cap, ring_bytes) = (
            self.memory_cap.unwrap_or_else(config::memory_cap),
            config::ring_bytes(capacity),
        );
        if cap < ring_bytes {
            return Err(Error::MemoryCap { cap, ring_bytes });
        }
        if let Some(interval) = self.periodic.filter(|i| *i < Builder::MIN_PERIODIC) {
            return Err(Error::Interval {
                requested: interval,
            });
        }
        self.exporters.validate()?;
        if self.slowest > config::MAX_SLOWEST {
            return Err(Error::Slowest {
                requested: self.slowest,
            });
        }
        if self.hlog.is_some() && self.periodic.is_none() {
            return Err(Error::Hlog(Arc::new(std::io::Error::other(
                "an interval log needs periodic reports: set Builder::periodic",
            ))));
        }
        if !(0..=19).contains(&self.placement.nice) {
            return Err(Error::DrainPlacement(Arc::new(std::io::Error::other(
                format!(
                    "drain nice value {} is invalid: it must be 0 (unchanged) to 19 (lowest)",
                    self.placement.nice
                ),
            ))));
        }
        self.focus.pattern()?;
        self.focus.thread_pattern()?;
        if let Some((setting, value)) = self.options.cleaning.invalid() {
            return Err(Error::Cleaning { setting, value });
        }
        let (min, max) = self.drain_pace;
        if min.is_zero() || min > max || max > Duration::from_secs(60) {
            return Err(Error::DrainPace { min, max });
        }
        Ok(())
    }
}
