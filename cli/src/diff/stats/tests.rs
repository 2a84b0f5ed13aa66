//! The diff statistics on synthetic runs drawn from known distributions: log-normal
//! latencies (median 2,000 ticks, sigma 0.25), shifted by a known factor.

use super::*;
use hdrhistogram::Histogram;
use latte::report::Row;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, LogNormal};

/// An empty histogram with latte's precision.
fn empty() -> Histogram<u64> {
    Histogram::new(3).unwrap()
}

/// `hist`'s values (cycles) as the library decodes them from a report row carrying them.
fn decoded(hist: &Histogram<u64>) -> Dist {
    let ticks: Vec<(u64, u64)> = hist
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    Row::with_ticks("c", &ticks).distribution
}

const N: usize = 30_000;
const MEDIAN: f64 = 2_000.0;
const SIGMA: f64 = 0.25;

/// One run of `n` values from the log-normal, every value multiplied by `shift`.
fn run(n: usize, shift: f64, rng: &mut StdRng) -> Dist {
    let dist = LogNormal::new((MEDIAN * shift).ln(), SIGMA).unwrap();
    let mut hist = empty();
    for _ in 0..n {
        hist.record(dist.sample(rng).round().max(1.0) as u64)
            .unwrap();
    }
    decoded(&hist)
}

fn settings(threshold: f64) -> Settings {
    Settings {
        threshold,
        step: 1.0,
        confidence: 0.95,
        shift: 0.0,
        open_at: 0.95,
    }
}

/// Several runs on a side: no blocks.
fn runs_side(runs: Vec<Dist>) -> Side {
    Side {
        runs,
        blocks: Err("several runs".into()),
    }
}

/// One run of `blocks` blocks of `per_block` values each (independent, log-normal,
/// times `shift`): its distribution and its blocks.
fn blocked_run(blocks: usize, per_block: usize, shift: f64, rng: &mut StdRng) -> Side {
    let dist = LogNormal::new((MEDIAN * shift).ln(), SIGMA).unwrap();
    let mut all = empty();
    let mut parts = Vec::new();
    for _ in 0..blocks {
        let mut hist = empty();
        for _ in 0..per_block {
            hist.record(dist.sample(rng).round().max(1.0) as u64)
                .unwrap();
        }
        all.add(&hist).unwrap();
        parts.push(decoded(&hist));
    }
    Side {
        runs: vec![decoded(&all)],
        blocks: Blocks::new(
            parts
                .iter()
                .map(|d| d.buckets().map(|b| (b.value, b.count))),
        ),
    }
}

fn verdicts(base: &Side, new: &Side, threshold: f64, rng: &mut StdRng) -> Vec<Change> {
    estimate(base, new, &[0.5, 0.99, 0.999], 1.0, rng)
        .iter()
        .map(|e| change(e, &settings(threshold)))
        .collect()
}

#[test]
fn shifts_of_20_percent_regress_and_improve() {
    let mut rng = StdRng::seed_from_u64(1);
    let base = blocked_run(60, 500, 1.0, &mut rng);
    for (shift, expected) in [(1.2, Verdict::Regressed), (0.8, Verdict::Improved)] {
        let new = blocked_run(60, 500, shift, &mut rng);
        for change in verdicts(&base, &new, 0.05, &mut rng) {
            assert_eq!(change.verdict, expected, "shift {shift}: {change:?}");
            assert!((change.change - (shift - 1.0)).abs() < 0.05, "{change:?}");
        }
    }
}

/// With no shift and independent blocks, "no change" in at least 95 of 100 pairs at
/// the median and p99, and the interval holds the true change (0) in at least 90.
#[test]
fn no_shift_is_no_change_in_95_of_100_pairs() {
    let mut rng = StdRng::seed_from_u64(2);
    let (mut no_change, mut covered) = ([0; 3], [0; 3]);
    for _ in 0..100 {
        let base = blocked_run(50, 3_000, 1.0, &mut rng);
        let new = blocked_run(50, 3_000, 1.0, &mut rng);
        for (i, change) in verdicts(&base, &new, 0.05, &mut rng).iter().enumerate() {
            no_change[i] += usize::from(change.verdict == Verdict::NoChange);
            covered[i] += usize::from(change.low <= 0.0 && 0.0 <= change.high);
        }
    }
    println!("of 100 pairs, p50/p99/p99.9: no change {no_change:?}, holding 0 {covered:?}");
    assert!(
        no_change[..2].iter().all(|&n| n >= 95),
        "no change per quantile: {no_change:?}"
    );
    assert!(
        covered.iter().all(|&n| n >= 90),
        "intervals holding 0: {covered:?}"
    );
}

