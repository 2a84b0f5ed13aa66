//! The options of a report, as plain data: the unit, the data (raw or calibrated), the
//! figures shown, the cleaning. The analysis reads them (`analyze/clean.rs` applies the
//! cleaning rules); the builder and [`Report::collect`](super::Report::collect) take them.

use serde::{Deserialize, Serialize};

/// What the values of a report are measured in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Unit {
    /// Counter ticks (CPU cycles on x86_64). The C++ original's default.
    Cycles,
    /// Nanoseconds, via the calibrated counter frequency; tables pick ns/us/ms/s per
    /// cell. latte's default.
    #[default]
    Time,
}

/// Whether the instrumentation's own overhead is subtracted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Data {
    /// Samples as recorded. The C++ original's default.
    Raw,
    /// Each sample minus the overhead of its (start mode, stop mode) pair, or of a
    /// pulse, saturating at zero. latte's default.
    #[default]
    Calibrated,
}

/// Which figures a table's main columns (SAMPLES, AVG, MEDIAN, STD DEV, SKEW, MIN,
/// MAX, RANGE) show. A [`Report`](crate::Report) always carries both sets: the
/// headline in `report::Summary`'s fields, the cleaned set in
/// `report::Summary::cleaned`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Figures {
    /// Every sample: the samples the cleaning rule flags (BYPASS, OUTLIERS) stay in
    /// every figure, so slow work is never taken for noise. latte's default.
    #[default]
    All,
    /// The C++ original's statistics: computed after removing the flagged samples.
    /// Tails (P90 .. P99.99) and TOTAL still cover every sample.
    Cleaned,
}

/// What a report shows and how its data is prepared. `Default` is what
/// [`init`](crate::init) reports: time units, calibrated data, every sample in the
/// figures, the default cleaning rule flagging (not removing) samples.
/// [`ReportOptions::seed`] is the C++ original's view.
///
/// ```
/// use latte::{Data, ReportOptions, Unit, report::Figures};
/// let options = ReportOptions::default();
/// assert_eq!((options.unit, options.data, options.figures), (Unit::Time, Data::Calibrated, Figures::All));
/// let report = latte::Report::collect(&options);
/// assert!(report.overhead.is_some());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReportOptions {
    /// Cycles or time.
    pub unit: Unit,
    /// Raw or overhead-corrected samples.
    pub data: Data,
    /// The rule that flags samples far above the median (BYPASS) or outside the IQR
    /// fences     /// ([`Cleaning::OFF`] flags nothing).
    pub cleaning: Cleaning,
    /// Which figures the table's main columns show.
    pub figures: Figures,
    /// The length a frame ([`latte_frame!`](crate::latte_frame)) should stay within:
    /// the report counts the frames over it and names what ate the longest
    /// ([`PerFrame`](crate::report::PerFrame)). `None`: no budget.
    pub frame_budget: Option<std::time::Duration>,
}

impl ReportOptions {
    /// The C++ original's report: counter ticks as recorded (cycles, raw data), and
    /// the main statistics computed after removing the samples the cleaning rule
    /// flags ([`Figures::Cleaned`]).
    ///
    /// ```
    /// use latte::{Data, ReportOptions, Unit, report::Figures};
    /// let seed = ReportOptions::seed();
    /// assert_eq!((seed.unit, seed.data, seed.figures), (Unit::Cycles, Data::Raw, Figures::Cleaned));
    /// ```
    pub fn seed() -> ReportOptions {
        ReportOptions {
            unit: Unit::Cycles,
            data: Data::Raw,
            cleaning: Cleaning::default(),
            figures: Figures::Cleaned,
            frame_budget: None,
        }
    }
}

/// The rule that flags samples far above the median (BYPASS) or outside the IQR
/// fences (outliers), by their values alone: it cannot tell an OS preemption from slow
/// work, and the report names the rule, not a cause. Flagged samples are counted, with their share of the component's time, and stay in every
/// headline figure; the cleaned figures (`report::Summary::cleaned`,
/// and the main columns under [`Figures::Cleaned`]) leave them out. `Default` is both
/// steps on with the documented constants; [`Cleaning::OFF`] flags nothing. The rules
/// are explained with `latte::analyze::clean`.
///
/// Every number is finite and at least 0 (a huge one, such as `f64::MAX`, makes its
/// rule remove nothing); [`Builder::start`](crate::Builder::start) refuses anything
/// else with [`Error::Cleaning`](crate::Error::Cleaning). A report carries its cleaning,
/// and JSON has no NaN or infinity, so a report with one would not read back. Given to
/// [`Report::collect`](crate::Report::collect) or `analyze::clean` directly, such a
/// number never panics: infinity removes nothing, NaN or a negative number every
/// sample.
///
/// ```
/// use latte::Cleaning;
/// let c = Cleaning::default();
/// assert_eq!(c.bypass.unwrap().factor, 10.0);
/// assert_eq!(c.fences.unwrap().k, 1.5);
/// assert!(Cleaning::OFF.bypass.is_none() && Cleaning::OFF.fences.is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cleaning {
    /// The far-above-the-median rule (BYPASS), or `None` to keep such samples.
    pub bypass: Option<Bypass>,
    /// The IQR outlier rule, or `None` to keep outliers.
    pub fences: Option<Fences>,
}

/// BYPASS rule: remove samples above `max(factor x median, median + floor_ns)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bypass {
    /// Multiple of the median a sample must exceed (default 10).
    pub factor: f64,
    /// Absolute excess over the median a sample must exceed, in nanoseconds
    /// (default 2,000: an interrupt or context switch, not a cache miss).
    pub floor_ns: f64,
}

/// Tukey fences: remove samples outside `[Q1 - k·IQR, Q3 + k·IQR]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fences {
    /// Fence distance in IQRs (default 1.5).
    pub k: f64,
    /// Spread used instead of a zero IQR, as a fraction of the median (default 0.25).
    pub zero_iqr_fraction: f64,
}

impl Cleaning {
    /// No cleaning: nothing is flagged, the cleaned figures are the headline ones.
    pub const OFF: Cleaning = Cleaning {
        bypass: None,
        fences: None,
    };

    /// The first number that is not finite or is negative, with its name.
    pub(crate) fn invalid(&self) -> Option<(&'static str, f64)> {
        let bypass = self.bypass.iter().flat_map(|b| {
            [
                ("Bypass::factor", b.factor),
                ("Bypass::floor_ns", b.floor_ns),
            ]
        });
        let fences = self.fences.iter().flat_map(|f| {
            [
                ("Fences::k", f.k),
                ("Fences::zero_iqr_fraction", f.zero_iqr_fraction),
            ]
        });
        bypass
            .chain(fences)
            .find(|(_, v)| !(v.is_finite() && *v >= 0.0))
    }
}

impl Default for Bypass {
    fn default() -> Bypass {
        Bypass {
            factor: 10.0,
            floor_ns: 2_000.0,
        }
    }
}

impl Default for Fences {
    fn default() -> Fences {
        Fences {
            k: 1.5,
            zero_iqr_fraction: 0.25,
        }
    }
}

impl Default for Cleaning {
    fn default() -> Cleaning {
        Cleaning {
            bypass: Some(Bypass::default()),
            fences: Some(Fences::default()),
        }
    }
}
