//! The flight recorder's captures: what triggers one ([`CaptureTrigger`]), where they
//! go and their bounds (the [`Builder`] settings), and the drain's side: after each
//! fold, the slowest sample above a threshold (if the gap since the last capture has
//! passed) has every thread's timeline written around it as trace-event JSON.

use super::builder::Builder;
use crate::error::Error;
use crate::record::Id;
use crate::report::Captures;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What makes the agent capture every thread's timeline
/// ([`Builder::capture_when`]). The flight recorder must be on
/// ([`Builder::flight_recorder`]).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum CaptureTrigger {
    /// A scope of `id`, on any thread, longer than `threshold`.
    Above {
        /// The component.
        id: &'static Id,
        /// The longest scope that does not trigger.
        threshold: Duration,
    },
    /// A scope longer than its own component's running `quantile` (per thread and
    /// call-tree node, over the whole run so far), once the component holds
    /// `min_count` samples. The quantile is read again about every 64 folds.
    Tail {
        /// The quantile, above 0 and below 1: 0.999 for p99.9.
        quantile: f64,
        /// Samples a component needs before its tail triggers.
        min_count: u64,
    },
}

/// Triggers are equal when they are the same case with the same values; ids compare
/// by name.
impl PartialEq for CaptureTrigger {
    fn eq(&self, other: &CaptureTrigger) -> bool {
        use CaptureTrigger::{Above, Tail};
        match (self, other) {
            (Above { id: a, threshold: x }, Above { id: b, threshold: y }) => {
                a.name() == b.name() && x == y
            }
            (
                Tail {
                    quantile: a,
                    min_count: m,
                },
                Tail {
                    quantile: b,
                    min_count: n,
                },
            ) => a.to_bits() == b.to_bits() && m == n,
            _ => false,
        }
    }
}

impl CaptureTrigger {
    /// A scope of `id` longer than `threshold`.
    ///
    /// ```
    /// use latte::{CaptureTrigger, Id};
    /// use std::time::Duration;
    /// static ORDER: Id = Id::new("doc_capture_order");
    /// let trigger = CaptureTrigger::above(&ORDER, Duration::from_micros(50));
    /// assert!(matches!(trigger, CaptureTrigger::Above { .. }));
    /// ```
    pub fn above(id: &'static Id, threshold: Duration) -> CaptureTrigger {
        CaptureTrigger::Above { id, threshold }
    }

    /// A scope above its component's running `quantile`, after `min_count` samples.
    ///
    /// ```
    /// // Above its own p99.9, once a component has 10,000 samples.
    /// let trigger = latte::CaptureTrigger::tail(0.999, 10_000);
    /// assert!(matches!(trigger, latte::CaptureTrigger::Tail { .. }));
    /// ```
    pub fn tail(quantile: f64, min_count: u64) -> CaptureTrigger {
        CaptureTrigger::Tail {
            quantile,
            min_count,
        }
    }
}

/// The capture settings as the builder holds them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Settings {
    pub(crate) triggers: Vec<CaptureTrigger>,
    pub(crate) dir: PathBuf,
    pub(crate) max_files: usize,
    pub(crate) max_bytes: u64,
    pub(crate) gap: Duration,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            triggers: Vec::new(),
            dir: PathBuf::from(Builder::DEFAULT_CAPTURE_DIR),
            max_files: Builder::DEFAULT_CAPTURE_FILES,
            max_bytes: Builder::DEFAULT_CAPTURE_BYTES,
            gap: Builder::DEFAULT_CAPTURE_GAP,
        }
    }
}

