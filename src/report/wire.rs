//! Reading a report's JSON: the current format (7) and the ones before it back to 4.
//!
//! Format 4 reads as it is: its tree nodes have no account (`None`), and a node's
//! `kind` says `Scope` for timers and spans too (format 5 tells them apart).
//!
//! Formats 1 to 3 are refused with an error that says so: no release of latte wrote
//! them (they were the development builds' before the call tree's accounts). A report
//! without `format_version` is format 1. A format newer than [`Report::FORMAT_VERSION`]
//! is refused with an error naming its version.

use super::{CleanedSummary, Report, Summary};
use serde::{Deserialize, Deserializer};

/// The oldest format this latte reads.
pub(super) const OLDEST: u32 = 4;

/// What a report without a `format_version` field reads as: no format, refused by
/// [`check`].
pub(super) fn unversioned() -> u32 {
    0
}

/// A `format_version` this latte reads, or an error naming it.
pub(super) fn known_version<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let version = u32::deserialize(d)?;
    check(version).map_err(serde::de::Error::custom)
}

/// `version` if this latte reads it, else why not.
pub(super) fn check(version: u32) -> Result<u32, String> {
    let reads = format!(
        "this latte reads versions {OLDEST} to {}",
        Report::FORMAT_VERSION
    );
    match version {
        0 => Err(format!(
            "report without `format_version` (format 1): no release of latte wrote it; \
             {reads}"
        )),
        v if v < OLDEST => Err(format!(
            "report format version {v}: no release of latte wrote it; {reads}"
        )),
        v if v > Report::FORMAT_VERSION => Err(format!(
            "report format version {v}: {reads} (a newer latte wrote it)"
        )),
        v => Ok(v),
    }
}

/// A figure as JSON holds it: a number, or `null` for one the report does not know
/// (serde_json writes NaN as `null`).
type Figure = Option<f64>;

/// A figure read as JSON holds it: `null` (how serde_json writes NaN) is NaN, a figure
/// the report does not know (an interval's cleaned figures, say: `Report::since`).
pub(super) fn figure<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Figure::deserialize(d)?.unwrap_or(f64::NAN))
}

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
    total: Figure,
    bypass_total: Figure,
    outliers_total: Figure,
    /// Required: `None` only so that a summary without it (format 1's) is refused
    /// with a message that says which format lacks it.
    cleaned: Option<CleanedSummary>,
}

/// A figure, NaN when unknown.
fn known(figure: Figure) -> f64 {
    figure.unwrap_or(f64::NAN)
}

impl TryFrom<SummaryWire> for Summary {
    type Error = String;

    fn try_from(w: SummaryWire) -> Result<Summary, String> {
        let Some(cleaned) = w.cleaned else {
            return Err(format!(
                "missing field `cleaned`: a summary without it is format 1's, which no \
                 release of latte wrote; this latte reads versions {OLDEST} to {}",
                Report::FORMAT_VERSION
            ));
        };
        Ok(Summary {
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
            p90: known(w.p90),
            p99: known(w.p99),
            p999: known(w.p999),
            p9999: known(w.p9999),
            total: known(w.total),
            bypass: w.bypass,
            bypass_total: known(w.bypass_total),
            outliers: w.outliers,
            outliers_total: known(w.outliers_total),
            migrated: w.migrated,
            cleaned,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(v: i64) -> Result<u32, serde_json::Error> {
        known_version(serde_json::Value::from(v))
    }

    #[test]
    fn formats_4_to_8_read_and_every_other_is_refused_saying_why() {
        for v in 4..=8 {
            assert_eq!(version(v).unwrap(), v as u32);
        }
        assert_eq!(Report::FORMAT_VERSION, 8);
        let newer = version(9).unwrap_err().to_string();
        assert!(
            newer.contains("report format version 9: this latte reads versions 4 to 8"),
            "{newer}"
        );
        for v in 1..=3 {
            let older = version(v).unwrap_err().to_string();
            let said = format!("report format version {v}: no release of latte wrote it");
            assert!(older.contains(&said), "{older}");
        }
        assert!(version(0).is_err());
        assert!(check(unversioned()).unwrap_err().contains("format 1"));
    }
}
