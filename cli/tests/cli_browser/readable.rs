//! Pictures people read, checked in what Chromium rendered: every latency tick is a
//! 1-2-5 value in its own unit, the axis titles agree with the ticks' units, every
//! text's box lies inside its SVG, no two quantile labels overlap, the percentile axis
//! carries 50% … 99.99%, and a 10-component page stays under 300 KB.
//!
//! Boxes come from the browser itself: the test writes a copy of the page with a short
//! script at its end that stores each text's `getBoundingClientRect()` (relative to
//! its SVG, in the SVG's own pixels) in a `data-box` attribute, and reads the DOM that
//! `--dump-dom` prints. The page the tool writes stays without scripts.

use super::{browser_or_skip, dump_dom, html_page, plots};
use crate::cli_support::{COMPONENTS, Component, dir, write};
use regex::Regex;
use std::path::{Path, PathBuf};

/// A script that stores the box of each `elements` inside each `svgs`, relative to
/// that SVG and in its viewBox's pixels, in a `data-box` attribute.
fn boxes(svgs: &str, elements: &str) -> String {
    format!(
        "<script>\
for (const svg of document.querySelectorAll('{svgs}')) {{\
 const s = svg.getBoundingClientRect(), k = svg.viewBox.baseVal.width / s.width;\
 for (const t of svg.querySelectorAll('{elements}')) {{\
  const r = t.getBoundingClientRect();\
  t.setAttribute('data-box', [r.left - s.left, r.top - s.top, r.right - s.left,\
   r.bottom - s.top].map(v => (v * k).toFixed(1)).join(','));\
 }}\
}}</script>"
    )
}

/// The unit of a page's latency axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Times, each tick in its own unit (`500 ns`, `1 us`).
    Time,
    /// Cycles, bare numbers with SI multiples (`500`, `2 k`).
    Cycles,
}

/// A text element of a plot: its class, its text, its box (left, top, right, bottom).
#[derive(Debug)]
struct Text {
    class: String,
    body: String,
    b: [f64; 4],
}

/// The DOM of `page` with every plot text's rendered box in `data-box`.
pub fn dom_with_boxes(browser: &str, page: &Path) -> String {
    dom_with(browser, page, "figure.plot svg", "text")
}

/// The DOM of `page` with the rendered box of each `elements` inside each `svgs` in
/// `data-box` (a copy of the page with a script; the page itself has none).
pub fn dom_with(browser: &str, page: &Path, svgs: &str, elements: &str) -> String {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(!html.contains("<script"), "the page itself has no script");
    let copy: PathBuf = page.with_extension("boxes.html");
    let script = boxes(svgs, elements);
    std::fs::write(&copy, html.replace("</body>", &format!("{script}</body>"))).unwrap();
    dump_dom(browser, &copy)
}

fn texts(svg: &str) -> Vec<Text> {
    let re = Regex::new(
        r#"<text class="([a-z]+)"[^>]*data-box="([-0-9.]+),([-0-9.]+),([-0-9.]+),([-0-9.]+)"[^>]*>([^<]*)</text>"#,
    )
    .unwrap();
    re.captures_iter(svg)
        .map(|c| Text {
            class: c[1].to_string(),
            body: c[6].replace("&amp;", "&"),
            b: [2, 3, 4, 5].map(|k| c[k].parse().unwrap()),
        })
        .collect()
}

/// A tick label that is 1, 2 or 5 times a power of 10 below 1,000, in a unit of `unit`.
fn is_1_2_5_in_own_unit(label: &str, unit: Unit) -> bool {
    let (number, rest) = label.split_once(' ').unwrap_or((label, ""));
    let own = match unit {
        Unit::Time => ["ps", "ns", "us", "ms", "s"].contains(&rest),
        Unit::Cycles => ["", "k", "M", "G"].contains(&rest),
    };
    let grid = [1, 2, 5, 10, 20, 50, 100, 200, 500].map(|v| v.to_string());
    own && grid.iter().any(|g| g == number)
}

