//! Hostile ids in the table: wide and zero-width characters keep every column in
//! place, control characters are escaped, and shortened ids stay distinct. JSON and
//! CSV carry the exact id.

use crate::common;

use latte::report::{Row, Summary, TableOptions, ThreadReport};
use latte::{Cleaning, Report, Unit};
use std::collections::HashSet;
use unicode_width::UnicodeWidthStr;

fn stats(i: u64) -> Summary {
    let v = 100.0 + i as f64;
    Summary {
        samples: 10 + i,
        seen: 10 + i,
        avg: v,
        median: v,
        min: v,
        max: v,
        p90: v,
        p99: v,
        p999: v,
        total: v * (10 + i) as f64,
        ..Summary::default()
    }
}

fn report(ids: &[String]) -> Report {
    let rows: Vec<Row> = ids
        .iter()
        .zip(0..)
        .map(|(id, i)| Row {
            component: id.clone(),
            stats: stats(i),
            ..Row::default()
        })
        .collect();
    Report {
        figures: latte::report::Figures::All,
        unit: Unit::Time,
        frequency_accuracy: 1e-6,
        resolution: 0.0,
        cleaning: Cleaning::OFF,
        threads: vec![ThreadReport {
            alloc_breach: None,
            outside_allocs: None,
            name: "main".into(),
            serial: 1,
            exited: false,
            anomalies: Default::default(),
            unpaired: Vec::new(),
            open: Vec::new(),
            rows: rows.clone(),
            tree: Vec::new(),
            tree_left_out: 0,
            per_frame: None,
        }],
        all_threads: rows,
        ..Report::default()
    }
}

fn table(report: &Report, width: usize) -> String {
    let options = TableOptions {
        width: Some(width),
        ..TableOptions::default()
    };
    let mut out = Vec::new();
    report
        .write(&mut out, latte::Format::Table(options.clone()))
        .unwrap();
    String::from_utf8(out).unwrap()
}

/// The rows of the (one thread's) table: the lines after its header and rule.
fn rows(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("COMPONENT"))
        .unwrap();
    lines[header + 2..]
        .iter()
        .take_while(|l| !l.is_empty() && !l.starts_with('='))
        .copied()
        .collect()
}

/// The display column where each title after COMPONENT ends in the header: numbers
/// are right-aligned, so each cell of a row ends there too.
fn title_ends(header: &str) -> Vec<usize> {
    common::header_titles(header)[1..]
        .iter()
        .map(|&(_, end)| end)
        .collect()
}

/// The text of `line` from display column `from` to `to`.
fn columns(line: &str, from: usize, to: usize) -> String {
    // Columns as `unicode-width` counts a whole string (an emoji sequence joined by
    // ZWJ is one wide character), as the table does.
    let mut out = String::new();
    for (at, c) in line.char_indices() {
        let (start, end) = (line[..at].width(), line[..at + c.len_utf8()].width());
        if start >= from && end <= to {
            out.push(c);
        }
    }
    out
}

/// A row's id and SAMPLES cell: the text up to the end of SAMPLES, split at its last
/// space.
fn id_and_samples(row: &str, samples_end: usize) -> (String, String) {
    let head = columns(row, 0, samples_end);
    let (id, samples) = head.trim_end().rsplit_once(' ').unwrap();
    (id.trim_end().to_owned(), samples.to_owned())
}

#[test]
fn wide_zero_width_and_control_characters_keep_every_column_in_place() {
    let ids: Vec<String> = [
        "日本語の注文処理",
        "🚀 launch",
        "👨\u{200d}👩\u{200d}👧 family",
        "🇯🇵 flag",
        "e\u{301}cole cafe\u{301}",
        "line\nbreak",
        "tab\there",
        "bell\u{7}esc\u{1b}[31m",
        "rtl\u{202e}gnp.exe",
        "back\\slash",
        "plain",
    ]
    .map(String::from)
    .to_vec();
    for width in [60, 100] {
        let text = table(&report(&ids), width);
        let header = text.lines().find(|l| l.starts_with("COMPONENT")).unwrap();
        let ends = title_ends(header);
        let rows = rows(&text);
        assert_eq!(rows.len(), ids.len(), "a newline is no line break:\n{text}");
        for row in rows {
            // Numbers are right-aligned: each ends where its header ends (a digit or a
            // unit there, a space or the end of the line after it).
            for &end in &ends {
                let last = columns(row, end - 1, end);
                let next = columns(row, end, end + 1);
                assert!(last != " " && !last.is_empty(), "{row:?} at {end}");
                assert!(next == " " || next.is_empty(), "{row:?} at {end}");
            }
            assert_eq!(row.width(), header.width(), "{row:?}");
            assert!(row.width() <= width);
        }
        if width == 100 {
            // Every id in full.
            let wide = TableOptions {
                wide: true,
                ..TableOptions::default()
            };
            let mut out = Vec::new();
            report(&ids)
                .write(&mut out, latte::Format::Table(wide.clone()))
                .unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.contains("line\\nbreak") && text.contains("tab\\there"));
            assert!(text.contains("bell\\u{7}esc\\u{1b}[31m") && text.contains("rtl\\u{202e}gnp"));
            assert!(text.contains("back\\\\slash"), "a backslash is escaped too");
        }
        assert!(!text.contains('\u{1b}') && !text.contains('\t') && !text.contains('\u{202e}'));
    }
}

