//! Drawing a dump's timeline: the SVG of a [`View`], its lanes, bars, labels, hover
//! texts and time axis.

use super::{Bar, Mark, View, WIDTH, end, layout, trigger};
use crate::diff::render::value;
use crate::html::icicle::{colour, label};
use crate::html::plot::axis::tick_label;
use html_escape::encode_safe as safe;
use latte::flight::trace::{Span, Trace};
use latte::report::numbers::count as count_text;
use std::fmt::Write;

/// Height of one depth's row, in pixels.
pub const ROW: f64 = 18.0;
/// Height of a lane's name line above its rows, in pixels.
const HEAD: f64 = 18.0;
/// Height of the time axis above the lanes, in pixels.
const AXIS: f64 = 26.0;
/// Labels' font size, in pixels.
const FONT: f64 = 12.0;
/// The fill of merged scopes without a name (their most frequent name's colour, paler,
/// otherwise).
const MERGED: &str = "#b9b9b9";
/// The triggering scope's outline and the band behind its stretch.
const TRIGGER: &str = "#c8102e";

/// A signed time from the axis's zero: `-2 ms`, `0`, `+500 us`.
pub(super) fn offset(trace: &Trace, view: View, tick: u64) -> String {
    let d = trace.nanos(tick as f64 - view.zero as f64);
    match d {
        _ if d.abs() < 0.5 => "0".into(),
        _ if d < 0.0 => format!("-{}", tick_label(-d, "ns")),
        _ => format!("+{}", tick_label(d, "ns")),
    }
}

/// Axis ticks of `view`, in ticks of the trace: multiples of a 1-2-5 step in
/// nanoseconds from the zero, about 10 across.
pub fn ticks(trace: &Trace, view: View) -> Vec<u64> {
    let per_ns = trace.nanos(1.0).recip();
    let span = trace.nanos((view.to - view.from) as f64).max(1.0);
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
                value(trace.nanos(*busy as f64), "ns"),
                value(
                    trace.nanos(bar.width / WIDTH * (view.to - view.from) as f64),
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
/// what sets it apart (the trigger's reason, open, begun before the dump).
fn scope_title(trace: &Trace, view: View, s: &Span) -> String {
    let stop = end(trace, s);
    let mut title = format!(
        "{}\n{} at depth {}, from {} to {}",
        s.name,
        value(trace.nanos((stop - s.start) as f64), "ns"),
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
        title.push_str("\nstill open when the dump was taken (drawn to its end)");
    }
    if s.start < trace.covers.0 {
        title.push_str("\nbegan before the dump's first tick");
    }
    title
}
