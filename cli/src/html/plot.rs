//! One component's distribution drawn by plotters' SVG backend: a histogram (share of
//! the samples per log-spaced bin) above a CDF, both on a log latency axis, each
//! report in its colour, its p50, p99 and p99.9 marked by vertical lines.

use crate::diff::render::value;
use latte::report::Distribution as Dist;
use plotters::prelude::*;

/// Width and height of one component's picture, in pixels.
pub const SIZE: (u32, u32) = (900, 560);
/// Log-spaced bins of the histogram.
const BINS: usize = 120;
/// The quantiles marked, with their labels.
pub const MARKED: [(f64, &str); 3] = [(0.5, "p50"), (0.99, "p99"), (0.999, "p99.9")];
/// Report colours (Okabe and Ito's palette, told apart with colour-blindness too).
pub const COLOURS: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
];

/// The colour of report number `i`.
pub fn colour(i: usize) -> RGBColor {
    COLOURS[i % COLOURS.len()]
}

/// The colour as CSS (`#0072b2`).
pub fn css(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// One report's distribution of the component: (index of the report, its values).
pub type Series<'a> = (usize, &'a Dist);

/// The SVG of one component: `unit` names the axis (`ns`, `cycles`).
pub fn svg(series: &[Series<'_>], unit: &str) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (top, bottom) = root.split_vertically(SIZE.1 / 2);
        let range = x_range(series);
        histogram(&top, series, range, unit).map_err(|e| e.to_string())?;
        cdf(&bottom, series, range, unit).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// The x range covering every series: from its lowest bucket (at least one tick, for
/// the log axis) to the end of its highest, with a margin.
fn x_range(series: &[Series<'_>]) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for (_, dist) in series {
        let buckets: Vec<_> = dist.buckets().collect();
        if let (Some(first), Some(last)) = (buckets.first(), buckets.last()) {
            lo = lo.min(first.low.max(dist.per_tick()));
            hi = hi.max(last.high);
        }
    }
    if !lo.is_finite() || hi <= lo {
        return (1.0, 10.0);
    }
    // At least a factor of 8, so the axis has labels to read values by.
    let widen = (8.0 / (hi / lo)).max(1.0).sqrt() * 1.25;
    (lo / widen, hi * widen)
}

/// Labels at powers of 10 over 3 decades or more, else at powers of 2.
fn log_base((lo, hi): (f64, f64)) -> f64 {
    if hi / lo >= 1_000.0 { 10.0 } else { 2.0 }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn histogram(
    area: &Area<'_>,
    series: &[Series<'_>],
    (lo, hi): (f64, f64),
    unit: &str,
) -> DrawResult {
    let edges: Vec<f64> = (0..=BINS)
        .map(|i| lo * (hi / lo).powf(i as f64 / BINS as f64))
        .collect();
    let shares: Vec<Vec<f64>> = series.iter().map(|(_, d)| bin_shares(d, &edges)).collect();
    let top = shares
        .iter()
        .flatten()
        .fold(0.0f64, |a, &b| a.max(b))
        .max(1e-3)
        * 1.15;
    let mut chart = chart(area, "share of samples per bin", (lo, hi), top, unit)?;
    for ((i, _), share) in series.iter().zip(&shares) {
        let steps = share
            .iter()
            .enumerate()
            .flat_map(|(b, &s)| [(edges[b], s), (edges[b + 1], s)]);
        chart.draw_series(LineSeries::new(steps, colour(*i).stroke_width(2)))?;
    }
    markers(&mut chart, series, top)
}

fn cdf(area: &Area<'_>, series: &[Series<'_>], (lo, hi): (f64, f64), unit: &str) -> DrawResult {
    let mut chart = chart(area, "cumulative share (CDF)", (lo, hi), 1.05, unit)?;
    for (i, dist) in series {
        let n = dist.len().max(1) as f64;
        let mut below = 0u64;
        let mut points = vec![(lo, 0.0)];
        for b in dist.buckets() {
            points.push((b.low.max(lo), below as f64 / n));
            below += b.count;
            points.push((b.high.min(hi), below as f64 / n));
        }
        chart.draw_series(LineSeries::new(points, colour(*i).stroke_width(2)))?;
    }
    markers(&mut chart, series, 1.05)
}

type DrawResult =
    Result<(), DrawingAreaErrorKind<<SVGBackend<'static> as DrawingBackend>::ErrorType>>;
type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<LogCoord<f64>, plotters::coord::types::RangedCoordf64>,
>;

/// A chart with a log latency axis over `lo..hi` and a share axis up to `top`, its
/// mesh and labels drawn.
fn chart<'a, 'b>(
    area: &'a Area<'b>,
    caption: &str,
    (lo, hi): (f64, f64),
    top: f64,
    unit: &str,
) -> Result<Chart<'a, 'b>, DrawingAreaErrorKind<std::io::Error>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d((lo..hi).log_scale().base(log_base((lo, hi))), 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc(format!("latency ({unit}, log scale)"))
        .x_labels(12)
        .x_label_formatter(&|v| value(*v, unit))
        .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
        .draw()?;
    Ok(chart)
}

/// A vertical line per report and marked quantile, labelled at its top.
fn markers(chart: &mut Chart<'_, '_>, series: &[Series<'_>], top: f64) -> DrawResult {
    for (i, dist) in series.iter().filter(|(_, d)| !d.is_empty()) {
        let style = ShapeStyle::from(colour(*i)).stroke_width(1);
        for (q, label) in MARKED {
            let v = dist.quantile(q);
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(v, 0.0), (v, top)],
                style,
            )))?;
            let text = Text::new(
                label,
                (v, top * (0.97 - 0.05 * *i as f64)),
                ("sans-serif", 11).into_font().color(&colour(*i)),
            );
            chart.draw_series(std::iter::once(text))?;
        }
    }
    Ok(())
}

/// The share of `dist`'s samples in each bin between consecutive `edges`.
fn bin_shares(dist: &Dist, edges: &[f64]) -> Vec<f64> {
    let mut shares = vec![0.0; edges.len() - 1];
    let n = dist.len().max(1) as f64;
    for b in dist.buckets() {
        let mid = (b.low * b.high).sqrt();
        let bin = edges
            .partition_point(|&e| e <= mid)
            .saturating_sub(1)
            .min(shares.len() - 1);
        shares[bin] += b.count as f64 / n;
    }
    shares
}
