//! The page around the plots: each dump's timelines first, then the legend of
//! reports, each report's call tree (an icicle chart, when it has one), one section
//! per component (its plot and its marked quantiles), each report's ENVIRONMENT block
//! beside them. One file with inline SVG and CSS: nothing is fetched.

use super::icicle;
use super::plot::{self, MARKED, Series};
use super::timeline;
use crate::diff::render::{unit_name, value};
use crate::load::{Dump, Loaded};
use html_escape::encode_text as text;
use latte::flight::trace::Trace;
use latte::report::Distribution as Dist;
use std::fmt::Write;

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222}\
.layout{display:grid;grid-template-columns:minmax(0,1fr) 360px;gap:24px;align-items:start}\
aside{position:sticky;top:12px;font-size:13px}\
aside section{border:1px solid #ccc;border-radius:6px;padding:8px 12px;margin-bottom:12px}\
figure{margin:0}figure svg{max-width:100%;height:auto}table{border-collapse:collapse;font-size:13px}\
td,th{padding:2px 8px;text-align:right}td:first-child,th:first-child{text-align:left}\
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px}\
.warning{color:#a33}.tree svg{width:100%;height:auto;display:block}\
.tree rect:hover{stroke:#222;stroke-width:1.5}\
.tree figure{margin:12px 0 20px}.tree figcaption{font-weight:bold;margin-bottom:4px}\
.dump{max-width:1100px}.dump figure{margin:12px 0 24px}.dump figcaption{font-weight:bold;margin-bottom:4px}\
.timeline svg{width:100%;height:auto;display:block}.timeline rect:hover{stroke:#222;stroke-width:1.5}.key{font-size:13px;color:#444}";

/// One component: its name and, per report that has it, (report index, distribution).
pub type Component = (String, Vec<(usize, Dist)>);

/// The whole page: the dumps' timelines, then the reports' call trees and
/// distributions.
pub fn page(dumps: &[Dump], reports: &[Loaded], components: &[Component]) -> String {
    let title = match (dumps.is_empty(), reports.is_empty()) {
        (false, true) => "latte: flight-recorder timeline",
        (false, false) => "latte: timelines and latency distributions",
        _ => "latte: latency distributions",
    };
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{title}</title><style>{STYLE}</style></head><body>"
    );
    html.push_str(&timelines(dumps));
    if reports.is_empty() {
        html.push_str("</body></html>\n");
        return html;
    }
    let unit = unit_name(reports[0].report.unit);
    let _ = write!(
        html,
        "<h1>Latency distributions</h1><p>{} component(s) from {} report(s), values in {unit}. \
         Each picture shows the share of samples per log-spaced bin with p50, p99 and p99.9 \
         marked, and under it the percentile spectrum: the latency at each percentile, the \
         tail spread over the right half. The latency axes run from the lowest p0.1 to the \
         highest p99.99 of the reports drawn; samples beyond them are marked at the axis's \
         end and counted in the table.</p><div class=\"layout\"><main>",
        components.len(),
        reports.len()
    );
    html.push_str(&legend(reports));
    html.push_str(&trees(reports, unit));
    for (name, dists) in components {
        let series: Vec<Series<'_>> = dists.iter().map(|(i, d)| (*i, d)).collect();
        let range = plot::x_range(&series);
        let svg = plot::svg(&series, range, unit);
        let _ = write!(
            html,
            "<section class=\"component\"><h2>{}</h2><figure class=\"plot\" data-component=\"{}\">{svg}\
             <figcaption>{}</figcaption></figure></section>",
            text(name),
            html_escape::encode_double_quoted_attribute(name),
            quantiles(reports, dists, range, unit)
        );
    }
    html.push_str("</main><aside>");
    for (i, loaded) in reports.iter().enumerate() {
        html.push_str(&environment(i, loaded));
    }
    html.push_str("</aside></div></body></html>\n");
    html
}

/// Each dump's timelines: the whole dump, then the stretch around its trigger.
fn timelines(dumps: &[Dump]) -> String {
    let mut html = String::new();
    for dump in dumps {
        let trace = &dump.trace;
        let scopes: usize = trace.lanes.iter().map(|l| l.spans.len()).sum();
        let first = trace.nanos(trace.covers.0.saturating_sub(trace.origin) as f64);
        let length = trace.nanos(trace.covers.1.saturating_sub(trace.covers.0) as f64);
        let what = match &trace.trigger {
            Some(t) => format!(
                "Triggered by <b>{}</b> on thread {}: {}.",
                text(&t.component),
                text(&thread_name(trace, t.tid)),
                text(&t.reason)
            ),
            None => "Taken on demand (no trigger).".into(),
        };
        let _ = write!(
            html,
            "<section class=\"dump\" data-file=\"{file}\"><h1>Timeline: {name}</h1><p>{what} \
             The dump covers {length} from {first} after the agent started: {scopes} scope(s) \
             on {threads} thread(s).</p><p class=\"key\">One lane per thread, its scopes stacked by \
             depth under its name; times are from the trigger's start. The trigger is outlined in \
             red, its stretch shaded across every lane; a dashed scope was still open when the \
             dump was taken; a pale bar is a run of scopes too short to draw apart, labelled \
             with how many (hover over any bar for its times). Alignment across threads is as good as the counters' \
             synchronisation across cores.</p>",
            file = html_escape::encode_double_quoted_attribute(&dump.path.display().to_string()),
            name = text(&dump.path.display().to_string()),
            length = value(length, "ns"),
            first = value(first, "ns"),
            threads = trace.lanes.len(),
            scopes = latte::report::numbers::count(scopes as u64),
        );
        if scopes == 0 {
            html.push_str("<p class=\"warning\">No scope was recorded in this dump.</p>");
        }
        let _ = write!(
            html,
            "<figure class=\"timeline\" data-view=\"whole\"><figcaption>The whole dump</figcaption>{}</figure>",
            timeline::svg(trace, timeline::whole(trace))
        );
        if let Some(view) = timeline::around_trigger(trace) {
            let _ = write!(
                html,
                "<figure class=\"timeline\" data-view=\"trigger\"><figcaption>Around the trigger: \
                 its scope, and half its length on either side within the dump</figcaption>{}</figure>",
                timeline::svg(trace, view)
            );
        }
        html.push_str("</section>");
    }
    html
}

/// The name of thread `tid` in `trace`.
fn thread_name(trace: &Trace, tid: u64) -> String {
    trace
        .lanes
        .iter()
        .find(|l| l.tid == tid)
        .map_or_else(|| format!("{tid}"), |l| l.thread.clone())
}

fn swatch(i: usize) -> String {
    format!(
        "<span class=\"swatch\" style=\"background:{}\"></span>",
        plot::colour(i)
    )
}

fn legend(reports: &[Loaded]) -> String {
    let mut html = String::from(
        "<table class=\"legend\"><tr><th>report</th><th>clock</th><th>label</th></tr>",
    );
    for (i, loaded) in reports.iter().enumerate() {
        let _ = write!(
            html,
            "<tr><td>{}{}</td><td>{}</td><td>{}</td></tr>",
            swatch(i),
            text(&loaded.name()),
            text(&loaded.report.clock),
            text(loaded.report.label.as_deref().unwrap_or("whole run"))
        );
    }
    html + "</table>"
}

/// Each report's all-threads call tree as an icicle chart, under one heading and one
/// key; nothing when no report has a tree (or a scope with time in it).
fn trees(reports: &[Loaded], unit: &str) -> String {
    let mut charts = String::new();
    for (i, loaded) in reports.iter().enumerate() {
        let report = &loaded.report;
        let Some(svg) = icicle::svg(&report.tree, unit) else {
            continue;
        };
        let left_out = match report.tree_left_out {
            0 => String::new(),
            n => format!(" ({n} smaller node(s) left out by the report)"),
        };
        let _ = write!(
            charts,
            "<figure class=\"icicle\" data-report=\"{}\"><figcaption>{}{}{left_out}</figcaption>\
             {svg}</figure>",
            html_escape::encode_double_quoted_attribute(&loaded.name()),
            swatch(i),
            text(&loaded.name()),
        );
    }
    if charts.is_empty() {
        return charts;
    }
    format!(
        "<section class=\"tree\"><h2>Call tree</h2><p>One chart per report with a tree, all \
         threads merged by path. Each row is one depth; a rectangle's width is its share of the \
         top row's time (the label's percentage, below the top row), the scopes it called lie \
         under it, left to right; at the right end under it, striped, latte's own Starts and \
         Stops of those scopes (latte inside), and plain grey what the tree cannot place (not \
         attributed); the empty part between is its self time. Hover over a rectangle for its \
         path, total, self time, latte inside, calls and shares. Pulses and values are not \
         drawn.</p>{charts}</section>"
    )
}

/// The marked quantiles, the sample count of each report and how many lie beyond the
/// latency axes' `range`, under the plot.
fn quantiles(reports: &[Loaded], dists: &[(usize, Dist)], range: (f64, f64), unit: &str) -> String {
    let mut html = String::from("<table class=\"quantiles\"><tr><th>report</th><th>samples</th>");
    for (_, label) in MARKED {
        let _ = write!(html, "<th>{label}</th>");
    }
    html.push_str("<th>below the axis</th><th>above the axis</th></tr>");
    for (i, dist) in dists {
        let _ = write!(
            html,
            "<tr><td>{}{}</td><td>{}</td>",
            swatch(*i),
            text(&reports[*i].name()),
            dist.len()
        );
        for (q, _) in MARKED {
            let v = dist.quantile(q);
            // A log axis has no 0: such a marker sits at the axis's left end.
            let note = if v > 0.0 {
                ""
            } else {
                " (left end of the axis)"
            };
            let _ = write!(html, "<td>{}{note}</td>", value(v, unit));
        }
        let (below, above) = plot::beyond(dist, range);
        let _ = write!(html, "<td>{below}</td><td>{above}</td></tr>");
    }
    html + "</table>"
}

/// One report's ENVIRONMENT block.
fn environment(i: usize, loaded: &Loaded) -> String {
    let r = &loaded.report;
    let mut rows: Vec<(&str, String)> = vec![
        ("clock", r.clock.clone()),
        (
            "frequency",
            format!(
                "{:.4} ticks/ns (±{:.1} ppm)",
                r.ticks_per_ns,
                r.frequency_accuracy * 1e6
            ),
        ),
        ("resolution", value(r.resolution, unit_name(r.unit))),
        ("data", format!("{:?}", r.data)),
    ];
    let mut warnings = Vec::new();
    if let Some(env) = &r.environment {
        let known = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        let yes_no = |v: Option<bool>| {
            v.map_or("unknown", |b| if b { "yes" } else { "no" })
                .to_string()
        };
        rows.extend([
            ("cpu", known(&env.cpu_model)),
            ("clock choice", env.clock_reason.clone()),
            ("invariant TSC", yes_no(env.invariant_tsc)),
            ("hypervisor", yes_no(env.hypervisor)),
            ("clocksource", known(&env.clocksource_now)),
            ("governor", known(&env.governor)),
            ("isolated CPUs", known(&env.isolated_cpus)),
        ]);
        warnings.clone_from(&env.warnings);
    }
    let mut html = format!(
        "<section class=\"environment\"><h3>{}ENVIRONMENT: {}</h3><table>",
        swatch(i),
        text(&loaded.name())
    );
    for (key, v) in rows {
        let _ = write!(html, "<tr><td>{key}</td><td>{}</td></tr>", text(&v));
    }
    html.push_str("</table>");
    for w in warnings {
        let _ = write!(html, "<p class=\"warning\">{}</p>", text(&w));
    }
    html + "</section>"
}
