//! Reading a report's JSON: the current format (5), the formats before it, and format
//! 1, whose main figures were computed after cleaning.
//!
//! Format 4 reads as it is: its tree nodes have no account (`None`), and a node's
//! `kind` says `Scope` for timers and spans too (format 5 tells them apart).
//!
//! Formats 2 and 3 read as they are, with what they did not have empty: format 3 has
//! no `series` (the run's time structure, [`Report::series`]: `None`), format 2 no
//! call tree and no frames either. Their `format_version` stays as read, so one
//! written again says what it holds.
//!
//! Format 1 (no `format_version` field) kept the cleaned statistics in `samples`,
//! `avg`, `median`, `std_dev`, `skew`, `min`, `max` and `range`, and every folded
//! sample in `folded`, `p50` .. `p9999` and the `_all` fields. Read here, the cleaned
//! figures go to [`Summary::cleaned`] and the headline is rebuilt from the
//! every-sample fields; what format 1 did not keep (the skewness of every sample, the
//! flagged samples' totals) is NaN, shown as `-`. A format newer than
//! [`Report::FORMAT_VERSION`] is refused with an error naming its version.

use super::{CleanedSummary, Report, Summary};
use serde::{Deserialize, Deserializer};

/// The version of a report without a `format_version` field.
pub(super) fn format_1() -> u32 {
    1
}

/// A `format_version` this latte reads, or an error naming it.
pub(super) fn known_version<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let version = u32::deserialize(d)?;
    if (1..=Report::FORMAT_VERSION).contains(&version) {
        Ok(version)
    } else {
        Err(serde::de::Error::custom(format!(
            "report format version {version}: this latte reads versions 1 to {} \
             (a newer latte wrote it)",
            Report::FORMAT_VERSION
        )))
    }
}

/// A figure as JSON holds it: a number, or `null` for one the report does not know
/// (serde_json writes NaN as `null`).
type Figure = Option<f64>;

/// Every field of a summary in either format.
#[derive(Deserialize)]
pub(super) struct SummaryWire {
    samples: u64,
    seen: u64,
    lost: u64,
    avg: Figure,
    median: Figure,
    std_dev: Figure,
    skew: Figure,
    min: Figure,
    max: Figure,
    range: Figure,
    p90: Figure,
    p99: Figure,
    p999: Figure,
    p9999: Figure,
    bypass: u64,
    outliers: u64,
    migrated: u64,
    // Format 2 on.
    total: Option<Figure>,
    bypass_total: Option<Figure>,
    outliers_total: Option<Figure>,
    cleaned: Option<CleanedSummary>,
    // Format 1 only.
    folded: Option<u64>,
    p50: Figure,
    avg_all: Figure,
    std_dev_all: Figure,
    min_all: Figure,
    max_all: Figure,
}

/// A figure, NaN when unknown.
fn known(figure: Figure) -> f64 {
    figure.unwrap_or(f64::NAN)
}

impl From<SummaryWire> for Summary {
    fn from(w: SummaryWire) -> Summary {
        let tails = (known(w.p90), known(w.p99), known(w.p999), known(w.p9999));
        let Some(cleaned) = w.cleaned else {
            return from_format_1(w);
        };
        Summary {
            samples: w.samples,
            seen: w.seen,
            lost: w.lost,
            avg: known(w.avg),
            median: known(w.median),
            std_dev: known(w.std_dev),
            skew: known(w.skew),
            min: known(w.min),
            max: known(w.max),
            range: known(w.range),
            p90: tails.0,
            p99: tails.1,
            p999: tails.2,
            p9999: tails.3,
            total: known(w.total.flatten()),
            bypass: w.bypass,
            bypass_total: known(w.bypass_total.flatten()),
            outliers: w.outliers,
            outliers_total: known(w.outliers_total.flatten()),
            migrated: w.migrated,
            cleaned,
        }
    }
}

/// A format-1 summary: its main figures were the cleaned ones.
fn from_format_1(w: SummaryWire) -> Summary {
    let folded = w.folded.unwrap_or(w.samples);
    let (min, max) = (known(w.min_all), known(w.max_all));
    let avg = known(w.avg_all);
    Summary {
        samples: folded,
        seen: w.seen,
        lost: w.lost,
        avg,
        median: known(w.p50),
        std_dev: known(w.std_dev_all),
        skew: f64::NAN,
        min,
        max,
        range: max - min,
        p90: known(w.p90),
        p99: known(w.p99),
        p999: known(w.p999),
        p9999: known(w.p9999),
        total: avg * folded as f64,
        bypass: w.bypass,
        bypass_total: f64::NAN,
        outliers: w.outliers,
        outliers_total: f64::NAN,
        migrated: w.migrated,
        cleaned: CleanedSummary {
            samples: w.samples,
            avg: known(w.avg),
            median: known(w.median),
            std_dev: known(w.std_dev),
            skew: known(w.skew),
            min: known(w.min),
            max: known(w.max),
            range: known(w.range),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(v: i64) -> Result<u32, serde_json::Error> {
        known_version(serde_json::Value::from(v))
    }

    #[test]
    fn every_format_up_to_this_one_reads_and_a_newer_one_is_refused() {
        for v in 1..=5 {
            assert_eq!(version(v).unwrap(), v as u32);
        }
        assert_eq!(Report::FORMAT_VERSION, 5);
        let newer = version(6).unwrap_err().to_string();
        assert!(
            newer.contains("report format version 6: this latte reads versions 1 to 5"),
            "{newer}"
        );
        assert!(version(0).is_err());
    }
}
