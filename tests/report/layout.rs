//! The demo's report read as a person reads it, at 80, 100 and 140 columns, checked as
//! properties: every time cell has 4 significant figures and a unit, every count is
//! grouped, the seed's columns are there as the width allows (and what is left out is
//! named), no line is wider than the width, the 100-column report fits in 60 lines,
//! and warnings, lost samples and anomalies are printed exactly when the data has them.
//!
//! Each report comes from a child process (this test binary, run again on
//! `demo_child` alone) that runs the demo itself (`examples/trading_loop.rs`, included
//! here), as `cargo run --example trading_loop` would, then prints the same run's
//! report as JSON for the parent to compare with.

use crate::common;
#[path = "../../examples/trading_loop.rs"]
#[allow(dead_code)]
mod demo;

use std::process::{Command, Stdio};
use std::time::Duration;
use unicode_width::UnicodeWidthStr;

/// Marks the JSON line the child prints after the demo's report.
const JSON_MARK: &str = "LATTE-LAYOUT-JSON ";

/// In the child: the demo, then the whole-run report as JSON. With `misuse`, first a
/// Stop with nothing open, and rings of 64 samples so the market-data thread laps.
#[test]
fn demo_child() {
    let Ok(how) = std::env::var("LATTE_LAYOUT_CHILD") else {
        return; // only as a child
    };
    let misuse = how == "misuse";
    if misuse {
        latte::latte_stop!("layout_empty_stop");
    }
    let options = demo::Options {
        ring_capacity: misuse.then_some(64),
        ..demo::Options::default()
    };
    demo::run(&options);
    let report = latte::Report::collect(&latte::ReportOptions::default());
    println!(
        "{JSON_MARK}{}",
        report.to_json(latte::report::JsonStyle::Compact)
    );
}

/// The demo's report at `columns` (the text between the first and last `=` rules) and
/// the same run's report as JSON.
fn demo(columns: usize, misuse: bool) -> (String, serde_json::Value) {
    // Through cargo's runner when there is one (qemu-user for aarch64).
    let child = common::this_test_binary()
        .args(["--exact", "--nocapture", "--test-threads=1"])
        .arg(common::test_name(module_path!(), "demo_child"))
        .env(
            "LATTE_LAYOUT_CHILD",
            if misuse { "misuse" } else { "plain" },
        )
        .env("COLUMNS", columns.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run the child");
    // A watchdog against a hang, never a timing: the child is killed after 10 minutes.
    let pid = child.id();
    let (done, waited) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if waited.recv_timeout(Duration::from_secs(600)).is_err() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    });
    let out = child.wait_with_output().expect("the child's output");
    let _ = done.send(());
    watchdog.join().unwrap();
    assert!(out.status.success(), "the child failed: {:?}", out.status);
    let text = String::from_utf8(out.stdout).unwrap();
    let json = text
        .lines()
        .find_map(|l| l.strip_prefix(JSON_MARK))
        .expect("the child's JSON report");
    // The report starts with its rule (libtest's `test demo_child ... ` may precede it
    // on the same line) and ends with one.
    let from = text
        .find(&"=".repeat(columns))
        .expect("the report's first rule");
    let lines: Vec<&str> = text[from..].lines().collect();
    let rule = |l: &&str| !l.is_empty() && l.chars().all(|c| c == '=');
    let last = lines
        .iter()
        .rposition(rule)
        .expect("the report's last rule");
    let report = lines[..=last].join("\n");
    (report, serde_json::from_str(json).unwrap())
}

