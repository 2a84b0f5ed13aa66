//! Statistics, cleaning and report assembly checked against plain oracles.
//!
//! Every oracle here is written the obvious way (sort, filter, sum) on a fresh `Vec`, so
//! a disagreement points at the optimised code in `src/analysis`. Captures are built by
//! hand, so no recording and no real calibration is involved.

use latte::analyze::{Bypass, Calibration, Fences};
use latte::analyze::{clean, moments, quantile};
use latte::collect::{ComponentCapture, Sample, SampleKind, ThreadCapture};
use latte::report::{Anomalies, Summary};
use latte::{Capture, Cleaning, Data, Mode, Report, ReportOptions, Unit};
use proptest::collection::vec;
use proptest::prelude::*;
use std::collections::HashMap;
use std::time::Duration;

// ---------------------------------------------------------------------------------------
// Oracles
// ---------------------------------------------------------------------------------------

/// Hyndman & Fan type 7 on a copy, with the textbook 1-based indices:
/// `h = (n - 1) q + 1`, `Q = x[j] + (h - j) (x[j + 1] - x[j])` with `j = floor(h)`.
fn type7(values: &[u64], q: f64) -> f64 {
    let mut x = values.to_vec();
    x.sort_unstable();
    let n = x.len();
    if n == 0 {
        return 0.0;
    }
    let q = q.clamp(0.0, 1.0);
    let h = (n - 1) as f64 * q + 1.0;
    let j = h.floor() as usize; // 1-based, in 1..=n
    let g = h - j as f64;
    let xj = x[j - 1] as f64;
    if j == n {
        return xj;
    }
    let xj1 = x[j] as f64;
    xj + g * (xj1 - xj)
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

/// The documented cleaning rule applied by filtering a sorted copy:
/// (kept values, bypass count, outlier count).
fn naive_clean(values: &[u64], cleaning: &Cleaning, ticks_per_ns: f64) -> (Vec<u64>, u64, u64) {
    let mut rest = values.to_vec();
    rest.sort_unstable();
    let mut bypass = 0;
    if let Some(b) = cleaning.bypass {
        let median = type7(&rest, 0.5);
        let limit = (b.factor * median).max(median + b.floor_ns * ticks_per_ns);
        let before = rest.len();
        rest.retain(|&v| v as f64 <= limit);
        bypass = (before - rest.len()) as u64;
    }
    let mut outliers = 0;
    if let Some(f) = cleaning.fences {
        let (q1, q3) = (type7(&rest, 0.25), type7(&rest, 0.75));
        let spread = if q3 - q1 > 0.0 {
            q3 - q1
        } else {
            (f.zero_iqr_fraction * type7(&rest, 0.5)).max(1.0)
        };
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
    ]
}

fn probabilities() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0..=1.0f64,
        1 => prop::sample::select(vec![0.0, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0]),
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

fn samples(max: usize) -> impl Strategy<Value = Vec<Sample>> {
    vec(
        (latency(), 0u8..11, prop::bool::weighted(0.05)).prop_map(|(t, k, m)| sample(t, k, m)),
        0..max,
    )
}

/// A fixed calibration with distinct overheads per (start, stop) pair and for pulses.
fn calibration() -> Calibration {
    Calibration {
        ticks_per_ns: 2.5,
        accuracy: 1e-6,
        resolution: 1,
        scope: [[20, 24, 31], [26, 33, 39], [41, 47, 58]],
        pulse: 18,
        took: Duration::from_millis(50),
    }
}

/// The value a sample contributes: its ticks, minus its kind's overhead when
/// calibrated (a user-recorded value never is).
fn expected_value(s: Sample, cal: &Calibration, data: Data) -> u64 {
    let ticks = s.ticks();
    match (data, s.kind()) {
        (Data::Raw, _) | (_, SampleKind::Recorded) => ticks,
        (Data::Calibrated, SampleKind::Pulse) => ticks.saturating_sub(cal.pulse),
        (Data::Calibrated, SampleKind::Scope { start, stop }) => {
            ticks.saturating_sub(cal.scope[start as usize][stop as usize])
        }
    }
}

fn component(name: &'static str, samples: Vec<Sample>, overwritten: u64) -> ComponentCapture {
    ComponentCapture {
        name,
        seen: samples.len() as u64 + overwritten,
        capacity: 65_536,
        first: overwritten,
        samples,
    }
}

fn thread(serial: u64, components: Vec<ComponentCapture>) -> ThreadCapture {
    ThreadCapture {
        serial,
        name: format!("worker-{serial}"),
        exited: serial.is_multiple_of(2),
        anomalies: Anomalies {
            empty_stops: serial,
            ..Anomalies::default()
        },
        components,
        frames: Vec::new(),
    }
}

/// Ids that only some threads record.
const EXTRA_IDS: [&str; 3] = ["alpha", "beta", "gamma"];

/// One thread: `shared` (first or last), plus any of the extra ids.
fn thread_components() -> impl Strategy<Value = Vec<ComponentCapture>> {
    (
        samples(150),
        0u64..1_000,
        any::<bool>(),
        vec((any::<bool>(), samples(40), 0u64..100), 3),
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

fn captures() -> impl Strategy<Value = Capture> {
    (vec(thread_components(), 2..=4), 0u64..3).prop_map(|(threads, teardown_drops)| Capture {
        threads: threads
            .into_iter()
            .enumerate()
            .map(|(i, c)| thread(i as u64 + 1, c))
            .collect(),
        teardown_drops,
    })
}

// ---------------------------------------------------------------------------------------
// Expected summaries
// ---------------------------------------------------------------------------------------

/// A component's values as the oracles prepare them, in ticks.
#[derive(Clone, Debug, Default)]
struct Expected {
    all: Vec<u64>,
    cleaned: Vec<u64>,
    kept: u64,
    seen: u64,
    bypass: u64,
    outliers: u64,
    migrated: u64,
}

impl Expected {
    fn of(c: &ComponentCapture, cal: &Calibration, options: &ReportOptions) -> Expected {
        let all: Vec<u64> = c
            .samples
            .iter()
            .map(|&s| expected_value(s, cal, options.data))
            .collect();
        let (cleaned, bypass, outliers) = naive_clean(&all, &options.cleaning, cal.ticks_per_ns);
        Expected {
            kept: all.len() as u64,
            seen: c.seen,
            bypass,
            outliers,
            migrated: c.samples.iter().filter(|s| s.migrated()).count() as u64,
            all,
            cleaned,
        }
    }

    fn merge(&mut self, other: &Expected) {
        self.all.extend_from_slice(&other.all);
        self.cleaned.extend_from_slice(&other.cleaned);
        self.kept += other.kept;
        self.seen += other.seen;
        self.bypass += other.bypass;
        self.outliers += other.outliers;
        self.migrated += other.migrated;
    }

    /// The summary in the report's unit (`per_tick` = 1, or nanoseconds per tick).
    fn summary(&self, per_tick: f64) -> Summary {
        let m = naive_moments(&self.cleaned);
        let max_all = self.all.iter().copied().max().unwrap_or(0) as f64;
        Summary {
            samples: m.count,
            kept: self.kept,
            seen: self.seen,
            avg: m.mean * per_tick,
            median: type7(&self.cleaned, 0.5) * per_tick,
            std_dev: m.std_dev * per_tick,
            skew: m.skew,
            min: m.min * per_tick,
            max: m.max * per_tick,
            range: (m.max - m.min) * per_tick,
            bypass: self.bypass,
            outliers: self.outliers,
            p90: type7(&self.all, 0.90) * per_tick,
            p99: type7(&self.all, 0.99) * per_tick,
            p999: type7(&self.all, 0.999) * per_tick,
            max_all: max_all * per_tick,
            migrated: self.migrated,
        }
    }
}

fn per_tick(unit: Unit, cal: &Calibration) -> f64 {
    match unit {
        Unit::Cycles => 1.0,
        Unit::Time => 1.0 / cal.ticks_per_ns,
    }
}

/// Every float field of a summary, by name.
fn floats(s: &Summary) -> [(&'static str, f64); 13] {
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
        ("max_all", s.max_all),
        ("samples as f64", s.samples as f64),
        ("kept as f64", s.kept as f64),
    ]
}

/// Counts exactly, floats to 1e-9 relative. `std_dev` is compared against the value
/// scale (a spread of 1e-9 of the values is float noise, not a different answer) and
/// `skew` against 1.
fn check_summary(got: &Summary, want: &Summary, what: &str) -> Result<(), TestCaseError> {
    let counts = |s: &Summary| (s.samples, s.kept, s.seen, s.bypass, s.outliers, s.migrated);
    prop_assert_eq!(counts(got), counts(want), "{}: counts", what);
    let scale = want.max.abs().max(want.min.abs());
    for ((name, g), (_, w)) in floats(got).into_iter().zip(floats(want)) {
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

fn check_finite(report: &Report) -> Result<(), TestCaseError> {
    let rows = report
        .threads
        .iter()
        .flat_map(|t| t.rows.iter().map(move |r| (t.name.as_str(), r)))
        .chain(report.all_threads.iter().map(|r| ("all threads", r)));
    for (thread, row) in rows {
        for (name, v) in floats(&row.stats) {
            prop_assert!(
                v.is_finite(),
                "{}/{}: {} = {}",
                thread,
                row.component,
                name,
                v
            );
        }
        let s = &row.stats;
        prop_assert!(
            s.std_dev >= 0.0 && s.range >= 0.0,
            "{}/{}: {:?}",
            thread,
            row.component,
            s
        );
        prop_assert!(
            s.min <= s.median && s.median <= s.max && s.min <= s.avg && s.avg <= s.max,
            "{}/{}: centre outside [min, max]: {:?}",
            thread,
            row.component,
            s
        );
        prop_assert!(
            s.p90 <= s.p99 && s.p99 <= s.p999 && s.p999 <= s.max_all && s.max <= s.max_all,
            "{}/{}: tails out of order: {:?}",
            thread,
            row.component,
            s
        );
        prop_assert_eq!(
            s.samples + s.bypass + s.outliers,
            s.kept,
            "{}/{}",
            thread,
            row.component
        );
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
    fn quantile_matches_type7(mut values in value_sets(), q in probabilities()) {
        values.sort_unstable();
        let got = quantile(&values, q);
        let want = type7(&values, q);
        prop_assert!(close(got, want, 1e-12, 0.0), "q = {}: {} vs {}", q, got, want);
        if let (Some(&first), Some(&last)) = (values.first(), values.last()) {
            prop_assert!(first as f64 <= got && got <= last as f64);
            prop_assert_eq!(quantile(&values, -0.5), first as f64);
            prop_assert_eq!(quantile(&values, 1.5), last as f64);
            prop_assert_eq!(quantile(&values, 0.0), first as f64);
            prop_assert_eq!(quantile(&values, 1.0), last as f64);
        } else {
            prop_assert_eq!(got, 0.0);
        }
    }

    #[test]
    fn quantile_is_monotone_and_exact_on_ranks(mut values in value_sets(), a in probabilities(), b in probabilities()) {
        values.sort_unstable();
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(quantile(&values, lo) <= quantile(&values, hi));
        let n = values.len();
        if n > 1 {
            for (i, &v) in values.iter().enumerate() {
                // q = i / (n - 1) lands on rank i, up to the rounding of q itself, which
                // can move the result by a fraction ~1e-16 of a neighbouring gap.
                let q = i as f64 / (n - 1) as f64;
                let gap = (values[n - 1] - values[0]) as f64;
                prop_assert!(close(quantile(&values, q), v as f64, 1e-12, 1e-12 * gap));
            }
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
        prop_assert!(close(got.skew, want.skew, 1e-9, 1e-9), "skew {} vs {} (std_dev {}, mean {})", got.skew, want.skew, want.std_dev, want.mean);
        prop_assert!(got.min <= got.mean && got.mean <= got.max, "mean {} outside [{}, {}]", got.mean, got.min, got.max);
    }

    #[test]
    fn clean_matches_naive(mut values in value_sets(), cleaning in cleanings(), ticks_per_ns in prop_oneof![0.25..4.0f64, Just(1.0), Just(2.0)]) {
        values.sort_unstable();
        let got = clean(&values, &cleaning, ticks_per_ns);
        prop_assert!(got.kept.start <= got.kept.end && got.kept.end <= values.len(), "{:?}", got.kept);
        prop_assert_eq!(got.kept.len() as u64 + got.bypass + got.outliers, values.len() as u64);
        let (kept, bypass, outliers) = naive_clean(&values, &cleaning, ticks_per_ns);
        prop_assert_eq!((got.bypass, got.outliers), (bypass, outliers));
        prop_assert_eq!(&values[got.kept.clone()], &kept[..]);
        if cleaning.bypass.is_none() {
            prop_assert_eq!(got.bypass, 0);
        }
        if cleaning.fences.is_none() {
            prop_assert_eq!(got.outliers, 0);
        }
        let off = clean(&values, &Cleaning::OFF, ticks_per_ns);
        prop_assert_eq!((off.kept, off.bypass, off.outliers), (0..values.len(), 0, 0));
    }

    #[test]
    fn merging_threads_equals_the_concatenation(capture in captures(), options in options()) {
        let cal = calibration();
        let report = Report::from_capture(&capture, &cal, &options);
        let per_tick = per_tick(options.unit, &cal);
        prop_assert_eq!(report.unit, options.unit);
        prop_assert_eq!(report.data, options.data);
        prop_assert_eq!(report.cleaning, options.cleaning);
        prop_assert_eq!(report.overhead.is_some(), options.data == Data::Calibrated);
        prop_assert_eq!(report.teardown_drops, capture.teardown_drops);
        prop_assert_eq!(report.threads.len(), capture.threads.len());

        let mut order: Vec<&str> = Vec::new();
        let mut merged: HashMap<&str, Expected> = HashMap::new();
        for (t, tr) in capture.threads.iter().zip(&report.threads) {
            prop_assert_eq!(&tr.name, &t.name);
            prop_assert_eq!((tr.serial, tr.exited, tr.anomalies), (t.serial, t.exited, t.anomalies));
            prop_assert_eq!(tr.rows.len(), t.components.len());
            for (c, row) in t.components.iter().zip(&tr.rows) {
                prop_assert_eq!(row.component.as_str(), c.name);
                let expected = Expected::of(c, &cal, &options);
                check_summary(&row.stats, &expected.summary(per_tick), &format!("{}/{}", t.name, c.name))?;
                if !merged.contains_key(c.name) {
                    order.push(c.name);
                }
                merged.entry(c.name).or_default().merge(&expected);
            }
        }
        let ids: Vec<&str> = report.all_threads.iter().map(|r| r.component.as_str()).collect();
        prop_assert_eq!(&ids, &order, "all-threads rows in order of first appearance");
        for row in &report.all_threads {
            let expected = &merged[row.component.as_str()];
            check_summary(&row.stats, &expected.summary(per_tick), &format!("all/{}", row.component))?;
        }
        check_finite(&report)?;
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
        let cal = calibration();
        let samples: Vec<Sample> = specs.iter().map(|&(t, k, m)| sample(t, k, m)).collect();
        let capture = Capture {
            threads: vec![thread(
                1,
                samples.iter().zip(IDS).map(|(&s, id)| component(id, vec![s], 0)).collect(),
            )],
            teardown_drops: 0,
        };
        let unit = if time { Unit::Time } else { Unit::Cycles };
        for data in [Data::Raw, Data::Calibrated] {
            let options = ReportOptions { unit, data, cleaning: Cleaning::default() };
            let report = Report::from_capture(&capture, &cal, &options);
            check_finite(&report)?;
            for (&(ticks, kind, _), row) in specs.iter().zip(&report.threads[0].rows) {
                let want = match (data, kind) {
                    (Data::Raw, _) | (_, 10) => ticks,
                    (Data::Calibrated, 9) => ticks.saturating_sub(cal.pulse),
                    (Data::Calibrated, k) => ticks.saturating_sub(cal.scope[usize::from(k / 3)][usize::from(k % 3)]),
                };
                let want = want as f64 * per_tick(unit, &cal);
                let s = &row.stats;
                prop_assert_eq!(s.samples, 1, "{}", row.component);
                for v in [s.avg, s.median, s.min, s.max, s.p90, s.p99, s.p999, s.max_all] {
                    prop_assert!(close(v, want, 1e-12, 0.0), "{} {:?}: {} vs {}", row.component, data, v, want);
                    prop_assert!(v >= 0.0);
                }
                prop_assert_eq!((s.std_dev, s.skew, s.range), (0.0, 0.0, 0.0));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Fixed cases
// ---------------------------------------------------------------------------------------

#[test]
fn calibrated_values_below_overhead_are_zero() {
    let cal = calibration();
    let hard_hard = sample(10, 8, false); // overhead 58
    let fast_mid = sample(100, 1, false); // overhead 24
    let pulse = sample(5, 9, false); // overhead 18
    let record = sample(3, 10, false); // never corrected
    let capture = Capture {
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
    };
    let report = Report::from_capture(&capture, &cal, &options);
    let row = |id: &str| {
        report.threads[0]
            .rows
            .iter()
            .find(|r| r.component == id)
            .unwrap()
            .stats
    };

    let below = row("below");
    assert_eq!(
        (below.max_all, below.max, below.avg, below.migrated),
        (0.0, 0.0, 0.0, 1)
    );
    let mixed = row("mixed");
    assert_eq!((mixed.min, mixed.max), (0.0, 76.0));
    let record = row("record");
    assert_eq!((record.min, record.max), (3.0, Sample::MAX_TICKS as f64));

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
    let below = raw.threads[0].rows[0].stats;
    assert_eq!((below.min, below.max), (0.0, 10.0));
}

#[test]
fn edge_cases_are_finite() {
    let sets: Vec<Vec<u64>> = vec![
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
        (0..1000).map(|i| Sample::MAX_TICKS - i % 3).collect(),
        (0..1000)
            .map(|i| if i == 0 { Sample::MAX_TICKS } else { 250 })
            .collect(),
    ];
    let cal = calibration();
    for values in &sets {
        for kind in [10u8, 8, 9] {
            let samples: Vec<Sample> = values.iter().map(|&v| sample(v, kind, false)).collect();
            let capture = Capture {
                threads: (1..=2)
                    .map(|serial| thread(serial, vec![component("edge", samples.clone(), 0)]))
                    .collect(),
                teardown_drops: 0,
            };
            for unit in [Unit::Cycles, Unit::Time] {
                for data in [Data::Raw, Data::Calibrated] {
                    for cleaning in [Cleaning::OFF, Cleaning::default()] {
                        let options = ReportOptions {
                            unit,
                            data,
                            cleaning,
                        };
                        let what = format!(
                            "{} values {:?}.. kind {kind} {options:?}",
                            values.len(),
                            values.first()
                        );
                        let report = Report::from_capture(&capture, &cal, &options);
                        if let Err(e) = check_finite(&report) {
                            panic!("{what}: {e}");
                        }
                        for row in report
                            .threads
                            .iter()
                            .flat_map(|t| &t.rows)
                            .chain(&report.all_threads)
                        {
                            let s = row.stats;
                            if values.is_empty() {
                                assert_eq!(s, Summary::default(), "{what}");
                            }
                            if values.windows(2).all(|w| w[0] == w[1]) {
                                assert_eq!(
                                    (s.std_dev, s.skew, s.range),
                                    (0.0, 0.0, 0.0),
                                    "{what}: {s:?}"
                                );
                                assert_eq!(
                                    (s.min, s.avg, s.median),
                                    (s.max, s.max, s.max),
                                    "{what}: {s:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
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
    assert_eq!(quantile(&[], 0.5), 0.0);
    assert_eq!(quantile(&[5], 0.3), 5.0);
    assert_eq!(quantile(&[1, 2], 0.5), 1.5);
    assert_eq!(quantile(&[1, 2, 3], 0.25), 1.5);
    assert_eq!(
        quantile(&[Sample::MAX_TICKS - 1, Sample::MAX_TICKS], 0.5),
        Sample::MAX_TICKS as f64 - 0.5
    );
}

#[test]
fn cleaning_examples() {
    // The documented example: 900,000 is preemption, 400 an outlier.
    let mut ticks = vec![100; 50];
    ticks.extend([90, 110, 101, 400, 900_000]);
    ticks.sort_unstable();
    let c = clean(&ticks, &Cleaning::default(), 1.0);
    assert_eq!((c.bypass, c.outliers, c.kept.len()), (1, 1, 53));
    // Zero IQR: the mode is never split, a far value is caught.
    let mut ticks = vec![1_000; 20];
    ticks.extend([1_200, 1_600]);
    ticks.sort_unstable();
    let c = clean(&ticks, &Cleaning::default(), 1.0);
    // spread = 0.25 x 1000 = 250; fences [625, 1375].
    assert_eq!((c.bypass, c.outliers), (0, 1));
    assert_eq!(ticks[c.kept.clone()].last(), Some(&1_200));
    // BYPASS needs both the factor and the floor: 10 x median but within the floor.
    let mut ticks = vec![10; 30];
    ticks.push(500);
    let off_fences = Cleaning {
        fences: None,
        ..Cleaning::default()
    };
    let c = clean(&ticks, &off_fences, 1.0);
    assert_eq!(c.bypass, 0, "500 ticks is 10 x the median but within 2 µs");
    ticks.push(5_000);
    let c = clean(&ticks, &off_fences, 1.0);
    assert_eq!((c.bypass, c.kept), (1, 0..31));
    // The floor is in nanoseconds: at 3 ticks/ns, 5,000 ticks is within 2 µs of 10.
    let c = clean(&ticks, &off_fences, 3.0);
    assert_eq!(c.bypass, 0);
    // A sample exactly at the BYPASS limit stays: only samples above it are removed.
    let mut ticks = vec![10; 30];
    ticks.extend([2_010, 2_011]);
    let c = clean(&ticks, &off_fences, 1.0);
    assert_eq!((c.bypass, c.kept), (1, 0..31));
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
    let c = clean(&ticks, &fences_only, 1.0);
    assert_eq!((c.bypass, c.outliers), (0, 2));
    assert_eq!((ticks[c.kept.start], ticks[c.kept.end - 1]), (50, 150));
    // Empty and tiny sets.
    for n in 0..4 {
        let ticks = vec![Sample::MAX_TICKS; n];
        let c = clean(&ticks, &Cleaning::default(), 1.0);
        assert_eq!((c.kept, c.bypass, c.outliers), (0..n, 0, 0));
    }
}
