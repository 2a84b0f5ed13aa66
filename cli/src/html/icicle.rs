//! A report's all-threads call tree as an icicle chart: one row per depth, each node a
//! rectangle as wide as its share of the roots' time, its children laid left to right
//! inside its span by their `TOTAL`, so the part of its span with nothing under it is
//! its self time.
//!
//! Hand-written SVG (`write!` of rectangles and text): plotters draws charts on axes
//! and has no icicle, and the chart needs nothing but rectangles, clipped labels and a
//! `<title>` on each rectangle, which the browser shows on hover.
//!
//! Only scopes are drawn: a pulse's `TOTAL` is the time between pulses and a value's
//! is a sum of values, neither is time spent inside the node above them, so a pulse or
//! a value (and anything under it) has no rectangle.
//!
//! Under a node whose account says so, at the right end of its span, a grey striped
//! rectangle holds latte's own work inside it (`LATTE INSIDE`) and a plain grey one the
//! time the tree cannot place (`NOT ATTRIBUTED`): what is left between the children
//! and those is the node's self time.

use crate::diff::render::value;
use html_escape::encode_safe as safe;
use latte::report::{TreeNode, numbers};
use std::fmt::Write;

/// Width of the chart's coordinate system, in pixels (the page scales it to fit).
pub const WIDTH: f64 = 1_000.0;
/// Height of one depth's row, in pixels.
pub const ROW: f64 = 28.0;
/// The labels' font size, in pixels.
const FONT: f64 = 15.0;
/// Width of a label's character, in pixels, at [`FONT`] (an upper estimate for
/// sans-serif: a label is elided before it could run out of its box).
const CHAR: f64 = 8.6;
/// Space between a rectangle's left edge and its label, in pixels.
const PAD: f64 = 4.0;

/// One node's rectangle.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The node's index in the tree.
    pub node: usize,
    /// Left edge, in pixels from the chart's left.
    pub x: f64,
    /// Width, in pixels.
    pub width: f64,
    /// The node's depth: its row.
    pub depth: u32,
}

/// Whether a node has a rectangle: a scope (or timer, or span) with time.
fn drawn(node: &TreeNode) -> bool {
    node.row.kind.is_time_in() && node.row.stats.total > 0.0
}

/// The rectangles of `tree` (depth first, as a report lists it) on a chart `width`
/// wide: the roots side by side by their `TOTAL`, each node's children left to right
/// inside its span by theirs. Children whose totals add up to more than their
/// parent's (rounding, calibration taking overhead off the parent) share its span in
/// proportion, so nothing leaves it.
pub fn layout(tree: &[TreeNode], width: f64) -> Vec<Cell> {
    let mut under = vec![0.0; tree.len()];
    let mut roots = 0.0;
    for node in tree.iter().filter(|n| drawn(n)) {
        match node.parent {
            Some(p) => under[p] += node.row.stats.total,
            None => roots += node.row.stats.total,
        }
    }
    // Per node: its cell's index and where its next child starts.
    let mut placed: Vec<Option<(usize, f64)>> = vec![None; tree.len()];
    let mut cells = Vec::new();
    let mut next_root = 0.0;
    for (i, node) in tree.iter().enumerate() {
        if !drawn(node) {
            continue;
        }
        let total = node.row.stats.total;
        let (x, w) = match node.parent {
            None => (next_root, total / roots * width),
            Some(p) => {
                let Some((cell, next)) = placed[p] else {
                    continue;
                };
                let parent: &Cell = &cells[cell];
                let span = tree[p].row.stats.total.max(under[p]);
                (next, total / span * parent.width)
            }
        };
        match node.parent {
            None => next_root += w,
            Some(p) => {
                if let Some((_, next)) = &mut placed[p] {
                    *next += w;
                }
            }
        }
        placed[i] = Some((cells.len(), x));
        cells.push(Cell {
            node: i,
            x,
            width: w,
            depth: node.depth,
        });
    }
    cells
}

