//! The run's time structure ([`Series`]): per component, its values in consecutive
//! blocks of fixed wall-clock length, each block a [`Distribution`] as a row holds
//! one, so a reader can resample stretches of time (a block bootstrap) from one run.

use super::Row;
use super::histogram::Distribution;
use crate::config::{SERIES_BLOCK_MS, SERIES_MAX_BLOCKS};
use serde::{Deserialize, Serialize};

/// The run's time structure: per id, its values in consecutive blocks of fixed length.
///
/// A sample carries no time of its own: the agent's drain reads the rings at least
/// every 10 ms by default, and what one read finds goes to the block in which that
/// read began, so a value lands in its block or, near a block's end, in the next
/// (within one read). Blocks count from the run's first read (or the last
/// `latte::collect::reset`); the last block is the one open when the report
/// was made, and covers less time. Without an agent, rings are read only when a
/// report is made, and each read fills one block. See `docs/report-format.md`, "The
/// run's time structure".
///
/// ```
/// use latte::{Id, Report, ReportOptions};
/// static STEP: Id = Id::new("doc_series_step");
/// (1..=100).for_each(|v| latte::record(&STEP, v));
/// let report = Report::collect(&ReportOptions::default());
/// let series = report.series.as_ref().unwrap();
/// assert_eq!(series.components.len(), report.all_threads.len());
/// let step = series.component(STEP.name()).unwrap();
/// assert_eq!(step.blocks.len(), series.blocks);
/// assert!(series.block_ms >= latte::report::Series::BLOCK_MS);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Length of one block, ms: `Series::BLOCK_MS` (50), doubled each time the blocks
    /// were merged in pairs to stay within `Series::MAX_BLOCKS`.
    pub block_ms: u64,
    /// How many blocks: every component has this many entries in `blocks`.
    pub blocks: usize,
    /// One per flat (all-threads) row, in the order of `Report::all_threads`.
    pub components: Vec<SeriesComponent>,
}

impl Series {
    /// The length of a block until the run is longer than `MAX_BLOCKS` of them, ms.
    ///
    /// ```
    /// assert_eq!(latte::report::Series::BLOCK_MS, 50);
    /// ```
    pub const BLOCK_MS: u64 = SERIES_BLOCK_MS;

    /// The most blocks a series holds: past it, adjacent blocks merge in pairs (so a
    /// run longer than `MAX_BLOCKS * BLOCK_MS` holds between half of it and all).
    ///
    /// ```
    /// assert_eq!(latte::report::Series::MAX_BLOCKS, 64);
    /// ```
    pub const MAX_BLOCKS: usize = SERIES_MAX_BLOCKS;

    /// The blocks of the flat row `component`, if the series has them.
    ///
    /// ```
    /// use latte::report::{Series, SeriesComponent};
    /// let series = Series {
    ///     block_ms: Series::BLOCK_MS,
    ///     blocks: 1,
    ///     components: vec![SeriesComponent { component: "a".into(), blocks: vec![Default::default()] }],
    /// };
    /// assert!(series.component("a").is_some());
    /// assert!(series.component("b").is_none());
    /// ```
    pub fn component(&self, component: &str) -> Option<&SeriesComponent> {
        self.components.iter().find(|c| c.component == component)
    }
}

/// One component's values in the blocks of a [`Series`].
///
/// Each block is in the report's unit, with the same bucket middles as the row, and
/// the extreme buckets' middles pulled to the exact minimum and maximum of the
/// component's row (in `report.all_threads`) where those lie in them.
///
/// Merging the blocks' buckets gives the row's distribution: the same buckets with the
/// same counts in raw data. In calibrated data a value in the lowest or highest bucket
/// of one thread's samples of one kind may sit one bucket over, for values of 2,048
/// ticks and more: the row pulls that bucket's middle inside the thread's exact
/// extremes before it takes the overhead off, and a block (over all threads) takes it
/// off the middle. See `docs/report-format.md`.
///
/// ```
/// use latte::{Data, Id, Report, ReportOptions, Unit};
/// static WAIT: Id = Id::new("doc_series_wait");
/// (1..=1_000).for_each(|v| latte::record(&WAIT, v));
/// let options = ReportOptions { data: Data::Raw, unit: Unit::Cycles, ..ReportOptions::default() };
/// let report = Report::collect(&options);
/// let row = report.all_threads.iter().find(|r| r.component == WAIT.name()).unwrap();
/// let wait = report.series.as_ref().unwrap().component(WAIT.name()).unwrap();
/// assert_eq!(wait.blocks.iter().map(|d| d.len()).sum::<u64>(), row.stats.samples);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesComponent {
    /// The id (the flat row's `component`).
    pub component: String,
    /// Per block, oldest first: the id's values recorded in that block on every
    /// thread, in the same data as the row's `distribution` (calibrated or raw, as the
    /// report's options say, every sample, no cleaning); empty where the id recorded
    /// nothing in the block (`null` in JSON).
    pub blocks: Vec<Distribution>,
}

impl SeriesComponent {
    /// Puts every block in the report's unit (`per_tick` units a tick), within
    /// `row`'s exact extremes (the component's flat row).
    pub(crate) fn place(&mut self, per_tick: f64, row: Option<&Row>) {
        let (min, max) = row.map_or((f64::NAN, f64::NAN), |r| (r.stats.min, r.stats.max));
        for block in &mut self.blocks {
            block.place(per_tick, min, max);
        }
    }
}
