//! Frames, after recording: each thread's frames (cut by `latte_frame!` marks) as a
//! report's per-frame figures, added to a report where a thread marked some. Its
//! hot-path part, each node's calls and time per frame, is `record/marks.rs`; the fold
//! keeps each thread's frames per window (`collect/frames.rs`, in a thread's totals,
//! since intervals and resets cut them as they cut the rows).
//!
//! | file | what |
//! |---|---|
//! | `analyze.rs` | a thread's folded frames to its `PerFrame`: per-frame distributions, the frames over budget, what ate the longest |
//!
//! The report section it fills is `report/frames.rs` (the table's is
//! `report/table/frames.rs`, the metric set's `exporter/frames.rs`). The agent wires
//! it: [`add`] after every report's assembly ([`analyze`](crate::analyze) names no
//! feature).

mod analyze;

use crate::analyze::Calibration;
use crate::collect::Totals;
use crate::report::{Report, ReportOptions};
use analyze::{Budget, per_frame};

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