/// The chart of `tree` as an `<svg>` element, values in `unit`; `None` when it has
/// nothing to draw.
pub fn svg(tree: &[TreeNode], unit: &str) -> Option<String> {
    let cells = layout(tree, WIDTH);
    let rows = cells.iter().map(|c| c.depth + 1).max()?;
    let height = f64::from(rows) * ROW;
    let mut svg = format!(
        "<svg class=\"icicle\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"{WIDTH}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"{FONT}\">\
         <defs><pattern id=\"latte-inside\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ddd\"/>\
         <rect width=\"3\" height=\"6\" fill=\"#aaa\"/></pattern></defs>"
    );
    for cell in &cells {
        let node = &tree[cell.node];
        let (x, y, w) = (cell.x, f64::from(cell.depth) * ROW, cell.width);
        let _ = write!(
            svg,
            "<g><rect x=\"{x:.3}\" y=\"{y}\" width=\"{w:.3}\" height=\"{h}\" fill=\"{fill}\" \
             stroke=\"#fff\" stroke-width=\"1\" data-path=\"{data}\"><title>{title}</title></rect>",
            h = ROW - 1.0,
            fill = colour(&node.row.component),
            data = safe(&TreeNode::path(tree, cell.node).join(" > ")),
            title = safe(&title(tree, cell.node, unit)),
        );
        let share = node.parent.map(|_| node.of_root);
        if let Some(label) = label(&node.row.component, share, w) {
            // A nested <svg> clips its content to its box: no label leaves its rectangle.
            let _ = write!(
                svg,
                "<svg x=\"{x:.3}\" y=\"{y}\" width=\"{w:.3}\" height=\"{ROW}\" \
                 pointer-events=\"none\"><text x=\"{PAD}\" y=\"{baseline}\" fill=\"#111\">{}</text></svg>",
                safe(&label),
                baseline = ROW - 9.0,
            );
        }
        svg.push_str("</g>");
        parts(&mut svg, node, cell);
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// The rectangles of latte's work inside a node and of the time not attributed in
/// it, one row below the node, at the right end of its span.
fn parts(svg: &mut String, node: &TreeNode, cell: &Cell) {
    let Some(a) = node.account.filter(|a| a.total > 0) else {
        return;
    };
    let y = f64::from(cell.depth + 1) * ROW;
    let mut right = cell.x + cell.width;
    let parts = [
        (
            "latte",
            a.share(a.inside),
            "url(#latte-inside)",
            "latte inside",
        ),
        (
            "unplaced",
            a.share_of_not_attributed().max(0.0),
            "#bbb",
            "not attributed",
        ),
    ];
    for (class, share, fill, what) in parts {
        let w = share * cell.width;
        if w <= 0.0 {
            continue;
        }
        right -= w;
        let _ = write!(
            svg,
            "<rect class=\"{class}\" x=\"{right:.3}\" y=\"{y}\" width=\"{w:.3}\" height=\"{h}\" \
             fill=\"{fill}\" stroke=\"#fff\" stroke-width=\"1\"><title>{what}: {:.1}% of {}</title></rect>",
            share * 100.0,
            safe(&node.row.component),
            h = ROW - 1.0,
        );
    }
}

/// What the browser shows on hover: the full path, total, self time, calls, and the
/// shares of the parent and the root.
pub fn title(tree: &[TreeNode], i: usize, unit: &str) -> String {
    let node = &tree[i];
    let share = |s: Option<f64>| s.map_or("-".into(), |s| format!("{:.1}%", s * 100.0));
    let shares = match node.parent {
        None => "a root".to_string(),
        Some(_) => format!(
            "{} of parent, {} of root",
            share(node.of_parent),
            share(Some(node.of_root))
        ),
    };
    let own = match node.self_time {
        Some(own) => {
            let mut text = format!("self {}", value(own.total, unit));
            if let Some(a) = node.account {
                // The account is in ticks: the row's TOTAL says what a tick is worth.
                let per_tick = node.row.stats.total / (a.total.max(1) as f64);
                if a.inside > 0 {
                    let inside = value(a.inside as f64 * per_tick, unit);
                    text.push_str(&format!(", latte inside {inside}"));
                }
                if a.not_attributed != 0 {
                    let na = value(a.not_attributed as f64 * per_tick, unit);
                    text.push_str(&format!(", not attributed {na}"));
                }
            }
            text
        }
        None => "no self time (not a scope on the thread's stack)".to_owned(),
    };
    // With the counting allocator: per call, inclusive, and the node's own.
    let allocs = node
        .allocs
        .filter(|a| a.calls() > 0)
        .map_or(String::new(), |a| {
            let (count, bytes) = a.per_call();
            let (own, own_bytes) = a.own().per_call(a.calls());
            format!(
                "\n{} allocs, {} per call ({} allocs, {} in itself)",
                numbers::per_call(count),
                numbers::bytes(bytes),
                numbers::per_call(own),
                numbers::bytes(own_bytes)
            )
        });
    format!(
        "{}\ntotal {}, {own}, {} calls{allocs}\n{shares}",
        TreeNode::path(tree, i).join(" > "),
        value(node.row.stats.total, unit),
        node.row.stats.samples,
    )
}

/// The label of a rectangle `width` wide: the id and its share of the root's time
/// (`share`, below the root) when they fit, else the id, elided with `…` when it does
/// not fit, or nothing when not even two characters and the ellipsis do.
pub fn label(id: &str, share: Option<f64>, width: f64) -> Option<String> {
    let fits = ((width - 2.0 * PAD) / CHAR).floor();
    let chars = id.chars().count();
    let with_share = share.map(|s| format!("{id} {:.1}%", s * 100.0));
    if let Some(long) = with_share.filter(|l| fits >= l.chars().count() as f64) {
        Some(long)
    } else if fits >= chars as f64 {
        Some(id.to_string())
    } else if fits >= 3.0 {
        let keep = fits as usize - 1;
        Some(id.chars().take(keep).collect::<String>() + "…")
    } else {
        None
    }
}

/// A light colour of its own for each id (hashed, FNV-1a), the same on every page.
pub fn colour(id: &str) -> String {
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!(
        "hsl({}, {}%, {}%)",
        hash % 360,
        55 + (hash >> 16) % 20,
        72 + (hash >> 24) % 10
    )
}

#[cfg(test)]
mod tests;