/// One table of the report: its headers and, per row, the cell under each header.
struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// The component tables of `report` (not the tails block), cut into cells by the
/// headers' positions: COMPONENT is left-aligned, every other column ends where its
/// header ends.
fn tables(report: &str) -> Vec<Table> {
    let lines: Vec<&str> = report.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with("COMPONENT") || line.contains("OF TIME") {
            continue;
        }
        // Headers and the column where each ends.
        let headers: Vec<(String, usize)> = common::header_titles(line)
            .into_iter()
            .map(|(title, end)| (title.to_owned(), end))
            .collect();
        let mut rows = Vec::new();
        for row in lines[i + 2..].iter().take_while(|l| !l.is_empty()) {
            if !row.contains("  ") && !row.starts_with(char::is_alphanumeric) {
                break;
            }
            // A note under the table (anomalies, `and N more`) is not a row.
            let chars: Vec<char> = row.chars().collect();
            if chars.len() < headers.last().unwrap().1 {
                break;
            }
            // The id, then SAMPLES right-aligned up to its header's end: the id is what
            // comes before the last space in front of the count.
            let first: String = chars[..headers[1].1].iter().collect();
            // A line that divides a node's time has no SAMPLES.
            let (id, samples) = match first.trim() {
                part if PARTS.contains(&part) => (first.trim_end(), ""),
                _ => first.trim_end().rsplit_once(' ').unwrap(),
            };
            // The id keeps its indentation: a tree's depth.
            let mut cells = vec![id.trim_end().to_owned(), samples.to_owned()];
            let mut start = headers[1].1;
            for (_, end) in &headers[2..] {
                cells.push(
                    chars[start..*end]
                        .iter()
                        .collect::<String>()
                        .trim()
                        .to_owned(),
                );
                start = *end;
            }
            rows.push(cells);
        }
        out.push(Table {
            headers: headers.into_iter().map(|(h, _)| h).collect(),
            rows,
        });
    }
    out
}

/// A time cell: 4 significant figures and a unit, `< 1 step`, or `-`.
fn is_time(cell: &str) -> bool {
    if cell == "< 1 step" || cell == "-" || cell == "0 ns" {
        return true;
    }
    let Some((number, unit)) = cell.rsplit_once(' ') else {
        return false;
    };
    let digits: String = number
        .trim_start_matches('-')
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let significant = digits.trim_start_matches('0').len();
    let plain = number.parse::<f64>().is_ok() && !number.contains('e');
    ["ps", "ns", "us", "ms", "s"].contains(&unit)
        && plain
        && (significant == 4 || (unit == "s" && !number.contains('.') && significant > 4))
}

/// A share: `-`, `0%`, `<0.1%` or a percentage with one decimal.
fn is_share(cell: &str) -> bool {
    let one_decimal =
        |n: &str| n.parse::<f64>().is_ok() && n.split('.').nth(1).is_some_and(|d| d.len() == 1);
    matches!(cell, "-" | "0%" | "<0.1%") || cell.strip_suffix('%').is_some_and(one_decimal)
}

/// A count: digits grouped by three with commas.
fn is_count(cell: &str) -> bool {
    let groups: Vec<&str> = cell.split(',').collect();
    !groups[0].is_empty()
        && groups[0].len() <= 3
        && groups.iter().all(|g| g.chars().all(|c| c.is_ascii_digit()))
        && groups[1..].iter().all(|g| g.len() == 3)
        && !(groups.len() > 1 && groups[0].starts_with('0'))
}

/// The lines under a tree node that divide its time.
const PARTS: [&str; 3] = ["(self)", "(latte inside)", "(not attributed)"];

