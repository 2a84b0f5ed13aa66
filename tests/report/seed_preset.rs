//! The seed's preset (cycles, raw data, statistics after cleaning, as the C++ original
//! computes them) gives the same figures as latte's default did before the headline
//! covered every sample: the snapshot below was written by that earlier code, and
//! changed since only where nothing was cleaned and the skewness now
//! comes from exact sums of cubes: `bucket` (three values in one histogram bucket)
//! reads the exact -0.707 where the earlier code read 0 from the bucket, and `tight`
//! differs in its 13th significant figure (another order of float operations).

use latte::analyze::Calibration;
use latte::collect::{ComponentCapture, Sample, SampleKind, ThreadCapture};
use latte::{Capture, Mode, Report, ReportOptions};
use std::fmt::Write;
use std::time::Duration;

fn calibration() -> Calibration {
    Calibration {
        ticks_per_ns: 2.6,
        accuracy: 1e-6,
        resolution: 26,
        scope: [[26, 52, 52], [26, 52, 52], [26, 52, 78]],
        pulse: 26,
        inside: [[0.0; 3]; 3],
        took: Duration::from_millis(50),
    }
}

/// A component of `values` recorded as Fast/Fast scopes.
fn component(name: &'static str, values: &[u64]) -> ComponentCapture {
    let kind = SampleKind::Scope {
        start: Mode::Fast,
        stop: Mode::Fast,
    };
    ComponentCapture {
        allocs: None,
        parent: None,
        self_ticks: None,
        name,
        seen: values.len() as u64,
        capacity: values.len().next_power_of_two(),
        first: 0,
        samples: values
            .iter()
            .map(|&v| Sample::new(v, kind, false).unwrap())
            .collect(),
    }
}

/// Distributions whose cleaning removes something: a replan every tenth call, a
/// skewed spread with far outliers, values above 2,048 ticks (shared histogram
/// buckets), three values in one bucket.
fn capture() -> Capture {
    let replans: Vec<u64> = (0..10_000u64)
        .map(|i| if i % 10 == 9 { 20_000 } else { 100 })
        .collect();
    let skewed: Vec<u64> = (0..5_000u64)
        .map(|i| {
            let x = (i * 2_654_435_761) % 1_000;
            let base = 3_000 + x * x / 200;
            if i % 997 == 0 { base * 40 } else { base }
        })
        .collect();
    let tight: Vec<u64> = (0..2_000u64).map(|i| 52 + (i * 7) % 26).collect();
    let bucket = [3_000u64, 3_001, 3_001];
    Capture {
        process_allocs: None,
        threads: vec![ThreadCapture {
            alloc_breach: None,
            outside_allocs: None,
            serial: 1,
            name: "main".into(),
            exited: false,
            anomalies: Default::default(),
            components: vec![
                component("replans", &replans),
                component("skewed", &skewed),
                component("tight", &tight),
                component("bucket", &bucket),
            ],
            unpaired: Vec::new(),
        }],
        teardown_drops: 0,
    }
}

#[test]
fn the_seed_preset_keeps_the_cleaned_figures() {
    let report = Report::from_capture(&capture(), &calibration(), &ReportOptions::seed());
    let mut text = String::new();
    let mut rows = report.all_threads.clone();
    // In the order of first record, as the earlier code listed them.
    let order = ["replans", "skewed", "tight", "bucket"];
    rows.sort_by_key(|r| order.iter().position(|o| *o == r.component));
    for row in &rows {
        let (s, c) = (row.stats, row.stats.cleaned);
        writeln!(
            text,
            "{}: samples {} avg {:?} median {:?} std_dev {:?} skew {:?} min {:?} max {:?} \
             range {:?} bypass {} outliers {}",
            row.component,
            c.samples,
            c.avg,
            c.median,
            c.std_dev,
            c.skew,
            c.min,
            c.max,
            c.range,
            s.bypass,
            s.outliers
        )
        .unwrap();
    }
    insta::assert_snapshot!(text);
}
