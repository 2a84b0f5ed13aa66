//! A flight-recorder capture as SVG timelines: one lane per thread, its scopes stacked
//! by depth under its name, every lane on the one time axis of the capture; drawn for
//! the whole capture and again for the stretch around the scope that triggered it.
//!
//! Hand-written SVG, as the icicle chart ([`super::icicle`]): rectangles, labels
//! clipped to them, a `<title>` on each (the browser shows it on hover) and a linear
//! time axis; plotters draws charts of series on axes and has no timeline.
//!
//! A capture holds thousands of scopes, most of them far narrower than a pixel over
//! the whole capture. Neighbours at one depth of one lane that are each narrower than
//! [`FINE`] pixels and closer than [`GAP`] are drawn as one paler bar in the colour of their most frequent
//! name, labelled with how many it holds (`1,204 x on_order`) and saying on hover how
//! much of its stretch they fill; the triggering scope is always drawn by itself.

use super::icicle::{colour, label};
use super::plot::axis::tick_label;
use crate::diff::render::value;
use html_escape::encode_safe as safe;
use latte::report::numbers::count as count_text;
use latte::report::trace::{Span, Trace};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Width of a timeline's coordinate system, in pixels (the page scales it to fit).
pub const WIDTH: f64 = 1_000.0;
/// Height of one depth's row, in pixels.
pub const ROW: f64 = 18.0;
/// Height of a lane's name line above its rows, in pixels.
const HEAD: f64 = 18.0;
/// Height of the time axis above the lanes, in pixels.
const AXIS: f64 = 26.0;
/// Labels' font size, in pixels.
const FONT: f64 = 12.0;
/// Scopes narrower than this, in pixels, merge with their neighbours at their depth.
pub const FINE: f64 = 1.0;
/// ... when the gap between them is narrower than this, in pixels: a run of scopes a
/// few pixels apart reads as one busy stretch, not as a barcode.
pub const GAP: f64 = 3.0;
/// The fill of merged scopes without a name (their most frequent name's colour, paler,
/// otherwise).
const MERGED: &str = "#b9b9b9";
/// The triggering scope's outline and the band behind its stretch.
const TRIGGER: &str = "#c8102e";

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

/// A stretch of the capture's ticks, first and last, and the tick its axis calls 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// First tick shown.
    pub from: u64,
    /// Last tick shown.
    pub to: u64,
    /// The axis's zero: the trigger's start, else the capture's.
    pub zero: u64,
}

impl View {
    fn x(&self, tick: u64, width: f64) -> f64 {
        let span = self.to.saturating_sub(self.from).max(1) as f64;
        (tick.clamp(self.from, self.to) - self.from) as f64 / span * width
    }
}

/// The lane and index of the scope that triggered the capture, if it is in it.
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

/// Where a scope ends on the axis: its end, or the capture's last tick when it is open.
fn end(trace: &Trace, span: &Span) -> u64 {
    span.end.unwrap_or(trace.covers.1)
}

/// The whole capture, zero at the trigger's start (the capture's start without one).
pub fn whole(trace: &Trace) -> View {
    let zero = trigger(trace).map_or(trace.covers.0, |(l, i)| trace.lanes[l].spans[i].start);
    View {
        from: trace.covers.0,
        to: trace.covers.1.max(trace.covers.0 + 1),
        zero,
    }
}

/// The stretch around the triggering scope: half its length on each side, within the
/// capture, so it fills half the width; `None` without a trigger, or when that stretch
/// is most of the capture anyway.
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

/// Nanoseconds in `ticks` of `trace`.
fn ns(trace: &Trace, ticks: f64) -> f64 {
    let per_ns = if trace.ticks_per_ns > 0.0 && trace.ticks_per_ns.is_finite() {
        trace.ticks_per_ns
    } else {
        1.0
    };
    ticks / per_ns
}

/// A signed time from the axis's zero: `-2 ms`, `0`, `+500 us`.
fn offset(trace: &Trace, view: View, tick: u64) -> String {
    let d = ns(trace, tick as f64 - view.zero as f64);
    match d {
        _ if d.abs() < 0.5 => "0".into(),
        _ if d < 0.0 => format!("-{}", tick_label(-d, "ns")),
        _ => format!("+{}", tick_label(d, "ns")),
    }
}

