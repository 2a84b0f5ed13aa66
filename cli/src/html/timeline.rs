//! A flight-recorder dump as SVG timelines: one lane per thread, its scopes stacked
//! by depth under its name, every lane on the one time axis of the dump; drawn for
//! the whole dump and again for the stretch around the scope that triggered it.
//!
//! Hand-written SVG, as the icicle chart ([`super::icicle`]): rectangles, labels
//! clipped to them, a `<title>` on each (the browser shows it on hover) and a linear
//! time axis; plotters draws charts of series on axes and has no timeline.
//!
//! A dump holds thousands of scopes, most of them far narrower than a pixel over
//! the whole dump. Neighbours at one depth of one lane that are each narrower than
//! [`FINE`] pixels and closer than [`GAP`] are drawn as one paler bar in the colour of
//! their most frequent name, labelled with how many it holds (`1,204 x on_order`) and saying on hover how
//! much of its stretch they fill; the triggering scope is always drawn by itself.

mod draw;

pub use draw::svg;
use latte::flight::trace::{Span, Trace};
use std::collections::BTreeMap;

/// Width of a timeline's coordinate system, in pixels (the page scales it to fit).
pub const WIDTH: f64 = 1_000.0;
/// Scopes narrower than this, in pixels, merge with their neighbours at their depth.
pub const FINE: f64 = 1.0;
/// ... when the gap between them is narrower than this, in pixels: a run of scopes a
/// few pixels apart reads as one busy stretch, not as a barcode.
pub const GAP: f64 = 3.0;

/// What a bar stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum Mark {
    /// One scope: its index in its lane's spans.
    Scope(usize),
    /// Neighbouring scopes too narrow to draw apart: how many, the time they fill, and
    /// the most frequent names with their counts.
    Merged {
        /// Scopes in the bar.
        count: usize,
        /// Their summed durations inside the view, in ticks.
        busy: u64,
        /// Up to three names, most frequent first, with their counts.
        names: Vec<(String, usize)>,
    },
}

/// One rectangle of a timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The lane (thread) it lies in: an index into the trace's lanes.
    pub lane: usize,
    /// Its row in the lane.
    pub depth: u32,
    /// Left edge, in pixels from the chart's left.
    pub x: f64,
    /// Width, in pixels.
    pub width: f64,
    /// What it stands for.
    pub mark: Mark,
    /// The triggering scope.
    pub trigger: bool,
}

/// A stretch of the dump's ticks, first and last, and the tick its axis calls 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// First tick shown.
    pub from: u64,
    /// Last tick shown.
    pub to: u64,
    /// The axis's zero: the trigger's start, else the dump's.
    pub zero: u64,
}

impl View {
    /// Where `tick` lies on a chart `width` wide (clamped to it).
    pub(super) fn x(&self, tick: u64, width: f64) -> f64 {
        let span = self.to.saturating_sub(self.from).max(1) as f64;
        (tick.clamp(self.from, self.to) - self.from) as f64 / span * width
    }
}

/// The lane and index of the scope that triggered the dump, if it is in it.
pub fn trigger(trace: &Trace) -> Option<(usize, usize)> {
    let t = trace.trigger.as_ref()?;
    trace.lanes.iter().enumerate().find_map(|(l, lane)| {
        let i = lane
            .spans
            .iter()
            .position(|s| lane.tid == t.tid && s.name == t.component && s.end == Some(t.at))?;
        Some((l, i))
    })
}

/// Where a scope ends on the axis: its end, or the dump's last tick when it is open.
pub(super) fn end(trace: &Trace, span: &Span) -> u64 {
    span.end.unwrap_or(trace.covers.1)
}

/// The whole dump, zero at the trigger's start (the dump's start without one).
pub fn whole(trace: &Trace) -> View {
    let zero = trigger(trace).map_or(trace.covers.0, |(l, i)| trace.lanes[l].spans[i].start);
    View {
        from: trace.covers.0,
        to: trace.covers.1.max(trace.covers.0 + 1),
        zero,
    }
}