/// A +10% shift lies inside the 95% interval in at least 90 of 100 comparisons of three
/// runs per side (Welch).
#[test]
fn the_true_shift_is_inside_the_interval_in_90_of_100() {
    let mut rng = StdRng::seed_from_u64(3);
    let mut covered = [0; 3];
    for _ in 0..100 {
        let base = runs_side((0..3).map(|_| run(N / 3, 1.0, &mut rng)).collect());
        let new = runs_side((0..3).map(|_| run(N / 3, 1.1, &mut rng)).collect());
        for (i, change) in verdicts(&base, &new, 0.05, &mut rng).iter().enumerate() {
            covered[i] += usize::from(change.low <= 0.1 && 0.1 <= change.high);
        }
    }
    println!("3 runs per side, p50/p99/p99.9: +10% inside the interval {covered:?} of 100");
    assert!(covered.iter().all(|&n| n >= 90), "covered {covered:?}");
}

/// Run-to-run variation (each run's level off by ~1%) on top of the sampling: a 5%
/// shift is found with a 2% threshold from five runs per side.
#[test]
fn a_5_percent_shift_is_found_with_several_runs_per_side() {
    let mut rng = StdRng::seed_from_u64(4);
    let level = LogNormal::new(0.0, 0.01).unwrap();
    let mut runs = |shift: f64| -> Side {
        runs_side(
            (0..5)
                .map(|_| {
                    let wobble = level.sample(&mut rng);
                    run(N, shift * wobble, &mut rng)
                })
                .collect(),
        )
    };
    let (base, new) = (runs(1.0), runs(1.05));
    for change in verdicts(&base, &new, 0.02, &mut rng) {
        assert_eq!(change.verdict, Verdict::Regressed, "{change:?}");
        assert!(
            change.low > 0.0 && change.low < 0.05 && change.high > 0.05,
            "{change:?}"
        );
    }
}

#[test]
fn too_few_samples_are_inconclusive() {
    let mut rng = StdRng::seed_from_u64(5);
    // 2,000 values: enough for the median and p99, not for p99.9 (needs 10,000).
    let (base, new) = (
        blocked_run(40, 50, 1.0, &mut rng),
        blocked_run(40, 50, 1.5, &mut rng),
    );
    let changes = verdicts(&base, &new, 0.05, &mut rng);
    assert_eq!(changes[0].verdict, Verdict::Regressed);
    assert_eq!(changes[2].verdict, Verdict::Inconclusive);
    assert!(
        changes[2]
            .note
            .as_deref()
            .unwrap()
            .contains("of the 10000 needed"),
        "{:?}",
        changes[2]
    );
}

/// One run per side with fewer than 20 blocks, or none: inconclusive, with the reason;
/// an interval too wide for the threshold says so too.
#[test]
fn too_few_blocks_are_inconclusive_with_the_reason() {
    let mut rng = StdRng::seed_from_u64(7);
    let few = blocked_run(12, 2_000, 1.0, &mut rng);
    let enough = blocked_run(40, 600, 1.3, &mut rng);
    for change in verdicts(&few, &enough, 0.05, &mut rng) {
        assert_eq!(change.verdict, Verdict::Inconclusive, "{change:?}");
        assert_eq!(
            change.note.as_deref(),
            Some("12 blocks with values, of the 20 needed"),
            "{change:?}"
        );
        assert!(
            (change.change - 0.3).abs() < 0.1,
            "the estimate is kept: {change:?}"
        );
    }
    let none = Side {
        runs: enough.runs.clone(),
        blocks: Err("old.json: no blocks".into()),
    };
    let change = &verdicts(&enough, &none, 0.05, &mut rng)[0];
    assert_eq!(change.note.as_deref(), Some("old.json: no blocks"));
    // 40 blocks of 3 values: an interval far wider than ±5%.
    let (a, b) = (
        blocked_run(40, 3, 1.0, &mut rng),
        blocked_run(40, 3, 1.0, &mut rng),
    );
    let change = &verdicts(&a, &b, 0.05, &mut rng)[0];
    assert_eq!(change.verdict, Verdict::Inconclusive, "{change:?}");
    assert!(change.high - change.low > 0.2, "{change:?}");
    let expected = if change.change.abs() > 0.05 {
        "the interval holds 0"
    } else {
        "the interval reaches past ±5%"
    };
    assert_eq!(change.note.as_deref(), Some(expected), "{change:?}");
}

