//! The flight recorder's dumps, as the user sets them: what triggers one
//! ([`DumpTrigger`], in `triggers.rs`), where they go and their bounds (set through
//! [`Builder`](crate::Builder), checked here).
//! The drain's side is `dumper.rs`.

use super::triggers::DumpTrigger;
use crate::error::Error;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// Where dumps go unless set ([`Builder::dump_dir`](crate::Builder::dump_dir)):
/// `latte-dumps` in the current directory.
pub const DEFAULT_DUMP_DIR: &str = "latte-dumps";
/// Dump files kept in the directory unless set
/// ([`Builder::dump_limits`](crate::Builder::dump_limits)).
pub const DEFAULT_DUMP_FILES: usize = 16;
/// Bytes of dump files kept unless set
/// ([`Builder::dump_limits`](crate::Builder::dump_limits)): 64 MiB.
pub const DEFAULT_DUMP_BYTES: u64 = 64 << 20;
/// Shortest time between two triggered dumps unless set
/// ([`Builder::dump_gap`](crate::Builder::dump_gap)).
pub const DEFAULT_DUMP_GAP: Duration = Duration::from_secs(1);

/// The dump settings as the builder holds them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Settings {
    pub(crate) triggers: Vec<DumpTrigger>,
    pub(crate) dir: PathBuf,
    pub(crate) max_files: usize,
    pub(crate) max_bytes: u64,
    pub(crate) gap: Duration,
    /// The frame budget ([`Builder::frame_budget`]), for
    /// [`DumpTrigger::FrameOverBudget`]: `start` copies it from the report options.
    pub(crate) frame_budget: Option<Duration>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            triggers: Vec::new(),
            dir: PathBuf::from(DEFAULT_DUMP_DIR),
            max_files: DEFAULT_DUMP_FILES,
            max_bytes: DEFAULT_DUMP_BYTES,
            gap: DEFAULT_DUMP_GAP,
            frame_budget: None,
        }
    }
}

impl Settings {
    /// Refuses triggers without the flight recorder, a quantile outside (0, 1), a
    /// frame trigger without a frame budget, and bounds that hold nothing.
    pub(crate) fn validate(&self, flight_on: bool) -> Result<(), Error> {
        let refuse = |reason: String| Err(Error::Dump { reason });
        if !self.triggers.is_empty() && !flight_on {
            return refuse(
                "a trigger needs the flight recorder: set Builder::flight_recorder".into(),
            );
        }
        if !self.triggers.is_empty() && !cfg!(feature = "json") {
            return refuse("dumps are trace-event JSON: enable latte's `json` feature".into());
        }
        for t in &self.triggers {
            if let DumpTrigger::Tail { quantile, .. } = t
                && !(*quantile > 0.0 && *quantile < 1.0)
            {
                return refuse(format!(
                    "tail quantile {quantile} must be above 0 and below 1"
                ));
            }
            if *t == DumpTrigger::FrameOverBudget && self.frame_budget.is_none() {
                return refuse(
                    "DumpTrigger::frame_over_budget needs a budget: set Builder::frame_budget"
                        .into(),
                );
            }
        }
        if self.max_files == 0 || self.max_bytes == 0 {
            return refuse(format!(
                "a dump directory bounded to {} files and {} bytes holds nothing",
                self.max_files, self.max_bytes
            ));
        }
        Ok(())
    }

    /// What the fold compares samples with from the start: the running tail, which
    /// needs no frequency (the absolute thresholds follow, [`Settings::above`]).
    pub(crate) fn arms(&self) -> super::triggers::Arms {
        let mut arms = super::triggers::Arms::default();
        for t in &self.triggers {
            if let DumpTrigger::Tail {
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
    pub(crate) fn frame(&self, ticks_per_ns: f64) -> Option<u64> {
        let budget = self.frame_budget?;
        self.triggers
            .contains(&DumpTrigger::FrameOverBudget)
            .then_some((budget.as_nanos() as f64 * ticks_per_ns) as u64)
    }

    /// The absolute thresholds per id index, in ticks at `ticks_per_ns`.
    pub(crate) fn above(&self, ticks_per_ns: f64) -> HashMap<u32, u64> {
        let mut above = HashMap::new();
        for t in &self.triggers {
            if let DumpTrigger::Above { id, threshold } = *t {
                let ticks = (threshold.as_nanos() as f64 * ticks_per_ns) as u64;
                let old = above.entry(id.index()).or_insert(ticks);
                *old = (*old).min(ticks);
            }
        }
        above
    }
}