/// Checks every plot of `dom` (rendered with [`dom_with_boxes`]); returns how many
/// plots it checked.
pub fn check_pictures(dom: &str, unit: Unit) -> usize {
    let figures = plots(dom);
    let size = Regex::new(r#"<svg[^>]*width="([0-9.]+)" height="([0-9.]+)""#).unwrap();
    for (component, svg) in &figures {
        let c = size.captures(svg).expect("an svg with a size");
        let (w, h): (f64, f64) = (c[1].parse().unwrap(), c[2].parse().unwrap());
        let texts = texts(svg);
        assert_eq!(
            texts.len(),
            svg.matches("<text").count(),
            "{component}: every text has a box"
        );
        for t in &texts {
            let [l, top, r, b] = t.b;
            assert!(
                l >= 0.0 && top >= 0.0 && r <= w && b <= h && r > l,
                "{component}: {t:?} outside the {w}x{h} SVG"
            );
        }
        ticks_and_titles(component, &texts, unit);
        let labels: Vec<&Text> = texts.iter().filter(|t| t.class == "qlabel").collect();
        assert!(!labels.is_empty(), "{component}: quantile labels");
        for (k, a) in labels.iter().enumerate() {
            for b in &labels[k + 1..] {
                let apart =
                    a.b[2] <= b.b[0] || b.b[2] <= a.b[0] || a.b[3] <= b.b[1] || b.b[3] <= a.b[1];
                assert!(apart, "{component}: quantile labels overlap: {a:?} {b:?}");
            }
        }
        let percentiles: Vec<&str> = texts
            .iter()
            .filter(|t| t.class == "ptick")
            .map(|t| t.body.as_str())
            .collect();
        assert_eq!(
            percentiles,
            ["50%", "90%", "99%", "99.9%", "99.99%"],
            "{component}"
        );
    }
    figures.len()
}

/// Latency ticks on both axes are 1-2-5 values in their own unit, at least 3 a axis,
/// and the titles of those axes name the unit exactly when the ticks do not.
fn ticks_and_titles(component: &str, texts: &[Text], unit: Unit) {
    for class in ["xtick", "ytick"] {
        let ticks: Vec<&str> = texts
            .iter()
            .filter(|t| t.class == class)
            .map(|t| t.body.as_str())
            .collect();
        assert!(ticks.len() >= 3, "{component}: {class}: {ticks:?}");
        for label in &ticks {
            assert!(
                is_1_2_5_in_own_unit(label, unit),
                "{component}: {class} {label:?}"
            );
        }
    }
    let unit_word = Regex::new(r"\b(ps|ns|us|ms|s|cycles)\b").unwrap();
    for class in ["xtitle", "ytitle"] {
        let title = &texts
            .iter()
            .find(|t| t.class == class)
            .expect("a title")
            .body;
        let names_a_unit = unit_word.is_match(title);
        assert_eq!(
            names_a_unit,
            unit == Unit::Cycles,
            "{component}: {class} {title:?}"
        );
        assert!(
            title.starts_with("latency (") && title.contains("log scale"),
            "{title}"
        );
    }
}

#[test]
fn every_picture_reads_1_2_5_ticks_boxes_inside_labels_apart() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let d = dir("browser_readable");
    // Three reports close together: their markers crowd the same pixels.
    let files = [
        write(&d.join("a.json"), &COMPONENTS, 1.0, 1),
        write(&d.join("b.json"), &COMPONENTS, 1.04, 2),
        write(&d.join("c.json"), &COMPONENTS[..2], 1.1, 3),
    ];
    let dom = dom_with_boxes(&browser, &html_page(&d, &files));
    assert_eq!(check_pictures(&dom, Unit::Cycles), 3);
}

/// Ten components, from 40 cycles to 4 M cycles, some wide.
fn ten() -> Vec<Component> {
    const NAMES: [&str; 10] = ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"];
    NAMES
        .iter()
        .enumerate()
        .map(|(k, name)| Component {
            name,
            median: 40.0 * 10f64.powf(k as f64 / 2.0),
            sigma: [0.2, 0.6, 1.2][k % 3],
            samples: 50_000,
        })
        .collect()
}

#[test]
fn a_ten_component_page_of_two_reports_is_under_300_kb() {
    let d = dir("browser_ten");
    let files = [
        write(&d.join("base.json"), &ten(), 1.0, 1),
        write(&d.join("new.json"), &ten(), 1.2, 2),
    ];
    let page = html_page(&d, &files);
    let bytes = std::fs::metadata(&page).unwrap().len();
    println!("10-component page: {bytes} bytes");
    assert!(bytes < 300_000, "{bytes} bytes");
    let Some(browser) = browser_or_skip() else {
        return;
    };
    assert_eq!(
        check_pictures(&dom_with_boxes(&browser, &page), Unit::Cycles),
        10
    );
}