#[test]
fn the_verdict_follows_the_interval_and_the_threshold() {
    let t = 0.05;
    assert_eq!(verdict(0.2, 0.15, 0.25, t), Verdict::Regressed);
    assert_eq!(verdict(-0.2, -0.25, -0.15, t), Verdict::Improved);
    // Beyond the threshold and excluding 0, though the interval reaches below it.
    assert_eq!(verdict(0.06, 0.01, 0.11, t), Verdict::Regressed);
    // A real change, but the whole interval within the threshold.
    assert_eq!(verdict(0.02, 0.01, 0.03, t), Verdict::NoChange);
    // A real change below the threshold whose interval reaches past it: it may matter.
    assert_eq!(verdict(0.04, 0.012, 0.067, t), Verdict::Inconclusive);
    // Holding 0 and inside the threshold: no change; holding 0 and reaching past it
    // (even when narrower than twice the threshold): cannot tell.
    assert_eq!(verdict(0.01, -0.02, 0.04, t), Verdict::NoChange);
    assert_eq!(verdict(0.036, -0.01, 0.083, t), Verdict::Inconclusive);
    assert_eq!(verdict(0.01, -0.08, 0.09, t), Verdict::Inconclusive);
    // Nothing finite to judge (a ratio of infinities).
    assert_eq!(
        verdict(f64::NAN, f64::NAN, f64::NAN, t),
        Verdict::Inconclusive
    );
    assert_eq!(
        verdict(0.0, f64::NEG_INFINITY, 0.01, t),
        Verdict::Inconclusive
    );
}

/// Identical runs give an interval of one clock step around 0, not a verdict from
/// a zero-width interval.
#[test]
fn the_interval_is_at_least_one_step_wide() {
    let mut hist = empty();
    hist.record_n(100, 1_000).unwrap();
    let same = decoded(&hist);
    let s = Settings {
        threshold: 0.05,
        step: 26.0,
        confidence: 0.95,
        shift: 0.0,
        open_at: 0.95,
    };
    let mut rng = StdRng::seed_from_u64(6);
    let blocks = || Blocks::new((0..30).map(|_| [(100.0, 1_000)]));
    let sides = [
        Side {
            runs: vec![same.clone()],
            blocks: blocks(),
        },
        runs_side(vec![same.clone(); 3]),
    ];
    for side in &sides {
        let change = change(&estimate(side, side, &[0.5], 26.0, &mut rng)[0], &s);
        assert!(
            (change.low + 0.26).abs() < 1e-9 && (change.high - 0.26).abs() < 1e-9,
            "{change:?}"
        );
        assert_eq!(
            change.verdict,
            Verdict::Inconclusive,
            "a 26% step cannot show 5%"
        );
    }
}

mod coverage;

/// One run per side of `values[i]`-valued blocks: block `i` holds 1,000 values, a
/// tenth of them at `values[i] + tail`.
fn steady_side(values: &[f64], tail: f64) -> Side {
    let blocks: Vec<Vec<(f64, u64)>> = values
        .iter()
        .map(|&v| vec![(v, 900), (v + tail, 100)])
        .collect();
    let mut hist = empty();
    for block in &blocks {
        for &(v, k) in block {
            hist.record_n(v as u64, k).unwrap();
        }
    }
    Side {
        runs: vec![decoded(&hist)],
        blocks: Blocks::new(blocks),
    }
}

fn step_settings(step: f64, shift: f64) -> Settings {
    Settings {
        threshold: 0.05,
        step,
        confidence: 1.0 - 0.01 / 30.0,
        shift,
        open_at: 1.0 - 0.01 / 30.0,
    }
}

/// A base of one clock step: the widening is in value space, so the interval's low
/// end is -100% (the new value 0), not -200% as a step added to the relative change
/// gave.
#[test]
fn a_base_of_one_step_never_passes_minus_100_percent() {
    let mut rng = StdRng::seed_from_u64(7);
    // Blocks at one step or just above, independently.
    let mut levels = || -> Vec<f64> {
        (0..40)
            .map(|_| 26.0 + rng.random_range(0..2) as f64)
            .collect()
    };
    let (base, new) = (steady_side(&levels(), 26.0), steady_side(&levels(), 26.0));
    for e in estimate(&base, &new, &[0.5], 26.0, &mut rng) {
        let change = change(&e, &step_settings(26.0, 0.0));
        assert!(!change.open, "{change:?}");
        assert!(change.low >= -1.0, "{change:?}");
        assert!(
            change.low < -0.5,
            "one step of 26 ticks is -100%: {change:?}"
        );
        assert!(change.high.is_finite() && change.high >= 1.0, "{change:?}");
        assert_eq!(change.verdict, Verdict::Inconclusive, "{change:?}");
    }
}

