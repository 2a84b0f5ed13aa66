//! One component's distribution as hand-written SVG: a histogram (share of the samples
//! per log-spaced bin, each report's p50, p99 and p99.9 marked and labelled in rows
//! that never overlap) above HdrHistogram's percentile spectrum (latency against
//! `1/(1-q)`, both axes log). Both latency axes run over [`x_range`]: from the lowest
//! p0.1 to the highest p99.99 of the reports drawn; samples beyond (0, for one, which a
//! log axis cannot place) are drawn in the histogram's end bins, marked at the axis's
//! ends and counted ([`beyond`]).

pub mod axis;
mod histogram;
mod spectrum;
mod svg;

use latte::report::Distribution as Dist;

/// Width of one component's picture, in pixels: the page's main column at a window
/// 1,200 px wide, so the text is drawn at its size.
pub const WIDTH: f64 = 760.0;
/// The plot areas' left edge: room for the y labels (`500 us`, `100%`).
const LEFT: f64 = 70.0;
/// The plot areas' right edge: room for half the widest x label (`500 ms`, `99.99%`).
const RIGHT: f64 = WIDTH - 36.0;
/// The attributes of a panel's title.
const TITLE: &str = " font-size=\"13\"";
/// The quantiles marked, with their labels.
pub const MARKED: [(f64, &str); 3] = [(0.5, "p50"), (0.99, "p99"), (0.999, "p99.9")];
/// The quantiles the axes span: the lowest of the first, the highest of the second.
pub const SPAN: (f64, f64) = (0.001, 0.9999);
/// Report colours (Okabe and Ito's palette, told apart with colour-blindness too).
pub const COLOURS: [(u8, u8, u8); 7] = [
    (0x00, 0x72, 0xB2),
    (0xD5, 0x5E, 0x00),
    (0x00, 0x9E, 0x73),
    (0xCC, 0x79, 0xA7),
    (0xE6, 0x9F, 0x00),
    (0x56, 0xB4, 0xE9),
    (0x00, 0x00, 0x00),
];

/// The colour of report number `i`, as CSS (`#0072b2`).
pub fn colour(i: usize) -> String {
    let (r, g, b) = COLOURS[i % COLOURS.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// One report's distribution of the component: (index of the report, its values).
pub type Series<'a> = (usize, &'a Dist);

/// The SVG of one component over the latency range `range` ([`x_range`]); `unit`
/// names the report's unit (`ns`, `cycles`).
pub fn svg(series: &[Series<'_>], range: (f64, f64), unit: &str) -> String {
    let mut body = svg::Svg::new();
    let split = histogram::draw(&mut body, series, range, unit, 0.0);
    let height = spectrum::draw(&mut body, series, range, unit, split + 12.0);
    body.finish(WIDTH, height.ceil())
}

/// The latency range of the axes: from the lowest p0.1 to the highest p99.99 of the
/// series, given as (p0.1, p99.99) pairs; at least a factor of 10 wide (widened about
/// its middle), then 3% of its width added at each end so no line runs on the frame.
/// A p0.1 of 0 or less (calibrated values that are mostly 0) counts as `floor`.
pub fn range_of(spans: impl IntoIterator<Item = (f64, f64)>, floor: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for (low, high) in spans {
        lo = lo.min(if low > 0.0 { low } else { floor });
        hi = hi.max(high);
    }
    if !(lo.is_finite() && lo > 0.0) {
        return (1.0, 10.0);
    }
    hi = hi.max(lo);
    let widen = (10.0 / (hi / lo)).max(1.0).sqrt();
    let (lo, hi) = (lo / widen, hi * widen);
    let pad = (hi / lo).powf(0.03);
    (lo / pad, hi * pad)
}

/// [`range_of`] the series' p0.1 and p99.99.
pub fn x_range(series: &[Series<'_>]) -> (f64, f64) {
    let floor = series
        .iter()
        .flat_map(|(_, d)| d.buckets().find(|b| b.value > 0.0).map(|b| b.value))
        .fold(f64::INFINITY, f64::min);
    range_of(
        series
            .iter()
            .filter(|(_, d)| !d.is_empty())
            .map(|(_, d)| (d.quantile(SPAN.0), d.quantile(SPAN.1))),
        floor,
    )
}

/// How many of `dist`'s samples lie below and above `range` (by the value each bucket
/// stands for): drawn as a triangle at that end of the histogram's axis.
pub fn beyond(dist: &Dist, (lo, hi): (f64, f64)) -> (u64, u64) {
    dist.buckets().fold((0, 0), |(below, above), b| {
        (
            below + if b.value < lo { b.count } else { 0 },
            above + if b.value > hi { b.count } else { 0 },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_runs_from_the_lowest_p0_1_to_the_highest_p99_99() {
        let (lo, hi) = range_of([(100.0, 5_000.0), (150.0, 80_000.0)], 1.0);
        let pad = (80_000.0f64 / 100.0).powf(0.03);
        assert!((lo - 100.0 / pad).abs() < 1e-9 && (hi - 80_000.0 * pad).abs() < 1e-6);
        // A p99.99 far out in one report widens the axis for all: it is the highest.
        assert!(range_of([(100.0, 200.0), (100.0, 1e6)], 1.0).1 > 1e6);
    }

    #[test]
    fn a_narrow_range_is_widened_to_a_decade_and_zero_counts_as_the_floor() {
        let (lo, hi) = range_of([(400.0, 440.0)], 1.0);
        assert!(hi / lo >= 10.0 && lo < 400.0 && hi > 440.0);
        assert!((lo * hi - 400.0 * 440.0).abs() / (400.0 * 440.0) < 1e-9);
        let (lo, _) = range_of([(0.0, 1_000.0)], 10.0);
        assert!(lo < 10.0 && lo > 8.0);
        assert_eq!(range_of([], 1.0), (1.0, 10.0));
    }
}
