//! Statistics, cleaning and report assembly checked against plain oracles.
//!
//! Every oracle here is written the obvious way (sort, count, filter, sum in integers) on
//! a fresh `Vec`, so a disagreement points at the code in `src/analyze`. Captures are
//! built by hand, so no recording and no real calibration is involved.
//!
//! What a report promises (see `src/analyze/dist.rs`): counts, extremes, the mean and
//! the standard deviation of all folded values are exact (f64 rounding only). Values
//! are read from histograms of raw ticks with 3 significant digits, where a value is
//! represented by its bucket's middle clamped to the exact extremes, less its overhead.
//! Cleaning decides on these representatives, and the cleaned statistics come from them
//! unless cleaning removed nothing. Quantiles are order statistics (rank `ceil(q * n)`)
//! of the histogram the row carries: the representatives put into it and read back
//! ([`held`]), so a reader of the JSON finds the same ones. They are exact below 2,048
//! ticks, within `raw / 2,048` above for raw data ([`half_bucket`]), within twice that
//! for calibrated data ([`Expected::tail_slack`]).

use crate::common::Rng;
use latte::analyze::Calibration;
use latte::analyze::{clean, moments, quantile};
use latte::collect::Anomalies;
use latte::collect::{ComponentCapture, Sample, SampleKind, ThreadCapture};
use latte::report::{Bypass, Fences};
use latte::report::{Row, RowKind, Summary};
use latte::{Capture, Cleaning, Data, Mode, Report, ReportOptions, Unit};
use proptest::collection::vec;
use proptest::prelude::*;
use std::collections::HashMap;
use std::time::Duration;

// ---------------------------------------------------------------------------------------
// Oracles
// ---------------------------------------------------------------------------------------

/// The definition itself, by counting: the smallest value with at least `num / den` of
/// the `n` values at or below it (for `num = 0`, the smallest value); 0 for no values.
/// Quadratic: for small sets only.
fn naive_quantile(values: &[u64], num: u64, den: u64) -> u64 {
    let n = values.len() as u128;
    values
        .iter()
        .copied()
        .filter(|&v| {
            let at_or_below = values.iter().filter(|&&y| y <= v).count() as u128;
            at_or_below * u128::from(den) >= u128::from(num) * n
        })
        .min()
        .unwrap_or(0)
}

/// The order statistic of rank `ceil(num / den * n)` (at least 1) of an ascending
/// slice, in integer arithmetic (checked against [`naive_quantile`] below); 0 for none.
fn order_statistic(sorted: &[u64], num: u64, den: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (u128::from(num) * sorted.len() as u128)
        .div_ceil(u128::from(den))
        .max(1);
    sorted[rank as usize - 1]
}

/// The report's tail columns and the fractions they stand for.
const TAILS: [(&str, u64, u64); 5] = [
    ("p50", 1, 2),
    ("p90", 9, 10),
    ("p99", 99, 100),
    ("p999", 999, 1_000),
    ("p9999", 9_999, 10_000),
];

fn tails(s: &Summary) -> [f64; 5] {
    [s.median, s.p90, s.p99, s.p999, s.p9999]
}

/// How far a histogram's representative of a value can be from the value, in ticks:
/// half a bucket of the raw value `raw` (the value plus the overhead taken off it). With
/// 3 significant digits a raw value below 2,048 has a bucket of its own; above, a value
/// `x` lies in a bucket of width `w <= x / 1,024`, whose middle is within `w / 2`.
/// Clamping the middle into the exact `[min, max]` only moves it closer to any value of
/// the bucket. Monotone in `raw`, so an order statistic of representatives is within
/// `half_bucket(exact + overhead)` of the exact order statistic.
fn half_bucket(raw: f64) -> f64 {
    if raw < 2_048.0 { 0.0 } else { raw / 2_048.0 }
}

/// The histogram's representative of raw value `x`, as the report docs state it: the
/// middle of its bucket, clamped to the exact extremes `[min, max]` of its histogram.
/// With 3 significant digits (HdrHistogram's layout) a value below 2,048 has a bucket of
/// its own, and a value with `b` significant bits one of width `2^(b - 11)`. The
/// tests check this model against the reports' tails before relying on it.
fn representative(x: u64, min: u64, max: u64) -> u64 {
    let middle = if x < 2_048 {
        x
    } else {
        let width = 1u64 << (63 - x.leading_zeros() - 10);
        (x & !(width - 1)) + width / 2
    };
    middle.clamp(min, max)
}

/// The row's view of its representatives `reps`: each put into the histogram the row
/// carries and read back, the middle of its bucket there clamped to the row's exact
/// extremes `[min, max]`. An overhead taken off a bucket's middle leaves a value between
/// buckets; without one this changes nothing but the clamp.
fn held(reps: &[u64], min: u64, max: u64) -> Vec<u64> {
    reps.iter().map(|&r| representative(r, min, max)).collect()
}

/// How far a row's quantile can be from the exact order statistic `v` when `overhead`
/// was taken off the values: half a bucket of the raw value, and (calibrated) half a
/// bucket more where the row's histogram holds the result.
fn tail_slack(v: f64, overhead: u64) -> f64 {
    let first = half_bucket(v + overhead as f64);
    match overhead {
        0 => first,
        _ => first + half_bucket(v + first),
    }
}

/// Count, mean, population standard deviation, population skewness g1, min, max.
#[derive(Debug)]
struct NaiveMoments {
    count: u64,
    mean: f64,
    std_dev: f64,
    skew: f64,
    min: f64,
    max: f64,
}

/// Moments of a sorted copy. Deviations are taken from offsets to the minimum, which
/// are exact integers in f64, so a small spread under a large common value survives.
fn naive_moments(values: &[u64]) -> NaiveMoments {
    let mut x = values.to_vec();
    x.sort_unstable();
    let Some((&lo, &hi)) = x.first().zip(x.last()) else {
        return NaiveMoments {
            count: 0,
            mean: 0.0,
            std_dev: 0.0,
            skew: 0.0,
            min: 0.0,
            max: 0.0,
        };
    };
    let n = x.len() as f64;
    let offsets: Vec<f64> = x.iter().map(|&v| (v - lo) as f64).collect();
    let offset_mean = offsets.iter().sum::<f64>() / n;
    let m2 = offsets
        .iter()
        .map(|o| (o - offset_mean).powi(2))
        .sum::<f64>()
        / n;
    let m3 = offsets
        .iter()
        .map(|o| (o - offset_mean).powi(3))
        .sum::<f64>()
        / n;
    NaiveMoments {
        count: x.len() as u64,
        mean: lo as f64 + offset_mean,
        std_dev: m2.sqrt(),
        skew: if m2 > 0.0 { m3 / m2.powf(1.5) } else { 0.0 },
        min: lo as f64,
        max: hi as f64,
    }
}

/// Exact count, sum and sum of squares of a set of values.
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    n: u128,
    s1: u128,
    s2: u128,
}

impl Sums {
    fn of(values: &[u64]) -> Sums {
        values.iter().fold(Sums::default(), |s, &v| s.plus(v))
    }

    fn plus(self, v: u64) -> Sums {
        let v = u128::from(v);
        Sums {
            n: self.n + 1,
            s1: self.s1 + v,
            s2: self.s2.checked_add(v * v).expect("oracle sums fit in u128"),
        }
    }

    fn minus(self, earlier: Sums) -> Sums {
        Sums {
            n: self.n - earlier.n,
            s1: self.s1 - earlier.s1,
            s2: self.s2 - earlier.s2,
        }
    }

    /// Mean (0 for no values), correctly rounded up to the two roundings of the division.
    fn sum(self) -> f64 {
        self.s1 as f64
    }

    fn mean(self) -> f64 {
        match self.n {
            0 => 0.0,
            n => self.s1 as f64 / n as f64,
        }
    }

    /// Population standard deviation from `n² var = n Σv² - (Σv)²`, computed exactly in
    /// integers: only the square root and the division round.
    fn std_dev(self) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let n_s2 = self.n.checked_mul(self.s2).expect("oracle n Σv² fits");
        let s1_sq = self.s1.checked_mul(self.s1).expect("oracle (Σv)² fits");
        ((n_s2 - s1_sq) as f64).sqrt() / self.n as f64
    }
}

/// Prefix sums of an ascending slice: the exact moments of any contiguous range in O(1).
struct Prefix(Vec<Sums>);

impl Prefix {
    fn of(sorted: &[u64]) -> Prefix {
        let mut sums = Vec::with_capacity(sorted.len() + 1);
        let mut s = Sums::default();
        sums.push(s);
        for &v in sorted {
            s = s.plus(v);
            sums.push(s);
        }
        Prefix(sums)
    }

    fn range(&self, r: std::ops::Range<usize>) -> Sums {
        self.0[r.end].minus(self.0[r.start])
    }
}

/// The documented cleaning rule applied by filtering a sorted copy, with quantiles as
/// order statistics: (kept values, bypass count, outlier count).
fn naive_clean(values: &[u64], cleaning: &Cleaning, cal: &Calibration) -> (Vec<u64>, u64, u64) {
    let mut rest = values.to_vec();
    rest.sort_unstable();
    let mut bypass = 0;
    if let Some(b) = cleaning.bypass {
        let median = order_statistic(&rest, 1, 2) as f64;
        let limit = (b.factor * median).max(median + b.floor_ns * cal.ticks_per_ns);
        let before = rest.len();
        rest.retain(|&v| v as f64 <= limit);
        bypass = (before - rest.len()) as u64;
    }
    let mut outliers = 0;
    if let Some(f) = cleaning.fences {
        let q1 = order_statistic(&rest, 1, 4) as f64;
        let q3 = order_statistic(&rest, 3, 4) as f64;
        let spread = if q3 > q1 {
            q3 - q1
        } else {
            f.zero_iqr_fraction * order_statistic(&rest, 1, 2) as f64
        };
        let spread = spread.max(cal.resolution as f64).max(1.0);
        let (low, high) = (q1 - f.k * spread, q3 + f.k * spread);
        let before = rest.len();
        rest.retain(|&v| low <= v as f64 && v as f64 <= high);
        outliers = (before - rest.len()) as u64;
    }
    (rest, bypass, outliers)
}

