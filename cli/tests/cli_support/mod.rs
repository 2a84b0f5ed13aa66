//! Synthetic reports for the command-line tool's tests: log-normal latencies with a
//! known median and spread, written as latte JSON reports.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use latte::report::{Row, Summary};
use latte::{Cleaning, Data, Report, Unit};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, LogNormal};
use std::path::{Path, PathBuf};

/// One component of a synthetic report: name, median (ticks), sigma, samples.
#[derive(Clone, Copy)]
pub struct Component {
    pub name: &'static str,
    pub median: f64,
    pub sigma: f64,
    pub samples: usize,
}

/// `n` values drawn from a log-normal, as latte's histogram.
pub fn histogram(c: &Component, seed: u64) -> Histogram<u64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let dist = LogNormal::new(c.median.ln(), c.sigma).unwrap();
    let mut hist = Histogram::<u64>::new(3).unwrap();
    for _ in 0..c.samples {
        hist.record(dist.sample(&mut rng).round().max(1.0) as u64)
            .unwrap();
    }
    hist
}

/// A row carrying the histogram and the statistics the table shows, its quantiles
/// read from the histogram as latte reads them.
pub fn row(name: &str, hist: &Histogram<u64>) -> Row {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(hist, &mut bytes)
        .unwrap();
    let stats = Summary {
        samples: hist.len(),
        seen: hist.len(),
        avg: hist.mean(),
        min: hist.min() as f64,
        max: hist.max() as f64,
        range: (hist.max() - hist.min()) as f64,
        total: hist.mean() * hist.len() as f64,
        ..Summary::default()
    };
    let mut row = Row {
        component: name.to_string(),
        stats,
        histogram: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
        ..Row::default()
    };
    let dist = row.distribution(&report(vec![row.clone()])).unwrap();
    let s = &mut row.stats;
    let q = |q: f64| dist.quantile(q);
    (s.median, s.p90, s.p99, s.p999, s.p9999) = (q(0.5), q(0.9), q(0.99), q(0.999), q(0.9999));
    row
}

/// A report in cycles on the TSC with these rows.
pub fn report(rows: Vec<Row>) -> Report {
    Report {
        format_version: Report::FORMAT_VERSION,
        figures: latte::report::Figures::All,
        label: None,
        unit: Unit::Cycles,
        data: Data::Raw,
        clock: "TSC".into(),
        ticks_per_ns: 2.5,
        frequency_accuracy: 1e-6,
        resolution: 1.0,
        cleaning: Cleaning::default(),
        overhead: None,
        threads: Vec::new(),
        all_threads: rows,
        tree: Vec::new(),
        tree_left_out: 0,
        teardown_drops: 0,
        footprint: None,
        environment: None,
        periodic_failures: None,
    }
}

/// Writes a report of `components`, every median multiplied by `shift`, to `path`.
pub fn write(path: &Path, components: &[Component], shift: f64, seed: u64) -> PathBuf {
    let rows = components
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let shifted = Component {
                median: c.median * shift,
                ..*c
            };
            row(c.name, &histogram(&shifted, seed * 1_000 + i as u64))
        })
        .collect();
    write_report(path, &report(rows))
}

/// Writes `report` as JSON to `path`.
pub fn write_report(path: &Path, report: &Report) -> PathBuf {
    std::fs::write(path, report.to_json(latte::report::JsonStyle::Compact)).unwrap();
    path.to_path_buf()
}

/// A fresh directory for one test's files.
pub fn dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("latte-cli-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Three components: a fast one, a slow one, a wide one.
pub const COMPONENTS: [Component; 3] = [
    Component {
        name: "fast",
        median: 400.0,
        sigma: 0.2,
        samples: 40_000,
    },
    Component {
        name: "slow",
        median: 50_000.0,
        sigma: 0.3,
        samples: 40_000,
    },
    Component {
        name: "wide",
        median: 3_000.0,
        sigma: 1.0,
        samples: 40_000,
    },
];
