//! A flight-recorder dump drawn by `latte-telemetry html` and rendered by Chromium:
//! one lane per thread under its name; in the browser's own boxes, each nested scope
//! lies inside its parent's stretch and one row below it, widths are in proportion to
//! durations, the trigger is outlined and the axis's 0 sits at its start; the other
//! thread's scopes during the stall are drawn beside it; every text lies inside its
//! picture. The dump is written by the library's own trace writer.

use super::{browser_or_skip, html_page, screenshot};
use crate::cli_support::dir;
use latte::flight::trace::{Lane, Span, Trace, Trigger};
use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::Command;

/// 2 ticks per nanosecond.
const PER_NS: u64 = 2;

/// Ticks of `us` microseconds.
fn us(us: u64) -> u64 {
    us * 1_000 * PER_NS
}

fn span(name: &str, start: u64, end: u64, depth: u32) -> Span {
    Span {
        name: name.into(),
        start,
        end: Some(end),
        depth,
    }
}

/// The gateway's request > parse, request > risk > db with a 2.3 ms stall in db (the
/// trigger), then 200 short requests; market data's 50 us ticks every 100 us
/// throughout; over 9.8 ms.
fn dump() -> Trace {
    let mut gateway = vec![
        span("request", us(1_000), us(4_000), 0),
        span("parse", us(1_100), us(1_300), 1),
        span("risk", us(1_400), us(3_900), 1),
        span("db", us(1_500), us(3_800), 2),
    ];
    gateway.extend((0..200).map(|k| span("request", us(5_000 + 20 * k), us(5_005 + 20 * k), 0)));
    let md = (0..100)
        .map(|k| span("tick", us(500 + 100 * k), us(550 + 100 * k), 0))
        .collect();
    Trace {
        origin: 0,
        ticks_per_ns: PER_NS as f64,
        covers: (us(200), us(10_000)),
        lanes: vec![
            Lane {
                thread: "gateway".into(),
                tid: 1,
                spans: gateway,
            },
            Lane {
                thread: "market-data".into(),
                tid: 2,
                spans: md,
            },
        ],
        trigger: Some(Trigger {
            component: "db".into(),
            tid: 1,
            at: us(3_800),
            reason: "2.300 ms, over its running p99.9 of 40.00 us".into(),
        }),
    }
}

/// A rendered element: its class, name (`data-name` or the text), depth, box.
#[derive(Debug)]
struct Drawn {
    class: String,
    name: String,
    depth: u32,
    b: [f64; 4],
}

/// The rectangles and texts of one figure (`data-view`) of the DOM.
fn drawn(dom: &str, view: &str) -> (Vec<Drawn>, Vec<Drawn>) {
    let figure = Regex::new(&format!(
        r#"(?s)<figure class="timeline" data-view="{view}">(.*?)</figure>"#
    ))
    .unwrap();
    let svg = figure
        .captures(dom)
        .unwrap_or_else(|| panic!("no {view} timeline"))[1]
        .to_string();
    let float = |s: &str| -> [f64; 4] {
        let v: Vec<f64> = s.split(',').map(|x| x.parse().unwrap()).collect();
        [v[0], v[1], v[2], v[3]]
    };
    let rect = Regex::new(
        r#"<rect class="([a-z -]+)"[^>]*data-name="([^"]*)" data-depth="([0-9]+)"[^>]*data-box="([-0-9.,]+)""#,
    )
    .unwrap();
    let rects = rect
        .captures_iter(&svg)
        .map(|c| Drawn {
            class: c[1].to_string(),
            name: c[2].to_string(),
            depth: c[3].parse().unwrap(),
            b: float(&c[4]),
        })
        .collect();
    let text = Regex::new(r#"<text([^>]*)data-box="([-0-9.,]+)"[^>]*>([^<]*)</text>"#).unwrap();
    let texts = text
        .captures_iter(&svg)
        .map(|c| Drawn {
            class: Regex::new(r#"class="([a-z-]+)""#)
                .unwrap()
                .captures(&c[1])
                .map_or(String::new(), |m| m[1].to_string()),
            name: c[3].to_string(),
            depth: 0,
            b: float(&c[2]),
        })
        .collect();
    (rects, texts)
}

fn one<'a>(rects: &'a [Drawn], class: &str, name: &str) -> &'a Drawn {
    let found: Vec<&Drawn> = rects
        .iter()
        .filter(|r| r.class == class && r.name == name)
        .collect();
    assert_eq!(found.len(), 1, "{class} {name}: {found:?}");
    found[0]
}