/// `|a - b|` within `rel` of the larger magnitude, or within `abs`.
fn close(a: f64, b: f64, rel: f64, abs: f64) -> bool {
    a == b || (a - b).abs() <= rel * a.abs().max(b.abs()) || (a - b).abs() <= abs
}

// ---------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------

/// A latency-looking value: mostly a few hundred ticks, with a long tail and rare
/// huge spikes anywhere up to `Sample::MAX_TICKS`.
fn latency() -> impl Strategy<Value = u64> {
    prop_oneof![
        20 => (1u64..64, 0u32..8).prop_map(|(m, e)| 100 + (m << e)),
        2 => 0u64..200,
        1 => 0u64..=Sample::MAX_TICKS,
    ]
}

/// A latency-looking value below 2,048 ticks, where a histogram is exact.
fn small_latency() -> impl Strategy<Value = u64> {
    prop_oneof![
        20 => (1u64..64, 0u32..5).prop_map(|(m, e)| 100 + (m << e)),
        2 => 0u64..200,
        1 => 0u64..2_048,
    ]
}

/// Sample sets of every shape that matters: tiny values with many ties, values spread
/// over the whole range, tight clusters at any magnitude (incl. next to `Sample::MAX_TICKS`),
/// all-equal sets, and latency-looking data.
fn value_sets() -> impl Strategy<Value = Vec<u64>> {
    prop_oneof![
        vec(0u64..16, 0..64),
        vec(0u64..=Sample::MAX_TICKS, 0..64),
        (0u64..=Sample::MAX_TICKS, vec(0u64..1_000, 1..64)).prop_map(|(base, offsets)| offsets
            .into_iter()
            .map(|o| base.saturating_sub(o))
            .collect()),
        (
            Sample::MAX_TICKS - 4..=Sample::MAX_TICKS,
            vec(0u64..4, 1..64)
        )
            .prop_map(|(base, offsets)| offsets.into_iter().map(|o| base - o).collect()),
        (0u64..=Sample::MAX_TICKS, 0usize..40).prop_map(|(v, n)| vec![v; n]),
        vec(latency(), 0..300),
        // A coarse counter: multiples of 26 ticks, with a step-sized spread.
        vec(
            (0u64..4, 0u64..40).prop_map(|(k, tail)| 26 * (10 + k + tail / 39 * 30)),
            0..200
        ),
    ]
}

/// A probability as a fraction `num / den` (the common ones, and arbitrary ones).
fn fractions() -> impl Strategy<Value = (u64, u64)> {
    prop_oneof![
        3 => (1u64..=10_000).prop_flat_map(|den| (0..=den, Just(den))),
        1 => prop::sample::select(vec![
            (0, 1), (1, 4), (1, 2), (3, 4), (9, 10), (99, 100), (999, 1_000), (9_999, 10_000),
            (7, 100), (1, 3), (2, 3), (1, 1),
        ]),
    ]
}

fn probabilities() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0..=1.0f64,
        1 => fractions().prop_map(|(num, den)| num as f64 / den as f64),
    ]
}

fn cleanings() -> impl Strategy<Value = Cleaning> {
    let bypass =
        (1.0..20.0f64, 0.0..5_000.0f64).prop_map(|(factor, floor_ns)| Bypass { factor, floor_ns });
    let fences = (0.5..3.0f64, 0.0..1.0f64).prop_map(|(k, zero_iqr_fraction)| Fences {
        k,
        zero_iqr_fraction,
    });
    prop_oneof![
        Just(Cleaning::OFF),
        Just(Cleaning::default()),
        (prop::option::of(bypass), prop::option::of(fences))
            .prop_map(|(bypass, fences)| Cleaning { bypass, fences }),
    ]
}

/// A counter's resolution in ticks: most counters move every tick, some in steps.
fn resolutions() -> impl Strategy<Value = u64> {
    prop_oneof![3 => Just(1u64), 1 => Just(26u64), 1 => 1u64..300]
}

fn options() -> impl Strategy<Value = ReportOptions> {
    (any::<bool>(), any::<bool>(), cleanings()).prop_map(|(time, calibrated, cleaning)| {
        ReportOptions {
            unit: if time { Unit::Time } else { Unit::Cycles },
            data: if calibrated {
                Data::Calibrated
            } else {
                Data::Raw
            },
            cleaning,
            ..ReportOptions::default()
        }
    })
}

// ---------------------------------------------------------------------------------------
// Synthetic captures
// ---------------------------------------------------------------------------------------

/// Sample kinds by index: 0..9 scope (start = i / 3, stop = i % 3), 9 pulse, 10 record.
fn sample(ticks: u64, kind: u8, migrated: bool) -> Sample {
    let kind = match kind {
        0..9 => SampleKind::Scope {
            start: Mode::ALL[usize::from(kind / 3)],
            stop: Mode::ALL[usize::from(kind % 3)],
        },
        9 => SampleKind::Pulse,
        _ => SampleKind::Recorded,
    };
    Sample::new(ticks, kind, migrated).expect("ticks within Sample::MAX_TICKS")
}

/// Samples of every kind; with `small`, all below 2,048 ticks.
fn samples(max: usize, small: bool) -> impl Strategy<Value = Vec<Sample>> {
    let ticks = if small {
        small_latency().boxed()
    } else {
        latency().boxed()
    };
    vec(
        (ticks, 0u8..11, prop::bool::weighted(0.05)).prop_map(|(t, k, m)| sample(t, k, m)),
        0..max,
    )
}

/// A fixed calibration with distinct overheads per (start, stop) pair and for pulses.
fn calibration(resolution: u64) -> Calibration {
    Calibration {
        ticks_per_ns: 2.5,
        accuracy: 1e-6,
        resolution,
        scope: [[20, 24, 31], [26, 33, 39], [41, 47, 58]],
        pulse: 18,
        inside: [[0.0; 3]; 3],
        took: Duration::from_millis(50),
    }
}

/// The ticks a sample's kind has taken off in the report's data.
fn overhead(s: Sample, cal: &Calibration, data: Data) -> u64 {
    match (data, s.kind()) {
        (Data::Raw, _) | (_, SampleKind::Recorded) => 0,
        (Data::Calibrated, SampleKind::Pulse) => cal.pulse,
        (Data::Calibrated, kind) => {
            let (start, stop) = kind.modes().expect("a scope of some kind");
            cal.scope[start as usize][stop as usize]
        }
    }
}

/// The value a sample contributes: its ticks, minus its kind's overhead when
/// calibrated (a user-recorded value never is), saturating at 0.
fn expected_value(s: Sample, cal: &Calibration, data: Data) -> u64 {
    s.ticks().saturating_sub(overhead(s, cal, data))
}

fn component(name: &'static str, samples: Vec<Sample>, overwritten: u64) -> ComponentCapture {
    ComponentCapture {
        allocs: None,
        parent: None,
        self_ticks: None,
        name,
        seen: samples.len() as u64 + overwritten,
        capacity: 65_536,
        first: overwritten,
        samples,
    }
}

fn thread(serial: u64, components: Vec<ComponentCapture>) -> ThreadCapture {
    ThreadCapture {
        alloc_breach: None,
        outside_allocs: None,
        serial,
        name: format!("worker-{serial}"),
        exited: serial.is_multiple_of(2),
        anomalies: Anomalies {
            empty_stops: serial,
            ..Anomalies::default()
        },
        components,
        unpaired: Vec::new(),
    }
}

/// Ids that only some threads record.
const EXTRA_IDS: [&str; 3] = ["alpha", "beta", "gamma"];

/// One thread: `shared` (first or last), plus any of the extra ids.
fn thread_components(small: bool) -> impl Strategy<Value = Vec<ComponentCapture>> {
    (
        samples(150, small),
        0u64..1_000,
        any::<bool>(),
        vec((any::<bool>(), samples(40, small), 0u64..100), 3),
    )
        .prop_map(|(shared, over, shared_first, extras)| {
            let mut components: Vec<_> = EXTRA_IDS
                .iter()
                .zip(extras)
                .filter(|(_, (present, _, _))| *present)
                .map(|(&id, (_, s, o))| component(id, s, o))
                .collect();
            let shared = component("shared", shared, over);
            if shared_first {
                components.insert(0, shared);
            } else {
                components.push(shared);
            }
            components
        })
}

/// Captures of 2 to 4 threads; half of them with every value below 2,048 ticks, where
/// the histograms are exact.
fn captures() -> impl Strategy<Value = Capture> {
    any::<bool>().prop_flat_map(|small| {
        (vec(thread_components(small), 2..=4), 0u64..3).prop_map(|(threads, teardown_drops)| {
            Capture {
                process_allocs: None,
                threads: threads
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| thread(i as u64 + 1, c))
                    .collect(),
                teardown_drops,
            }
        })
    })
}

// ---------------------------------------------------------------------------------------
// Expected summaries
// ---------------------------------------------------------------------------------------

/// A component's values as the oracles prepare them, in ticks.
#[derive(Clone, Debug)]
struct Expected {
    /// Every folded value, in the report's data.
    all: Vec<u64>,
    /// The histograms' representatives of `all` (the report's view of them).
    reps: Vec<u64>,
    /// The representatives cleaning keeps (per thread, then concatenated).
    kept: Vec<u64>,
    /// Whether cleaning removed nothing (on every thread, for a merged row).
    untouched: bool,
    seen: u64,
    bypass: u64,
    outliers: u64,
    migrated: u64,
    /// The largest overhead taken off any of the values (0 for raw data).
    overhead: u64,
}

impl Default for Expected {
    fn default() -> Expected {
        Expected {
            all: Vec::new(),
            reps: Vec::new(),
            kept: Vec::new(),
            untouched: true,
            seen: 0,
            bypass: 0,
            outliers: 0,
            migrated: 0,
            overhead: 0,
        }
    }
}

