//! One component's row of a report: its statistics ([`Summary`], with the cleaned
//! figures beside the headline), what recorded it, its slowest samples, its corrected
//! tails and its histogram.

use super::Distribution;
use crate::allocs::ScopeAllocs;
use serde::{Deserialize, Serialize};

/// One component's statistics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The id's name.
    pub component: String,
    /// What recorded it: scopes, pulses or values (tables list pulses after scopes:
    /// a pulse's TOTAL is about the time it ran, not time spent in it).
    #[serde(default)]
    pub kind: RowKind,
    /// Its statistics.
    pub stats: Summary,
    /// The slowest samples of the report's window, slowest first (at most
    /// [`Builder::slowest`](crate::Builder::slowest) per thread).
    #[serde(default)]
    pub slowest: Vec<Slowest>,
    /// Tails corrected for coordinated omission, for an id with a declared period
    /// ([`Id::expect_period`](crate::Id::expect_period)).
    #[serde(default)]
    pub corrected: Option<Corrected>,
    /// Every folded value, in latte's buckets of counter ticks of the report's data
    /// (raw, or minus the overhead when calibrated), read in the report's unit: the
    /// row's quantiles are read from it, and [`Distribution::quantile`] reads any other
    /// the same way. JSON's `histogram` field carries it as an HdrHistogram (V2
    /// deflate, base64; `null` for none).
    #[serde(default, rename = "histogram")]
    pub distribution: Distribution,
    /// With a [`Counting`](crate::alloc::Counting) allocator installed: what the id's
    /// scopes allocated, over its calls (format 8 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocs: Option<ScopeAllocs>,
}

impl Row {
    /// A row of `component` holding `values`, counter ticks each with how many times
    /// it occurred: its distribution (as the analysis makes one), and the statistics a
    /// report in cycles reads from it (samples and seen, min, max, range, average, total, and
    /// the quantiles as [`Distribution::quantile`](super::Distribution::quantile) reads
    /// them); the standard deviation, skewness and the cleaned figures are left 0. For
    /// tests and tools that build a report by hand ([`Report::default`](super::Report)).
    ///
    /// ```
    /// use latte::report::Row;
    /// let row = Row::with_ticks("send", &[(100, 9), (5_000, 1)]);
    /// assert_eq!((row.stats.samples, row.stats.max, row.stats.p99), (10, 5_000.0, 5_000.0));
    /// assert_eq!(row.stats.median, 100.0);
    /// ```
    pub fn with_ticks(component: &str, values: &[(u64, u64)]) -> Row {
        Row::with_ticks_in(component, values, 1.0)
    }

    /// [`with_ticks`](Row::with_ticks), its statistics in a unit of `per_tick` units a
    /// tick (a report in time: `1 / ticks_per_ns`).
    pub(crate) fn with_ticks_in(component: &str, values: &[(u64, u64)], per_tick: f64) -> Row {
        let mut sorted: Vec<(u64, u64)> = values.iter().copied().filter(|v| v.1 > 0).collect();
        sorted.sort_unstable();
        let (min, max) = match (sorted.first(), sorted.last()) {
            (Some(&(lo, _)), Some(&(hi, _))) => (lo, hi),
            _ => (0, 0),
        };
        let runs = super::histogram::bucketed(&sorted, min, max);
        let samples = super::histogram::count(&sorted);
        let total: f64 = sorted
            .iter()
            .map(|&(v, k)| v as f64 * k as f64)
            .sum::<f64>()
            * per_tick;
        let q = |q: f64| super::histogram::quantile(&runs, q) as f64 * per_tick;
        let mut distribution = Distribution::of_sorted(&sorted);
        distribution.place(per_tick, min as f64 * per_tick, max as f64 * per_tick);
        Row {
            component: component.to_owned(),
            stats: Summary {
                samples,
                seen: samples,
                min: min as f64 * per_tick,
                max: max as f64 * per_tick,
                range: (max - min) as f64 * per_tick,
                avg: if samples == 0 {
                    0.0
                } else {
                    total / samples as f64
                },
                total,
                median: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p999: q(0.999),
                p9999: q(0.9999),
                ..Summary::default()
            },
            distribution,
            ..Row::default()
        }
    }
}

