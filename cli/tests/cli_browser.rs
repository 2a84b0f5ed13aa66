//! `latte-telemetry html`'s page opened by a real headless Chromium, with the network
//! blocked: the rendered DOM has one plot per component; every percentile marker sits
//! where its value falls on the histogram's log axis, and every dot of the percentile
//! spectrum at its percentile and value (both read from the axis labels the browser
//! rendered); the pictures read well ([`readable`]); a real nested report's call tree
//! is drawn before the plots, one rectangle per node, each titled with its path; a
//! flight-recorder capture is drawn as a timeline ([`timeline`]).
//!
//! Without a Chromium binary the test says it skipped and why; with
//! `LATTE_REQUIRE_CHROMIUM=1` (set by `.ci/run`, which installs Debian's `chromium`) it
//! fails instead.

mod cli_support;
// A module of this binary, in the folder named after it (not a test target of its own).
#[path = "cli_browser/readable.rs"]
mod readable;
#[path = "cli_browser/timeline.rs"]
mod timeline;

use cli_support::{COMPONENTS, dir, write};
use regex::Regex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Pixels a marker may be off its value: plotters rounds coordinates to whole pixels,
/// both for the marker and for the tick it is read against.
const TOLERANCE_PX: f64 = 2.0;

fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            Command::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(str::to_string)
}

