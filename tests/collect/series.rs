//! The run's time structure (`Report::series`): per id, its values in blocks of time,
//! each as the id's row holds its values. The tests set the block clock through the
//! test hooks and fold by making reports, so each value's block is known; the clock
//! and the reset that restarts the blocks are process-wide: they hold
//! `common::exclusive()`.

use crate::common;
use latte::report::{Distribution, Series};
use latte::{Data, Id, Report, ReportOptions, Unit};

/// The block clock at `ms` from now on, the whole run reset (blocks count from here);
/// back to the monotonic clock, and reset again, when dropped.
struct BlockClock;

impl BlockClock {
    fn at(ms: u64) -> BlockClock {
        latte::test_hooks::set_block_clock(Some(ms));
        latte::collect::reset();
        BlockClock
    }

    fn set(&self, ms: u64) {
        latte::test_hooks::set_block_clock(Some(ms));
    }
}

impl Drop for BlockClock {
    fn drop(&mut self) {
        latte::test_hooks::set_block_clock(None);
        latte::collect::reset();
    }
}

/// Raw ticks as recorded, in cycles: values are exactly the recorded ones.
fn raw() -> ReportOptions {
    ReportOptions {
        unit: Unit::Cycles,
        data: Data::Raw,
        ..ReportOptions::default()
    }
}

/// `id`'s blocks in `report`.
fn blocks(report: &Report, id: &Id) -> Vec<Distribution> {
    let series = report
        .series
        .as_ref()
        .expect("a whole-run report has a series");
    let c = series.component(id.name()).expect("the id has a row");
    c.blocks.clone()
}

/// A distribution's values, one per value held (bucket values; exact below 2,048).
fn values(d: &Distribution) -> Vec<f64> {
    d.buckets()
        .flat_map(|b| std::iter::repeat_n(b.value, b.count as usize))
        .collect()
}

