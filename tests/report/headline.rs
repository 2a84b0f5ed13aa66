//! The headline covers every sample: known values recorded through the public API,
//! a slow tenth the cleaning rule flags, and the figures every reader sees (the
//! `Report`'s fields, its table) count them; the C++ original's cleaned figures sit
//! beside them, and in the table under the seed's preset.

use latte::report::{Figures, Focus, Summary, TableOptions};
use latte::{Data, Id, Report, ReportOptions, Unit};
use std::sync::Once;

static WAIT: Id = Id::new("headline_wait");
static BUCKET: Id = Id::new("headline_bucket");

/// 9,000 values of 100 ticks and 1,000 of 20,000 (a queue wait with real slow work),
/// and three values in one histogram bucket; once per process.
fn record() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for i in 0..10_000 {
            latte::record(&WAIT, if i % 10 == 9 { 20_000 } else { 100 });
        }
        for v in [3_000, 3_001, 3_001] {
            latte::record(&BUCKET, v);
        }
    });
}

fn stats(report: &Report, id: &Id) -> Summary {
    report
        .all_threads
        .iter()
        .find(|r| r.component == id.name())
        .unwrap_or_else(|| panic!("no row {}", id.name()))
        .stats
}

#[test]
fn every_sample_is_in_the_headline() {
    record();
    let options = ReportOptions {
        unit: Unit::Cycles,
        data: Data::Raw,
        ..ReportOptions::default()
    };
    let report = Report::collect(&options);
    let s = stats(&report, &WAIT);
    assert_eq!((s.samples, s.seen, s.lost), (10_000, 10_000, 0), "{s:?}");
    assert_eq!(
        s.avg, 2_090.0,
        "exactly (9,000 x 100 + 1,000 x 20,000) / 10,000"
    );
    assert_eq!(s.total, 20_900_000.0);
    assert_eq!((s.min, s.max, s.range), (100.0, 20_000.0, 19_900.0));
    assert_eq!((s.median, s.p99), (100.0, 20_000.0));
    // The slow tenth is flagged as preemption, and stays in every figure above.
    assert_eq!(s.bypass, 1_000, "{s:?}");
    assert!(
        (s.bypass_total - 20_000_000.0).abs() <= 20_000_000.0 / 2_048.0,
        "the flagged samples hold 20,000,000 of the 20,900,000 ticks: {}",
        s.bypass_total
    );
    // The C++ original's figures, without them.
    let c = s.cleaned;
    assert_eq!((c.samples, c.avg, c.max), (9_000, 100.0, 100.0), "{c:?}");
}

#[test]
fn calibrated_time_is_the_same_within_the_frequency_accuracy() {
    record();
    let report = Report::collect(&ReportOptions::default());
    assert_eq!((report.unit, report.data), (Unit::Time, Data::Calibrated));
    let s = stats(&report, &WAIT);
    assert_eq!(s.samples, 10_000);
    // `record` values are never corrected: in time they are the ticks divided by the
    // calibrated frequency, whose relative error is `frequency_accuracy`
    // (docs/report-format.md). The conversion itself adds nothing to it.
    let ticks = s.avg * report.ticks_per_ns;
    assert!((ticks - 2_090.0).abs() <= 2_090.0 * 1e-12, "{ticks}");
    // How accurate the frequency is depends on the machine (under qemu-user it can
    // exceed 1e-3): the report states it, finite and non-negative, rather than the
    // test assuming a machine.
    assert!(
        report.frequency_accuracy.is_finite() && report.frequency_accuracy >= 0.0,
        "{}",
        report.frequency_accuracy
    );
    assert_eq!(s.bypass, 1_000);
    assert!(s.bypass_total / s.total > 0.95, "{s:?}");
}

#[test]
fn skewness_comes_from_exact_moments() {
    record();
    let options = ReportOptions {
        unit: Unit::Cycles,
        data: Data::Raw,
        ..ReportOptions::default()
    };
    let s = stats(&Report::collect(&options), &BUCKET);
    // By the definition: deviations -2/3, 1/3, 1/3; m2 = 2/9, m3 = -2/27.
    assert!((s.std_dev - (2.0f64 / 9.0).sqrt()).abs() < 1e-12, "{s:?}");
    assert!(
        (s.skew + std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12,
        "{s:?}"
    );
}

/// The cells of `id`'s row in `report`'s table at 140 columns, one space apart. The
/// table is focused on `id`: the columns that fit depend on the widest id shown, and
/// the process holds other tests' ids too.
fn row_cells(report: &Report, id: &Id) -> String {
    let mut out = Vec::new();
    let options = TableOptions {
        width: Some(140),
        ..TableOptions::default()
    };
    let focus = Focus {
        ids: Some(id.name().into()),
        ..Focus::default()
    };
    let focused = report.focus(&focus).unwrap();
    focused
        .write(&mut out, latte::Format::Table(options.clone()))
        .unwrap();
    let text = String::from_utf8(out).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(id.name()))
        .unwrap_or_else(|| panic!("no row in\n{text}"));
    // One space between cells, whatever the padding.
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_table_shows_the_headline_and_the_seed_preset_the_cleaned_figures() {
    record();
    let headline = Report::collect(&ReportOptions {
        unit: Unit::Cycles,
        data: Data::Raw,
        ..ReportOptions::default()
    });
    // SAMPLES, AVG, MEDIAN, STD DEV, SKEW, MIN, MAX ...
    let cells = row_cells(&headline, &WAIT);
    assert!(cells.contains(" 10,000 2.090 k 100.0 "), "{cells}");
    assert!(
        cells.contains(" 20.00 k "),
        "the largest value is shown: {cells}"
    );

    let seed = Report::collect(&ReportOptions::seed());
    assert_eq!(seed.figures, Figures::Cleaned);
    let cells = row_cells(&seed, &WAIT);
    assert!(cells.contains(" 9,000 100.0 100.0 "), "{cells}");
    // The tails and TOTAL still cover every sample.
    assert!(cells.ends_with(" 20.90 M"), "{cells}");
}
