//! The quantile rule, the row's histogram and its decoder.

use super::*;

#[test]
fn ranks_are_ceilings_without_rounding_surprises() {
    assert_eq!(rank(0.07, 100), 7);
    assert_eq!(rank(0.5, 4), 2);
    assert_eq!(rank(0.51, 4), 3);
    assert_eq!(rank(0.0, 10), 1);
    assert_eq!(rank(1.0, 10), 10);
    assert_eq!(rank(f64::NAN, 10), 1);
    assert_eq!(rank(0.99, 1_000_000), 990_000);
    assert_eq!(rank(0.999, 1_000_000), 999_000);
    assert_eq!(rank(0.5, 0), 1);
}

#[test]
fn encoded_histograms_decode_to_the_same_counts() {
    let runs: Runs = vec![(0, 3), (26, 1_000), (52, 500), (1_000_000, 2)];
    let text = held(&runs, 0, 1_000_000, true).histogram.unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap();
    let hist: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .unwrap();
    assert_eq!(hist.len(), 1_505);
    assert_eq!(hist.count_at(26), 1_000);
    assert_eq!(
        hist.value_at_quantile(1.0),
        hist.highest_equivalent(1_000_000)
    );
    assert!(held(&Vec::new(), 0, 0, true).histogram.is_none());
}

/// A report in `unit` at 2.6 ticks/ns with one row of `values` (ticks), as the
/// analysis writes it: histogram and quantiles from `held`, extremes exact.
fn report_of(values: &[(u64, u64)], unit: Unit) -> Report {
    Report {
        unit,
        data: crate::report::Data::Calibrated,
        ticks_per_ns: 2.6,
        frequency_accuracy: 1e-6,
        all_threads: vec![Row::with_ticks_in("c", values, per_tick(unit, 2.6))],
        ..Report::default()
    }
}

#[test]
fn a_distribution_gives_the_rows_quantiles_exactly() {
    // Values between buckets (as overheads taken off bucket middles leave them), the
    // extremes inside wide buckets: the histogram cannot hold them, the quantiles
    // are what it holds.
    let values: Runs = vec![
        (5, 10),
        (2_047, 5),
        (5_001, 300),
        (5_003, 200),
        (70_001, 40),
        (1_000_003, 3),
        (12_340_000_000, 1),
    ];
    for unit in [Unit::Cycles, Unit::Time] {
        let report = report_of(&values, unit);
        let row = &report.all_threads[0];
        let dist = row.distribution(&report).unwrap();
        let s = &row.stats;
        assert_eq!(dist.len(), 559);
        for (q, field) in [
            (0.5, s.median),
            (0.9, s.p90),
            (0.99, s.p99),
            (0.999, s.p999),
            (0.9999, s.p9999),
        ] {
            assert_eq!(dist.quantile(q).to_bits(), field.to_bits(), "{unit:?} {q}");
        }
        // The exact maximum clamps its bucket's middle: exact though the bucket is
        // 2^23 ticks wide.
        assert_eq!(dist.quantile(1.0), s.max);
        let buckets: Vec<Bucket> = dist.buckets().collect();
        assert_eq!(buckets.iter().map(|b| b.count).sum::<u64>(), 559);
        assert!(buckets.iter().all(|b| b.low <= b.value && b.value < b.high));
        assert_eq!(dist.per_tick(), per_tick(unit, 2.6));
    }
}

#[test]
fn extremes_outside_the_extreme_buckets_clamp_nothing() {
    // Buckets 5,000..=5,003 and 9,000..=9,007: middles 5,002 and 9,004.
    let mut report = report_of(&[(5_003, 10), (9_000, 10)], Unit::Cycles);
    let extremes = |report: &Report| {
        let dist = report.all_threads[0].distribution(report).unwrap();
        (dist.quantile(0.0), dist.quantile(1.0))
    };
    assert_eq!(extremes(&report), (5_003.0, 9_000.0));
    // A row written by hand with extremes its histogram does not hold.
    report.all_threads[0].stats.min = 0.0;
    report.all_threads[0].stats.max = f64::NAN;
    assert_eq!(extremes(&report), (5_002.0, 9_004.0));
}

#[test]
fn unreadable_histograms_are_errors_naming_the_component() {
    let mut report = report_of(&[(100, 1)], Unit::Time);
    let error = |report: &Report| {
        report.all_threads[0]
            .distribution(report)
            .unwrap_err()
            .to_string()
    };
    report.ticks_per_ns = 0.0;
    assert!(
        error(&report).contains("counter frequency"),
        "{}",
        error(&report)
    );
    report.ticks_per_ns = 2.6;
    report.all_threads[0].histogram = Some("not base64!".into());
    let text = error(&report);
    assert!(text.starts_with("the histogram of component `c`") && text.contains("base64"));
    report.all_threads[0].histogram = Some("AAAA".into());
    assert!(
        error(&report).contains("HdrHistogram"),
        "{}",
        error(&report)
    );
    report.all_threads[0].histogram = None;
    assert!(
        error(&report).contains("no histogram"),
        "{}",
        error(&report)
    );
    // No samples, no histogram: nothing to decode.
    report.all_threads[0].stats.samples = 0;
    let dist = report.all_threads[0].distribution(&report).unwrap();
    assert!(dist.is_empty() && dist.quantile(0.5) == 0.0 && dist.buckets().count() == 0);
}