/// Axis ticks of `view`, in ticks of the trace: multiples of a 1-2-5 step in
/// nanoseconds from the zero, about 10 across.
pub fn ticks(trace: &Trace, view: View) -> Vec<u64> {
    let per_ns = ns(trace, 1.0).recip();
    let span = ns(trace, (view.to - view.from) as f64).max(1.0);
    let rough = span / 10.0;
    let decade = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|s| *s >= rough)
        .unwrap_or(10.0 * decade);
    let zero = view.zero as f64;
    let first = ((view.from as f64 - zero) / per_ns / step).ceil() as i64;
    let last = ((view.to as f64 - zero) / per_ns / step).floor() as i64;
    (first..=last)
        .map(|k| (zero + k as f64 * step * per_ns).round().max(0.0) as u64)
        .collect()
}

/// The rows each lane takes: its deepest scope's depth plus one, at least one.
fn rows(trace: &Trace) -> Vec<u32> {
    trace
        .lanes
        .iter()
        .map(|lane| lane.spans.iter().map(|s| s.depth + 1).max().unwrap_or(1))
        .collect()
}

/// The timeline of `view` as an `<svg>` element.
pub fn svg(trace: &Trace, view: View) -> String {
    let rows = rows(trace);
    let tops: Vec<f64> = rows
        .iter()
        .scan(AXIS, |top, r| {
            let at = *top;
            *top += HEAD + f64::from(*r) * ROW + 6.0;
            Some(at)
        })
        .collect();
    let height =
        tops.last().map_or(AXIS, |t| t + HEAD) + f64::from(*rows.last().unwrap_or(&0)) * ROW;
    let mut svg = format!(
        "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"{WIDTH}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"{FONT}\">"
    );
    // The trigger's stretch behind every lane: what the other threads did meanwhile.
    if let Some((l, i)) = trigger(trace) {
        let s = &trace.lanes[l].spans[i];
        let (x, right) = (view.x(s.start, WIDTH), view.x(end(trace, s), WIDTH));
        let _ = write!(
            svg,
            "<rect class=\"trigger-band\" x=\"{x:.2}\" y=\"{AXIS}\" width=\"{w:.2}\" height=\"{h:.1}\" \
             fill=\"{TRIGGER}\" fill-opacity=\"0.08\"/>",
            w = (right - x).max(1.0),
            h = height - AXIS,
        );
    }
    axis(&mut svg, trace, view, height);
    let bars = layout(trace, view, WIDTH);
    for (l, lane) in trace.lanes.iter().enumerate() {
        let _ = write!(
            svg,
            "<g class=\"lane\" data-thread=\"{name}\" data-tid=\"{tid}\">\
             <text class=\"lane-name\" x=\"2\" y=\"{y:.1}\" font-weight=\"bold\">{name}</text>",
            name = safe(&lane.thread),
            tid = lane.tid,
            y = tops[l] + HEAD - 5.0,
        );
        for bar in bars.iter().filter(|b| b.lane == l) {
            draw(&mut svg, trace, view, bar, tops[l] + HEAD);
        }
        svg.push_str("</g>");
    }
    svg.push_str("</svg>");
    svg
}

/// The time axis: a grid line and a label per tick, across every lane.
fn axis(svg: &mut String, trace: &Trace, view: View, height: f64) {
    svg.push_str("<g class=\"axis\">");
    for tick in ticks(trace, view) {
        let x = view.x(tick, WIDTH);
        let anchor = match x {
            _ if x < 30.0 => "start",
            _ if x > WIDTH - 30.0 => "end",
            _ => "middle",
        };
        let _ = write!(
            svg,
            "<line x1=\"{x:.2}\" y1=\"{y1}\" x2=\"{x:.2}\" y2=\"{height:.1}\" stroke=\"#ddd\"/>\
             <text class=\"tick\" x=\"{x:.2}\" y=\"{ty}\" text-anchor=\"{anchor}\" fill=\"#444\">{}</text>",
            safe(&offset(trace, view, tick)),
            y1 = AXIS - 6.0,
            ty = AXIS - 10.0,
        );
    }
    svg.push_str("</g>");
}

