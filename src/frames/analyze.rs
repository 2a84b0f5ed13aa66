//! A thread's folded frames to its [`PerFrame`]: per-frame distributions with the
//! frames without a call as zeros, the frames over budget, and for the longest, the
//! components that exceeded their own median by the most.

use super::fold::{FrameTotals, KeptFrame};
use crate::analyze::Calibration;
use crate::analyze::dist::{self, Runs};
use crate::collect::{ComponentTotals, Tally, ThreadTotals};
use crate::report::{Culprit, FrameComponent, PerFrame, ReportOptions, Spread, Unit, WorstFrame};
use std::collections::HashSet;

/// Components named per worst frame.
const CULPRITS: usize = 3;

/// The least excess a culprit has, as a share of the frame's length: below it, the
/// excess is noise, not what ate the frame.
const CULPRIT_SHARE: f64 = 0.01;

/// A frame budget: in ticks, and as the report shows it (in its unit).
#[derive(Clone, Copy, Debug)]
pub(super) struct Budget {
    pub(super) ticks: u64,
    pub(super) shown: f64,
}

impl Budget {
    /// `options`' budget, if any and if the counter's frequency is known (a mock
    /// counter's is not): in ticks, and shown as given (in nanoseconds), or in ticks
    /// for a report in cycles.
    pub(super) fn of(options: &ReportOptions, calibration: &Calibration) -> Option<Budget> {
        let per_ns = calibration.ticks_per_ns;
        let budget = options
            .frame_budget
            .filter(|_| per_ns.is_finite() && per_ns > 0.0)?;
        let ticks = (budget.as_nanos() as f64 * per_ns).round() as u64;
        let shown = match options.unit {
            Unit::Time => budget.as_nanos() as f64,
            Unit::Cycles => ticks as f64,
        };
        Some(Budget { ticks, shown })
    }
}

/// The thread's per-frame figures in the report's unit (`scale` per tick); `None` for
/// a thread that marked no frame.
pub(super) fn per_frame(
    thread: &ThreadTotals,
    scale: f64,
    budget: Option<Budget>,
) -> Option<PerFrame> {
    let shown = budget.map(|b| b.shown);
    let budget = budget.map(|b| b.ticks);
    let t = thread.parts.get::<FrameTotals>()?;
    let frames = t.frames();
    if frames == 0 {
        return None;
    }
    let length = runs(&t.length, 0);
    let kept = t.longest_first();
    // With every frame kept whole, the count over budget is exact; else the lengths'
    // histogram says it, within a bucket.
    let over_budget = budget.map(|b| {
        if kept.len() as u64 == frames {
            kept.iter().filter(|f| f.length > b).count() as u64
        } else {
            length
                .iter()
                .filter(|(v, _)| *v > b)
                .map(|(_, k)| k)
                .sum::<u64>()
        }
    });
    let listed: Vec<&KeptFrame> = match budget {
        Some(b) => kept.into_iter().filter(|f| f.length > b).collect(),
        None => kept.into_iter().take(PerFrame::WORST).collect(),
    };
    let unlisted = over_budget.map_or(0, |n| n.saturating_sub(listed.len() as u64));
    let (components, medians) = components(t, frames, scale);
    let inside = nesting(&thread.components);
    let worst = listed
        .into_iter()
        .map(|f| WorstFrame {
            number: f.number,
            length: f.length as f64 * scale,
            outside_scopes: f.length.saturating_sub(f.timed) as f64 * scale,
            culprits: culprits(f, &medians, &inside, scale),
        })
        .collect();
    Some(PerFrame {
        frames,
        length: spread(&length, &t.length, frames, scale),
        budget: shown,
        over_budget,
        components,
        worst,
        unlisted,
    })
}