/// What recorded a component's samples: which time its figures are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RowKind {
    /// Scopes on the thread's stack (Start/Stop, guards, sync `#[timed]`), or a mix of
    /// kinds: wall time from Start to Stop. Reports of format 4 and older say `Scope`
    /// for timers and spans too.
    #[default]
    Scope,
    /// Scopes measured off the stack ([`Timer`](crate::Timer), `async` `#[timed]`, a
    /// span's lifetime): wall time from start to stop, with no self time.
    Timer,
    /// A `tracing` span's busy time: the sum of its enter/exit pairs (its polls), not
    /// its wall time; or one poll (`"<name> (poll)"`).
    Busy,
    /// Pulses: the time between successive pulses of the id on a thread.
    Pulse,
    /// Values given to [`record`](crate::record).
    Value,
}

impl RowKind {
    /// Whether its figures are time spent in it (scopes, timers, busy time), not time
    /// between pulses or a value.
    ///
    /// ```
    /// use latte::report::RowKind;
    /// assert!(RowKind::Busy.is_time_in() && !RowKind::Pulse.is_time_in());
    /// ```
    pub fn is_time_in(self) -> bool {
        matches!(self, RowKind::Scope | RowKind::Timer | RowKind::Busy)
    }
}

/// One of a component's slowest samples: its value, its thread, and when it was
/// recorded (between two of the drain's folds, so to within milliseconds).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Slowest {
    /// The value, in the report's unit and data.
    pub value: f64,
    /// The thread that recorded it.
    pub thread: String,
    /// Recorded at or after this time, milliseconds since the Unix epoch (0: before
    /// latte first read the rings, time unknown).
    pub not_before_ms: u64,
    /// Recorded before this time, milliseconds since the Unix epoch (0: unknown, for a
    /// report made from a stored capture).
    pub not_after_ms: u64,
}

/// Tails of a loop with a declared period, corrected for coordinated omission: each
/// value longer than the period also stands for the iterations it held up, as
/// HdrHistogram's expected-interval correction adds them (`v - period`,
/// `v - 2 x period`, ... while above the period).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Corrected {
    /// The declared period, in the report's unit.
    pub period: f64,
    /// Values after correction (folded samples plus the ones added).
    pub count: u64,
    /// Median after correction.
    pub p50: f64,
    /// 90th percentile after correction.
    pub p90: f64,
    /// 99th percentile after correction.
    pub p99: f64,
    /// 99.9th percentile after correction.
    pub p999: f64,
    /// 99.99th percentile after correction.
    pub p9999: f64,
    /// Largest value (the correction adds none above it).
    pub max: f64,
}