impl Expected {
    fn of(c: &ComponentCapture, cal: &Calibration, options: &ReportOptions) -> Expected {
        let all: Vec<u64> = c
            .samples
            .iter()
            .map(|&s| expected_value(s, cal, options.data))
            .collect();
        // One histogram per sample kind, each clamping to its own raw extremes.
        let mut kinds: Vec<(SampleKind, u64, u64)> = Vec::new();
        for s in &c.samples {
            match kinds.iter_mut().find(|(k, _, _)| *k == s.kind()) {
                Some((_, min, max)) => {
                    (*min, *max) = ((*min).min(s.ticks()), (*max).max(s.ticks()))
                }
                None => kinds.push((s.kind(), s.ticks(), s.ticks())),
            }
        }
        let reps: Vec<u64> = c
            .samples
            .iter()
            .map(|&s| {
                let &(_, min, max) = kinds
                    .iter()
                    .find(|(k, _, _)| *k == s.kind())
                    .expect("every kind listed");
                representative(s.ticks(), min, max).saturating_sub(overhead(s, cal, options.data))
            })
            .collect();
        // The report cleans the representatives: that is its cleaning, exactly.
        let (kept, bypass, outliers) = naive_clean(&reps, &options.cleaning, cal);
        Expected {
            seen: c.seen,
            untouched: bypass + outliers == 0,
            bypass,
            outliers,
            migrated: c.samples.iter().filter(|s| s.migrated()).count() as u64,
            overhead: c
                .samples
                .iter()
                .map(|&s| overhead(s, cal, options.data))
                .max()
                .unwrap_or(0),
            all,
            reps,
            kept,
        }
    }

    fn merge(&mut self, other: &Expected) {
        self.all.extend_from_slice(&other.all);
        self.reps.extend_from_slice(&other.reps);
        self.kept.extend_from_slice(&other.kept);
        self.untouched &= other.untouched;
        self.seen += other.seen;
        self.bypass += other.bypass;
        self.outliers += other.outliers;
        self.migrated += other.migrated;
        self.overhead = self.overhead.max(other.overhead);
    }

    /// The values the cleaned figures describe: all of them, exactly, when cleaning
    /// removed nothing; otherwise the kept representatives.
    fn cleaned(&self) -> &[u64] {
        if self.untouched {
            &self.all
        } else {
            &self.kept
        }
    }

    /// How far a representative of a value near `v` can be from it, in ticks.
    fn slack(&self, v: f64) -> f64 {
        half_bucket(v + self.overhead as f64)
    }

    /// How far a quantile near `v` can be from the exact one, in ticks.
    fn tail_slack(&self, v: f64) -> f64 {
        tail_slack(v, self.overhead)
    }
}

fn per_tick(unit: Unit, cal: &Calibration) -> f64 {
    match unit {
        Unit::Cycles => 1.0,
        Unit::Time => 1.0 / cal.ticks_per_ns,
    }
}

