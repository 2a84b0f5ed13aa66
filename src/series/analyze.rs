//! The run's time structure for a report ([`Series`]): each block of the series log
//! turned into the data of the report's rows, as a row's values are (the
//! kind's overhead taken off each bucket's middle when calibrated, the kinds merged),
//! each a distribution as a row's. Made from a snapshot of the blocks after the
//! ledger's lock is released: the drain's folds must not wait for it.

use super::Blocks;
use crate::analyze::dist::{self, Runs};
use crate::analyze::{Calibration, overhead};
use crate::report::Distribution;
use crate::report::histogram::bucketed;
use crate::report::{Data, Row, Series, SeriesComponent};
use std::collections::HashMap;

/// The blocks of the whole run's series log for the components of `rows` (the
/// all-threads rows, in their order), in the report's `data`; `None` when there are
/// no rows.
pub(super) fn series(
    blocks: &Blocks,
    rows: &[Row],
    calibration: &Calibration,
    data: Data,
) -> Option<Series> {
    if rows.is_empty() {
        return None;
    }
    let names = crate::record::id::names();
    let at: HashMap<&str, usize> = (rows.iter().enumerate())
        .map(|(i, r)| (r.component.as_str(), i))
        .collect();
    let Blocks { block_ms, blocks } = blocks;
    let mut components: Vec<SeriesComponent> = rows
        .iter()
        .map(|r| SeriesComponent {
            component: r.component.clone(),
            blocks: Vec::with_capacity(blocks.len()),
        })
        .collect();
    let mut values: Vec<Runs> = vec![Runs::new(); rows.len()];
    for block in blocks {
        for e in &block.entries {
            let row = names.get(e.index as usize).and_then(|name| at.get(name));
            let Some(&i) = row else {
                continue;
            };
            // Bucket middles, as a row's runs (not pulled inside extremes a block
            // does not know), less the kind's overhead.
            let raw = bucketed(&e.buckets(), 0, u64::MAX);
            let runs = dist::shifted(raw, overhead(e.kind, calibration, data));
            values[i] = dist::merge(&values[i], &runs);
        }
        for (c, runs) in components.iter_mut().zip(&mut values) {
            c.blocks.push(Distribution::of_sorted(runs));
            runs.clear();
        }
    }
    Some(Series {
        block_ms: *block_ms,
        blocks: blocks.len(),
        components,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{Context, assemble};
    use crate::clock::Mode;
    use crate::collect::{ComponentTotals, Sample, SampleKind, ThreadTotals, Totals};
    use crate::record::Id;
    use crate::report::{Cleaning, ReportOptions, Unit};
    use crate::series::{SeriesLog, add};
    use std::time::Duration;

    /// Overheads that differ per kind: a scope's `10 + 10 * start + stop` ticks, a
    /// pulse's 20; 2 ticks per ns.
    fn calibration() -> Calibration {
        let mut scope = [[0; 3]; 3];
        for (s, row) in scope.iter_mut().enumerate() {
            for (t, ticks) in row.iter_mut().enumerate() {
                *ticks = 10 + 10 * s as u64 + t as u64;
            }
        }
        Calibration {
            ticks_per_ns: 2.0,
            accuracy: 0.0,
            resolution: 1,
            scope,
            pulse: 20,
            inside: [[0.0; 3]; 3],
            took: Duration::ZERO,
        }
    }

    /// Two threads recording ids `a` and `b` in samples of four kinds, folded at 0,
    /// 60, 130, 131 and 400 ms: the whole run's totals and series. `value` gives the
    /// `i`-th value of a fold from a seeded draw.
    fn run(ids: [&'static Id; 2], value: fn(u64) -> u64) -> (Totals, SeriesLog) {
        let kinds = [
            SampleKind::Scope {
                start: Mode::Fast,
                stop: Mode::Mid,
            },
            SampleKind::Scope {
                start: Mode::Hard,
                stop: Mode::Hard,
            },
            SampleKind::Pulse,
            SampleKind::Recorded,
        ];
        let (mut totals, mut series) = (Totals::default(), SeriesLog::default());
        let mut x = 11u64;
        for at in [0, 60, 130, 131, 400] {
            series.begin_fold(at);
            for serial in 1..=2 {
                let t = totals
                    .threads
                    .entry(serial)
                    .or_insert_with(|| ThreadTotals {
                        components: (ids.iter())
                            .map(|id| ComponentTotals::new(id.index(), id.name()))
                            .collect(),
                        ..ThreadTotals::new(format!("t{serial}"), false)
                    });
                for c in &mut t.components {
                    for _ in 0..300 {
                        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        let kind = kinds[(x >> 61) as usize % kinds.len()];
                        let sample = Sample::new(value(x >> 20), kind, false).unwrap();
                        c.record(sample);
                        c.seen += 1;
                        series.record(c.index, kind, &[sample.ticks()]);
                    }
                }
            }
        }
        (totals, series)
    }

    /// Each block's buckets of `component` in `report`, merged: (low, high, value,
    /// count), ascending.
    fn merged(c: &SeriesComponent) -> Vec<(f64, f64, f64, u64)> {
        let mut all: Vec<(f64, f64, f64, u64)> = Vec::new();
        for block in &c.blocks {
            for b in block.buckets() {
                match all.iter_mut().find(|m| m.0 == b.low) {
                    Some(m) => m.3 += b.count,
                    None => all.push((b.low, b.high, b.value, b.count)),
                }
            }
        }
        all.sort_by(|a, b| a.0.total_cmp(&b.0));
        all
    }

    /// The blocks of each row, merged, are the row's values: the same buckets, the
    /// same counts, the same quantiles.
    fn assert_blocks_add_up(totals: &Totals, series: &SeriesLog, data: Data, unit: Unit) {
        let options = ReportOptions {
            data,
            unit,
            cleaning: Cleaning::OFF,
            ..ReportOptions::default()
        };
        let mut report = assemble(totals, &calibration(), &options, Context::default());
        add(&mut report, &series.blocks(), &calibration(), data);
        let series = report.series.as_ref().unwrap();
        assert_eq!((series.blocks, series.block_ms), (9, 50));
        assert_eq!(series.components.len(), report.all_threads.len());
        for (row, c) in report.all_threads.iter().zip(&series.components) {
            assert_eq!(row.component, c.component);
            let blocks = &c.blocks;
            let filled: Vec<usize> = (0..blocks.len())
                .filter(|&k| !blocks[k].is_empty())
                .collect();
            // Folds at 0, 60, 130 and 131, 400 ms: blocks 0, 1, 2, 8.
            assert_eq!(filled, [0, 1, 2, 8]);
            assert_eq!(
                blocks.iter().map(|d| d.len()).sum::<u64>(),
                row.stats.samples
            );
            let whole = &row.distribution;
            let want: Vec<_> = (whole.buckets())
                .map(|b| (b.low, b.high, b.value, b.count))
                .collect();
            let got = merged(c);
            let differ = got.iter().zip(&want).position(|(a, b)| a != b);
            assert!(
                got == want,
                "{data:?}: {} buckets merged, {} in the row, first difference at {differ:?}",
                got.len(),
                want.len()
            );
            // Quantiles read from the merged buckets, by the report's rule.
            let n = row.stats.samples;
            for (q, field) in [
                (0.5, row.stats.median),
                (0.99, row.stats.p99),
                (0.9999, row.stats.p9999),
            ] {
                let r = crate::report::rank(q, n);
                let mut below = 0;
                let at = got.iter().find(|b| {
                    below += b.3;
                    below >= r
                });
                assert_eq!(at.map(|b| b.2), Some(field), "q {q}, {data:?}");
            }
        }
    }

    #[test]
    fn the_blocks_of_a_row_add_up_to_the_row() {
        let ids = [
            Id::intern("series_unit_a").unwrap(),
            Id::intern("series_unit_b").unwrap(),
        ];
        // Values below 2,048 ticks, before and after the overheads: exact buckets, so
        // calibrated data adds up exactly too.
        let (totals, series) = run(ids, |x| 40 + x % 2_000);
        assert_blocks_add_up(&totals, &series, Data::Calibrated, Unit::Time);
        assert_blocks_add_up(&totals, &series, Data::Raw, Unit::Cycles);
        // Any values, in buckets up to 1/1,024 wide: raw data adds up exactly.
        let (totals, series) = run(ids, |x| x % (1 << (x % 40)));
        assert_blocks_add_up(&totals, &series, Data::Raw, Unit::Time);
    }
}