/// Asserts the table shows every id on a row of its own, each text distinct, and that
/// every numbered id's full text is in the legend.
fn assert_distinct(ids: &[String], width: usize) -> String {
    let text = table(&report(ids), width);
    let header = text.lines().find(|l| l.starts_with("COMPONENT")).unwrap();
    let samples_end = title_ends(header)[0];
    let rows = rows(&text);
    assert_eq!(rows.len(), ids.len());
    let shown: Vec<(String, String)> = rows
        .iter()
        .map(|r| id_and_samples(r, samples_end))
        .collect();
    let distinct: HashSet<&String> = shown.iter().map(|(id, _)| id).collect();
    assert_eq!(distinct.len(), ids.len(), "{shown:#?}");
    // Each row shows its own id's statistics: SAMPLES is 10 + its index (the rows
    // come in the report's order).
    for (i, (_, samples)) in shown.iter().enumerate() {
        assert_eq!(samples.replace(',', ""), (10 + i).to_string());
    }
    text
}

#[test]
fn ids_sharing_a_long_prefix_stay_distinct() {
    let prefix = "venue.XNAS.equities.order_book.".repeat(5)[..150].to_owned();
    let ids: Vec<String> = (0..100)
        .map(|i| format!("{prefix}{:0>50}", i * 7919))
        .collect();
    assert!(ids.iter().all(|id| id.chars().count() == 200));
    for width in [80, 100, 160] {
        let text = assert_distinct(&ids, width);
        assert!(
            !text.contains(" is venue."),
            "a short tail was enough: no legend"
        );
    }
}

#[test]
fn ids_differing_only_in_the_middle_are_numbered_with_a_legend() {
    // Same 150-char head, same 49-char tail: no head-and-tail cut tells them apart.
    let head = "h".repeat(150);
    let tail = "t".repeat(49);
    let ids: Vec<String> = (0..100)
        .map(|i| format!("{head}{}{tail}", char::from_u32(0x4e00 + i).unwrap()))
        .collect();
    let text = assert_distinct(&ids, 100);
    for id in &ids {
        let joined = text.replace("\n  ", "");
        assert!(joined.contains(id.as_str()), "legend names {id}");
    }
    assert_eq!(
        text.matches("~#").count(),
        ids.len() + ids.len(),
        "one table (one thread) + legend"
    );
}

#[test]
fn a_cut_never_looks_like_another_id_shown_in_full() {
    // The cut of the long ids would read `aaa...~` and `aaa...~z`: both are also ids.
    let long = "a".repeat(60);
    let mut ids = vec![format!("{long}y"), format!("{long}z")];
    for width in 8..40 {
        ids.push(format!("{}~", "a".repeat(width - 1)));
        ids.push(format!("{}~z", "a".repeat(width.saturating_sub(2))));
        ids.push(format!("{}~#1", "a".repeat(width.saturating_sub(3))));
    }
    ids.sort();
    ids.dedup();
    assert_distinct(&ids, 60);
    assert_distinct(&ids, 80);
}

#[test]
fn json_keeps_the_exact_id() {
    let ids = vec!["a\nb\t\u{202e}日本\u{301}".to_owned(), "x".repeat(300)];
    let json = report(&ids).to_json(latte::report::JsonStyle::Compact);
    let back: Report = serde_json::from_str(&json).unwrap();
    let names: Vec<&str> = back
        .all_threads
        .iter()
        .map(|r| r.component.as_str())
        .collect();
    assert_eq!(names, ids);
}

static HOSTILE: latte::Id = latte::Id::new("csv,\"quoted\"\nline\t日本\u{202e}");

#[test]
fn csv_keeps_the_exact_id() {
    latte::record(&HOSTILE, 42);
    let mut out = Vec::new();
    latte::capture().write_csv(1.0, &mut out).unwrap();
    let mut reader = csv::Reader::from_reader(out.as_slice());
    let column = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "component")
        .unwrap();
    let found = reader
        .records()
        .map(Result::unwrap)
        .any(|r| &r[column] == HOSTILE.name());
    assert!(found);
}
