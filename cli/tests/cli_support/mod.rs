//! Synthetic reports for the command-line tool's tests: log-normal latencies with a
//! known median and spread, written as latte JSON reports.

use latte::Report;
use latte::report::{Distribution, Row, Series, SeriesComponent};
use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution as _, LogNormal};
use std::path::{Path, PathBuf};

/// One component of a synthetic report: name, median (ticks), sigma, samples.
#[derive(Clone, Copy)]
pub struct Component {
    pub name: &'static str,
    pub median: f64,
    pub sigma: f64,
    pub samples: usize,
}

/// Ascending `(value, count)` runs of counter ticks.
pub type Values = Vec<(u64, u64)>;

/// `n` values drawn from a log-normal, rounded to whole ticks (at least 1).
pub fn histogram(c: &Component, seed: u64) -> Values {
    let mut rng = StdRng::seed_from_u64(seed);
    let dist = LogNormal::new(c.median.ln(), c.sigma).unwrap();
    let mut drawn: Vec<u64> = (0..c.samples)
        .map(|_| dist.sample(&mut rng).round().max(1.0) as u64)
        .collect();
    drawn.sort_unstable();
    let mut values = Values::new();
    for v in drawn {
        match values.last_mut() {
            Some(last) if last.0 == v => last.1 += 1,
            _ => values.push((v, 1)),
        }
    }
    values
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
            let seed = row.component.bytes().fold(row.distribution.len(), |h, b| {
                h.wrapping_mul(31).wrapping_add(u64::from(b))
            });
            let mut rng = StdRng::seed_from_u64(seed);
            let mut blocks = vec![Values::new(); BLOCKS];
            for bucket in row.distribution.buckets() {
                for _ in 0..bucket.count {
                    blocks[rng.random_range(0..BLOCKS)].push((bucket.value as u64, 1));
                }
            }
            SeriesComponent {
                component: row.component.clone(),
                blocks: blocks.iter().map(|b| Distribution::from_ticks(b)).collect(),
            }
        })
        .collect();
    Series {
        block_ms: Series::BLOCK_MS,
        blocks: BLOCKS,
        components,
    }
}

/// A row of `values` as latte makes one ([`Row::with_ticks`]).
pub fn row(name: &str, values: &[(u64, u64)]) -> Row {
    Row::with_ticks(name, values)
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