/// Every float field of a summary, by name.
fn floats(s: &Summary) -> [(&'static str, f64); 21] {
    let c = &s.cleaned;
    [
        ("avg", s.avg),
        ("median", s.median),
        ("std_dev", s.std_dev),
        ("skew", s.skew),
        ("min", s.min),
        ("max", s.max),
        ("range", s.range),
        ("p90", s.p90),
        ("p99", s.p99),
        ("p999", s.p999),
        ("p9999", s.p9999),
        ("total", s.total),
        ("bypass_total", s.bypass_total),
        ("outliers_total", s.outliers_total),
        ("cleaned.avg", c.avg),
        ("cleaned.median", c.median),
        ("cleaned.std_dev", c.std_dev),
        ("cleaned.skew", c.skew),
        ("cleaned.min", c.min),
        ("cleaned.max", c.max),
        ("cleaned.range", c.range),
    ]
}

/// What holds for a row whatever the cleaning: exact counts, exact headline mean, spread,
/// skewness, extremes and total over every value, quantiles equal to the order
/// statistics of the representatives as the row's histogram holds them (the bucket
/// model) and within [`Expected::tail_slack`] of the exact order statistics (the
/// promise).
fn check_whole_run(
    got: &Summary,
    want: &Expected,
    per_tick: f64,
    what: &str,
) -> Result<(), TestCaseError> {
    let folded = want.all.len() as u64;
    prop_assert_eq!(
        (got.seen, got.samples, got.lost, got.migrated),
        (want.seen, folded, want.seen - folded, want.migrated),
        "{}: seen, samples, lost, migrated",
        what
    );
    prop_assert_eq!(
        got.cleaned.samples + got.bypass + got.outliers,
        folded,
        "{}",
        what
    );
    let mut sorted = want.all.clone();
    sorted.sort_unstable();
    let (min, max) = match (sorted.first(), sorted.last()) {
        (Some(&lo), Some(&hi)) => (lo as f64, hi as f64),
        _ => (0.0, 0.0),
    };
    let sums = Sums::of(&sorted);
    let skew = exact_skew(&want.all, &want.reps);
    let mut reps = match (sorted.first(), sorted.last()) {
        (Some(&lo), Some(&hi)) => held(&want.reps, lo, hi),
        _ => Vec::new(),
    };
    reps.sort_unstable();
    for (name, g, w) in [
        ("min", got.min, min * per_tick),
        ("max", got.max, max * per_tick),
        ("avg", got.avg, sums.mean() * per_tick),
        ("std_dev", got.std_dev, sums.std_dev() * per_tick),
        ("total", got.total, sums.sum() * per_tick),
        ("skew", got.skew, skew),
    ] {
        let abs = if name == "skew" { 1e-9 } else { 0.0 };
        prop_assert!(
            close(g, w, 1e-9, abs),
            "{}: {} = {} but the oracle says {}",
            what,
            name,
            g,
            w
        );
    }
    check_tails(got, want, &sorted, &reps, per_tick, what)
}

/// The tails of a row: equal to the order statistics of the representatives as the
/// row's histogram holds them (the bucket model), and within [`Expected::tail_slack`]
/// of the exact order statistics (the promise).
fn check_tails(
    got: &Summary,
    want: &Expected,
    sorted: &[u64],
    reps: &[u64],
    per_tick: f64,
    what: &str,
) -> Result<(), TestCaseError> {
    for ((name, num, den), g) in TAILS.into_iter().zip(tails(got)) {
        // The bucket model first: the order statistic of the representatives.
        let modelled = order_statistic(reps, num, den) as f64 * per_tick;
        prop_assert!(
            close(g, modelled, 1e-12, 0.0),
            "{}: {} = {} but the bucket model says {}",
            what,
            name,
            g,
            modelled
        );
        // Then the promise: within the tail slack of the exact order statistic.
        let exact = order_statistic(sorted, num, den) as f64;
        let bound = want.tail_slack(exact) * per_tick;
        prop_assert!(
            (g - exact * per_tick).abs() <= bound * (1.0 + 1e-9) + 1e-9 * exact * per_tick,
            "{}: {} = {} but the exact order statistic is {} (bound {})",
            what,
            name,
            g,
            exact * per_tick,
            bound
        );
    }
    Ok(())
}

/// The skewness a report gives `values` (with histogram representatives `reps`):
/// exact while the sum of their cubes fits in 128 bits, past that the
/// representatives'.
fn exact_skew(values: &[u64], reps: &[u64]) -> f64 {
    let cubes_fit = values
        .iter()
        .try_fold(0u128, |sum, &v| {
            sum.checked_add(u128::from(v).checked_pow(3)?)
        })
        .is_some();
    naive_moments(if cubes_fit { values } else { reps }).skew
}

/// The cleaned statistics against the rule applied to the representatives (the
/// report's own fences): counts exactly, floats to 1e-9 relative. `std_dev` is compared
/// against the value scale (a spread of 1e-12 of the values is float noise, not a
/// different answer) and `skew` against 1. The median describes the kept
/// representatives, or the headline's when nothing was flagged ([`held`]); the rest
/// describe the exact values when nothing was flagged.
fn check_cleaned(
    got: &Summary,
    want: &Expected,
    per_tick: f64,
    what: &str,
) -> Result<(), TestCaseError> {
    let c = &got.cleaned;
    prop_assert_eq!(
        (c.samples, got.bypass, got.outliers),
        (want.kept.len() as u64, want.bypass, want.outliers),
        "{}: cleaned samples, bypass, outliers",
        what
    );
    let m = naive_moments(want.cleaned());
    let mut kept = match (want.all.iter().min(), want.all.iter().max()) {
        (Some(&lo), Some(&hi)) if want.untouched => held(&want.reps, lo, hi),
        _ => want.kept.clone(),
    };
    kept.sort_unstable();
    let median = order_statistic(&kept, 1, 2) as f64;
    let scale = m.max.abs().max(m.min.abs()) * per_tick;
    for (name, g, w) in [
        ("avg", c.avg, m.mean * per_tick),
        ("median", c.median, median * per_tick),
        ("std_dev", c.std_dev, m.std_dev * per_tick),
        (
            "skew",
            c.skew,
            if want.untouched {
                exact_skew(&want.all, &want.reps)
            } else {
                m.skew
            },
        ),
        ("min", c.min, m.min * per_tick),
        ("max", c.max, m.max * per_tick),
        ("range", c.range, (m.max - m.min) * per_tick),
    ] {
        let abs = match name {
            "std_dev" | "range" | "avg" | "median" => 1e-12 * scale,
            "skew" => 1e-9,
            _ => 0.0,
        };
        prop_assert!(
            close(g, w, 1e-9, abs),
            "{}: {} = {} but the oracle says {}",
            what,
            name,
            g,
            w
        );
    }
    Ok(())
}

/// The BYPASS count of a histogram against the exact rule, allowing for buckets: the
/// report's median `m'` is within `e(m)` of the exact `m`, so its limit `L'` lies
/// between `L(m - e(m))` and `L(m + e(m))` (`L` is monotone); a value `v` is removed
/// when its representative (within `e(v)` of `v`) exceeds `L'`. So every value with
/// `v - e(v) > L(m + e(m))` is removed and none with `v + e(v) <= L(m - e(m))`.
/// Returns the range of counts the rule allows.
fn bypass_bracket(
    sorted: &[u64],
    bypass: &Bypass,
    cal: &Calibration,
    slack: impl Fn(f64) -> f64,
) -> (u64, u64) {
    let m = order_statistic(sorted, 1, 2) as f64;
    let limit = |m: f64| (bypass.factor * m).max(m + bypass.floor_ns * cal.ticks_per_ns);
    let (low, high) = (limit(m - slack(m)), limit(m + slack(m)));
    let (low, high) = (
        low - 1e-9 * low.abs() - 1e-9,
        high + 1e-9 * high.abs() + 1e-9,
    );
    let n = sorted.len();
    // Both `v - e(v)` and `v + e(v)` grow with `v`.
    let surely = n - sorted.partition_point(|&v| v as f64 - slack(v as f64) <= high);
    let maybe = n - sorted.partition_point(|&v| v as f64 + slack(v as f64) <= low);
    (surely as u64, maybe as u64)
}

/// The order of a section's rows: scopes and values by TOTAL, largest first, then
/// pulses by TOTAL.
fn check_order(rows: &[Row]) -> Result<(), TestCaseError> {
    // (0 for scopes and values, 1 for pulses; minus the total): never decreasing.
    let key = |r: &Row| (u8::from(r.kind == RowKind::Pulse), -r.stats.total);
    for pair in rows.windows(2) {
        let (a, b) = (key(&pair[0]), key(&pair[1]));
        prop_assert!(
            a.0 < b.0 || (a.0 == b.0 && a.1 <= b.1),
            "{:?} before {:?}",
            pair[0].component,
            pair[1].component
        );
    }
    Ok(())
}

/// Structure every row has: finite, ordered, nothing from nothing.
fn check_shape(report: &Report) -> Result<(), TestCaseError> {
    let rows = report
        .threads
        .iter()
        .flat_map(|t| t.rows.iter().map(move |r| (t.name.as_str(), r)))
        .chain(report.all_threads.iter().map(|r| ("all threads", r)));
    for (thread, row) in rows {
        check_row_shape(&format!("{thread}/{}", row.component), &row.stats)?;
    }
    Ok(())
}

/// The shape of one row's statistics (`what` names it).
fn check_row_shape(what: &str, s: &Summary) -> Result<(), TestCaseError> {
    for (name, v) in floats(s) {
        prop_assert!(v.is_finite(), "{}: {} = {}", what, name, v);
    }
    let c = &s.cleaned;
    prop_assert!(
        s.std_dev >= 0.0 && s.range >= 0.0 && c.std_dev >= 0.0 && c.range >= 0.0,
        "{}: {:?}",
        what,
        s
    );
    prop_assert_eq!(s.seen, s.samples + s.lost, "{}", what);
    prop_assert_eq!(c.samples + s.bypass + s.outliers, s.samples, "{}", what);
    if s.samples == 0 {
        prop_assert_eq!(
            *s,
            Summary {
                seen: s.seen,
                lost: s.lost,
                ..Summary::default()
            },
            "{}: nothing folded, nothing to say",
            what
        );
        return Ok(());
    }
    prop_assert!(
        s.min <= s.median
            && s.median <= s.p90
            && s.p90 <= s.p99
            && s.p99 <= s.p999
            && s.p999 <= s.p9999
            && s.p9999 <= s.max
            && s.min <= s.avg
            && s.avg <= s.max,
        "{}: tails out of order: {:?}",
        what,
        s
    );
    check_cleaned_shape(what, s)
}

/// What cleaning may do to a row's figures, and what it must leave alone.
fn check_cleaned_shape(what: &str, s: &Summary) -> Result<(), TestCaseError> {
    let c = &s.cleaned;
    // BYPASS keeps everything up to the median (at least half), the fences then
    // everything between the quartiles of what is left (at least half of it).
    prop_assert!(
        4 * c.samples >= s.samples,
        "{}: cleaning kept {} of {}",
        what,
        c.samples,
        s.samples
    );
    prop_assert!(
        c.min <= c.median && c.median <= c.max && c.min <= c.avg && c.avg <= c.max,
        "{}: cleaned centre outside [min, max]: {:?}",
        what,
        s
    );
    prop_assert!(
        s.min <= c.min && c.max <= s.max,
        "{}: cleaned extremes outside all values: {:?}",
        what,
        s
    );
    // The flagged samples' sums come from the histograms: within half a bucket
    // (1/2,048) of their share of the exact total.
    prop_assert!(
        s.bypass_total + s.outliers_total <= s.total * (1.0 + 1.0 / 2_048.0) + 1e-9,
        "{}: flagged sums above the total: {:?}",
        what,
        s
    );
    if s.bypass + s.outliers == 0 {
        // Nothing flagged: the cleaned figures are the headline ones.
        prop_assert_eq!(
            (c.avg, c.std_dev, c.skew, c.min, c.max, c.median),
            (s.avg, s.std_dev, s.skew, s.min, s.max, s.median),
            "{}",
            what
        );
        prop_assert_eq!((s.bypass_total, s.outliers_total), (0.0, 0.0), "{}", what);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

proptest! {
    // No regression files: failures print their minimal input instead.
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn quantile_is_the_smallest_value_with_enough_below(mut values in value_sets(), (num, den) in fractions()) {
        values.sort_unstable();
        let q = num as f64 / den as f64;
        let want = naive_quantile(&values, num, den);
        prop_assert_eq!(quantile(&values, q), want, "q = {}/{}", num, den);
        prop_assert_eq!(order_statistic(&values, num, den), want, "the oracles disagree");
    }

    #[test]
    fn quantile_of_any_probability(mut values in value_sets(), q in probabilities()) {
        values.sort_unstable();
        let got = quantile(&values, q);
        let n = values.len();
        if n == 0 {
            prop_assert_eq!(got, 0);
            prop_assert_eq!(quantile(&values, f64::NAN), 0);
            return Ok(());
        }
        // Rank ceil(q n); when q n is within rounding of a whole number k (0.07 x 100),
        // k is what was meant and is also accepted.
        let x = q * n as f64;
        let mut ranks = vec![x.ceil()];
        if (x - x.round()).abs() <= 1e-9 * x.max(1.0) {
            ranks.push(x.round());
        }
        let allowed: Vec<u64> = ranks
            .into_iter()
            .map(|r| values[(r as usize).clamp(1, n) - 1])
            .collect();
        prop_assert!(allowed.contains(&got), "q = {}: {} not in {:?}", q, got, allowed);
        let (first, last) = (values[0], values[n - 1]);
        prop_assert_eq!(quantile(&values, 0.0), first);
        prop_assert_eq!(quantile(&values, -0.5), first);
        prop_assert_eq!(quantile(&values, f64::NAN), first);
        prop_assert_eq!(quantile(&values, f64::NEG_INFINITY), first);
        prop_assert_eq!(quantile(&values, 1.0), last);
        prop_assert_eq!(quantile(&values, 1.5), last);
        prop_assert_eq!(quantile(&values, f64::INFINITY), last);
    }

    #[test]
    fn quantile_is_monotone_and_hits_every_rank(mut values in value_sets(), a in probabilities(), b in probabilities()) {
        values.sort_unstable();
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(quantile(&values, lo) <= quantile(&values, hi));
        let n = values.len();
        for (i, &v) in values.iter().enumerate() {
            // q = (i + 1) / n is rank i + 1 exactly, whatever the rounding of q.
            let q = (i + 1) as f64 / n as f64;
            prop_assert_eq!(quantile(&values, q), v, "rank {} of {}", i + 1, n);
        }
    }

    #[test]
    fn moments_match_naive(values in value_sets()) {
        let got = moments(&values);
        let want = naive_moments(&values);
        prop_assert_eq!(got.count, want.count);
        prop_assert_eq!((got.min, got.max), (want.min, want.max));
        prop_assert!(close(got.mean, want.mean, 1e-9, 0.0), "mean {} vs {}", got.mean, want.mean);
        // Spread is compared against the values' magnitude only at float-noise level:
        // a nonzero spread under a large common value must still come out right.
        prop_assert!(
            close(got.std_dev, want.std_dev, 1e-9, 1e-9),
            "std_dev {} vs {} (mean {})", got.std_dev, want.std_dev, want.mean
        );
        let exact_sd = Sums::of(&values).std_dev();
        prop_assert!(close(got.std_dev, exact_sd, 1e-9, 1e-9), "std_dev {} vs exact {}", got.std_dev, exact_sd);
        prop_assert!(close(got.skew, want.skew, 1e-9, 1e-9), "skew {} vs {} (std_dev {}, mean {})", got.skew, want.skew, want.std_dev, want.mean);
        prop_assert!(got.min <= got.mean && got.mean <= got.max, "mean {} outside [{}, {}]", got.mean, got.min, got.max);
    }

    #[test]
    fn clean_matches_naive(
        mut values in value_sets(),
        cleaning in cleanings(),
        ticks_per_ns in prop_oneof![0.25..4.0f64, Just(1.0), Just(2.6)],
        resolution in resolutions(),
    ) {
        values.sort_unstable();
        let cal = Calibration { ticks_per_ns, resolution, ..calibration(1) };
        let got = clean(&values, &cleaning, &cal);
        prop_assert!(got.kept.start <= got.kept.end && got.kept.end <= values.len(), "{:?}", got.kept);
        prop_assert_eq!(got.kept.len() as u64 + got.bypass + got.outliers, values.len() as u64);
        let (kept, bypass, outliers) = naive_clean(&values, &cleaning, &cal);
        prop_assert_eq!((got.bypass, got.outliers), (bypass, outliers));
        prop_assert_eq!(&values[got.kept.clone()], &kept[..]);
        if cleaning.bypass.is_none() {
            prop_assert_eq!(got.bypass, 0);
        }
        if cleaning.fences.is_none() {
            prop_assert_eq!(got.outliers, 0);
        }
        let off = clean(&values, &Cleaning::OFF, &cal);
        prop_assert_eq!((off.kept, off.bypass, off.outliers), (0..values.len(), 0, 0));
        // A coarser counter only widens the fences.
        let coarser = Calibration { resolution: resolution * 4, ..cal };
        let wider = clean(&values, &cleaning, &coarser);
        prop_assert_eq!(wider.bypass, got.bypass);
        prop_assert!(wider.outliers <= got.outliers, "{} > {}", wider.outliers, got.outliers);
    }

}

proptest! {
    // A report builds a histogram per (thread, id, kind), up to 2^52 ticks wide: in debug
    // builds 128 cases take a few seconds.
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn reports_match_the_oracles_and_merge_threads(
        capture in captures(),
        options in options(),
        resolution in resolutions(),
    ) {
        let cal = calibration(resolution);
        let report = Report::from_capture(&capture, &cal, &options);
        let per_tick = per_tick(options.unit, &cal);
        prop_assert_eq!(report.unit, options.unit);
        prop_assert_eq!(report.data, options.data);
        prop_assert_eq!(report.cleaning, options.cleaning);
        prop_assert_eq!(report.resolution, resolution as f64 * per_tick);
        prop_assert_eq!(report.overhead.is_some(), options.data == Data::Calibrated);
        prop_assert_eq!(report.teardown_drops, capture.teardown_drops);
        prop_assert_eq!(report.threads.len(), capture.threads.len());
        check_shape(&report)?;
        let mut order: Vec<&str> = Vec::new();
        let mut merged: HashMap<&str, (Expected, Vec<Summary>)> = HashMap::new();
        for (t, tr) in capture.threads.iter().zip(&report.threads) {
            prop_assert_eq!(&tr.name, &t.name);
            prop_assert_eq!((tr.serial, tr.exited, tr.anomalies), (t.serial, t.exited, t.anomalies));
            // A ring that never saw a sample (prepared, or a first pulse) has no row.
            let shown: Vec<_> = t.components.iter().filter(|c| c.seen > 0).collect();
            prop_assert_eq!(tr.rows.len(), shown.len());
            check_order(&tr.rows)?;
            for c in shown {
                let row = tr.rows.iter().find(|r| r.component == c.name).unwrap();
                let what = format!("{}/{}", t.name, c.name);
                let expected = Expected::of(c, &cal, &options);
                let s = &row.stats;
                check_whole_run(s, &expected, per_tick, &what)?;
                check_cleaned(s, &expected, per_tick, &what)?;
                // Without the bucket model: BYPASS within what buckets can change.
                match options.cleaning.bypass {
                    Some(b) => {
                        let mut sorted = expected.all.clone();
                        sorted.sort_unstable();
                        let (surely, maybe) = bypass_bracket(&sorted, &b, &cal, |v| expected.slack(v));
                        prop_assert!(
                            surely <= s.bypass && s.bypass <= maybe,
                            "{}: bypass {} outside [{}, {}]", what, s.bypass, surely, maybe
                        );
                    }
                    None => prop_assert_eq!(s.bypass, 0, "{}", what),
                }
                if options.cleaning.fences.is_none() {
                    prop_assert_eq!(s.outliers, 0, "{}", what);
                }
                let entry = merged.entry(c.name).or_insert_with(|| {
                    order.push(c.name);
                    (Expected::default(), Vec::new())
                });
                entry.0.merge(&expected);
                entry.1.push(*s);
            }
        }
        let mut ids: Vec<&str> = report.all_threads.iter().map(|r| r.component.as_str()).collect();
        check_order(&report.all_threads)?;
        ids.sort_unstable();
        order.sort_unstable();
        prop_assert_eq!(&ids, &order, "one all-threads row per id");
        for row in &report.all_threads {
            let (expected, rows) = &merged[row.component.as_str()];
            let what = format!("all/{}", row.component);
            let s = &row.stats;
            // Tails and exact figures of the concatenation; cleaning stays per thread.
            check_whole_run(s, expected, per_tick, &what)?;
            let sum = |f: fn(&Summary) -> u64| rows.iter().map(f).sum::<u64>();
            prop_assert_eq!(
                (s.cleaned.samples, s.bypass, s.outliers),
                (sum(|r| r.cleaned.samples), sum(|r| r.bypass), sum(|r| r.outliers)),
                "{}: cleaned counts are the threads' sums", what
            );
            // The merged cleaned values: the threads' kept representatives together.
            check_cleaned(s, expected, per_tick, &what)?;
            if s.samples > 0 {
                // Without the bucket model: the mean is the threads' weighted mean, up to
                // each side's bucket error.
                let weighted = rows.iter().map(|r| r.avg * r.samples as f64).sum::<f64>() / s.samples as f64;
                let max = expected.all.iter().copied().max().unwrap_or(0) as f64;
                let bound = 2.0 * expected.slack(max) * per_tick + 1e-9 * weighted.abs();
                prop_assert!(
                    (s.avg - weighted).abs() <= bound,
                    "{}: avg {} vs the threads' weighted {} (bound {})", what, s.avg, weighted, bound
                );
            }
        }
    }

    #[test]
    fn calibration_saturates_and_spares_records(
        specs in vec((0u64..120, 0u8..11, any::<bool>()), 1..32),
        time in any::<bool>(),
    ) {
        // One sample per component, so every statistic of a row is that sample's value.
        const IDS: [&str; 32] = [
            "c00", "c01", "c02", "c03", "c04", "c05", "c06", "c07", "c08", "c09", "c10",
            "c11", "c12", "c13", "c14", "c15", "c16", "c17", "c18", "c19", "c20", "c21",
            "c22", "c23", "c24", "c25", "c26", "c27", "c28", "c29", "c30", "c31",
        ];
        let cal = calibration(1);
        let samples: Vec<Sample> = specs.iter().map(|&(t, k, m)| sample(t, k, m)).collect();
        let capture = Capture {
            process_allocs: None,
            threads: vec![thread(
                1,
                samples.iter().zip(IDS).map(|(&s, id)| component(id, vec![s], 0)).collect(),
            )],
            teardown_drops: 0,
        };
        let unit = if time { Unit::Time } else { Unit::Cycles };
        for data in [Data::Raw, Data::Calibrated] {
            let options = ReportOptions { unit, data, cleaning: Cleaning::default(), ..ReportOptions::default() };
            let report = Report::from_capture(&capture, &cal, &options);
            check_shape(&report)?;
            for (&(ticks, kind, migrated), id) in specs.iter().zip(IDS) {
                let row = report.threads[0].rows.iter().find(|r| r.component == id).unwrap();
                let want = match (data, kind) {
                    (Data::Raw, _) | (_, 10) => ticks,
                    (Data::Calibrated, 9) => ticks.saturating_sub(cal.pulse),
                    (Data::Calibrated, k) => ticks.saturating_sub(cal.scope[usize::from(k / 3)][usize::from(k % 3)]),
                };
                let want = want as f64 * per_tick(unit, &cal);
                let s = &row.stats;
                prop_assert_eq!((s.cleaned.samples, s.samples, s.migrated), (1, 1, u64::from(migrated)), "{}", row.component);
                for (name, v) in floats(s) {
                    let want = match name {
                        "std_dev" | "skew" | "range" | "bypass_total" | "outliers_total" => 0.0,
                        "cleaned.std_dev" | "cleaned.skew" | "cleaned.range" => 0.0,
                        _ => want,
                    };
                    prop_assert!(close(v, want, 1e-12, 0.0), "{} {:?}: {} = {} vs {}", row.component, data, name, v, want);
                }
            }
        }
    }

    /// The one histogram decoder: every row's distribution, decoded from the histogram
    /// the row carries, gives the row's own quantiles to the bit, in either unit and
    /// data, for each thread's rows and the merged ones, and after a JSON round trip.
    #[test]
    fn a_rows_distribution_gives_its_quantiles_exactly(
        capture in captures(),
        options in options(),
    ) {
        let report = Report::from_capture(&capture, &calibration(1), &options);
        let mut reports = vec![report.clone()];
        #[cfg(feature = "json")]
        reports.push(serde_json::from_str(&report.to_json(latte::report::JsonStyle::Compact)).unwrap());
        for report in &reports {
            let rows = report.threads.iter().flat_map(|t| &t.rows).chain(&report.all_threads);
            for row in rows {
                let dist = &row.distribution;
                let s = &row.stats;
                prop_assert_eq!(dist.len(), s.samples, "{}", row.component);
                for ((name, _, _), field) in TAILS.into_iter().zip(tails(s)) {
                    let q = match name {
                        "p50" => 0.5,
                        "p90" => 0.9,
                        "p99" => 0.99,
                        "p999" => 0.999,
                        _ => 0.9999,
                    };
                    prop_assert_eq!(dist.quantile(q).to_bits(), field.to_bits(), "{} {}", row.component, name);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Fixed cases
// ---------------------------------------------------------------------------------------

/// The summary of component `id` in the first thread of `report`.
fn row(report: &Report, id: &str) -> Summary {
    report.threads[0]
        .rows
        .iter()
        .find(|r| r.component == id)
        .unwrap_or_else(|| panic!("no row {id}"))
        .stats
}

#[test]
fn calibrated_values_below_overhead_are_zero() {
    let cal = calibration(1);
    let hard_hard = sample(10, 8, false); // overhead 58
    let fast_mid = sample(100, 1, false); // overhead 24
    let pulse = sample(5, 9, false); // overhead 18
    let record = sample(3, 10, false); // never corrected
    let capture = Capture {
        process_allocs: None,
        threads: vec![thread(
            1,
            vec![
                component("below", vec![hard_hard, pulse, sample(0, 4, true)], 0),
                component("mixed", vec![fast_mid, hard_hard], 0),
                component(
                    "record",
                    vec![record, sample(Sample::MAX_TICKS, 10, false)],
                    0,
                ),
            ],
        )],
        teardown_drops: 0,
    };
    let options = ReportOptions {
        unit: Unit::Cycles,
        data: Data::Calibrated,
        cleaning: Cleaning::OFF,
        ..ReportOptions::default()
    };
    let report = Report::from_capture(&capture, &cal, &options);

    let below = row(&report, "below");
    assert_eq!(
        (below.max, below.max, below.avg, below.p9999, below.migrated),
        (0.0, 0.0, 0.0, 0.0, 1)
    );
    let mixed = row(&report, "mixed");
    assert_eq!((mixed.min, mixed.max, mixed.avg), (0.0, 76.0, 38.0));
    assert_eq!((mixed.median, mixed.p90), (0.0, 76.0));
    let record = row(&report, "record");
    assert_eq!(
        (record.min, record.max, record.median),
        (3.0, Sample::MAX_TICKS as f64, 3.0)
    );
    // The top value's bucket is 2^42 wide: its representative is within half of it.
    assert!((record.p90 - Sample::MAX_TICKS as f64).abs() <= Sample::MAX_TICKS as f64 / 2_048.0);

    let overhead = report
        .overhead
        .expect("calibrated reports carry the overhead");
    assert_eq!((overhead.scope[2][2], overhead.pulse), (58.0, 18.0));

    let raw = Report::from_capture(
        &capture,
        &cal,
        &ReportOptions {
            data: Data::Raw,
            ..options
        },
    );
    assert!(raw.overhead.is_none());
    let below = row(&raw, "below");
    assert_eq!((below.min, below.max, below.avg), (0.0, 10.0, 5.0));
}

#[test]
fn calibrated_sums_are_exact() {
    // Large values of one kind minus its overhead: the exact sums are shifted exactly,
    // the tails within the tail slack.
    let cal = calibration(1);
    let values: Vec<u64> = (0..5_000u64).map(|i| 3_000_000 + i * i * 7).collect();
    let samples: Vec<Sample> = values.iter().map(|&v| sample(v, 8, false)).collect();
    let capture = Capture {
        process_allocs: None,
        threads: vec![thread(1, vec![component("big", samples, 0)])],
        teardown_drops: 0,
    };
    let options = ReportOptions {
        unit: Unit::Cycles,
        data: Data::Calibrated,
        cleaning: Cleaning::OFF,
        ..ReportOptions::default()
    };
    let s = row(&Report::from_capture(&capture, &cal, &options), "big");
    let shifted: Vec<u64> = values.iter().map(|v| v - 58).collect();
    let sums = Sums::of(&shifted);
    assert_eq!((s.min, s.max), (shifted[0] as f64, shifted[4_999] as f64));
    assert!(close(s.avg, sums.mean(), 1e-12, 0.0), "{s:?}");
    assert!(close(s.std_dev, sums.std_dev(), 1e-9, 0.0), "{s:?}");
    for ((name, num, den), got) in TAILS.into_iter().zip(tails(&s)) {
        let exact = order_statistic(&shifted, num, den) as f64;
        assert!(
            (got - exact).abs() <= tail_slack(exact, 58),
            "{name}: {got} vs {exact}"
        );
    }
}

/// Value sets at the edges: none, one, equal values, the largest values, one outlier.
fn edge_sets() -> Vec<Vec<u64>> {
    vec![
        vec![],
        vec![0],
        vec![7],
        vec![Sample::MAX_TICKS],
        vec![0, 0],
        vec![1, 2],
        vec![0, Sample::MAX_TICKS],
        vec![Sample::MAX_TICKS - 1, Sample::MAX_TICKS],
        vec![1, 2, 3],
        vec![0, 0, Sample::MAX_TICKS],
        vec![
            Sample::MAX_TICKS - 2,
            Sample::MAX_TICKS - 1,
            Sample::MAX_TICKS,
        ],
        vec![Sample::MAX_TICKS; 3],
        vec![Sample::MAX_TICKS - 7; 1000],
        vec![0; 1000],
        vec![250; 1000],
        vec![123_456_789; 1000],
        (0..1000).map(|i| Sample::MAX_TICKS - i % 3).collect(),
        (0..1000)
            .map(|i| if i == 0 { Sample::MAX_TICKS } else { 250 })
            .collect(),
    ]
}

/// Two threads, each with the `values` as samples of `kind` under `edge`, and a `gone`
/// component whose samples were all overwritten (5 and 10 lost).
fn edge_capture(values: &[u64], kind: u8) -> Capture {
    let samples: Vec<Sample> = values.iter().map(|&v| sample(v, kind, false)).collect();
    Capture {
        process_allocs: None,
        threads: (1..=2)
            .map(|serial| {
                thread(
                    serial,
                    vec![
                        component("edge", samples.clone(), 0),
                        component("gone", Vec::new(), serial * 5),
                    ],
                )
            })
            .collect(),
        teardown_drops: 0,
    }
}

#[test]
fn edge_cases_are_finite() {
    let sets = edge_sets();
    let cal = calibration(1);
    let mut failures = Vec::new();
    for values in &sets {
        for kind in [10u8, 8, 9] {
            let capture = edge_capture(values, kind);
            for unit in [Unit::Cycles, Unit::Time] {
                for data in [Data::Raw, Data::Calibrated] {
                    for cleaning in [Cleaning::OFF, Cleaning::default()] {
                        let options = ReportOptions {
                            unit,
                            data,
                            cleaning,
                            ..ReportOptions::default()
                        };
                        let what = format!(
                            "{} values {:?}.. kind {kind} {options:?}",
                            values.len(),
                            values.first()
                        );
                        let report = Report::from_capture(&capture, &cal, &options);
                        let scale = per_tick(unit, &cal);
                        check_edge_report(&report, values, kind, &options, &cal, scale)
                            .unwrap_or_else(|e| failures.push(format!("{what}: {e}")));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// One edge-case report: its shape, every row against the oracles, and the special
/// forms of nothing (a component whose samples were all overwritten, an empty set) and
/// of one value repeated (every figure is that value).
fn check_edge_report(
    report: &Report,
    values: &[u64],
    kind: u8,
    options: &ReportOptions,
    cal: &Calibration,
    scale: f64,
) -> Result<(), TestCaseError> {
    check_shape(report)?;
    let mut merged: HashMap<&str, Expected> = HashMap::new();
    for (t, tr) in report.threads.iter().enumerate() {
        let serial = t as u64 + 1;
        let edge = component(
            "edge",
            values.iter().map(|&v| sample(v, kind, false)).collect(),
            0,
        );
        let gone = component("gone", Vec::new(), serial * 5);
        // A component that recorded nothing at all (no values, none lost) has no row.
        let listed: Vec<_> = [edge, gone].into_iter().filter(|c| c.seen > 0).collect();
        prop_assert_eq!(tr.rows.len(), listed.len());
        for c in &listed {
            let row = tr.rows.iter().find(|r| r.component == c.name).unwrap();
            let expected = Expected::of(c, cal, options);
            let what = format!("{}/{}", tr.name, c.name);
            check_whole_run(&row.stats, &expected, scale, &what)?;
            check_cleaned(&row.stats, &expected, scale, &what)?;
            merged.entry(c.name).or_default().merge(&expected);
        }
    }
    for row in &report.all_threads {
        let expected = &merged[row.component.as_str()];
        let what = format!("all/{}", row.component);
        check_whole_run(&row.stats, expected, scale, &what)?;
        check_cleaned(&row.stats, expected, scale, &what)?;
    }
    check_nothing_and_one_value(report, values, kind, options, cal, scale)
}

/// The special forms of nothing (a component whose samples were all overwritten, an
/// empty set) and of one value repeated (every figure is that value).
fn check_nothing_and_one_value(
    report: &Report,
    values: &[u64],
    kind: u8,
    options: &ReportOptions,
    cal: &Calibration,
    scale: f64,
) -> Result<(), TestCaseError> {
    let rows = report
        .threads
        .iter()
        .flat_map(|t| &t.rows)
        .chain(&report.all_threads);
    let mut gone_rows = 0;
    for row in rows {
        let s = row.stats;
        if row.component == "gone" {
            // Every sample overwritten: counted as lost, nothing else. In order:
            // worker-1 (5 lost), worker-2 (10), all threads (15).
            gone_rows += 1;
            let lost = 5 * gone_rows;
            let want = Summary {
                seen: lost,
                lost,
                ..Summary::default()
            };
            prop_assert_eq!(s, want, "gone, row {}", gone_rows);
            continue;
        }
        if values.is_empty() {
            prop_assert_eq!(s, Summary::default());
        }
        if let Some(&v) = values.first()
            && values.iter().all(|&x| x == v)
        {
            // One value, any number of times: every figure is that value, exactly (the
            // histogram's representative is clamped to the exact extremes).
            let v = expected_value(sample(v, kind, false), cal, options.data) as f64 * scale;
            prop_assert_eq!((s.bypass, s.outliers), (0, 0));
            for (name, x) in floats(&s) {
                let want = match name {
                    "std_dev" | "skew" | "range" | "bypass_total" | "outliers_total" => 0.0,
                    "cleaned.std_dev" | "cleaned.skew" | "cleaned.range" => 0.0,
                    "total" => v * s.samples as f64,
                    _ => v,
                };
                // The total is a sum in ticks, scaled once: to the last bit of `n * v`.
                let exact = name != "total" || close(x, want, 1e-15, 0.0);
                prop_assert!(
                    if name == "total" { exact } else { x == want },
                    "{} of {} equal values: {} vs {}: {:?}",
                    name,
                    values.len(),
                    x,
                    want,
                    s
                );
            }
        }
    }
    Ok(())
}

/// The mean of `n` equal values is that value, and any mean lies within the extremes.
/// The exact mean is `sum / n` with `sum` exact in integers; rounding `sum` to f64 first
/// and then dividing rounds twice, which near `Sample::MAX_TICKS` (where f64 steps by
/// 0.5) can land half a tick outside `[min, max]`.
#[test]
fn mean_of_equal_values_is_the_value() {
    let cal = calibration(1);
    let mut failures = Vec::new();
    for v in [
        Sample::MAX_TICKS,
        Sample::MAX_TICKS - 1,
        Sample::MAX_TICKS - 7,
        1 << 51,
        123_456_789,
    ] {
        for n in [1, 2, 3, 5, 7, 1_000] {
            let capture = Capture {
                process_allocs: None,
                threads: vec![thread(
                    1,
                    vec![component("equal", vec![sample(v, 10, false); n], 0)],
                )],
                teardown_drops: 0,
            };
            let options = ReportOptions {
                unit: Unit::Cycles,
                data: Data::Raw,
                cleaning: Cleaning::OFF,
                ..ReportOptions::default()
            };
            let s = row(&Report::from_capture(&capture, &cal, &options), "equal");
            if (s.avg, s.avg) != (v as f64, v as f64) {
                failures.push(format!(
                    "{n} x {v}: avg = {}, avg = {} (min = {}, max = {})",
                    s.avg, s.avg, s.min, s.max
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn moments_and_quantiles_of_tiny_sets() {
    let m = moments(&[]);
    assert_eq!(
        (m.count, m.mean, m.std_dev, m.skew, m.min, m.max),
        (0, 0.0, 0.0, 0.0, 0.0, 0.0)
    );
    let m = moments(&[42]);
    assert_eq!(
        (m.count, m.mean, m.std_dev, m.skew, m.min, m.max),
        (1, 42.0, 0.0, 0.0, 42.0, 42.0)
    );
    let m = moments(&[1, 3]);
    assert_eq!((m.mean, m.std_dev, m.skew), (2.0, 1.0, 0.0));
    // Skewness of {0, 0, 3}: m2 = 2, m3 = 2, g1 = 2 / 2^1.5.
    let m = moments(&[0, 0, 3]);
    assert!((m.skew - 1.0 / 2f64.sqrt()).abs() < 1e-15, "{m:?}");
    // The same shape under a huge common value.
    let base = Sample::MAX_TICKS - 3;
    let m = moments(&[base, base, base + 3]);
    assert!(
        (m.skew - 1.0 / 2f64.sqrt()).abs() < 1e-12 && (m.std_dev - 2f64.sqrt()).abs() < 1e-12,
        "{m:?}"
    );
    // All equal, any magnitude, even past Sample::MAX_TICKS: no spread at all.
    for v in [0, 1, Sample::MAX_TICKS, u64::MAX] {
        for n in [2, 3, 7, 1000] {
            let m = moments(&vec![v; n]);
            assert_eq!(
                (m.std_dev, m.skew, m.mean),
                (0.0, 0.0, v as f64),
                "{v} x {n}: {m:?}"
            );
        }
    }
    // Order statistics: rank ceil(q n), at least 1.
    assert_eq!(quantile(&[], 0.5), 0);
    assert_eq!(quantile(&[5], 0.3), 5);
    assert_eq!(quantile(&[1, 2], 0.5), 1);
    assert_eq!(quantile(&[1, 2], 0.51), 2);
    assert_eq!(quantile(&[1, 2, 3], 0.25), 1);
    assert_eq!(quantile(&[1, 2, 3], 0.34), 2);
    assert_eq!(
        quantile(&[Sample::MAX_TICKS - 1, Sample::MAX_TICKS], 0.5),
        Sample::MAX_TICKS - 1
    );
    let hundred: Vec<u64> = (1..=100).collect();
    assert_eq!(quantile(&hundred, 0.07), 7, "0.07 x 100 is 7, not 8");
    assert_eq!(quantile(&hundred, 0.99), 99);
    assert_eq!(quantile(&hundred, 0.995), 100);
    let million: Vec<u64> = (1..=1_000_000).collect();
    for (q, want) in [
        (0.5, 500_000),
        (0.9, 900_000),
        (0.99, 990_000),
        (0.999, 999_000),
        (0.9999, 999_900),
        (0.123_456_7, 123_457),
    ] {
        assert_eq!(quantile(&million, q), want, "q = {q}");
    }
}

/// A calibration with the given frequency and resolution, for the cleaning examples.
fn cal(ticks_per_ns: f64, resolution: u64) -> Calibration {
    Calibration {
        ticks_per_ns,
        resolution,
        ..calibration(1)
    }
}

/// BYPASS removes a sample only past both the factor and the floor (in nanoseconds),
/// and only above its limit.
fn bypass_needs_the_factor_and_the_floor() {
    let one = cal(1.0, 1);
    // 10 x the median but within the floor.
    let mut ticks = vec![10; 30];
    ticks.push(500);
    let off_fences = Cleaning {
        fences: None,
        ..Cleaning::default()
    };
    let c = clean(&ticks, &off_fences, &one);
    assert_eq!(c.bypass, 0, "500 ticks is 10 x the median but within 2 µs");
    ticks.push(5_000);
    let c = clean(&ticks, &off_fences, &one);
    assert_eq!((c.bypass, c.kept), (1, 0..31));
    // The floor is in nanoseconds: at 3 ticks/ns, 5,000 ticks is within 2 µs of 10.
    let c = clean(&ticks, &off_fences, &cal(3.0, 1));
    assert_eq!(c.bypass, 0);
    // A sample exactly at the BYPASS limit stays: only samples above it are removed.
    let mut ticks = vec![10; 30];
    ticks.extend([2_010, 2_011]);
    let c = clean(&ticks, &off_fences, &one);
    assert_eq!((c.bypass, c.kept), (1, 0..31));
}

#[test]
fn cleaning_examples() {
    let one = cal(1.0, 1);
    // The documented example: 900,000 is preemption, 400 an outlier.
    let mut ticks = vec![100; 50];
    ticks.extend([90, 110, 101, 400, 900_000]);
    ticks.sort_unstable();
    let c = clean(&ticks, &Cleaning::default(), &one);
    assert_eq!((c.bypass, c.outliers, c.kept.len()), (1, 1, 53));
    // Zero IQR: the mode is never split, a far value is caught.
    let mut ticks = vec![1_000; 20];
    ticks.extend([1_200, 1_600]);
    ticks.sort_unstable();
    let c = clean(&ticks, &Cleaning::default(), &one);
    // spread = 0.25 x 1000 = 250; fences [625, 1375].
    assert_eq!((c.bypass, c.outliers), (0, 1));
    assert_eq!(ticks[c.kept.clone()].last(), Some(&1_200));
    bypass_needs_the_factor_and_the_floor();
    // Samples exactly on a fence stay. Zero IQR, spread 25, k = 2: fences [50, 150].
    let mut ticks = vec![100; 20];
    ticks.extend([49, 50, 150, 151]);
    ticks.sort_unstable();
    let fences_only = Cleaning {
        bypass: None,
        fences: Some(Fences {
            k: 2.0,
            zero_iqr_fraction: 0.25,
        }),
    };
    let c = clean(&ticks, &fences_only, &one);
    assert_eq!((c.bypass, c.outliers), (0, 2));
    assert_eq!((ticks[c.kept.start], ticks[c.kept.end - 1]), (50, 150));
    // A counter moving in 26-tick steps: 30 readings of 26, 8 of 52, one of 260. The
    // IQR is 0 and 0.25 x 26 = 6.5 ticks would split the neighbouring step off (fences
    // [16.25, 35.75]); the spread is at least one step, so fences [-13, 65] keep it and
    // still catch the far value.
    let mut ticks = vec![26; 30];
    ticks.extend([52; 8]);
    ticks.push(260);
    let c = clean(&ticks, &Cleaning::default(), &cal(2.6, 26));
    assert_eq!((c.bypass, c.outliers, c.kept), (0, 1, 0..38));
    let c = clean(&ticks, &Cleaning::default(), &cal(2.6, 1));
    assert_eq!((c.bypass, c.outliers, c.kept), (0, 9, 0..30));
    // The spread's last floor is one tick: with everything at 0 the fences (k = 2) are
    // [-2, 2], so a 2 stays and a 3 is an outlier.
    let mut ticks = vec![0; 30];
    ticks.push(2);
    let c = clean(&ticks, &fences_only, &one);
    assert_eq!((c.outliers, c.kept), (0, 0..31));
    ticks.push(3);
    let c = clean(&ticks, &fences_only, &one);
    assert_eq!((c.outliers, c.kept), (1, 0..31));
    // Empty and tiny sets.
    for n in 0..4 {
        let ticks = vec![Sample::MAX_TICKS; n];
        let c = clean(&ticks, &Cleaning::default(), &one);
        assert_eq!((c.kept, c.bypass, c.outliers), (0..n, 0, 0));
    }
}

// ---------------------------------------------------------------------------------------
// Acceptance: a million samples of each shape against an exact oracle
// ---------------------------------------------------------------------------------------

/// Samples per distribution.
const N: usize = 1_000_000;

/// A calibration with the given frequency and resolution; the Fast/Fast scope overhead
/// (the kind the acceptance samples have) is 37 ticks.
fn acceptance_calibration(ticks_per_ns: f64, resolution: u64) -> Calibration {
    Calibration {
        ticks_per_ns,
        accuracy: 1e-6,
        resolution,
        scope: [[37, 40, 45], [41, 44, 48], [50, 55, 60]],
        pulse: 30,
        inside: [[0.0; 3]; 3],
        took: Duration::ZERO,
    }
}

/// Checks the reports of `values` (Fast/Fast scopes on one thread; raw without and with
/// cleaning, calibrated with cleaning) against the exact oracle. `removes` says the data
/// is meant to make cleaning remove something (so the bucket-tolerant checks of the
/// cleaned figures are not vacuous).
fn acceptance(what: &str, values: Vec<u64>, cal: &Calibration, removes: bool) {
    assert_eq!(values.len(), N);
    let capture = acceptance_capture(&values);
    let mut sorted = values;
    sorted.sort_unstable();
    let runs = [
        (Data::Raw, &[Cleaning::OFF, Cleaning::default()][..]),
        (Data::Calibrated, &[Cleaning::default()][..]),
    ];
    for (data, cleanings) in runs {
        let overhead = match data {
            Data::Raw => 0,
            Data::Calibrated => cal.scope_overhead(Mode::Fast, Mode::Fast),
        };
        // Subtracting one overhead keeps the order.
        let values: Vec<u64> = sorted.iter().map(|v| v.saturating_sub(overhead)).collect();
        let prefix = Prefix::of(&values);
        // The report's view of them: one histogram (one kind), clamped to its extremes.
        let reps: Vec<u64> = sorted
            .iter()
            .map(|&x| representative(x, sorted[0], sorted[N - 1]).saturating_sub(overhead))
            .collect();
        for &cleaning in cleanings {
            let what = format!("{what}, {data:?}, {cleaning:?}");
            let options = ReportOptions {
                unit: Unit::Cycles,
                data,
                cleaning,
                ..ReportOptions::default()
            };
            let report = Report::from_capture(&capture, cal, &options);
            let s = report.threads[0].rows[0].stats;
            assert_eq!(
                report.all_threads[0].stats, s,
                "{what}: one thread, so the all-threads row is its row"
            );

            let exact = Exactly {
                values: &values,
                prefix: &prefix,
                reps: &reps,
                overhead,
            };
            check_headline_against_exact(&what, &s, &exact);
            check_what_cleaning_did(&what, &s, &cleaning, removes);
            check_cleaned_against_exact(&what, &s, &exact, cal, &cleaning);
        }
    }
}

/// `values` as Fast/Fast scopes on one thread, one in 1,000 migrated, and 4,321 lost.
fn acceptance_capture(values: &[u64]) -> Capture {
    let samples: Vec<Sample> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| sample(v, 0, i % 1_000 == 7))
        .collect();
    Capture {
        process_allocs: None,
        threads: vec![thread(1, vec![component("acceptance", samples, 4_321)])],
        teardown_drops: 0,
    }
}

/// Cleaning off removes nothing; data meant to exercise cleaning (`removes`) has
/// something removed; with nothing removed, the cleaned figures are the headline.
fn check_what_cleaning_did(what: &str, s: &Summary, cleaning: &Cleaning, removes: bool) {
    if *cleaning == Cleaning::OFF {
        assert_eq!(
            (s.cleaned.samples, s.bypass, s.outliers),
            (N as u64, 0, 0),
            "{what}"
        );
    } else if removes {
        assert!(
            s.bypass + s.outliers > 0,
            "{what}: meant to exercise cleaning: {s:?}"
        );
    }
    if s.bypass + s.outliers == 0 {
        let c = s.cleaned;
        assert_eq!(
            (c.samples, c.avg, c.std_dev, c.skew, c.min, c.max, c.median),
            (N as u64, s.avg, s.std_dev, s.skew, s.min, s.max, s.median),
            "{what}: nothing flagged, the cleaned figures are the headline"
        );
    }
}

/// The headline of a report of `exact`'s values (one thread, 4,321 lost, one in 1,000
/// migrated) against them: counts and extremes exactly, mean and spread to 1e-9, tails
/// within the tail slack of the exact order statistics and equal to the bucket model's.
fn check_headline_against_exact(what: &str, s: &Summary, exact: &Exactly) {
    let Exactly {
        values,
        prefix,
        reps,
        overhead,
    } = *exact;
    // Counts, exactly.
    assert_eq!(
        (s.seen, s.samples, s.lost, s.migrated),
        (N as u64 + 4_321, N as u64, 4_321, N as u64 / 1_000),
        "{what}"
    );
    assert_eq!(
        s.cleaned.samples + s.bypass + s.outliers,
        s.samples,
        "{what}"
    );
    // Extremes exactly, mean and spread to 1e-9.
    assert_eq!(
        (s.min, s.max),
        (values[0] as f64, values[N - 1] as f64),
        "{what}"
    );
    let all = prefix.range(0..N);
    assert!(
        close(s.avg, all.mean(), 1e-9, 0.0),
        "{what}: avg {} vs {}",
        s.avg,
        all.mean()
    );
    assert!(
        close(s.std_dev, all.std_dev(), 1e-9, 0.0),
        "{what}: std_dev {} vs {}",
        s.std_dev,
        all.std_dev()
    );
    // Tails: within the tail slack, so within 0.1%.
    let held = held(reps, values[0], values[N - 1]);
    for ((name, num, den), got) in TAILS.into_iter().zip(tails(s)) {
        let exact = order_statistic(values, num, den) as f64;
        let modelled = order_statistic(&held, num, den) as f64;
        assert_eq!(got, modelled, "{what}: {name}, against the bucket model");
        assert!(
            (got - exact).abs() <= tail_slack(exact, overhead),
            "{what}: {name} = {got}, exact {exact}, beyond the tail slack"
        );
        assert!(
            (got - exact).abs() <= 1e-3 * exact,
            "{what}: {name} = {got}, exact {exact}, more than 0.1% away"
        );
    }
}

/// One distribution, sorted, as the oracle sees it.
struct Exactly<'a> {
    /// The values in the report's data, ascending.
    values: &'a [u64],
    /// Their prefix sums.
    prefix: &'a Prefix,
    /// Their histogram representatives (ascending too: one kind).
    reps: &'a [u64],
    /// The overhead taken off each value.
    overhead: u64,
}

/// The cleaned figures equal those of the kept representatives (1e-9).
fn check_cleaned_against_representatives(what: &str, s: &Summary, kept: &[u64]) {
    let sums = Sums::of(kept);
    let (min, max) = (kept[0] as f64, kept[kept.len() - 1] as f64);
    for (name, got, want) in [
        ("min", s.cleaned.min, min),
        ("max", s.cleaned.max, max),
        ("range", s.cleaned.range, max - min),
        (
            "median",
            s.cleaned.median,
            order_statistic(kept, 1, 2) as f64,
        ),
        ("avg", s.cleaned.avg, sums.mean()),
        ("std_dev", s.cleaned.std_dev, sums.std_dev()),
    ] {
        assert!(
            close(got, want, 1e-9, 1e-9),
            "{what}: {name} = {got}, the kept representatives' is {want}"
        );
    }
}

/// The cleaned figures of a report against the exact sorted values, cleaned with the
/// fences the report used.
///
/// The report applies the rule to bucket representatives, so its fences are the rule's
/// fences on `reps` (checked against the bucket model: same counts), and it keeps
/// whole buckets. With one sample kind representatives are in the order of the values,
/// so the samples it kept are a contiguous range `lo..hi` of the sorted values. On that
/// range:
///
/// - the figures equal those of the kept representatives (1e-9), and
/// - against the exact values of the same samples: min, max and median within
///   `e(v) = half_bucket(v + overhead)`, the mean within `(mean + overhead) / 2,048`
///   (each value moves by at most `e(v) <= (v + overhead) / 2,048`), the standard
///   deviation within `e(max)` (moving every value by at most `d` moves it by at most
///   `d`) and the range within `e(min) + e(max)`; exactly when nothing was removed.
///
/// Independently of the bucket model, the BYPASS count lies within [`bypass_bracket`].
fn check_cleaned_against_exact(
    what: &str,
    s: &Summary,
    exact: &Exactly,
    cal: &Calibration,
    cleaning: &Cleaning,
) {
    let Exactly {
        values,
        prefix,
        reps,
        overhead,
    } = *exact;
    let slack = |v: f64| half_bucket(v + overhead as f64);
    if let Some(b) = cleaning.bypass {
        let (surely, maybe) = bypass_bracket(values, &b, cal, slack);
        assert!(
            surely <= s.bypass && s.bypass <= maybe,
            "{what}: bypass {} outside [{surely}, {maybe}]",
            s.bypass
        );
    }
    let (kept, bypass, outliers) = naive_clean(reps, cleaning, cal);
    assert_eq!(
        (s.cleaned.samples, s.bypass, s.outliers),
        (kept.len() as u64, bypass, outliers),
        "{what}: samples, bypass, outliers against the rule on the representatives"
    );
    let lo = reps.partition_point(|&r| r < kept[0]);
    let hi = lo + kept.len();
    assert_eq!(&reps[lo..hi], &kept[..], "{what}: kept a contiguous range");

    if bypass + outliers > 0 {
        check_cleaned_against_representatives(what, s, &kept);
    }

    // The exact values of the same samples.
    let k = &values[lo..hi];
    let (min, max) = (k[0] as f64, k[k.len() - 1] as f64);
    let median = order_statistic(k, 1, 2) as f64;
    let sums = prefix.range(lo..hi);
    let (mean, sd) = (sums.mean(), sums.std_dev());
    let fuzz = |x: f64| 1e-9 * x.abs() + 1e-9;
    for (name, got, want, bound) in [
        ("min", s.cleaned.min, min, slack(min)),
        ("max", s.cleaned.max, max, slack(max)),
        ("median", s.cleaned.median, median, slack(median)),
        (
            "avg",
            s.cleaned.avg,
            mean,
            (mean + overhead as f64) / 2_048.0,
        ),
        ("std_dev", s.cleaned.std_dev, sd, slack(max)),
        ("range", s.cleaned.range, max - min, slack(min) + slack(max)),
    ] {
        assert!(
            (got - want).abs() <= bound + fuzz(want),
            "{what}: {name} = {got}, the exact kept values' is {want} ± {bound}"
        );
    }
}

#[test]
fn acceptance_uniform() {
    let mut rng = Rng(0x5eed_0001);
    let values = (0..N).map(|_| 1_000 + rng.below(999_001)).collect();
    acceptance("uniform", values, &acceptance_calibration(1.0, 1), false);
}

#[test]
fn acceptance_pareto() {
    // Pareto, x_m = 500 ticks, alpha = 1.3: a heavy tail (the largest of a million near
    // 2·10^7), capped at 10^10 so the oracle's integer sums cannot overflow.
    let mut rng = Rng(0x5eed_0002);
    let values = (0..N)
        .map(|_| ((500.0 / rng.unit().powf(1.0 / 1.3)) as u64).min(10_000_000_000))
        .collect();
    acceptance("pareto", values, &acceptance_calibration(3.0, 1), true);
}

#[test]
fn acceptance_bimodal() {
    // 70% around 1,000 ticks, 30% around 4,000 (triangular), and 0.3% of preemption-like
    // spikes between 50,000 and 500,000.
    let mut rng = Rng(0x5eed_0003);
    let values = (0..N)
        .map(|_| match rng.below(1_000) {
            0..3 => 50_000 + rng.below(450_001),
            3..303 => 3_000 + rng.below(1_001) + rng.below(1_001),
            _ => 600 + rng.below(401) + rng.below(401),
        })
        .collect();
    acceptance("bimodal", values, &acceptance_calibration(2.0, 1), true);
}

#[test]
fn acceptance_tight() {
    // Around 100,000 ticks, a sum of four uniforms: ±400 ticks, standard deviation ~116,
    // where a bucket is 64 ticks wide.
    let mut rng = Rng(0x5eed_0004);
    let values = (0..N)
        .map(|_| 99_600 + (0..4).map(|_| rng.below(201)).sum::<u64>())
        .collect();
    acceptance("tight", values, &acceptance_calibration(1.0, 1), false);
}

#[test]
fn acceptance_coarse_counter() {
    // A counter moving in 26-tick steps (10 ns at 2.6 ticks/ns): readings of 8 to 15
    // steps, 1% of them 20 to 200 steps longer.
    let mut rng = Rng(0x5eed_0005);
    let values = (0..N)
        .map(|_| {
            let steps = 8 + rng.below(8);
            let tail = if rng.below(100) == 0 {
                20 + rng.below(181)
            } else {
                0
            };
            26 * (steps + tail)
        })
        .collect();
    acceptance("coarse", values, &acceptance_calibration(2.6, 26), true);
}