/// The DOM after Chromium loaded and rendered `page`, fetching nothing.
fn dump_dom(browser: &str, page: &Path) -> String {
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        // Every host resolves to nothing and every request goes to a closed port.
        .args([
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=http://127.0.0.1:9",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A latency tick's value in the report's unit: a time in its own unit (`500 ns`,
/// `1 us`) or cycles, bare or with an SI multiple (`500`, `2 k`), as the page writes
/// them.
fn label_value(text: &str) -> Option<f64> {
    let (number, scale) = match text.split_once(' ') {
        None => (text, 1.0),
        Some((n, unit)) => (
            n,
            match unit {
                "ps" => 1e-3,
                "ns" => 1.0,
                "us" | "k" => 1e3,
                "ms" | "M" => 1e6,
                "s" | "G" => 1e9,
                _ => return None,
            },
        ),
    };
    Some(number.parse::<f64>().ok()? * scale)
}

/// A percentile tick's `1/(1-q)` (`99.9%`: 1000), the value the axis is log of.
fn percentile_value(text: &str) -> Option<f64> {
    let p: f64 = text.strip_suffix('%')?.parse().ok()?;
    Some(1.0 / (1.0 - p / 100.0))
}

fn attr(attrs: &str, name: &str) -> Option<f64> {
    let re = Regex::new(&format!(r#"\b{name}="([-0-9.]+)""#)).unwrap();
    re.captures(attrs)?[1].parse().ok()
}

/// The texts of `class`: (their attribute `coord`, their text).
fn labels(svg: &str, class: &str, coord: &str) -> Vec<(f64, String)> {
    let text = Regex::new(r#"(?s)<text class="([a-z]+)"([^>]*)>\s*([^<]*?)\s*</text>"#).unwrap();
    text.captures_iter(svg)
        .filter(|c| &c[1] == class)
        .map(|c| (attr(&c[2], coord).unwrap(), c[3].to_string()))
        .collect()
}

/// `px = a + b ln v` fitted to (pixel, ln v) points, each within the tolerance of it.
fn fit(points: &[(f64, f64)]) -> (f64, f64) {
    assert!(
        points.len() >= 2,
        "an axis with fewer than 2 labels: {points:?}"
    );
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let ml = points.iter().map(|p| p.1).sum::<f64>() / n;
    let b = points.iter().map(|p| (p.0 - mx) * (p.1 - ml)).sum::<f64>()
        / points.iter().map(|p| (p.1 - ml).powi(2)).sum::<f64>();
    let a = mx - b * ml;
    for (x, l) in points {
        assert!(
            (a + b * l - x).abs() <= TOLERANCE_PX,
            "labels not on one log axis: {points:?}"
        );
    }
    (a, b)
}

/// The axis of the labels of `class` along `coord`, read by `value` (a y label's
/// baseline sits 4 px below its tick: 12 px text centred on its grid line).
fn axis(svg: &str, class: &str, coord: &str, value: fn(&str) -> Option<f64>) -> (f64, f64) {
    let shift = if coord == "y" { 4.0 } else { 0.0 };
    let points: Vec<(f64, f64)> = labels(svg, class, coord)
        .iter()
        .map(|(px, t)| {
            (
                px - shift,
                value(t).unwrap_or_else(|| panic!("{class} {t:?}")).ln(),
            )
        })
        .collect();
    fit(&points)
}

/// The x of each dashed quantile marker of `colour` in the histogram, sorted.
fn markers(svg: &str, colour: &str) -> Vec<f64> {
    let re = Regex::new(
        r#"<path class="marker" d="M([-0-9.]+),[-0-9.]+V[-0-9.]+"[^>]*stroke="([^"]+)""#,
    )
    .unwrap();
    let mut xs: Vec<f64> = re
        .captures_iter(svg)
        .filter(|c| c[2].eq_ignore_ascii_case(colour))
        .map(|c| c[1].parse().unwrap())
        .collect();
    xs.sort_by(f64::total_cmp);
    xs
}

/// The (cx, cy) of each percentile-spectrum dot of `colour`, by increasing cx.
fn dots(svg: &str, colour: &str) -> Vec<(f64, f64)> {
    let re = Regex::new(r#"<circle class="qdot"([^>]*)>"#).unwrap();
    let mut d: Vec<(f64, f64)> = re
        .captures_iter(svg)
        .filter(|c| {
            c[1].to_ascii_lowercase()
                .contains(&format!("fill=\"{colour}\""))
        })
        .map(|c| (attr(&c[1], "cx").unwrap(), attr(&c[1], "cy").unwrap()))
        .collect();
    d.sort_by(|a, b| a.0.total_cmp(&b.0));
    d
}

/// `(p50, p99, p99.9)` of each component in a report file, from its JSON.
fn percentiles(file: &Path) -> BTreeMap<String, [f64; 3]> {
    let report: latte::Report =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    report
        .all_threads
        .iter()
        .map(|r| {
            (
                r.component.clone(),
                [r.stats.median, r.stats.p99, r.stats.p999],
            )
        })
        .collect()
}

/// `latte-telemetry html` of `files`, written in `d`.
fn html_page(d: &Path, files: &[PathBuf]) -> PathBuf {
    let page = d.join("page.html");
    let status = Command::new(env!("CARGO_BIN_EXE_latte-telemetry"))
        .arg("html")
        .args(files)
        .arg("-o")
        .arg(&page)
        .status()
        .unwrap();
    assert!(status.success());
    page
}

/// The legend's colour of each report file, by its name.
fn legend_colours(dom: &str) -> BTreeMap<String, String> {
    let swatch = Regex::new(
        r#"<span class="swatch" style="background:\s*(#[0-9a-fA-F]{6});?"></span>([^<]+)</td>"#,
    )
    .unwrap();
    let mut colours: BTreeMap<String, String> = BTreeMap::new();
    for c in swatch.captures_iter(dom) {
        colours
            .entry(c[2].to_string())
            .or_insert_with(|| c[1].to_ascii_lowercase());
    }
    colours
}

/// Each plot of the page: (component, its figure's markup).
fn plots(dom: &str) -> Vec<(String, String)> {
    let figure =
        Regex::new(r#"(?s)<figure class="plot" data-component="([^"]*)">(.*?)</figure>"#).unwrap();
    figure
        .captures_iter(dom)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// The browser, or `None` after saying the test skipped (failing instead with
/// `LATTE_REQUIRE_CHROMIUM` set).
fn browser_or_skip() -> Option<String> {
    let browser = chromium();
    if browser.is_none() {
        assert!(
            std::env::var("LATTE_REQUIRE_CHROMIUM").is_err(),
            "LATTE_REQUIRE_CHROMIUM is set but no chromium"
        );
        println!(
            "SKIPPED: no chromium binary (Debian: apt-get install chromium); .ci/run installs it"
        );
    }
    browser
}

/// The marked quantiles' `1/(1-q)`: where their dots sit on the percentile axis.
const MARKED_AT: [f64; 3] = [2.0, 100.0, 1000.0];

#[test]
fn each_marker_sits_at_its_value_on_the_rendered_axes() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let d = dir("browser");
    let files = [
        write(&d.join("a.json"), &COMPONENTS, 1.0, 1),
        write(&d.join("b.json"), &COMPONENTS[..2], 1.6, 2),
    ];
    let dom = dump_dom(&browser, &html_page(&d, &files));

    let colours = legend_colours(&dom);
    let figures = plots(&dom);
    let names: Vec<&str> = figures.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["fast", "slow", "wide"], "one plot per component");

    let mut checked = 0;
    for (component, svg) in &figures {
        assert_eq!(svg.matches("<svg").count(), 1, "{component}: one picture");
        let latency_x = axis(svg, "xtick", "x", label_value);
        let latency_y = axis(svg, "ytick", "y", label_value);
        let percentile_x = axis(svg, "ptick", "x", percentile_value);
        let at = |(a, b): (f64, f64), l: f64| a + b * l;
        for file in &files {
            let name = file.display().to_string();
            let Some(expected) = percentiles(file).get(component).copied() else {
                continue;
            };
            let colour = &colours[&name];
            let (lines, dots) = (markers(svg, colour), dots(svg, colour));
            assert_eq!((lines.len(), dots.len()), (3, 3), "{component}, {name}");
            for k in 0..3 {
                let (value, q_at) = (expected[k].ln(), MARKED_AT[k].ln());
                let near = |px: f64, want: f64| (px - want).abs() <= TOLERANCE_PX;
                assert!(
                    near(lines[k], at(latency_x, value)),
                    "{component}, {name}: marker at x={}, its value {} is at x={:.1}",
                    lines[k],
                    expected[k],
                    at(latency_x, value)
                );
                let (cx, cy) = dots[k];
                assert!(
                    near(cx, at(percentile_x, q_at)) && near(cy, at(latency_y, value)),
                    "{component}, {name}: dot at ({cx}, {cy}) for {}",
                    expected[k]
                );
                checked += 1;
            }
        }
    }
    // 3 components in a.json, 2 in b.json; 3 marked quantiles each.
    assert_eq!(checked, (3 + 2) * 3);
}

/// Nested scopes recorded by latte on this thread: `Frame > Physics > Collide`,
/// `Frame > Render > Collide`, `Frame > Render`'s own work.
fn record_a_frame_loop() {
    use latte::{Id, Mode, scope};
    static FRAME: Id = Id::new("Frame");
    static PHYSICS: Id = Id::new("Physics");
    static RENDER: Id = Id::new("Render");
    static COLLIDE: Id = Id::new("Collide");
    let spin = |n: u64| {
        (0..n).for_each(|k| {
            std::hint::black_box(k);
        });
    };
    for _ in 0..2_000 {
        let _frame = scope(&FRAME, Mode::Fast, Mode::Fast);
        {
            let _physics = scope(&PHYSICS, Mode::Fast, Mode::Fast);
            spin(2_000);
            let _collide = scope(&COLLIDE, Mode::Fast, Mode::Fast);
            spin(6_000);
        }
        let _render = scope(&RENDER, Mode::Fast, Mode::Fast);
        spin(4_000);
        let _collide = scope(&COLLIDE, Mode::Fast, Mode::Fast);
        spin(1_000);
    }
}

/// Each icicle rectangle the browser rendered: (its `data-path`, its `<title>` text),
/// the DOM's escapes undone.
fn icicle_rects(dom: &str) -> Vec<(String, String)> {
    let rect = Regex::new(r#"(?s)<rect[^>]*data-path="([^"]*)"[^>]*><title>(.*?)</title></rect>"#)
        .unwrap();
    let plain = |s: &str| {
        s.replace("&gt;", ">")
            .replace("&lt;", "<")
            .replace("&amp;", "&")
    };
    rect.captures_iter(dom)
        .map(|c| (plain(&c[1]), plain(&c[2])))
        .collect()
}

#[test]
fn the_call_tree_is_drawn_before_the_plots_one_titled_rectangle_per_node() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    record_a_frame_loop();
    let report = latte::Report::collect(&latte::ReportOptions::default());
    let d = dir("browser_tree");
    let file = cli_support::write_report(&d.join("frames.json"), &report);
    let page = html_page(&d, &[file]);
    let dom = dump_dom(&browser, &page);

    let paths = [
        "Frame",
        "Frame > Physics",
        "Frame > Physics > Collide",
        "Frame > Render",
        "Frame > Render > Collide",
    ];
    let rects = icicle_rects(&dom);
    let mut drawn: Vec<&str> = rects.iter().map(|(p, _)| p.as_str()).collect();
    drawn.sort_unstable();
    assert_eq!(drawn, paths, "one rectangle per node of the tree");
    for (path, title) in &rects {
        assert!(
            title.starts_with(&format!("{path}\ntotal ")) && title.contains(" calls\n"),
            "{path}: {title}"
        );
    }
    let chart = dom
        .find("<figure class=\"icicle\"")
        .expect("an icicle chart");
    let first_plot = dom
        .find("<figure class=\"plot\"")
        .expect("a distribution plot");
    assert!(
        chart < first_plot,
        "the call tree comes before the distributions"
    );
    // A report in time: the ticks carry their own units and the titles none.
    let with_boxes = readable::dom_with_boxes(&browser, &page);
    assert!(readable::check_pictures(&with_boxes, readable::Unit::Time) >= 4);
    // A picture to look at: `/tmp/latte-icicle.png`.
    screenshot(&browser, &page, "latte-icicle.png", "1200,900");
}

/// Chromium's picture of `page` at `size` ("W,H"), written to `name` in the temp dir.
fn screenshot(browser: &str, page: &Path, name: &str, size: &str) {
    let shot = std::env::temp_dir().join(name);
    let status = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .arg(format!("--window-size={size}"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
        .status;
    assert!(status.success() && shot.exists());
    println!("screenshot: {}", shot.display());
}
