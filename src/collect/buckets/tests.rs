//! The bucket table against the dense histogram it stands for.

use super::*;
use proptest::prelude::*;

/// The oracle: every value recorded one by one into a histogram, as a tally did
/// before it had a table form.
fn reference(values: &[u64]) -> Histogram<u64> {
    let mut h = empty();
    values.iter().for_each(|&v| record_dense(&mut h, v));
    h
}

fn buckets_of(values: &[u64]) -> Buckets {
    let mut b = Buckets::default();
    values.iter().for_each(|&v| b.record(v));
    b
}

/// Same histogram as the oracle: same size, buckets, counts, extremes, quantiles.
fn assert_same(b: &Buckets, want: &Histogram<u64>) {
    let got = b.histogram();
    assert!(*got == *want, "the histograms differ");
    assert_eq!(got.distinct_values(), want.distinct_values());
    assert_same_counts(b, want);
}

/// Same buckets, counts, extremes and quantiles as the oracle (a histogram cleared
/// for reuse keeps the size it had grown to).
fn assert_same_counts(b: &Buckets, want: &Histogram<u64>) {
    let got = b.histogram();
    let buckets = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    };
    assert_eq!(buckets(&got), buckets(want));
    for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
        assert_eq!(
            got.value_at_quantile(q),
            want.value_at_quantile(q),
            "q = {q}"
        );
    }
    assert_eq!(
        (got.len(), got.min(), got.max()),
        (want.len(), want.min(), want.max())
    );
}

/// A seeded splitmix64 stream: reproducible values without a `rand` dependency.
fn values(seed: u64, n: usize, f: impl Fn(u64) -> u64) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            f(z ^ (z >> 31))
        })
        .collect()
}

#[test]
fn table_and_histogram_agree_on_seeded_data() {
    let max_ticks = crate::collect::Sample::MAX_TICKS;
    let cases: [(&str, Vec<u64>); 5] = [
        // One code path's TSC deltas: ~2,600 ticks in steps of 26.
        ("narrow", values(1, 1_000, |r| 2_600 + 26 * (r % 40))),
        ("small", values(2, 5_000, |r| r % 2_048)),
        ("wide", values(3, 20_000, |r| r % 10_000_000)),
        ("huge", values(4, 3_000, |r| r % (max_ticks + 1))),
        ("zeros and one", vec![0, 0, 1, 0]),
    ];
    for (name, v) in &cases {
        let b = buckets_of(v);
        assert_same(&b, &reference(v));
        println!("{name}: {} B, table: {}", b.heap_bytes(), b.is_sparse());
    }
    // The narrow spread stays a table of its 40 buckets: 64 slots of 16 B.
    let narrow = buckets_of(&cases[0].1);
    assert!(narrow.is_sparse());
    assert_eq!(narrow.heap_bytes(), 64 * 16);
    // 5,000 values below 2,048 use more than 768 buckets: the histogram.
    assert!(!buckets_of(&cases[1].1).is_sparse());
}

proptest! {
    #[test]
    fn table_and_histogram_agree(
        v in prop_oneof![
            prop::collection::vec(0u64..3_000, 0..3_000),
            prop::collection::vec(2_000u64..1 << 20, 0..3_000),
            prop::collection::vec(0u64..=crate::collect::Sample::MAX_TICKS, 0..300),
        ]
    ) {
        assert_same(&buckets_of(&v), &reference(&v));
    }
}

#[test]
fn the_table_turns_into_the_histogram_where_it_would_be_larger() {
    // Below 2,048 ticks the histogram takes 16 KiB: the table stops at 1,024 slots,
    // 768 buckets.
    let below: Vec<u64> = (0..768).collect();
    let mut b = buckets_of(&below);
    assert!(b.is_sparse());
    assert_eq!(b.heap_bytes(), 16 * 1024);
    b.record(5); // a bucket already in the table
    assert!(b.is_sparse());
    b.record(2_000); // the 769th bucket
    assert!(!b.is_sparse());
    let mut all = below.clone();
    all.extend([5, 2_000]);
    assert_same(&b, &reference(&all));
    assert_eq!(
        b.heap_bytes(),
        16 * 1024 + size_of::<Histogram<u64>>() as u64
    );

    // Below 8,192 ticks the histogram takes 32 KiB: the table holds 1,536 buckets.
    let wider: Vec<u64> = (0..768)
        .map(|i| 4_096 + 4 * i)
        .chain((0..768).map(|i| 2_048 + 2 * i))
        .collect();
    let mut b = buckets_of(&wider);
    assert!(b.is_sparse());
    assert_eq!(b.heap_bytes(), 32 * 1024);
    b.record(7);
    assert!(!b.is_sparse());
    let mut all = wider.clone();
    all.push(7);
    assert_same(&b, &reference(&all));
}

#[test]
fn tables_and_histograms_add_up_in_every_combination() {
    let few = values(5, 500, |r| 1_000 + 26 * (r % 30));
    let others = values(6, 500, |r| 1_300 + 26 * (r % 30));
    let many = values(7, 5_000, |r| r % 100_000);
    let joined = |a: &[u64], b: &[u64]| [a, b].concat();
    for (a, b) in [
        (&few, &others),
        (&few, &many),
        (&many, &few),
        (&many, &many),
    ] {
        let mut sum = buckets_of(a);
        sum.add(&buckets_of(b));
        assert_same(&sum, &reference(&joined(a, b)));
        // Adding nothing changes nothing.
        sum.add(&Buckets::default());
        assert_same(&sum, &reference(&joined(a, b)));
    }
    let mut tables = buckets_of(&few);
    tables.add(&buckets_of(&others));
    assert!(tables.is_sparse(), "two small tables stay a table");
    // Two tables of 500 buckets each below 2,048 ticks: 1,000 buckets, the
    // histogram (the sum outgrows the table partway).
    let (low, high): (Vec<u64>, Vec<u64>) = ((0..500).collect(), (500..1_000).collect());
    let (mut sum, other) = (buckets_of(&low), buckets_of(&high));
    assert!(sum.is_sparse() && other.is_sparse());
    sum.add(&other);
    assert!(!sum.is_sparse());
    assert_same(&sum, &reference(&joined(&low, &high)));
    // The cached bucket of a table is not stale after adding: counts go where they
    // belong.
    let mut a = buckets_of(&[3_000, 3_000]);
    a.add(&buckets_of(&[10, 3_000]));
    a.record(10);
    a.record(3_001);
    assert_same(&a, &reference(&[3_000, 3_000, 10, 3_000, 10, 3_001]));
}

#[test]
fn clearing_empties_and_keeps_the_form_and_memory() {
    let mut table = buckets_of(&[100, 200, 300]);
    let bytes = table.heap_bytes();
    table.clear();
    assert!(table.is_sparse());
    assert_eq!(table.heap_bytes(), bytes);
    assert_same(&table, &empty());
    // The bucket cached before clearing is not counted into.
    table.record(300);
    table.record(400);
    assert_same(&table, &reference(&[300, 400]));

    let many = values(8, 20_000, |r| r % 1_000_000);
    let mut dense = buckets_of(&many);
    assert!(!dense.is_sparse());
    let bytes = dense.heap_bytes();
    dense.clear();
    assert!(!dense.is_sparse());
    assert_eq!(dense.heap_bytes(), bytes);
    assert_eq!(dense.histogram().len(), 0);
    dense.record(42);
    assert_same_counts(&dense, &reference(&[42]));
}