/// Each id's per-frame figures, the largest median time first, and each id's median
/// time per frame in ticks.
fn components(
    t: &FrameTotals,
    frames: u64,
    scale: f64,
) -> (Vec<FrameComponent>, Vec<(&'static str, u64)>) {
    let mut medians: Vec<(&'static str, u64)> = Vec::with_capacity(t.ids.len());
    let mut components: Vec<FrameComponent> = t
        .ids
        .iter()
        .map(|id| {
            let with = id.ticks.exact.count;
            let zeros = frames.saturating_sub(with);
            let time = runs(&id.ticks, zeros);
            medians.push((id.name, dist::quantile(&time, 0.5)));
            FrameComponent {
                component: id.name.to_owned(),
                frames_with_calls: with,
                time: spread(&time, &id.ticks, frames, scale),
                calls: spread(&runs(&id.calls, zeros), &id.calls, frames, 1.0),
                allocs: (id.allocs.exact.count > 0)
                    .then(|| spread(&runs(&id.allocs, zeros), &id.allocs, frames, 1.0)),
            }
        })
        .collect();
    components.sort_by(|a, b| {
        b.time
            .p50
            .total_cmp(&a.time.p50)
            .then(b.time.mean.total_cmp(&a.time.mean))
    });
    (components, medians)
}

/// The components of `frame` above their median time per frame by at least
/// [`CULPRIT_SHARE`] of its length, most above first;
/// a component is left out when one that ran inside it (`inside` holds (outer,
/// inner) pairs) accounts for at least half its excess: it names the same time.
fn culprits(
    frame: &KeptFrame,
    medians: &[(&'static str, u64)],
    inside: &HashSet<(&'static str, &'static str)>,
    scale: f64,
) -> Vec<Culprit> {
    let mut above: Vec<(&'static str, u64, u64)> = frame
        .ids
        .iter()
        .filter_map(|id| {
            let median = medians
                .iter()
                .find(|(n, _)| *n == id.name)
                .map_or(0, |m| m.1);
            (id.ticks > median).then_some((id.name, id.ticks, median))
        })
        .collect();
    above.sort_by_key(|&(_, ticks, median)| std::cmp::Reverse(ticks - median));
    let named = |&(outer, ticks, median): &(&'static str, u64, u64)| {
        let excess = ticks - median;
        !above.iter().any(|&(inner, t, m)| {
            inside.contains(&(outer, inner)) && (t - m).saturating_mul(2) >= excess
        })
    };
    let least = (frame.length as f64 * CULPRIT_SHARE) as u64;
    above
        .iter()
        .filter(|&&(_, ticks, median)| ticks - median >= least.max(1))
        .filter(|c| named(c))
        .take(CULPRITS)
        .map(|&(name, ticks, median)| Culprit {
            component: name.to_owned(),
            time: ticks as f64 * scale,
            median: median as f64 * scale,
            excess: (ticks - median) as f64 * scale,
        })
        .collect()
}

/// Which ids ran inside which on the thread: (outer, inner) for every node and each
/// of its ancestors of another id.
fn nesting(components: &[ComponentTotals]) -> HashSet<(&'static str, &'static str)> {
    let mut pairs = HashSet::new();
    for c in components {
        let mut at = c.parent;
        while let Some(p) = at {
            let outer = &components[p as usize];
            if outer.name != c.name {
                pairs.insert((outer.name, c.name));
            }
            at = outer.parent;
        }
    }
    pairs
}

/// A tally's values as runs, with `zeros` more values of 0 before them.
fn runs(tally: &Tally, zeros: u64) -> Runs {
    let mut runs = dist::bucketed(&tally.buckets(), tally.exact.min, tally.exact.max);
    if zeros > 0 {
        match runs.first_mut() {
            Some((0, k)) => *k += zeros,
            _ => runs.insert(0, (0, zeros)),
        }
    }
    runs
}

/// The spread of `runs` (of `frames` values, whose nonzero ones `tally` sums exactly),
/// times `scale`.
fn spread(runs: &Runs, tally: &Tally, frames: u64, scale: f64) -> Spread {
    let q = |q: f64| dist::quantile(runs, q) as f64 * scale;
    Spread {
        p50: q(0.5),
        p99: q(0.99),
        max: tally.exact.max as f64 * scale,
        mean: tally.exact.sum as f64 / frames.max(1) as f64 * scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::marks::{FrameRecord, NodeFrame};

    /// frame > a > b on one thread, positions 0, 1, 2.
    fn thread() -> ThreadTotals {
        let mut components = vec![
            ComponentTotals::new(1, "frame"),
            ComponentTotals::new(2, "a"),
            ComponentTotals::new(3, "b"),
        ];
        components[1].parent = Some(0);
        components[2].parent = Some(1);
        ThreadTotals {
            components,
            ..ThreadTotals::new("t".to_owned(), false)
        }
    }

    /// A frame of `length` ticks in which frame, a and b took 100, 50 and 10 ticks,
    /// a `slow` more.
    fn frame(number: u64, length: u64, slow: u64) -> FrameRecord {
        let node = |position, own| NodeFrame {
            position,
            calls: 1,
            own,
            allocs: 0,
        };
        FrameRecord {
            number,
            length,
            end: number * length,
            nodes: vec![node(0, 50), node(1, 40 + slow), node(2, 10)],
        }
    }

    #[test]
    fn frames_over_budget_are_counted_and_named_by_what_ate_them() {
        let mut t = thread();
        for k in 1..=6 {
            let (length, slow) = match k {
                4 => (1_400, 400),
                // At the budget exactly: not over it.
                6 => (1_200, 0),
                _ => (1_000, 0),
            };
            (t.parts.get_or_default::<FrameTotals>())
                .add_frame(&frame(k, length, slow), &t.components);
        }
        let budget = |ticks: u64, scale: f64| {
            Some(Budget {
                ticks,
                shown: ticks as f64 * scale,
            })
        };
        let f = per_frame(&t, 1.0, budget(1_200, 1.0)).unwrap();
        assert_eq!(
            (f.frames, f.budget, f.over_budget),
            (6, Some(1_200.0), Some(1))
        );
        assert_eq!(f.worst.len(), 1);
        let w = &f.worst[0];
        assert_eq!((w.number, w.length, w.outside_scopes), (4, 1_400.0, 900.0));
        let named: Vec<(&str, f64)> = w
            .culprits
            .iter()
            .map(|c| (c.component.as_str(), c.excess))
            .collect();
        // a took 400 more than its median; the frame scope is the same time.
        assert_eq!(named, [("a", 400.0)]);
        // In the report's unit: every figure scaled.
        let f = per_frame(&t, 0.5, budget(1_200, 0.5)).unwrap();
        assert_eq!((f.budget, f.worst[0].length), (Some(600.0), 700.0));
        assert_eq!(f.worst[0].culprits[0].excess, 200.0);
        // No frames: no figures.
        assert_eq!(per_frame(&thread(), 1.0, budget(1, 1.0)), None);
    }

    #[test]
    fn every_frame_over_budget_is_listed_up_to_the_kept_ones_and_the_rest_counted() {
        // 40 frames, the even ones over a budget of 1,000 ticks (1,001 + k).
        let fill = |limit: usize| {
            let mut t = thread();
            for k in 1..=40u64 {
                let length = if k % 2 == 0 { 1_001 + k } else { 900 };
                let f = frame(k, length, 0);
                (t.parts.get_or_default::<FrameTotals>()).add_frame_within(
                    &f,
                    &t.components,
                    limit,
                );
            }
            let budget = Some(Budget {
                ticks: 1_000,
                shown: 1_000.0,
            });
            per_frame(&t, 1.0, budget).unwrap()
        };
        // Every frame kept: all 20 over budget listed, longest first, none beyond.
        let f = fill(1_000);
        assert_eq!(
            (f.over_budget, f.worst.len(), f.unlisted),
            (Some(20), 20, 0)
        );
        let numbers: Vec<u64> = f.worst.iter().map(|w| w.number).collect();
        assert_eq!(numbers, (1..=20).rev().map(|k| 2 * k).collect::<Vec<u64>>());
        // 12 kept whole: the 12 longest listed, the other 8 counted.
        let f = fill(12);
        assert_eq!(
            (f.over_budget, f.worst.len(), f.unlisted),
            (Some(20), 12, 8)
        );
        assert_eq!((f.worst[0].number, f.worst[11].number), (40, 18));
        // None kept: counted only.
        let f = fill(0);
        assert_eq!(
            (f.over_budget, f.worst.len(), f.unlisted),
            (Some(20), 0, 20)
        );
    }
}
