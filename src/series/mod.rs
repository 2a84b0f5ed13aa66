//! The series, after recording: the whole run per id in blocks of time, kept by an
//! observer of the fold and turned into a report's [`Series`](crate::report::Series).
//! It has no hot-path part: it sees the samples the fold reads.
//!
//! | file | what |
//! |---|---|
//! | `log.rs` | the series log: the fold's observer, per id and kind a bucket table per block of time |
//! | `analyze.rs` | a snapshot of the log's blocks turned into the report's series, as rows are made |
//!
//! The report section it fills is `report/series.rs`. The agent wires it: [`install`]
//! before any fold of a whole-run report, [`blocks`] under the ledger's lock, [`add`]
//! once the lock is released ([`collect`](crate::collect) and
//! [`analyze`](crate::analyze) name no feature).

mod analyze;
mod log;

use crate::analyze::Calibration;
use crate::collect::{self, Watches};
use crate::report::{Data, Report};
pub(crate) use log::Blocks;
use log::SeriesLog;

/// Installs the series log as an observer of the fold, unless it is: it then sees every
/// fold from now on, or since the last reset.
pub(crate) fn install() {
    collect::watch_once(SeriesLog::default);
}

/// A snapshot of the log's blocks (shared, not copied), if it is installed.
pub(crate) fn blocks(watches: &Watches) -> Option<Blocks> {
    watches.get::<SeriesLog>().map(SeriesLog::blocks)
}

/// Gives a whole-run report its series: `blocks`, the whole run's series log of the
/// same threads as the report (taken with the totals it was made of), in the report's
/// `data`. Called after the ledger's lock is released.
pub(crate) fn add(report: &mut Report, blocks: &Blocks, calibration: &Calibration, data: Data) {
    report.series = analyze::series(blocks, &report.all_threads, calibration, data);
    let per_tick = report.per_tick();
    if let Some(series) = &mut report.series {
        for (component, row) in series.components.iter_mut().zip(&report.all_threads) {
            component.place(per_tick, Some(row));
        }
    }
}