/// A time cell in nanoseconds (`< 1 step` and `-` are not numbers).
fn ns(cell: &str) -> Option<f64> {
    let (number, unit) = cell.rsplit_once(' ')?;
    let scale = match unit {
        "ps" => 1e-3,
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    Some(number.parse::<f64>().ok()? * scale)
}

/// A share cell in percent (`<0.1%` as 0.05, `-` as none).
fn percent(cell: &str) -> Option<f64> {
    match cell {
        "<0.1%" => Some(0.05),
        _ => cell.strip_suffix('%')?.parse().ok(),
    }
}

/// In a call tree's table, every node that divides its time: its children's and its
/// parts' `TOTAL` add up to its own, and their `% PARENT` to 100%, to the printed
/// rounding (4 significant figures a time, one decimal a share).
fn tree_adds_up(table: &Table) {
    let col = |name: &str| table.headers.iter().position(|h| h == name);
    let (Some(total), Some(of_parent)) = (col("TOTAL"), col("% PARENT")) else {
        return;
    };
    let depth = |row: &Vec<String>| row[0].len() - row[0].trim_start().len();
    let rows = &table.rows;
    let mut checked = 0;
    for (i, parent) in rows.iter().enumerate() {
        // Its children and parts: the rows one level deeper, until one as shallow.
        let below: Vec<&Vec<String>> = rows[i + 1..]
            .iter()
            .take_while(|r| depth(r) > depth(parent))
            .filter(|r| depth(r) == depth(parent) + 2)
            .collect();
        if !below.iter().any(|r| PARTS.contains(&r[0].trim())) {
            continue;
        }
        let whole = ns(&parent[total]).unwrap();
        let sum: f64 = below.iter().map(|r| ns(&r[total]).unwrap_or(0.0)).sum();
        let rounding: f64 = below
            .iter()
            .map(|r| ns(&r[total]).unwrap_or(0.0).abs() * 5e-4)
            .sum();
        assert!(
            (sum - whole).abs() <= rounding + whole * 5e-4 + 0.01,
            "{}: TOTAL {whole} ns, its children and parts {sum} ns",
            parent[0]
        );
        let shares: f64 = below.iter().filter_map(|r| percent(&r[of_parent])).sum();
        assert!(
            (shares - 100.0).abs() <= 0.05 * below.len() as f64 + 0.05,
            "{}: shares add to {shares}%",
            parent[0]
        );
        checked += 1;
    }
    // Every node that divides its time was checked.
    let parents = rows.iter().filter(|r| r[0].trim() == "(self)").count();
    assert_eq!(checked, parents);
}

/// In the demo's JSON, every node of every tree (each thread's and ALL THREADS) that
/// has an account: `total = own + children + inside + not_attributed` in ticks, its
/// `children` the sum of its children's, its `total` its row's `TOTAL`; nothing is
/// left unattributed when the run lost no sample; pulses have no self time. Returns
/// how many accounts it checked.
fn json_adds_up(json: &serde_json::Value, lost: bool) -> usize {
    let report: latte::Report = serde_json::from_value(json.clone()).unwrap();
    let per_tick = report.per_tick();
    let trees = report.threads.iter().map(|t| &t.tree).chain([&report.tree]);
    let mut checked = 0;
    for tree in trees {
        for (i, node) in tree.iter().enumerate() {
            let timed = node.row.kind.is_time_in();
            assert!(timed || node.self_time.is_none(), "{}", node.row.component);
            let Some(a) = node.account else { continue };
            let sum = i128::from(a.own) + i128::from(a.children) + i128::from(a.inside);
            assert_eq!(i128::from(a.total), sum + i128::from(a.not_attributed));
            let kids: u64 = tree
                .iter()
                .filter(|k| k.parent == Some(i))
                .map(|k| k.account.map_or(0, |k| k.total))
                .sum();
            assert_eq!(a.children, kids, "{}", node.row.component);
            let total = a.total as f64 * per_tick;
            assert!((total - node.row.stats.total).abs() <= 1e-9 * total.max(1.0));
            if !lost {
                assert_eq!(a.not_attributed, 0, "{}: {a:?}", node.row.component);
            }
            checked += 1;
        }
    }
    checked
}

/// What every report of the demo must show, whatever the width.
fn check(report: &str, json: &serde_json::Value, width: usize) {
    for line in report.lines() {
        assert!(line.width() <= width, "wider than {width}: {line:?}");
    }
    let tables = tables(report);
    assert!(!tables.is_empty(), "no table in:\n{report}");
    for table in &tables {
        tree_adds_up(table);
        for row in &table.rows {
            for (header, cell) in table.headers.iter().zip(row).skip(1) {
                let part = PARTS.contains(&row[0].trim());
                let ok = match header.as_str() {
                    "TOTAL" if part => is_time(cell),
                    "% PARENT" if part => is_share(cell.trim_start_matches('-')),
                    _ if part => cell.is_empty(),
                    "SAMPLES" | "BYPASS" | "OUTLIERS" | "SEEN" | "LOST" | "MIGR" => is_count(cell),
                    "% PARENT" => is_share(cell),
                    "SKEW" => {
                        cell == "-"
                            || cell
                                .parse::<f64>()
                                .is_ok_and(|_| cell.split('.').nth(1).is_some_and(|d| d.len() == 2))
                    }
                    _ => is_time(cell),
                };
                assert!(
                    ok,
                    "{header} cell {cell:?} of {:?} at {width} columns",
                    row[0]
                );
            }
        }
    }
    notices_as_the_data_says(report, json);
}

/// Warnings, lost samples and anomalies: printed exactly when the data has them.
fn notices_as_the_data_says(report: &str, json: &serde_json::Value) {
    let warnings = json["environment"]["warnings"].as_array().unwrap();
    let rows = json["all_threads"].as_array().unwrap();
    let lost: u64 = rows
        .iter()
        .map(|r| r["stats"]["lost"].as_u64().unwrap())
        .sum();
    let anomalies: u64 = json["threads"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["anomalies"].as_object().unwrap().values())
        .map(|v| v.as_u64().unwrap())
        .sum();
    let flat = report.replace("\n  ", " ");
    for w in warnings {
        let w = w.as_str().unwrap();
        // The report's own warning lines say what the JSON says (the one about
        // Fast-mode pooling is made per report: it may name other ids).
        let start: String = w.chars().take(40).collect();
        assert!(
            flat.contains(&format!("warning: {start}")),
            "warning {w:?} missing"
        );
    }
    assert_eq!(flat.contains("warning:"), !warnings.is_empty(), "{report}");
    assert_eq!(
        flat.contains("lost (overwritten"),
        lost > 0,
        "lost {lost}:\n{report}"
    );
    assert_eq!(
        flat.contains("anomalies:"),
        anomalies > 0,
        "anomalies {anomalies}:\n{report}"
    );
}

/// At 80 columns: what fits, in order; what does not, named in one line.
fn what_fits_and_what_is_left_out(report: &str, headers: &[String], narrow: &[&str]) {
    let missing: Vec<&str> = narrow
        .iter()
        .filter(|h| !headers.iter().any(|x| x == *h))
        .copied()
        .collect();
    let kept: Vec<&str> = narrow
        .iter()
        .filter(|h| !missing.contains(h))
        .copied()
        .collect();
    assert_eq!(headers, &kept);
    assert!(!missing.is_empty(), "80 columns hold all nine?");
    let line = report
        .replace("\n  ", " ")
        .lines()
        .find(|l| l.starts_with("left out to fit 80 columns: "))
        .map(str::to_owned)
        .expect("the line naming what was left out");
    for h in &missing {
        assert!(line.contains(h), "{h} not named in {line:?}");
    }
}

/// Scopes by TOTAL, largest first, then the pulses.
fn pulses_come_last(json: &serde_json::Value) {
    let json_rows: Vec<(&str, &str)> = json["threads"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["component"].as_str().unwrap(),
                r["kind"].as_str().unwrap(),
            )
        })
        .collect();
    let first_pulse = json_rows.iter().position(|(_, k)| *k == "Pulse").unwrap();
    assert!(
        json_rows[first_pulse..].iter().all(|(_, k)| *k == "Pulse"),
        "{json_rows:?}"
    );
}

