//! Frames, after recording: each thread's frames (cut by `latte_frame!` marks) folded
//! by an observer of the fold into the thread's totals of each window, and turned into
//! a report's per-frame figures where a thread marked some. Its hot-path part, each
//! node's calls and time per frame, is `record/marks.rs`.
//!
//! | file | what |
//! |---|---|
//! | `fold.rs` | the fold's observer: each ended frame's length and per-id time, calls and allocations, the longest kept whole, as a part of the thread's totals (`collect::ThreadPart`) that the windows add, empty and copy |
//! | `analyze.rs` | a thread's folded frames to its `PerFrame`: per-frame distributions, the frames over budget, what ate the longest |
//!
//! The report section it fills is `report/frames.rs` (the table's is
//! `report/table/frames.rs`, the metric set's `exporter/frames.rs`). The agent wires
//! it: [`install`] before any fold, [`add`] after every report's assembly
//! ([`collect`](crate::collect) and [`analyze`](crate::analyze) name no feature).

mod analyze;
mod fold;

use crate::analyze::Calibration;
use crate::collect::Totals;
use crate::report::{Report, ReportOptions};
use analyze::{Budget, per_frame};

/// Installs the frames' observer of the fold, unless it is: the frames each fold
/// finds ended go into their threads' totals from then on.
pub(crate) fn install() {
    crate::collect::watch_once(fold::FrameFold::default);
}

/// Gives each thread of `report`, assembled from `totals` with `calibration` and
/// `options`, its per-frame figures, if it marked frames.
pub(crate) fn add(
    report: &mut Report,
    totals: &Totals,
    calibration: &Calibration,
    options: &ReportOptions,
) {
    let budget = Budget::of(options, calibration);
    let scale = report.per_tick();
    for thread in &mut report.threads {
        if let Some(t) = totals.threads.get(&thread.serial) {
            thread.per_frame = per_frame(t, scale, budget);
        }
    }
}