/// A bar's class, fill, name (`data-name`) and hover text.
fn looks(trace: &Trace, view: View, bar: &Bar) -> (&'static str, String, String, String) {
    match &bar.mark {
        Mark::Scope(i) => {
            let s = &trace.lanes[bar.lane].spans[*i];
            let class = match (bar.trigger, s.end.is_none()) {
                (true, _) => "scope trigger",
                (false, true) => "scope open",
                (false, false) => "scope",
            };
            (
                class,
                colour(&s.name),
                s.name.clone(),
                scope_title(trace, view, s),
            )
        }
        Mark::Merged { count, busy, names } => {
            let listed: Vec<String> = names.iter().map(|(n, k)| format!("{n} x{k}")).collect();
            let title = format!(
                "{} scopes too short to draw apart, {} of the {} they span: {}",
                count_text(*count as u64),
                value(ns(trace, *busy as f64), "ns"),
                value(
                    ns(trace, bar.width / WIDTH * (view.to - view.from) as f64),
                    "ns"
                ),
                listed.join(", ")
            );
            let fill = names.first().map_or(MERGED.to_string(), |(n, _)| colour(n));
            ("merged", fill, String::new(), title)
        }
    }
}

/// One bar, its label clipped to it, its hover text.
fn draw(svg: &mut String, trace: &Trace, view: View, bar: &Bar, top: f64) {
    let y = top + f64::from(bar.depth) * ROW;
    let (x, w, h) = (bar.x, bar.width, ROW - 2.0);
    let (class, fill, name, title) = looks(trace, view, bar);
    let stroke = match class {
        "scope trigger" => format!("stroke=\"{TRIGGER}\" stroke-width=\"2.5\""),
        "scope open" => "stroke=\"#333\" stroke-dasharray=\"3 2\"".to_string(),
        "merged" => "stroke=\"none\" fill-opacity=\"0.45\"".to_string(),
        _ => "stroke=\"none\"".to_string(),
    };
    let _ = write!(
        svg,
        "<g><rect class=\"{class}\" x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{h}\" \
         fill=\"{fill}\" {stroke} data-name=\"{data}\" data-depth=\"{depth}\"><title>{title}</title></rect>",
        data = safe(&name),
        depth = bar.depth,
        title = safe(&title),
    );
    let text = match &bar.mark {
        Mark::Scope(_) => label(&name, None, w),
        // A count cut short says nothing: whole, or no label.
        Mark::Merged { count, names, .. } => names.first().and_then(|(n, _)| {
            let whole = format!("{} x {n}", count_text(*count as u64));
            label(&whole, None, w).filter(|l| *l == whole)
        }),
    };
    if let Some(text) = text {
        let _ = write!(
            svg,
            "<svg x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{h}\" pointer-events=\"none\">\
             <text x=\"3\" y=\"{baseline}\" fill=\"#111\">{}</text></svg>",
            safe(&text),
            baseline = h - 4.0,
        );
    }
    svg.push_str("</g>");
}

/// A scope's hover text: its name, length and depth, where it lies on the axis, and
/// what sets it apart (the trigger's reason, open, begun before the capture).
fn scope_title(trace: &Trace, view: View, s: &Span) -> String {
    let stop = end(trace, s);
    let mut title = format!(
        "{}\n{} at depth {}, from {} to {}",
        s.name,
        value(ns(trace, (stop - s.start) as f64), "ns"),
        s.depth,
        offset(trace, view, s.start),
        offset(trace, view, stop),
    );
    if let Some(t) = &trace.trigger
        && trigger(trace).is_some_and(|(l, i)| std::ptr::eq(&trace.lanes[l].spans[i], s))
    {
        let _ = write!(title, "\nthe trigger: {}", t.reason);
    }
    if s.end.is_none() {
        title.push_str("\nstill open when the capture was taken (drawn to its end)");
    }
    if s.start < trace.covers.0 {
        title.push_str("\nbegan before the capture's first tick");
    }
    title
}

#[cfg(test)]
mod tests;