#[test]
fn the_demo_report_at_80_100_and_140_columns() {
    // The demo's main thread nests scopes: its table is a call tree, with the seed's
    // columns and SELF and % PARENT from 120 columns on, and below that the narrow
    // set without STD DEV, MIN and P99.9, with SELF and % PARENT.
    let seed: Vec<&str> = vec![
        "COMPONENT",
        "SAMPLES",
        "AVG",
        "MEDIAN",
        "STD DEV",
        "SKEW",
        "MIN",
        "MAX",
        "RANGE",
        "BYPASS",
        "P99",
        "P99.9",
        "TOTAL",
        "SELF",
        "% PARENT",
    ];
    let narrow: Vec<&str> = vec![
        "COMPONENT",
        "SAMPLES",
        "AVG",
        "MEDIAN",
        "P99",
        "MAX",
        "TOTAL",
        "SELF",
        "% PARENT",
    ];
    for width in [80, 100, 140] {
        let (report, json) = demo(width, false);
        println!("{report}");
        check(&report, &json, width);
        let tables = tables(&report);
        let headers = &tables[0].headers;
        match width {
            140 => assert_eq!(headers, &seed, "the seed's columns in its order"),
            100 => assert_eq!(headers, &narrow),
            _ => what_fits_and_what_is_left_out(&report, headers, &narrow),
        }
        pulses_come_last(&json);
        // Its two parents and their children, on the main thread and in ALL THREADS.
        assert!(json_adds_up(&json, false) >= 2 * 7, "{json}");
        if width == 100 {
            // About one screen. The count moves by a line from run to run with what the
            // rows hold (a wrapped line, an account row), and Windows adds a `counter:`
            // line to ENVIRONMENT: 61 lines in one CI run under Wine (2026-11-28), 59
            // in five runs on Linux.
            let lines = report.lines().count();
            assert!(lines <= 62, "{lines} lines at 100 columns:\n{report}");
        }
    }
}

#[test]
fn lost_samples_and_anomalies_are_printed() {
    let (report, json) = demo(100, true);
    println!("{report}");
    check(&report, &json, 100);
    json_adds_up(&json, true);
    assert!(report.contains("lost (overwritten"), "{report}");
    assert!(report.contains("empty stop"), "{report}");
}