/// The stretch around the triggering scope: half its length on each side, within the
/// dump, so it fills half the width; `None` without a trigger, or when that stretch
/// is most of the dump anyway.
pub fn around_trigger(trace: &Trace) -> Option<View> {
    let (l, i) = trigger(trace)?;
    let span = &trace.lanes[l].spans[i];
    let (start, stop) = (span.start, end(trace, span));
    let pad = (stop - start).div_ceil(2).max(1);
    let view = View {
        from: start.saturating_sub(pad).max(trace.covers.0),
        to: (stop + pad).min(trace.covers.1),
        zero: start,
    };
    let whole = trace.covers.1.saturating_sub(trace.covers.0);
    (view.to.saturating_sub(view.from) * 10 < whole * 8).then_some(view)
}

/// A run of merged scopes being gathered at one depth.
struct Run {
    first: usize,
    x: f64,
    right: f64,
    busy: u64,
    names: BTreeMap<String, usize>,
    count: usize,
}

/// The bars of `view` on a chart `width` wide: every scope that overlaps it, cut to
/// it; neighbours narrower than [`FINE`] at one depth, less than [`GAP`] apart, merged
/// into one bar.
pub fn layout(trace: &Trace, view: View, width: f64) -> Vec<Bar> {
    let hit = trigger(trace);
    let mut bars = Vec::new();
    for (l, lane) in trace.lanes.iter().enumerate() {
        let mut order: Vec<usize> = (0..lane.spans.len())
            .filter(|&i| {
                let s = &lane.spans[i];
                s.start <= view.to && end(trace, s) >= view.from
            })
            .collect();
        order.sort_by_key(|&i| (lane.spans[i].depth, lane.spans[i].start));
        let mut run: Option<Run> = None;
        let mut depth = None;
        for i in order {
            let s = &lane.spans[i];
            if depth != Some(s.depth) {
                flush(&mut bars, run.take(), l, depth.unwrap_or(0));
                depth = Some(s.depth);
            }
            let (x, right) = (view.x(s.start, width), view.x(end(trace, s), width));
            let is_trigger = hit == Some((l, i));
            if is_trigger || right - x >= FINE {
                flush(&mut bars, run.take(), l, s.depth);
                bars.push(Bar {
                    lane: l,
                    depth: s.depth,
                    x,
                    width: (right - x).max(if is_trigger { 2.0 } else { FINE }),
                    mark: Mark::Scope(i),
                    trigger: is_trigger,
                });
                continue;
            }
            let inside = end(trace, s).min(view.to) - s.start.max(view.from);
            match &mut run {
                Some(r) if x <= r.right + GAP => {
                    r.right = r.right.max(right);
                    r.busy += inside;
                    r.count += 1;
                    *r.names.entry(s.name.clone()).or_default() += 1;
                }
                _ => {
                    flush(&mut bars, run.take(), l, s.depth);
                    run = Some(Run {
                        first: i,
                        x,
                        right,
                        busy: inside,
                        names: BTreeMap::from([(s.name.clone(), 1)]),
                        count: 1,
                    });
                }
            }
        }
        flush(&mut bars, run, l, depth.unwrap_or(0));
    }
    bars
}

/// Ends a run of narrow scopes: one scope drawn a pixel wide, or a merged bar.
fn flush(bars: &mut Vec<Bar>, run: Option<Run>, lane: usize, depth: u32) {
    let Some(r) = run else { return };
    let mark = if r.count == 1 {
        Mark::Scope(r.first)
    } else {
        let mut names: Vec<(String, usize)> = r.names.into_iter().collect();
        names.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        names.truncate(3);
        Mark::Merged {
            count: r.count,
            busy: r.busy,
            names,
        }
    };
    bars.push(Bar {
        lane,
        depth,
        x: r.x,
        width: (r.right - r.x).max(FINE),
        mark,
        trigger: false,
    });
}

#[cfg(test)]
mod tests;