/// A run whose blocks drift over its whole length leaves few independent stretches
/// (fewer than 1 degree of freedom, where the old floor at 1 gave +1e288): the
/// interval is open (no upper bound, `null` in JSON), says how many blocks a bound
/// needs, and does not take part in the error control.
#[test]
fn too_few_degrees_of_freedom_give_an_open_interval() {
    let mut rng = StdRng::seed_from_u64(8);
    let drift: Vec<f64> = (0..24).map(|i| 1_000.0 + 40.0 * i as f64).collect();
    let (base, new) = (steady_side(&drift, 500.0), steady_side(&drift, 500.0));
    let blocks = base.blocks.as_ref().unwrap();
    assert!(blocks.df() < MIN_DF, "df {}", blocks.df());
    let estimates = estimate(&base, &new, &[0.5], 26.0, &mut rng);
    assert!(!estimates[0].bounded(0.95));
    let change = change(&estimates[0], &step_settings(26.0, 0.0));
    assert!(change.open && change.low == -1.0 && change.high.is_infinite());
    assert_eq!(change.verdict, Verdict::Inconclusive);
    let note = change.note.clone().unwrap();
    let needs: usize = note
        .strip_prefix("open: a bound needs ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    assert!(needs > 24 && note.ends_with("the run has 24"), "{note}");
    let json = serde_json::to_value(&change).unwrap();
    assert_eq!(json["high"], serde_json::Value::Null);
    assert_eq!(json["open"], serde_json::Value::Bool(true));
}

/// The same drift over 200 blocks is bounded: the interval closes as the run grows.
#[test]
fn enough_blocks_close_the_interval() {
    let mut rng = StdRng::seed_from_u64(9);
    let mut levels = || -> Vec<f64> {
        (0..200)
            .map(|_| 1_000.0 + 40.0 * rng.random_range(0..7) as f64)
            .collect()
    };
    let (base, new) = (steady_side(&levels(), 500.0), steady_side(&levels(), 500.0));
    let estimates = estimate(&base, &new, &[0.5], 26.0, &mut rng);
    assert!(estimates[0].bounded(1.0 - 0.01 / 30.0));
    let change = change(&estimates[0], &step_settings(26.0, 0.0));
    assert!(!change.open && change.high.is_finite(), "{change:?}");
}

/// Values below one clock step on both sides get no interval and a verdict of their
/// own, and do not count in the error control; one side above a step is compared.
#[test]
fn quantiles_below_one_step_on_both_sides_are_below_resolution() {
    let mut rng = StdRng::seed_from_u64(10);
    let zeros = vec![0.0; 30];
    let (base, new) = (steady_side(&zeros, 0.0), steady_side(&zeros, 0.0));
    let e = &estimate(&base, &new, &[0.5], 26.0, &mut rng)[0];
    assert!(!e.has_interval());
    let below = change(e, &step_settings(26.0, 0.0));
    assert_eq!(below.verdict, Verdict::BelowResolution, "{below:?}");
    assert_eq!(below.verdict.word(), "below resolution");
    let slower = steady_side(&[260.0; 30], 0.0);
    let e = &estimate(&base, &slower, &[0.5], 26.0, &mut rng)[0];
    assert!(e.has_interval());
    assert_eq!(
        change(e, &step_settings(26.0, 0.0)).verdict,
        Verdict::Regressed
    );
}

/// A whole-run shift latte knows of (the runs' calibrated overheads apart) widens
/// the interval by that much, in value space.
#[test]
fn the_calibration_shift_widens_the_interval() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut levels = || -> Vec<f64> {
        (0..40)
            .map(|_| 1_000.0 + 10.0 * rng.random_range(0..2) as f64)
            .collect()
    };
    let (base, new) = (steady_side(&levels(), 0.0), steady_side(&levels(), 0.0));
    let e = &estimate(&base, &new, &[0.5], 1.0, &mut rng)[0];
    let (plain, shifted) = (
        change(e, &step_settings(1.0, 0.0)),
        change(e, &step_settings(1.0, 100.0)),
    );
    let base_value = plain.base.max(1.0);
    assert!(
        ((plain.low - shifted.low) * base_value - 100.0).abs() < 1e-6
            && ((shifted.high - plain.high) * base_value - 100.0).abs() < 1e-6,
        "{plain:?} {shifted:?}"
    );
}
