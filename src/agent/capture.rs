//! The flight recorder's captures, as the user sets them: what triggers one
//! ([`CaptureTrigger`], in `collect`), where they go and their bounds (the [`Builder`]
//! settings).
//! The drain's side is `capturer.rs`.

use super::builder::Builder;
use crate::collect::CaptureTrigger;
use crate::error::Error;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// The capture settings as the builder holds them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Settings {
    pub(crate) triggers: Vec<CaptureTrigger>,
    pub(crate) dir: PathBuf,
    pub(crate) max_files: usize,
    pub(crate) max_bytes: u64,
    pub(crate) gap: Duration,
    /// The frame budget ([`Builder::frame_budget`]), for
    /// [`CaptureTrigger::FrameOverBudget`]: `start` copies it from the report options.
    pub(crate) frame_budget: Option<Duration>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            triggers: Vec::new(),
            dir: PathBuf::from(Builder::DEFAULT_CAPTURE_DIR),
            max_files: Builder::DEFAULT_CAPTURE_FILES,
            max_bytes: Builder::DEFAULT_CAPTURE_BYTES,
            gap: Builder::DEFAULT_CAPTURE_GAP,
            frame_budget: None,
        }
    }
}

impl Settings {
    /// Refuses triggers without the flight recorder, a quantile outside (0, 1), a
    /// frame trigger without a frame budget, and bounds that hold nothing.
    pub(super) fn validate(&self, flight_on: bool) -> Result<(), Error> {
        let refuse = |reason: String| Err(Error::Capture { reason });
        if !self.triggers.is_empty() && !flight_on {
            return refuse(
                "a trigger needs the flight recorder: set Builder::flight_recorder".into(),
            );
        }
        if !self.triggers.is_empty() && !cfg!(feature = "json") {
            return refuse("captures are trace-event JSON: enable latte's `json` feature".into());
        }
        for t in &self.triggers {
            if let CaptureTrigger::Tail { quantile, .. } = t
                && !(*quantile > 0.0 && *quantile < 1.0)
            {
                return refuse(format!(
                    "tail quantile {quantile} must be above 0 and below 1"
                ));
            }
            if *t == CaptureTrigger::FrameOverBudget && self.frame_budget.is_none() {
                return refuse(
                    "CaptureTrigger::frame_over_budget needs a budget: set Builder::frame_budget"
                        .into(),
                );
            }
        }
        if self.max_files == 0 || self.max_bytes == 0 {
            return refuse(format!(
                "a capture directory bounded to {} files and {} bytes holds nothing",
                self.max_files, self.max_bytes
            ));
        }
        Ok(())
    }

    /// What the fold compares samples with from the start: the running tail, which
    /// needs no frequency (the absolute thresholds follow, [`Settings::above`]).
    pub(super) fn arms(&self) -> crate::collect::triggers::Arms {
        let mut arms = crate::collect::triggers::Arms::default();
        for t in &self.triggers {
            if let CaptureTrigger::Tail {
                quantile,
                min_count,
            } = *t
            {
                arms.tail = Some((quantile, min_count));
            }
        }
        arms
    }

    /// The frame budget in ticks at `ticks_per_ns`, if a trigger asks for it.
    pub(super) fn frame(&self, ticks_per_ns: f64) -> Option<u64> {
        let budget = self.frame_budget?;
        self.triggers
            .contains(&CaptureTrigger::FrameOverBudget)
            .then_some((budget.as_nanos() as f64 * ticks_per_ns) as u64)
    }

    /// The absolute thresholds per id index, in ticks at `ticks_per_ns`.
    pub(super) fn above(&self, ticks_per_ns: f64) -> HashMap<u32, u64> {
        let mut above = HashMap::new();
        for t in &self.triggers {
            if let CaptureTrigger::Above { id, threshold } = *t {
                let ticks = (threshold.as_nanos() as f64 * ticks_per_ns) as u64;
                let old = above.entry(id.index()).or_insert(ticks);
                *old = (*old).min(ticks);
            }
        }
        above
    }
}

impl Builder {
    /// Where captures go unless set: `latte-captures` in the current directory.
    pub const DEFAULT_CAPTURE_DIR: &'static str = "latte-captures";
    /// Capture files kept in the directory unless set.
    pub const DEFAULT_CAPTURE_FILES: usize = 16;
    /// Bytes of capture files kept unless set: 64 MiB.
    pub const DEFAULT_CAPTURE_BYTES: u64 = 64 << 20;
    /// Shortest time between two triggered captures unless set.
    pub const DEFAULT_CAPTURE_GAP: Duration = Duration::from_secs(1);

    /// Captures every thread's timeline around a sample that `trigger` picks out (may
    /// be given several times; needs [`flight_recorder`](Builder::flight_recorder)):
    /// a scope above a threshold or above its component's running tail, or a frame
    /// over [`frame_budget`](Builder::frame_budget) ([`CaptureTrigger`]).
    /// The drain checks each sample as it folds it; after a fold that found some, the
    /// slowest is captured, unless the last capture is more recent than
    /// [`capture_gap`](Builder::capture_gap): then it is counted as skipped. A capture
    /// is a Chrome trace-event JSON file (Perfetto UI and `chrome://tracing` open it)
    /// in [`capture_dir`](Builder::capture_dir): every live thread's scopes within the
    /// window before the capture, the scopes still open, and the triggering scope
    /// marked. A capture that cannot be written is counted and named in the next
    /// report, never retried, never fatal.
    ///
    /// ```no_run
    /// use latte::Id;
    /// use latte::collect::CaptureTrigger;
    /// use std::time::Duration;
    /// static ORDER: Id = Id::new("on_order");
    /// let _latte = latte::builder()
    ///     .flight_recorder(Duration::from_millis(50))
    ///     .capture_when(CaptureTrigger::above(&ORDER, Duration::from_micros(200)))
    ///     .capture_when(CaptureTrigger::tail(0.999, 10_000))
    ///     .capture_dir("/var/tmp/latte")
    ///     .start()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn capture_when(mut self, trigger: CaptureTrigger) -> Builder {
        self.capture.triggers.push(trigger);
        self
    }

    /// The directory captures are written to (made if missing), default
    /// [`DEFAULT_CAPTURE_DIR`](Builder::DEFAULT_CAPTURE_DIR).
    pub fn capture_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.capture.dir = dir.into();
        self
    }

    /// The most capture files and bytes of them this agent keeps in the directory
    /// (defaults [`DEFAULT_CAPTURE_FILES`](Builder::DEFAULT_CAPTURE_FILES) and
    /// [`DEFAULT_CAPTURE_BYTES`](Builder::DEFAULT_CAPTURE_BYTES)): before writing one
    /// past either bound, it removes its own oldest captures. A capture larger than
    /// the byte bound alone is not written (counted as failed). Files it did not write
    /// are never touched.
    pub fn capture_limits(mut self, files: usize, bytes: u64) -> Builder {
        self.capture.max_files = files;
        self.capture.max_bytes = bytes;
        self
    }

    /// The shortest time between two triggered captures (default
    /// [`DEFAULT_CAPTURE_GAP`](Builder::DEFAULT_CAPTURE_GAP)); captures asked for
    /// with [`Guard::capture_timeline`](crate::Guard::capture_timeline) are not held
    /// back.
    pub fn capture_gap(mut self, gap: Duration) -> Builder {
        self.capture.gap = gap;
        self
    }
}