/// Statistics of one component, in the report's unit, over the report's window (the
/// whole run, or one interval: see [`Report::label`](crate::Report::label)).
///
/// **Every figure covers every sample** the window folded: `samples` is every scope
/// (pulse, value) recorded less the `lost` ones, and `avg` .. `p9999` and `total` are
/// computed over all of them (calibrated data: each sample minus its own overhead,
/// never below zero). The cleaning rule ([`Report::cleaning`](crate::Report::cleaning)) only *flags* samples:
/// `bypass` and `outliers` count them, `bypass_total` and `outliers_total` say how much
/// of `total` they hold, and [`cleaned`](Summary::cleaned) has the C++ original's
/// statistics computed without them. Counts, `avg`, `std_dev`, `skew`, `min`, `max`
/// and `total` are exact; quantiles are order statistics (the value of rank
/// `ceil(q * n)`) read from the row's [`distribution`](Row::distribution), as its
/// [`quantile`](super::Distribution::quantile) reads them: within 1/2,048 of the exact value (1/1,024 for
/// calibrated data), and the flagged totals within 1/2,048 (see
/// `docs/report-format.md`). A figure a report does not know is NaN.
///
/// ```
/// use latte::{Id, Report, ReportOptions, Unit, Data};
/// static WAIT: Id = Id::new("doc_summary_wait");
/// (0..9_000).for_each(|_| latte::record(&WAIT, 100));
/// (0..1_000).for_each(|_| latte::record(&WAIT, 20_000)); // real slow work
/// let options = ReportOptions { unit: Unit::Cycles, data: Data::Raw, ..Default::default() };
/// let report = Report::collect(&options);
/// let s = report.all_threads.iter().find(|r| r.component == "doc_summary_wait").unwrap().stats;
/// assert_eq!((s.samples, s.avg, s.max), (10_000, 2_090.0, 20_000.0)); // every sample
/// assert_eq!(s.bypass, 1_000); // flagged as far above the median, still in every figure
/// assert_eq!(s.cleaned.avg, 100.0); // the C++ original's figure
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "super::wire::SummaryWire")]
pub struct Summary {
    /// Samples the figures cover: every one recorded in the window less the lost ones.
    pub samples: u64,
    /// Samples recorded: `samples + lost`.
    pub seen: u64,
    /// Samples overwritten in their ring before latte read them: recorded, but in no
    /// figure.
    pub lost: u64,
    /// Mean (exact).
    pub avg: f64,
    /// Median (an order statistic, see above).
    pub median: f64,
    /// Population standard deviation (exact).
    pub std_dev: f64,
    /// Population skewness `m3 / m2^1.5` from exact moments (0 when the spread is 0):
    /// exact while the sum of cubes fits in 128 bits (values below about 2^42 ticks,
    /// half an hour at 2.6 GHz), past that from the histogram.
    pub skew: f64,
    /// Smallest value (exact).
    pub min: f64,
    /// Largest value (exact).
    pub max: f64,
    /// `max - min`.
    pub range: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// 99.99th percentile.
    pub p9999: f64,
    /// Sum of the values (exact): the time spent in the component. Nested scopes'
    /// totals overlap; a pulse's total is about the time its loop ran.
    pub total: f64,
    /// Samples the BYPASS rule flags as far above the median (`> max(factor x median,
    /// median + floor)`: a preemption, an interrupt or slow work alike; in every
    /// figure).
    pub bypass: u64,
    /// The sum of those samples: their share of `total`.
    pub bypass_total: f64,
    /// Samples outside the IQR fences (after BYPASS; in every figure).
    pub outliers: u64,
    /// The sum of those samples: their share of `total`.
    pub outliers_total: f64,
    /// Samples whose Start and Stop ran on different CPUs.
    pub migrated: u64,
    /// The C++ original's statistics: computed after removing the flagged samples.
    pub cleaned: CleanedSummary,
}

/// A component's statistics without the samples the cleaning rule flags (BYPASS and
/// OUTLIERS), as the C++ original computes them before its table. The main columns
/// show these under [`Figures::Cleaned`](crate::report::Figures::Cleaned) ([`ReportOptions::seed`](crate::ReportOptions::seed)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CleanedSummary {
    /// Values left after cleaning.
    pub samples: u64,
    /// Mean.
    #[serde(deserialize_with = "super::wire::figure")]
    pub avg: f64,
    /// Median.
    #[serde(deserialize_with = "super::wire::figure")]
    pub median: f64,
    /// Population standard deviation.
    #[serde(deserialize_with = "super::wire::figure")]
    pub std_dev: f64,
    /// Population skewness.
    #[serde(deserialize_with = "super::wire::figure")]
    pub skew: f64,
    /// Smallest value.
    #[serde(deserialize_with = "super::wire::figure")]
    pub min: f64,
    /// Largest value.
    #[serde(deserialize_with = "super::wire::figure")]
    pub max: f64,
    /// `max - min`.
    #[serde(deserialize_with = "super::wire::figure")]
    pub range: f64,
}