impl Settings {
    /// Refuses triggers without the flight recorder, a quantile outside (0, 1), and
    /// bounds that hold nothing.
    pub(super) fn validate(&self, flight_on: bool) -> Result<(), Error> {
        let refuse = |reason: String| Err(Error::Capture { reason });
        if !self.triggers.is_empty() && !flight_on {
            return refuse("a trigger needs the flight recorder: set Builder::flight_recorder".into());
        }
        if !self.triggers.is_empty() && !cfg!(feature = "json") {
            return refuse("captures are trace-event JSON: enable latte's `json` feature".into());
        }
        for t in &self.triggers {
            if let CaptureTrigger::Tail { quantile, .. } = t
                && !(*quantile > 0.0 && *quantile < 1.0)
            {
                return refuse(format!("tail quantile {quantile} must be above 0 and below 1"));
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
    /// be given several times; needs [`flight_recorder`](Builder::flight_recorder)).
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
    /// use latte::{CaptureTrigger, Id};
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

/// The drain's side: the settings, the files written, the counts. (Without the `json`
/// feature nothing is written: `start` refuses triggers, and a capture on request is
/// an error.)
#[cfg_attr(not(feature = "json"), allow(dead_code))]
pub(super) struct Capturer {
    settings: Settings,
    /// Whether the flight recorder is on.
    on: bool,
    /// This agent's capture files still in the directory, oldest first, with sizes.
    files: VecDeque<(PathBuf, u64)>,
    last: Option<Instant>,
    seq: u64,
    counts: Captures,
    /// Whether the absolute thresholds are set (once calibration gave the frequency).
    armed: bool,
}

impl Capturer {
    pub(super) fn new(settings: Settings, on: bool) -> Capturer {
        let counts = Captures {
            dir: settings.dir.display().to_string(),
            ..Captures::default()
        };
        Capturer {
            settings,
            on,
            files: VecDeque::new(),
            last: None,
            seq: 0,
            counts,
            armed: false,
        }
    }

    /// Whether reports should show the captures: something was asked for.
    fn asked(&self) -> bool {
        !self.settings.triggers.is_empty() || self.counts != Captures {
            dir: self.counts.dir.clone(),
            ..Captures::default()
        }
    }

    /// Puts the counts into `report`, about to be written.
    pub(super) fn show_in(&self, report: &mut crate::report::Report) {
        report.captures = self.asked().then(|| self.counts.clone());
    }

    /// After a fold, once calibrated: sets the absolute thresholds (the first time),
    /// and captures the slowest sample above a threshold, if the gap allows.
    pub(super) fn after_fold(&mut self) {
        if self.settings.triggers.is_empty() {
            return;
        }
        if !self.armed {
            let ticks_per_ns = crate::analyze::calibration().ticks_per_ns;
            #[cfg(feature = "json")]
            let ticks_per_ns = crate::report::trace::usable_ticks_per_ns(ticks_per_ns);
            crate::collect::set_above(self.settings.above(ticks_per_ns));
            self.armed = true;
        }
        let hits = crate::collect::take_hits();
        let Some(hit) = hits.first() else {
            return;
        };
        let soon = self
            .last
            .is_some_and(|last| last.elapsed() < self.settings.gap);
        if soon {
            self.counts.skipped += hits.len() as u64;
            return;
        }
        self.counts.skipped += hits.len() as u64 - 1;
        self.last = Some(Instant::now());
        let _ = self.capture(Some(hit));
    }

    /// Writes a capture now (around `hit` if a sample triggered it); its file.
    pub(super) fn capture(&mut self, hit: Option<&crate::collect::triggers::Hit>) -> Result<PathBuf, Error> {
        if !self.on {
            return Err(Error::Capture {
                reason: "the flight recorder is off: set Builder::flight_recorder".into(),
            });
        }
        let written = self.write(hit);
        match &written {
            Ok(path) => {
                self.counts.written += 1;
                self.counts.last_file = Some(path.display().to_string());
            }
            Err(e) => {
                self.counts.failed += 1;
                self.counts.last_error = Some(e.to_string());
            }
        }
        written
    }

    #[cfg(feature = "json")]
    fn write(&mut self, hit: Option<&crate::collect::triggers::Hit>) -> Result<PathBuf, Error> {
        let trace = crate::analyze::timeline_around(hit);
        let mut json = Vec::new();
        trace
            .write_json(&mut json)
            .map_err(|e| Error::Capture { reason: e.to_string() })?;
        let bytes = json.len() as u64;
        if bytes > self.settings.max_bytes {
            return Err(Error::Capture {
                reason: format!(
                    "a capture of {bytes} bytes is over the directory's bound of {} bytes",
                    self.settings.max_bytes
                ),
            });
        }
        self.make_room(bytes);
        let io = |e: std::io::Error| Error::Capture {
            reason: format!("{}: {e}", self.settings.dir.display()),
        };
        std::fs::create_dir_all(&self.settings.dir).map_err(io)?;
        self.seq += 1;
        let component = trace.trigger.as_ref().map_or("on-request", |t| t.component.as_str());
        let name: String = component
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .take(64)
            .collect();
        let path = self.settings.dir.join(format!(
            "capture-{}-{}-{name}.json",
            std::process::id(),
            self.seq
        ));
        std::fs::write(&path, &json).map_err(|e| Error::Capture {
            reason: format!("{}: {e}", path.display()),
        })?;
        self.files.push_back((path.clone(), bytes));
        Ok(path)
    }

    #[cfg(not(feature = "json"))]
    fn write(&mut self, _: Option<&crate::collect::triggers::Hit>) -> Result<PathBuf, Error> {
        Err(Error::Capture {
            reason: "captures are trace-event JSON: enable latte's `json` feature".into(),
        })
    }

    /// Removes this agent's oldest captures until one more of `bytes` fits both bounds.
    #[cfg_attr(not(feature = "json"), allow(dead_code))]
    fn make_room(&mut self, bytes: u64) {
        let held = |files: &VecDeque<(PathBuf, u64)>| files.iter().map(|(_, b)| b).sum::<u64>();
        while !self.files.is_empty()
            && (self.files.len() >= self.settings.max_files
                || held(&self.files) + bytes > self.settings.max_bytes)
        {
            if let Some((oldest, _)) = self.files.pop_front() {
                // Already gone (removed by hand): nothing to do.
                let _ = std::fs::remove_file(oldest);
            }
        }
    }
}