/// `inner` lies within `outer`'s stretch (a pixel of rounding) and `rows` rows below.
fn nested(inner: &Drawn, outer: &Drawn, rows: f64) {
    assert!(
        inner.b[0] >= outer.b[0] - 1.0 && inner.b[2] <= outer.b[2] + 1.0,
        "{inner:?} outside {outer:?}"
    );
    let row = latte_row();
    assert!(
        ((inner.b[1] - outer.b[1]) - rows * row).abs() < 1.0,
        "{inner:?} not {rows} row(s) under {outer:?}"
    );
}

/// A depth's row height as the tool draws it.
fn latte_row() -> f64 {
    18.0
}

fn width(d: &Drawn) -> f64 {
    d.b[2] - d.b[0]
}

fn write_dump(d: &Path) -> PathBuf {
    let file = d.join("dump-1-1-db.json");
    let mut json = Vec::new();
    dump().write_json(&mut json).unwrap();
    std::fs::write(&file, json).unwrap();
    file
}

#[test]
fn a_dump_is_drawn_as_lanes_of_nested_scopes_with_the_trigger_outlined() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let d = dir("browser_timeline");
    let page = html_page(&d, &[write_dump(&d)]);
    // Each rectangle's and text's box, relative to its timeline.
    let dom = super::readable::dom_with(&browser, &page, "figure.timeline > svg", "rect, text");
    assert!(dom.contains("Triggered by <b>db</b> on thread gateway: 2.300 ms"));
    around_the_trigger(&dom);
    the_whole_dump(&dom);

    // A picture to look at: `/tmp/latte-timeline.png`.
    screenshot(&browser, &page, "latte-timeline.png", "1200,800");
}

/// Around the trigger: db fills the middle half; the nest drawn; the axis's 0 at db's
/// start; the other thread's ticks during the stall beside it.
fn around_the_trigger(dom: &str) {
    let (rects, texts) = drawn(dom, "trigger");
    let db = one(&rects, "scope trigger", "db");
    let risk = one(&rects, "scope", "risk");
    let request = one(&rects, "scope", "request");
    nested(db, risk, 1.0);
    nested(risk, request, 1.0);
    assert!(
        (width(db) - 500.0).abs() < 1.5 && (db.b[0] - 250.0).abs() < 1.5,
        "db fills the middle half: {db:?}"
    );
    // The axis's 0 is the trigger's start.
    let zero = texts
        .iter()
        .find(|t| t.class == "tick" && t.name == "0")
        .expect("a 0 tick");
    assert!(
        ((zero.b[0] + zero.b[2]) / 2.0 - db.b[0]).abs() < 1.5,
        "{zero:?} vs {db:?}"
    );
    // The other thread meanwhile: its ticks under the stall, in its own lane below.
    let ticks: Vec<&Drawn> = rects
        .iter()
        .filter(|r| r.name == "tick" && r.b[0] >= db.b[0] - 1.0 && r.b[2] <= db.b[2] + 1.0)
        .collect();
    assert_eq!(
        ticks.len(),
        23,
        "market data's ticks during the 2.3 ms stall"
    );
    assert!(ticks.iter().all(|t| t.b[1] > db.b[3]));
    assert!((width(ticks[0]) / width(db) - 50.0 / 2_300.0).abs() < 0.002);
}

/// The whole dump: the same nest, the 200 short requests merged and counted, a
/// lane per thread, every text inside the picture.
fn the_whole_dump(dom: &str) {
    let (rects, texts) = drawn(dom, "whole");
    let parse = one(&rects, "scope", "parse");
    let request = rects
        .iter()
        .find(|r| r.class == "scope" && r.name == "request" && r.depth == 0)
        .unwrap();
    nested(parse, request, 1.0);
    nested(one(&rects, "scope trigger", "db"), request, 2.0);
    assert!((width(request) / 1_000.0 - 3_000.0 / 9_800.0).abs() < 0.002);
    let merged: Vec<&Drawn> = rects.iter().filter(|r| r.class == "merged").collect();
    assert!(!merged.is_empty(), "the 5 us requests merge");
    let counted: Vec<&Drawn> = texts
        .iter()
        .filter(|t| t.name.ends_with(" x request"))
        .collect();
    assert!(
        !counted.is_empty(),
        "a merged bar says how many scopes it holds"
    );
    let lanes: Vec<&Drawn> = texts.iter().filter(|t| t.class == "lane-name").collect();
    assert_eq!(
        lanes.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["gateway", "market-data"]
    );
    // Every text inside its picture.
    for t in &texts {
        assert!(t.b[0] >= 0.0 && t.b[2] <= 1_000.5 && t.b[1] >= 0.0, "{t:?}");
    }
}

#[test]
fn show_refuses_a_dump_and_says_what_draws_it() {
    let d = dir("dump_to_show");
    let out = Command::new(env!("CARGO_BIN_EXE_latte-telemetry"))
        .arg("show")
        .arg(write_dump(&d))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a flight-recorder dump (trace-event JSON), not a report")
            && err.contains("latte-telemetry html"),
        "{err}"
    );
}
