//! The quantile rule, the row's histogram and its decoder.

use super::*;
use crate::report::{Report, Row};

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

/// `values` as the JSON's text of a row's histogram was made before the report held a
/// typed distribution: a histogram of latte's precision recording them in ascending
/// order, V2 deflate, base64.
fn encoded_directly(values: &[(u64, u64)]) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&to_histogram(values), &mut bytes)
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The JSON text of `d` (`None` for `null`).
fn text(d: &Distribution) -> Option<String> {
    serde_json::from_value(serde_json::to_value(d).unwrap()).unwrap()
}

#[test]
fn a_distribution_is_written_as_the_histogram_of_its_values_and_read_back_whole() {
    let values: Runs = vec![(0, 3), (26, 1_000), (52, 500), (3_000, 4), (1_000_000, 2)];
    let d = Distribution::from_ticks(&values);
    let written = text(&d).unwrap();
    assert_eq!(written, encoded_directly(&values));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&written)
        .unwrap();
    let hist: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .unwrap();
    assert_eq!((hist.len(), hist.count_at(26)), (1_509, 1_000));
    assert_eq!(
        hist.value_at_quantile(1.0),
        hist.highest_equivalent(1_000_000)
    );
    let mut read: Distribution = serde_json::from_value(written.into()).unwrap();
    read.place(1.0, 0.0, 1_000_000.0);
    assert_eq!(read, d);
    assert_eq!(text(&Distribution::from_ticks(&[])), None);
    let none: Distribution = serde_json::from_str("null").unwrap();
    assert!(none.is_empty());
}

proptest::proptest! {
    /// Whatever the values, the JSON holds the bytes the analysis wrote when it
    /// encoded each row's histogram itself (the header's highest trackable value
    /// included), and reads back to the same buckets.
    #[test]
    fn the_json_text_is_the_histogram_of_the_values_byte_for_byte(
        mut values in proptest::collection::vec((0u64..1 << 40, 1u64..5), 1..200),
        spread in 0u32..40,
    ) {
        for v in &mut values {
            v.0 >>= spread;
        }
        values.sort_unstable();
        values.dedup_by_key(|v| v.0);
        let d = Distribution::of_sorted(&values);
        let written = text(&d).unwrap();
        proptest::prop_assert_eq!(&written, &encoded_directly(&values));
        let read: Distribution = serde_json::from_value(written.into()).unwrap();
        proptest::prop_assert_eq!(read, d);
    }
}

/// A report in `unit` at 2.6 ticks/ns with one row of `values` (ticks), as the
/// analysis writes it, read back from its JSON.
fn report_of(values: &[(u64, u64)], unit: Unit) -> Report {
    let report = Report {
        unit,
        data: crate::report::Data::Calibrated,
        ticks_per_ns: 2.6,
        frequency_accuracy: 1e-6,
        all_threads: vec![Row::with_ticks_in("c", values, per_tick(unit, 2.6))],
        ..Report::default()
    };
    let read: Report =
        serde_json::from_str(&report.to_json(super::super::JsonStyle::Compact)).unwrap();
    assert_eq!(read.all_threads, report.all_threads);
    read
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
        let dist = &row.distribution;
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
    let report = report_of(&[(5_003, 10), (9_000, 10)], Unit::Cycles);
    let extremes = |d: &Distribution| (d.quantile(0.0), d.quantile(1.0));
    let mut dist = report.all_threads[0].distribution.clone();
    assert_eq!(extremes(&dist), (5_003.0, 9_000.0));
    // A row written by hand with extremes its histogram does not hold.
    dist.place(1.0, 0.0, f64::NAN);
    assert_eq!(extremes(&dist), (5_002.0, 9_004.0));
}

#[test]
fn unreadable_histograms_are_errors_that_say_what_they_are() {
    let read = |text: &str| {
        serde_json::from_value::<Distribution>(text.into())
            .unwrap_err()
            .to_string()
    };
    assert!(read("not base64!").contains("not base64"));
    assert!(read("AAAA").contains("not a V2 HdrHistogram"));
    let mut two_digits = Histogram::<u64>::new(2).unwrap();
    two_digits.record(100).unwrap();
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&two_digits, &mut bytes)
        .unwrap();
    let text = base64::engine::general_purpose::STANDARD.encode(bytes);
    assert!(
        read(&text).contains("2 significant digits"),
        "{}",
        read(&text)
    );
    // No values: nothing to decode.
    let dist = Distribution::default();
    assert!(dist.is_empty() && dist.quantile(0.5) == 0.0 && dist.buckets().count() == 0);
}