/// Records `values` of `id` on a thread of its own.
fn on_thread(name: &str, id: &'static Id, values: Vec<u64>) {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || values.into_iter().for_each(|v| latte::record(id, v)))
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn values_of_distinct_periods_land_in_distinct_blocks_in_order() {
    let _one = common::exclusive();
    static A: Id = Id::new("series/periods_a");
    static B: Id = Id::new("series/periods_b");
    let clock = BlockClock::at(1_000);
    (1..=10).for_each(|v| latte::record(&A, v));
    Report::collect(&raw()); // folds at 1,000 ms: block 0
    clock.set(1_120); // block 2
    latte::record(&A, 20);
    on_thread("series-periods", &B, (100..110).collect());
    Report::collect(&raw());
    clock.set(1_149); // still block 2
    latte::record(&A, 21);
    Report::collect(&raw());
    clock.set(1_400); // block 8
    latte::record(&A, 30);
    let report = Report::collect(&raw());

    let series = report.series.as_ref().unwrap();
    assert_eq!((series.block_ms, series.blocks), (Series::BLOCK_MS, 9));
    let names: Vec<&str> = (series.components.iter())
        .map(|c| c.component.as_str())
        .collect();
    let rows: Vec<&str> = (report.all_threads.iter())
        .map(|r| r.component.as_str())
        .collect();
    assert_eq!(names, rows, "one component per row, in the rows' order");
    let a: Vec<Vec<f64>> = blocks(&report, &A).iter().map(values).collect();
    let ten: Vec<f64> = (1..=10).map(f64::from).collect();
    let empty = Vec::new();
    assert_eq!(
        a,
        [
            ten,
            empty.clone(),
            vec![20.0, 21.0],
            empty.clone(),
            empty.clone(),
            empty.clone(),
            empty.clone(),
            empty,
            vec![30.0]
        ]
    );
    let b = blocks(&report, &B);
    assert_eq!(values(&b[2]), (100..110).map(f64::from).collect::<Vec<_>>());
    assert!(b.iter().enumerate().all(|(k, d)| k == 2 || d.is_empty()));
    // A block with nothing is `None` in the report.
    let c = series.component(B.name());
    assert!(c.unwrap().blocks[3].is_empty());
}

#[test]
fn the_blocks_of_an_id_add_up_to_its_row() {
    let _one = common::exclusive();
    static WAIT: Id = Id::new("series/add_up_wait");
    static GAP: Id = Id::new("series/add_up_gap");
    let clock = BlockClock::at(0);
    // Three threads, five periods; values below 2,048 ticks (exact buckets) and far
    // above; pulses on the real clock besides.
    for (period, at) in [0u64, 70, 75, 260, 3_000].into_iter().enumerate() {
        clock.set(at);
        for t in 0..3u64 {
            let values = (0..400).map(|i| 1 + (i * 37 + t * 11 + period as u64 * 5) % 2_000);
            let wide = (0..20).map(|i| 10_000 + i * 997 * (t + 1));
            on_thread(
                &format!("series-add-up-{t}"),
                &WAIT,
                values.chain(wide).collect(),
            );
        }
        (0..50).for_each(|_| latte::latte_pulse!("series/add_up_gap"));
        Report::collect(&raw());
    }
    for options in [raw(), ReportOptions::default()] {
        let report = Report::collect(&options);
        let series = report.series.as_ref().unwrap();
        assert_eq!(series.blocks, 61);
        for id in [&WAIT, &GAP] {
            let row = (report.all_threads.iter())
                .find(|r| r.component == id.name())
                .unwrap();
            let blocks = blocks(&report, id);
            assert_eq!(blocks.len(), 61);
            let filled: Vec<usize> = (0..61).filter(|&k| !blocks[k].is_empty()).collect();
            assert_eq!(filled, [0, 1, 5, 60], "{}", id.name());
            let counts: u64 = blocks.iter().map(Distribution::len).sum();
            assert_eq!(counts, row.stats.samples, "{}", id.name());
        }
        // WAIT's values are user values (no overhead in calibrated data either): the
        // blocks' values together are the row's, bucket by bucket, so its quantiles
        // are the row's.
        let row = (report.all_threads.iter())
            .find(|r| r.component == WAIT.name())
            .unwrap();
        let mut all: Vec<f64> = blocks(&report, &WAIT).iter().flat_map(values).collect();
        all.sort_by(f64::total_cmp);
        assert_eq!(all, values(&row.distribution));
        let n = all.len() as u64;
        for (q, want) in [
            (0.5, row.stats.median),
            (0.99, row.stats.p99),
            (0.9, row.stats.p90),
        ] {
            assert_eq!(all[latte::report::rank(q, n) as usize - 1], want, "q {q}");
        }
    }
}

#[test]
fn past_max_blocks_blocks_merge_in_pairs_and_lose_nothing() {
    let _one = common::exclusive();
    static STEP: Id = Id::new("series/merge_step");
    let clock = BlockClock::at(0);
    let n = Series::MAX_BLOCKS as u64;
    // One value per block, the block's number, folded in its block.
    for k in 0..n {
        clock.set(k * Series::BLOCK_MS);
        latte::record(&STEP, k);
        Report::collect(&raw());
    }
    let full = Report::collect(&raw());
    let series = full.series.as_ref().unwrap();
    assert_eq!((series.blocks, series.block_ms), (Series::MAX_BLOCKS, 50));
    // One block more: pairs merge, blocks are twice as long, half as many (and the
    // open one).
    clock.set(n * Series::BLOCK_MS);
    latte::record(&STEP, n);
    let merged = Report::collect(&raw());
    let series = merged.series.as_ref().unwrap();
    assert_eq!(
        (series.blocks, series.block_ms),
        (Series::MAX_BLOCKS / 2 + 1, 100)
    );
    let step: Vec<Vec<f64>> = blocks(&merged, &STEP).iter().map(values).collect();
    for (k, block) in step[..Series::MAX_BLOCKS / 2].iter().enumerate() {
        let first = 2.0 * k as f64;
        assert_eq!(block, &[first, first + 1.0]);
    }
    assert_eq!(step[Series::MAX_BLOCKS / 2], [n as f64]);
    let row = (merged.all_threads.iter())
        .find(|r| r.component == STEP.name())
        .unwrap();
    assert_eq!(row.stats.samples, n + 1);
}

#[test]
fn a_reset_clears_the_series() {
    let _one = common::exclusive();
    static BEFORE: Id = Id::new("series/reset_before");
    static AFTER: Id = Id::new("series/reset_after");
    let clock = BlockClock::at(0);
    latte::record(&BEFORE, 1);
    clock.set(500);
    latte::record(&BEFORE, 2);
    let before = Report::collect(&raw());
    assert_eq!(before.series.as_ref().unwrap().blocks, 11);
    latte::collect::reset();
    // Nothing since: no rows, no series.
    assert_eq!(Report::collect(&raw()).series, None);
    clock.set(560);
    latte::record(&AFTER, 3);
    let after = Report::collect(&raw());
    let series = after.series.as_ref().unwrap();
    // Blocks count from the reset (500 ms): 560 ms is block 1.
    assert_eq!(series.blocks, 2);
    let names: Vec<&str> = series
        .components
        .iter()
        .map(|c| c.component.as_str())
        .collect();
    assert_eq!(names, [AFTER.name()]);
    assert_eq!(values(&blocks(&after, &AFTER)[1]), [3.0]);
}
