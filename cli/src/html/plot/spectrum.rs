//! The lower panel: HdrHistogram's percentile spectrum. The latency (y, log) at each
//! quantile `q` against `1/(1-q)` on a log x axis, so each tick to the right is a tenth
//! of the rest (50%, 90%, 99%, 99.9%, 99.99%) and the tail gets as much room as the
//! body; each report's marked quantiles are dots on its line.

use super::axis::{self, LogScale};
use super::svg::{Anchor, Svg, n};
use super::{LEFT, MARKED, RIGHT, SPAN, Series, TITLE, colour};
use std::fmt::Write;

/// Height of the plot area.
const PLOT: f64 = 210.0;
/// Points per line, evenly spaced in `log(1/(1-q))` from q = 0 to [`SPAN`]'s end.
const POINTS: usize = 96;
/// The labelled percentiles: `1/(1-q)` and the label.
pub const PERCENTILES: [(f64, &str); 5] = [
    (2.0, "50%"),
    (10.0, "90%"),
    (100.0, "99%"),
    (1e3, "99.9%"),
    (1e4, "99.99%"),
];

/// Draws the panel from `top` down over the latency range `range`; returns where it
/// ends.
pub fn draw(svg: &mut Svg, series: &[Series<'_>], range: (f64, f64), unit: &str, top: f64) -> f64 {
    let plot_top = top + 28.0;
    let bottom = plot_top + PLOT;
    let last = 1.0 / (1.0 - SPAN.1);
    let x = LogScale {
        lo: 1.0,
        hi: last * 1.25,
        from: LEFT,
        to: RIGHT,
    };
    let y = LogScale {
        lo: range.0,
        hi: range.1,
        from: bottom,
        to: plot_top,
    };
    let (ticks, grid) = axis::latency_ticks(&y, 20.0, unit);
    let xs: Vec<f64> = PERCENTILES.iter().map(|&(p, _)| x.at(p)).collect();
    svg.grid(&xs, &grid, (LEFT, plot_top, RIGHT, bottom));
    for (i, dist) in series.iter().filter(|(_, d)| !d.is_empty()) {
        let mut d = String::new();
        for k in 0..=POINTS {
            let at = last.powf(k as f64 / POINTS as f64);
            let v = dist.quantile(1.0 - 1.0 / at);
            let cmd = if k == 0 { 'M' } else { 'L' };
            let _ = write!(d, "{cmd}{},{}", n(x.at(at)), n(y.at(v)));
        }
        svg.path("spectrum", &d, &colour(*i), " stroke-width=\"1.6\"");
        for (q, _) in MARKED {
            let (cx, cy) = (n(x.at(1.0 / (1.0 - q))), n(y.at(dist.quantile(q))));
            svg.raw(&format!(
                "<circle class=\"qdot\" cx=\"{cx}\" cy=\"{cy}\" r=\"3\" fill=\"{}\"/>",
                colour(*i)
            ));
        }
    }
    let title = format!(
        "{} at each percentile: the percentile spectrum, as HdrHistogram plots it",
        axis::axis_title(unit)
    );
    svg.text_with("ytitle", (LEFT, top + 16.0), Anchor::Start, TITLE, &title);
    let ys: Vec<_> = ticks
        .into_iter()
        .map(|(py, l)| ((LEFT - 6.0, py + 4.0), l))
        .collect();
    svg.texts("ytick", &ys, Anchor::End);
    let ps: Vec<_> = (PERCENTILES.iter().zip(&xs))
        .map(|(&(_, label), &px)| ((px, bottom + 16.0), label.to_string()))
        .collect();
    svg.texts("ptick", &ps, Anchor::Middle);
    let title = "percentile (log scale of 1/(1 \u{2212} q): each tick a tenth of the rest)";
    svg.text(
        "ptitle",
        ((LEFT + RIGHT) / 2.0, bottom + 33.0),
        Anchor::Middle,
        title,
    );
    bottom + 40.0
}
