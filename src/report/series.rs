//! The run's time structure ([`Series`]): per component, its values in consecutive
//! blocks of fixed wall-clock length, each block a histogram encoded as a row's, so a
//! reader can resample stretches of time (a block bootstrap) from one run.

use super::Report;
use super::histogram::{Distribution, decode};
use crate::config::{SERIES_BLOCK_MS, SERIES_MAX_BLOCKS};
use crate::error::Error;
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
    ///     components: vec![SeriesComponent { component: "a".into(), blocks: vec![None] }],
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
/// ```
/// use latte::report::SeriesComponent;
/// let report = latte::Report::collect(&latte::ReportOptions::default());
/// let quiet = SeriesComponent { component: "quiet".into(), blocks: vec![None, None] };
/// // A block with nothing decodes to no values.
/// assert!(quiet.distributions(&report)?.iter().all(|d| d.is_empty()));
/// # Ok::<(), latte::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesComponent {
    /// The id (the flat row's `component`).
    pub component: String,
    /// Per block, oldest first: the id's values recorded in that block on every
    /// thread, in the same data as the row's `histogram` (calibrated or raw, as the
    /// report's options say, every sample, no cleaning), encoded the same way (V2
    /// deflate HdrHistogram, base64); `None` where the id recorded nothing in the
    /// block.
    pub blocks: Vec<Option<String>>,
}

impl SeriesComponent {
    /// Each block decoded as [`Row::distribution`](super::Row::distribution) decodes
    /// a row: the unit of `report`, the same bucket middles, and the extreme buckets'
    /// middles pulled to the exact minimum and maximum of the component's row (in
    /// `report.all_threads`) where those lie in them; an empty [`Distribution`] for a
    /// block with nothing.
    ///
    /// Merging the blocks' buckets gives the row's distribution: the same buckets
    /// with the same counts in raw data. In calibrated data a value in the lowest or
    /// highest bucket of one thread's samples of one kind may sit one bucket over,
    /// for values of 2,048 ticks and more: the row pulls that bucket's middle inside
    /// the thread's exact extremes before it takes the overhead off, and a block
    /// (over all threads) takes it off the middle. See `docs/report-format.md`.
    ///
    /// [`Error::Histogram`] as for a row, its reason naming the block.
    ///
    /// ```
    /// use latte::{Data, Id, Report, ReportOptions, Unit};
    /// static WAIT: Id = Id::new("doc_series_wait");
    /// (1..=1_000).for_each(|v| latte::record(&WAIT, v));
    /// let options = ReportOptions { data: Data::Raw, unit: Unit::Cycles, ..ReportOptions::default() };
    /// let report = Report::collect(&options);
    /// let row = report.all_threads.iter().find(|r| r.component == WAIT.name()).unwrap();
    /// let series = report.series.as_ref().unwrap();
    /// let wait = series.component(WAIT.name()).unwrap();
    /// let blocks = wait.distributions(&report)?;
    /// assert_eq!(blocks.iter().map(|d| d.len()).sum::<u64>(), row.stats.samples);
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn distributions(&self, report: &Report) -> Result<Vec<Distribution>, Error> {
        let row = report
            .all_threads
            .iter()
            .find(|r| r.component == self.component);
        let extremes = row.map_or((f64::NAN, f64::NAN), |r| (r.stats.min, r.stats.max));
        self.blocks
            .iter()
            .enumerate()
            .map(|(k, block)| {
                decode(&self.component, block.as_deref(), extremes, report).map_err(|e| match e {
                    Error::Histogram { component, reason } => Error::Histogram {
                        component,
                        reason: format!("block {k}: {reason}"),
                    },
                    other => other,
                })
            })
            .collect()
    }
}
