//! The upper panel: the share of each report's samples per log-spaced bin, its marked
//! quantiles as dashed lines labelled above the plot in rows that never overlap, and a
//! triangle at an end of the axis for samples beyond it (drawn in the bin at that end).

use super::axis::{self, LogScale};
use super::svg::{Anchor, Svg, n, width};
use super::{LEFT, MARKED, RIGHT, Series, TITLE, beyond, colour};
use std::fmt::Write;

/// Log-spaced bins between the axis's ends.
const BINS: usize = 100;
/// Height of the plot area.
const PLOT: f64 = 170.0;
/// Height of a row of quantile labels.
const ROW: f64 = 14.0;
/// The quantile labels' font size.
const LABEL_SIZE: f64 = 11.0;
/// Least room between two labels in a row.
const GAP: f64 = 5.0;

/// Draws the panel from `top` down; returns where it ends.
pub fn draw(svg: &mut Svg, series: &[Series<'_>], range: (f64, f64), unit: &str, top: f64) -> f64 {
    let (labels, rows) = quantile_labels(series, range);
    let plot_top = top + 34.0 + ROW * rows as f64;
    let bottom = plot_top + PLOT;
    let x = LogScale {
        lo: range.0,
        hi: range.1,
        from: LEFT,
        to: RIGHT,
    };
    let shares: Vec<Vec<f64>> = series.iter().map(|(_, d)| bin_shares(d, range)).collect();
    let most = shares.iter().flatten().fold(0.0f64, |a, &b| a.max(b));
    let share_ticks = axis::share_ticks((most * 1.05).min(1.0));
    let share_top = share_ticks.last().copied().unwrap_or(1.0);
    let y = |s: f64| bottom - PLOT * s / share_top;
    let (ticks, grid) = axis::latency_ticks(&x, 58.0, unit);
    let ys: Vec<f64> = share_ticks.iter().map(|&s| y(s)).collect();
    svg.grid(&grid, &ys, (LEFT, plot_top, RIGHT, bottom));
    for ((i, _), share) in series.iter().zip(&shares) {
        let width = " stroke-width=\"1.6\"";
        svg.path("hist", &steps(share, &x, y), &colour(*i), width);
    }
    let any_beyond = marks(svg, series, &x, (plot_top, bottom));
    for ((i, text), (row, mid)) in labels.0.iter().zip(labels.1) {
        let at = (mid, top + 34.0 + ROW * row as f64);
        let style = format!(" fill=\"{}\" font-size=\"{LABEL_SIZE}\"", colour(*i));
        svg.text_with("qlabel", at, Anchor::Middle, &style, text);
    }
    let mut title = String::from("share of samples per log-spaced bin");
    if any_beyond {
        title.push_str(
            " (\u{25c0} \u{25b6}: beyond the axis: in the end bins, counted in the table)",
        );
    }
    svg.text_with("title", (LEFT, top + 16.0), Anchor::Start, TITLE, &title);
    let xs: Vec<_> = ticks
        .into_iter()
        .map(|(px, l)| ((px, bottom + 16.0), l))
        .collect();
    svg.texts("xtick", &xs, Anchor::Middle);
    let shares: Vec<_> = (share_ticks.iter().zip(&ys))
        .map(|(&s, &py)| ((LEFT - 6.0, py + 4.0), axis::percent(s)))
        .collect();
    svg.texts("stick", &shares, Anchor::End);
    let at = ((LEFT + RIGHT) / 2.0, bottom + 33.0);
    svg.text("xtitle", at, Anchor::Middle, &axis::axis_title(unit));
    bottom + 40.0
}

/// Each report's marked quantiles as dashed lines from `top` to `bottom`, and its
/// samples beyond the axis as triangles at its ends; whether there were any beyond.
fn marks(svg: &mut Svg, series: &[Series<'_>], x: &LogScale, (top, bottom): (f64, f64)) -> bool {
    let mut any_beyond = false;
    for (k, (i, dist)) in series.iter().enumerate() {
        let counts = beyond(dist, (x.lo, x.hi));
        any_beyond |= edge_marks(svg, *i, counts, bottom - 7.0 - 11.0 * k as f64);
        for (q, _) in MARKED.iter().filter(|_| !dist.is_empty()) {
            let at = n(x.at(dist.quantile(*q)));
            let d = format!("M{at},{}V{}", n(top), n(bottom));
            svg.path("marker", &d, &colour(*i), " stroke-dasharray=\"4 3\"");
        }
    }
    any_beyond
}

/// Each report's marked quantiles as (report, label) and, in the same order, (row,
/// middle x) of their labels; and how many rows.
type Labels = (Vec<(usize, &'static str)>, Vec<(usize, f64)>);

fn quantile_labels(series: &[Series<'_>], (lo, hi): (f64, f64)) -> (Labels, usize) {
    let x = LogScale {
        lo,
        hi,
        from: LEFT,
        to: RIGHT,
    };
    let mut items: Vec<(f64, usize, &'static str)> = Vec::new();
    for (i, dist) in series.iter().filter(|(_, d)| !d.is_empty()) {
        for (q, label) in MARKED {
            items.push((x.at(dist.quantile(q)), *i, label));
        }
    }
    items.sort_by(|a, b| a.0.total_cmp(&b.0));
    let boxes: Vec<(f64, f64)> = items
        .iter()
        .map(|(at, _, label)| (*at, width(label, LABEL_SIZE)))
        .collect();
    let (placed, rows) = rows(&boxes, (LEFT, RIGHT));
    let names = items.iter().map(|&(_, i, label)| (i, label)).collect();
    ((names, placed), rows)
}

/// Rows for labels of (wanted middle, width), sorted by middle, kept inside `(l, r)`:
/// each goes in the first row where it clears the last label by [`GAP`]. Returns each
/// label's (row, middle) and the number of rows.
fn rows(boxes: &[(f64, f64)], (l, r): (f64, f64)) -> (Vec<(usize, f64)>, usize) {
    let mut ends: Vec<f64> = Vec::new();
    let placed = boxes
        .iter()
        .map(|&(mid, w)| {
            let mid = mid.clamp(l + w / 2.0, r - w / 2.0);
            let row = match ends.iter().position(|&end| end + GAP <= mid - w / 2.0) {
                Some(row) => row,
                None => {
                    ends.push(f64::NEG_INFINITY);
                    ends.len() - 1
                }
            };
            ends[row] = mid + w / 2.0;
            (row, mid)
        })
        .collect();
    (placed, ends.len())
}

/// A triangle at each end of the axis with samples beyond it, at height `y`, titled
/// with the count; whether there was one.
fn edge_marks(svg: &mut Svg, i: usize, (below, above): (u64, u64), y: f64) -> bool {
    for (count, tip, dx, side) in [(below, LEFT, 7.0, "below"), (above, RIGHT, -7.0, "above")] {
        if count > 0 {
            svg.raw(&format!(
                "<path class=\"beyond\" data-count=\"{count}\" d=\"M{},{}l{},-4.5v9Z\" \
                 fill=\"{}\"><title>{count} sample(s) {side} the axis</title></path>",
                n(tip),
                n(y),
                n(dx),
                colour(i)
            ));
        }
    }
    below + above > 0
}

/// The step line of `share` per bin: along the bottom, up and across each bin.
fn steps(share: &[f64], x: &LogScale, y: impl Fn(f64) -> f64) -> String {
    let edge = |b: usize| x.from + (x.to - x.from) * b as f64 / share.len() as f64;
    let mut d = format!("M{},{}", n(x.from), n(y(0.0)));
    let mut last = n(y(0.0));
    for (b, &s) in share.iter().enumerate() {
        let level = n(y(s));
        if level != last {
            let _ = write!(d, "V{level}");
            last = level;
        }
        let _ = write!(d, "H{}", n(edge(b + 1)));
    }
    d + &format!("V{}", n(y(0.0)))
}

/// The share of `dist`'s samples in each of [`BINS`] log-spaced bins over `range`,
/// by the value each bucket stands for. Values beyond the range (0 and the values
/// below one counter step among them: a log axis has no 0) go to the bin at that end,
/// where their triangle ([`edge_marks`]) points, so the bins hold every sample: the
/// tallest bar of a component mostly below the axis is as tall as the table's count
/// of those samples says.
fn bin_shares(dist: &latte::report::Distribution, (lo, hi): (f64, f64)) -> Vec<f64> {
    let mut shares = vec![0.0; BINS];
    let n = dist.len().max(1) as f64;
    for b in dist.buckets() {
        let at = if b.value > lo {
            ((b.value / lo).ln() / (hi / lo).ln() * BINS as f64) as usize
        } else {
            0
        };
        shares[at.min(BINS - 1)] += b.count as f64 / n;
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bins_hold_every_sample_those_beyond_the_axis_in_its_end_bins() {
        let dist =
            latte::report::Distribution::from_ticks(&[(0, 700), (1, 150), (2, 100), (50, 50)]);
        // 0 below the axis, 50 above it: in the first and the last bin.
        let shares = bin_shares(&dist, (0.5, 10.0));
        assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((shares[0] - 0.7).abs() < 1e-12, "{}", shares[0]);
        assert!(
            (shares[BINS - 1] - 0.05).abs() < 1e-12,
            "{}",
            shares[BINS - 1]
        );
        assert_eq!(beyond(&dist, (0.5, 10.0)), (700, 50));
    }

    #[test]
    fn close_labels_go_to_rows_and_never_overlap() {
        // Three labels 20 px wide at 100, 105, 110, one far at 300, one at the right end.
        let boxes = [
            (100.0, 20.0),
            (105.0, 20.0),
            (110.0, 20.0),
            (300.0, 20.0),
            (999.0, 20.0),
        ];
        let (placed, rows) = rows(&boxes, (0.0, 500.0));
        assert_eq!(rows, 3);
        assert_eq!(
            placed,
            [(0, 100.0), (1, 105.0), (2, 110.0), (0, 300.0), (0, 490.0)]
        );
        for (a, (ra, ma)) in placed.iter().enumerate() {
            for (rb, mb) in &placed[a + 1..] {
                assert!(ra != rb || (ma - mb).abs() >= 20.0 + GAP);
            }
        }
    }
}
