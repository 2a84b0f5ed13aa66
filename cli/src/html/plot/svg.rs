//! A small SVG writer for the plots: coordinates rounded to 0.1 px, one element per
//! line, label or grid (never one per data point), classes the page and its tests read.

use std::fmt::Write;

/// Where a text's `x` is: its start, its middle or its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// `x` is the text's left end.
    Start,
    /// `x` is the text's middle.
    Middle,
    /// `x` is the text's right end.
    End,
}

/// An SVG document being written.
pub struct Svg {
    out: String,
}

/// A coordinate rounded to 0.1 px, without a trailing `.0`.
pub fn n(v: f64) -> String {
    let s = format!("{:.1}", (v * 10.0).round() / 10.0);
    match s.strip_suffix(".0") {
        Some("-0") => "0".into(),
        Some(whole) => whole.into(),
        None => s,
    }
}

/// The width of `text` in pixels at `size` px, over-estimated for a sans-serif font
/// (DejaVu Sans, the widest common one: about 0.64 em a digit or letter).
pub fn width(text: &str, size: f64) -> f64 {
    text.chars()
        .map(|c| match c {
            '.' | ' ' | ',' | 'i' | 'l' | '1' => 0.36,
            'm' | 'M' | 'W' | 'w' | '%' => 0.95,
            _ => 0.66,
        })
        .sum::<f64>()
        * size
}

impl Svg {
    /// An empty document.
    pub fn new() -> Self {
        Svg {
            out: String::with_capacity(16 * 1024),
        }
    }

    /// A text of `class` at (`x`, `y`: its baseline), black at the SVG's font size.
    pub fn text(&mut self, class: &str, at: (f64, f64), anchor: Anchor, body: &str) {
        self.text_with(class, at, anchor, "", body);
    }

    /// A text of `class` at (`x`, `y`: its baseline) with more attributes (`attrs`, as
    /// written: ` fill="#0072b2" font-size="11"`).
    pub fn text_with(
        &mut self,
        class: &str,
        (x, y): (f64, f64),
        anchor: Anchor,
        attrs: &str,
        body: &str,
    ) {
        let _ = write!(
            self.out,
            "<text class=\"{class}\" x=\"{}\" y=\"{}\"",
            n(x),
            n(y)
        );
        match anchor {
            Anchor::Start => {}
            Anchor::Middle => self.out.push_str(" text-anchor=\"middle\""),
            Anchor::End => self.out.push_str(" text-anchor=\"end\""),
        }
        let _ = write!(
            self.out,
            "{attrs}>{}</text>",
            html_escape::encode_text(body)
        );
    }

    /// One text of `class` per (position, text) in `labels`.
    pub fn texts(&mut self, class: &str, labels: &[((f64, f64), String)], anchor: Anchor) {
        for (at, body) in labels {
            self.text(class, *at, anchor, body);
        }
    }

    /// A path of `class` through `d`, stroked in `stroke`; `extra` attributes as written.
    pub fn path(&mut self, class: &str, d: &str, stroke: &str, extra: &str) {
        let _ = write!(
            self.out,
            "<path class=\"{class}\" d=\"{d}\" fill=\"none\" stroke=\"{stroke}\"{extra}/>"
        );
    }

    /// A light grid (a vertical line at each of `xs`, a horizontal one at each of `ys`)
    /// inside the plot area `(left, top, right, bottom)`, and the area's frame.
    pub fn grid(&mut self, xs: &[f64], ys: &[f64], (l, t, r, b): (f64, f64, f64, f64)) {
        let mut d = String::new();
        for x in xs {
            let _ = write!(d, "M{},{}V{}", n(*x), n(t), n(b));
        }
        for y in ys {
            let _ = write!(d, "M{},{}H{}", n(l), n(*y), n(r));
        }
        self.path("grid", &d, "#e2e2e2", "");
        let frame = format!("M{},{}H{}V{}H{}Z", n(l), n(t), n(r), n(b), n(l));
        self.path("frame", &frame, "#888", "");
    }

    /// Markup written as is.
    pub fn raw(&mut self, markup: &str) {
        self.out.push_str(markup);
    }

    /// The finished document, `w` by `h` pixels, its text 12 px sans-serif unless told
    /// otherwise, on white.
    pub fn finish(self, w: f64, h: f64) -> String {
        let (w, h) = (n(w), n(h));
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\
             <rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>{}</svg>",
            self.out
        )
    }
}

impl Default for Svg {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_are_rounded_to_a_tenth() {
        assert_eq!(n(12.0), "12");
        assert_eq!(n(12.345), "12.3");
        assert_eq!(n(-0.01), "0");
        assert_eq!(n(899.96), "900");
    }
}
