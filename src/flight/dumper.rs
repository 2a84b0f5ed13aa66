//! The flight recorder's dumps, the drain's side: after each fold, the slowest
//! sample above a threshold (if the gap since the last dump has passed) has every
//! thread's timeline written around it as trace-event JSON, within the directory's
//! bounds; the counts go into the reports.

use super::dump::Settings;
use crate::error::Error;
use crate::report::Dumps;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Instant;

/// The drain's side: the settings, the files written, the counts. (Without the `json`
/// feature nothing is written: `start` refuses triggers, and a dump on request is
/// an error.)
#[cfg_attr(not(feature = "json"), allow(dead_code))]
pub(crate) struct Dumper {
    settings: Settings,
    /// Whether the flight recorder is on.
    on: bool,
    /// This agent's dump files still in the directory, oldest first, with sizes.
    files: VecDeque<(PathBuf, u64)>,
    last: Option<Instant>,
    seq: u64,
    counts: Dumps,
    /// Whether the absolute thresholds are set (once calibration gave the frequency).
    armed: bool,
}

impl Dumper {
    pub(crate) fn new(settings: Settings, on: bool) -> Dumper {
        let counts = Dumps {
            dir: settings.dir.display().to_string(),
            ..Dumps::default()
        };
        Dumper {
            settings,
            on,
            files: VecDeque::new(),
            last: None,
            seq: 0,
            counts,
            armed: false,
        }
    }

    /// Whether reports should show the dumps: something was asked for.
    fn asked(&self) -> bool {
        !self.settings.triggers.is_empty()
            || self.counts
                != Dumps {
                    dir: self.counts.dir.clone(),
                    ..Dumps::default()
                }
    }

    /// Puts the counts into `report`, about to be written.
    pub(crate) fn show_in(&self, report: &mut crate::report::Report) {
        report.dumps = self.asked().then(|| self.counts.clone());
    }

    /// After a fold, once calibrated: sets the absolute thresholds (the first time),
    /// and dumps the slowest sample above a threshold, if the gap allows.
    pub(crate) fn after_fold(&mut self) {
        if self.settings.triggers.is_empty() {
            return;
        }
        if !self.armed {
            let ticks_per_ns = crate::analyze::calibration().ticks_per_ns;
            #[cfg(feature = "json")]
            let ticks_per_ns = super::trace::usable_ticks_per_ns(ticks_per_ns);
            super::triggers::set_absolute(
                self.settings.above(ticks_per_ns),
                self.settings.frame(ticks_per_ns),
            );
            self.armed = true;
        }
        let hits = super::triggers::take_hits();
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
        let _ = self.dump(Some(hit));
    }

    /// Writes a dump now (around `hit` if a sample triggered it); its file.
    pub(crate) fn dump(&mut self, hit: Option<&super::triggers::Hit>) -> Result<PathBuf, Error> {
        if !self.on {
            return Err(Error::Dump {
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
    fn write(&mut self, hit: Option<&super::triggers::Hit>) -> Result<PathBuf, Error> {
        let trace = super::timeline::around(hit);
        let mut json = Vec::new();
        trace.write_json(&mut json).map_err(|e| Error::Dump {
            reason: e.to_string(),
        })?;
        let bytes = json.len() as u64;
        if bytes > self.settings.max_bytes {
            return Err(Error::Dump {
                reason: format!(
                    "a dump of {bytes} bytes is over the directory's bound of {} bytes",
                    self.settings.max_bytes
                ),
            });
        }
        self.make_room(bytes);
        let io = |e: std::io::Error| Error::Dump {
            reason: format!("{}: {e}", self.settings.dir.display()),
        };
        std::fs::create_dir_all(&self.settings.dir).map_err(io)?;
        self.seq += 1;
        let component = trace
            .trigger
            .as_ref()
            .map_or("on-request", |t| t.component.as_str());
        let name: String = component
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        let path = self.settings.dir.join(format!(
            "dump-{}-{}-{name}.json",
            std::process::id(),
            self.seq
        ));
        // Written beside its name and renamed into it: a reader watching the directory
        // (a tool, a test) never opens a dump half written.
        let part = path.with_extension("json.part");
        let written = std::fs::write(&part, &json).and_then(|()| std::fs::rename(&part, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&part);
            return Err(Error::Dump {
                reason: format!("{}: {e}", path.display()),
            });
        }
        self.files.push_back((path.clone(), bytes));
        Ok(path)
    }

    #[cfg(not(feature = "json"))]
    fn write(&mut self, _: Option<&super::triggers::Hit>) -> Result<PathBuf, Error> {
        Err(Error::Dump {
            reason: "dumps are trace-event JSON: enable latte's `json` feature".into(),
        })
    }

    /// Removes this agent's oldest dumps until one more of `bytes` fits both bounds.
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
