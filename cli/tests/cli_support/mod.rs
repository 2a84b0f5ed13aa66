//! Synthetic reports for the command-line tool's tests: log-normal latencies with a
//! known median and spread, written as latte JSON reports.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use latte::Report;
use latte::report::{Row, Series, SeriesComponent, Summary};
use rand::Rng;
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

/// `hist` as a report row carries it: V2 deflate, base64.
pub fn encode(hist: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(hist, &mut bytes)
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Blocks of time a synthetic report's series holds per component.
pub const BLOCKS: usize = 40;

/// A series for `rows`: each row's values dealt at random (seeded by the row's name
/// and count) into [`BLOCKS`] blocks, as independent values of a steady run would
/// fall into its blocks of time.
pub fn series(rows: &[Row]) -> Series {
    let components = rows
        .iter()
        .map(|row| {
            let Some(text) = &row.histogram else {
                return SeriesComponent {
                    component: row.component.clone(),
                    blocks: vec![None; BLOCKS],
                };
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .unwrap();
            let hist: Histogram<u64> = Deserializer::new()
                .deserialize(&mut bytes.as_slice())
                .unwrap();
            let seed = row.component.bytes().fold(hist.len(), |h, b| {
                h.wrapping_mul(31).wrapping_add(u64::from(b))
            });
            let mut rng = StdRng::seed_from_u64(seed);
            let mut blocks = vec![Histogram::<u64>::new(3).unwrap(); BLOCKS];
            for v in hist.iter_recorded() {
                for _ in 0..v.count_at_value() {
                    blocks[rng.random_range(0..BLOCKS)]
                        .record(v.value_iterated_to())
                        .unwrap();
                }
            }
            SeriesComponent {
                component: row.component.clone(),
                blocks: blocks
                    .iter()
                    .map(|b| (!b.is_empty()).then(|| encode(b)))
                    .collect(),
            }
        })
        .collect();
    Series {
        block_ms: Series::BLOCK_MS,
        blocks: BLOCKS,
        components,
    }
}

/// A row carrying the histogram and the statistics the table shows, its quantiles
/// read from the histogram as latte reads them.
pub fn row(name: &str, hist: &Histogram<u64>) -> Row {
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
        histogram: Some(encode(hist)),
        ..Row::default()
    };
    let dist = row.distribution(&bare(vec![row.clone()])).unwrap();
    let s = &mut row.stats;
    let q = |q: f64| dist.quantile(q);
    (s.median, s.p90, s.p99, s.p999, s.p9999) = (q(0.5), q(0.9), q(0.99), q(0.999), q(0.9999));
    row
}

/// A report in cycles on the TSC with these rows and their [`series`].
pub fn report(rows: Vec<Row>) -> Report {
    Report {
        series: Some(series(&rows)),
        ..bare(rows)
    }
}

/// A report in cycles on the TSC with these rows and no series.
pub fn bare(rows: Vec<Row>) -> Report {
    Report {
        figures: latte::report::Figures::All,
        ticks_per_ns: 2.5,
        frequency_accuracy: 1e-6,
        all_threads: rows,
        ..Report::default()
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
