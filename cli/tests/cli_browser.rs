//! `latte-telemetry html`'s page opened by a real headless Chromium, with the network
//! blocked: the rendered DOM has one plot per component, and every percentile marker
//! sits where its value falls on the plot's log axis (read from the axis labels the
//! browser rendered); a real nested report's call tree is drawn before the plots, one
//! rectangle per node, each titled with its path.
//!
//! Without a Chromium binary the test says it skipped and why; with
//! `LATTE_REQUIRE_CHROMIUM=1` (set by `.ci/run`, which installs Debian's `chromium`) it
//! fails instead.

mod cli_support;

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

/// An axis label's value in the report's unit, if the text is one: a time in its own
/// unit (`12.35 us`, `546.8 ps`) or cycles with an SI multiple (`50.00 k cycles`,
/// `588.6 cycles`), as `latte::report::numbers` writes them.
fn label_value(text: &str) -> Option<f64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let (number, scale) = match words.as_slice() {
        [n, "cycles"] => (*n, 1.0),
        [n, multiple, "cycles"] => (
            *n,
            match *multiple {
                "k" => 1e3,
                "M" => 1e6,
                "G" => 1e9,
                "T" => 1e12,
                "P" => 1e15,
                _ => return None,
            },
        ),
        [n, unit] => (
            *n,
            match *unit {
                "ps" => 1e-3,
                "ns" => 1.0,
                "us" => 1e3,
                "ms" => 1e6,
                "s" => 1e9,
                _ => return None,
            },
        ),
        _ => return None,
    };
    Some(number.parse::<f64>().ok()? * scale)
}

fn attr(attrs: &str, name: &str) -> Option<f64> {
    let re = Regex::new(&format!(r#"\b{name}="([-0-9.]+)""#)).unwrap();
    re.captures(attrs)?[1].parse().ok()
}

/// Per chart (by the y of its axis labels): `x = a + b ln v`, fitted to the labels.
fn axes(svg: &str) -> Vec<(f64, f64, f64)> {
    let text = Regex::new(r"(?s)<text([^>]*)>\s*([^<]*?)\s*</text>").unwrap();
    let mut by_y: BTreeMap<i64, Vec<(f64, f64)>> = BTreeMap::new();
    for c in text.captures_iter(svg) {
        if let (Some(v), Some(x), Some(y)) =
            (label_value(&c[2]), attr(&c[1], "x"), attr(&c[1], "y"))
        {
            by_y.entry(y as i64).or_default().push((x, v.ln()));
        }
    }
    by_y.into_iter()
        .map(|(y, points)| {
            assert!(
                points.len() >= 2,
                "an axis with fewer than 2 labels: {points:?}"
            );
            let n = points.len() as f64;
            let (mx, ml) = (
                points.iter().map(|p| p.0).sum::<f64>() / n,
                points.iter().map(|p| p.1).sum::<f64>() / n,
            );
            let b = points.iter().map(|p| (p.0 - mx) * (p.1 - ml)).sum::<f64>()
                / points.iter().map(|p| (p.1 - ml).powi(2)).sum::<f64>();
            let a = mx - b * ml;
            for (x, l) in &points {
                assert!(
                    (a + b * l - x).abs() <= TOLERANCE_PX,
                    "labels not on one log axis: {points:?}"
                );
            }
            (y as f64, a, b)
        })
        .collect()
}

/// The vertical two-point polylines of `colour`: (x, bottom y).
fn markers(svg: &str, colour: &str) -> Vec<(f64, f64)> {
    let line = Regex::new(r"<polyline([^>]*)>").unwrap();
    let points = Regex::new(r#"points="([^"]*)""#).unwrap();
    line.captures_iter(svg)
        .filter(|c| {
            c[1].to_ascii_lowercase()
                .contains(&format!("stroke=\"{colour}\""))
        })
        .filter_map(|c| {
            let p: Vec<(f64, f64)> = points.captures(&c[1])?[1]
                .split_whitespace()
                .filter_map(|xy| xy.split_once(','))
                .map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap()))
                .collect();
            (p.len() == 2 && p[0].0 == p[1].0).then(|| (p[0].0, p[0].1.max(p[1].1)))
        })
        .collect()
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

/// The x of each `colour` marker on the chart whose axis is at `axis_y`, sorted: the
/// chart whose axis labels sit just below the marker's foot.
fn markers_on_chart(svg: &str, colour: &str, axes: &[(f64, f64, f64)], axis_y: f64) -> Vec<f64> {
    let mut on_chart: Vec<f64> = markers(svg, colour)
        .into_iter()
        .filter(|&(_, foot)| {
            axes.iter()
                .filter(|(y, _, _)| *y >= foot)
                .map(|(y, _, _)| *y)
                .fold(f64::INFINITY, f64::min)
                == axis_y
        })
        .map(|(x, _)| x)
        .collect();
    on_chart.sort_by(f64::total_cmp);
    on_chart
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

#[test]
fn each_marker_sits_at_its_value_on_the_rendered_axis() {
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
        let axes = axes(svg);
        assert_eq!(
            axes.len(),
            2,
            "{component}: a histogram and a CDF, each with a log axis"
        );
        for file in &files {
            let name = file.display().to_string();
            let Some(expected) = percentiles(file).get(component).copied() else {
                continue;
            };
            let colour = &colours[&name];
            for &(axis_y, a, b) in &axes {
                let on_chart = markers_on_chart(svg, colour, &axes, axis_y);
                assert_eq!(
                    on_chart.len(),
                    3,
                    "{component}, {name}: p50, p99, p99.9 markers"
                );
                for (x, value) in on_chart.iter().zip(expected) {
                    let at = a + b * value.ln();
                    assert!(
                        (x - at).abs() <= TOLERANCE_PX,
                        "{component}, {name}: marker at x={x}, its value {value} is at x={at:.1}"
                    );
                    checked += 1;
                }
            }
        }
    }
    // 3 components in a.json, 2 in b.json; 3 markers on each of 2 charts.
    assert_eq!(checked, (3 + 2) * 3 * 2);
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
    // A picture to look at: `/tmp/latte-icicle.png`.
    let shot = std::env::temp_dir().join("latte-icicle.png");
    let status = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1200,900",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
        .status;
    assert!(status.success() && shot.exists());
    println!("screenshot: {}", shot.display());
}
