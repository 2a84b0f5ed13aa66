//! `diff --markdown` for a pull-request comment, `--all`, and inconclusive intervals:
//! a warning that names them, and `--strict`, which fails on them. The markdown's
//! layout is the contract, so it is pinned by snapshots, of one run and of several
//! runs per side.

use super::{TREE, stderr, stdout, tool, tree_report};
use crate::cli_support::{self, Component};
use std::path::{Path, PathBuf};

/// The components of the test runs, each with the factor its median is multiplied by
/// in the new runs: one regressed, one improved, one unchanged on enough samples to
/// say so, one too small for its p99.9, and one with markdown's characters in its name.
const MIXED: [(Component, f64); 5] = [
    (component("fast", 400.0, 40_000), 1.2),
    (component("slow", 50_000.0, 40_000), 0.8),
    (component("steady", 3_000.0, 400_000), 1.0),
    (component("rare", 900.0, 2_000), 1.0),
    (component("Parse|Lex_*all*", 5_000.0, 40_000), 1.1),
];

const fn component(name: &'static str, median: f64, samples: usize) -> Component {
    Component {
        name,
        median,
        sigma: 0.2,
        samples,
    }
}

/// A report of `parts` (new runs with each median multiplied by its factor).
fn run(path: &Path, parts: &[(Component, f64)], new: bool, seed: u64) -> PathBuf {
    let rows = parts
        .iter()
        .enumerate()
        .map(|(i, &(c, factor))| {
            let shifted = Component {
                median: if new { c.median * factor } else { c.median },
                ..c
            };
            let hist = cli_support::histogram(&shifted, seed * 1_000 + i as u64);
            cli_support::row(c.name, &hist)
        })
        .collect();
    cli_support::write_report(path, &cli_support::report(rows))
}

/// `runs` base and `runs` new reports of `parts` in `d`.
fn runs(d: &Path, parts: &[(Component, f64)], runs: u64) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let side = |name: &str, new: bool, first: u64| {
        (0..runs)
            .map(|i| run(&d.join(format!("{name}-{i}.json")), parts, new, first + i))
            .collect()
    };
    (side("base", false, 1), side("new", true, 100))
}

/// `diff` with these options of the base and new runs: the two-file form for one run
/// per side, `--base ... --new ...` for several.
fn diff(options: &[&str], (base, new): &(Vec<PathBuf>, Vec<PathBuf>)) -> assert_cmd::Command {
    let mut cmd = tool();
    cmd.arg("diff").args(options);
    if base.len() == 1 && new.len() == 1 {
        cmd.arg(&base[0]).arg(&new[0]);
    } else {
        cmd.arg("--base").args(base).arg("--new").args(new);
    }
    cmd
}

/// The cells of a markdown table line, trimmed, split where GitHub splits them: at
/// each `|` without a backslash before it (the borders at both ends included, so
/// the first and last cells are empty).
fn cells(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut escaped = false;
    for ch in line.chars() {
        if ch == '|' && !escaped {
            cells.push(String::new());
        } else {
            cells.last_mut().unwrap().push(ch);
        }
        escaped = ch == '\\' && !escaped;
    }
    cells.iter().map(|c| c.trim().to_string()).collect()
}

/// The lines of the markdown's tables.
fn table_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with('|')).collect()
}

#[test]
fn markdown_of_one_run_per_side() {
    let d = cli_support::dir("markdown_one");
    let text = stdout(&mut diff(&["--markdown"], &runs(&d, &MIXED, 1)), 1);
    insta::assert_snapshot!("one_run_per_side", text);
}

#[test]
fn markdown_of_several_runs_per_side() {
    let d = cli_support::dir("markdown_several");
    let text = stdout(&mut diff(&["--markdown"], &runs(&d, &MIXED, 3)), 1);
    insta::assert_snapshot!("three_runs_per_side", text);
}

/// The markdown leaves out the rows with no change at any quantile and says so;
/// `--all` keeps them. The table shows every row either way.
#[test]
fn markdown_leaves_out_unchanged_rows_unless_all() {
    let d = cli_support::dir("markdown_all");
    for count in [1, 3] {
        let files = runs(&d, &MIXED, count);
        let text = stdout(&mut diff(&["--markdown"], &files), 1);
        assert!(!text.contains("steady"), "{text}");
        assert!(
            text.contains(
                "- 1 component with no change (or below resolution) at every quantile is left \
                 out; `--all` shows it."
            ),
            "{text}"
        );
        // Four components shown, three quantiles each, under a header and a separator.
        assert_eq!(table_lines(&text).len(), 2 + 4 * 3, "{text}");
        let all = stdout(&mut diff(&["--markdown", "--all"], &files), 1);
        let steady: Vec<&str> = all.lines().filter(|l| l.contains("steady")).collect();
        assert_eq!(steady.len(), 1, "{all}");
        assert_eq!(cells(steady[0])[7], "no change", "{all}");
        assert!(!all.contains("left out"), "{all}");
        assert_eq!(table_lines(&all).len(), 2 + 5 * 3, "{all}");
        // The table: every row, with --all or without.
        let table = stdout(&mut diff(&[], &files), 1);
        assert!(table.contains(" steady "), "{table}");
        assert_eq!(table, stdout(&mut diff(&["--all"], &files), 1));
    }
}

/// A name with `|` (and `_`, `*`) stays in its cell and reads as itself: every table
/// line has the 8 borders of 7 cells, and the name is escaped.
#[test]
fn a_pipe_in_a_name_stays_in_its_cell() {
    let d = cli_support::dir("markdown_pipe");
    for count in [1, 3] {
        let text = stdout(&mut diff(&["--markdown"], &runs(&d, &MIXED, count)), 1);
        let lines = table_lines(&text);
        assert!(lines.iter().all(|l| cells(l).len() == 9), "{text}");
        let named: Vec<&&str> = lines.iter().filter(|l| l.contains("Parse")).collect();
        assert_eq!(named.len(), 1, "{text}");
        assert_eq!(cells(named[0])[1], r"Parse\|Lex\_\*all\*", "{text}");
    }
}

/// Inconclusive intervals alone pass the gate with a warning that counts them and
/// says why; `--strict` fails on them. Nothing inconclusive: no warning, and `--strict`
/// passes.
#[test]
fn inconclusive_alone_warns_and_strict_fails() {
    let d = cli_support::dir("markdown_strict");
    let rare = [MIXED[3]];
    for count in [1, 3] {
        let files = runs(&d, &rare, count);
        for output in [&[][..], &["--markdown"], &["--json"]] {
            let warning = stderr(&mut diff(output, &files), 0);
            assert!(
                warning.starts_with("warning: ")
                    && warning.contains(" of 3 verdicts inconclusive ("),
                "{warning}"
            );
            assert!(
                warning.contains("1 × too few samples (2000 of the 10000 needed)"),
                "{warning}"
            );
            assert!(warning.contains("--strict makes that fail"), "{warning}");
            assert_eq!(warning.lines().count(), 1, "{warning}");
            let strict: Vec<&str> = [output, &["--strict"][..]].concat();
            let failure = stderr(&mut diff(&strict, &files), 1);
            assert!(
                failure.starts_with("latte-telemetry: ")
                    && failure.contains(" of 3 verdicts inconclusive (")
                    && failure.trim_end().ends_with("--strict fails on that"),
                "{failure}"
            );
        }
        inconclusive_rows_say_why(&files);
    }
    // Enough samples everywhere, nothing changed: no warning, and --strict passes.
    let enough = d.join("enough");
    std::fs::create_dir_all(&enough).unwrap();
    let files = runs(&enough, &[MIXED[2]], 1);
    let quiet = stderr(&mut diff(&["--strict"], &files), 0);
    assert_eq!(quiet, "");
    let text = stdout(&mut diff(&["--markdown", "--strict"], &files), 0);
    assert!(
        text.starts_with("**no change** beyond ±5% in 1 component"),
        "{text}"
    );
}

/// Every inconclusive row of the table and the markdown gives its reason, not the word
/// alone; the markdown's headline counts the row.
fn inconclusive_rows_say_why(files: &(Vec<PathBuf>, Vec<PathBuf>)) {
    let table = stdout(&mut diff(&[], files), 0);
    let inconclusive: Vec<&str> = table
        .lines()
        .filter(|l| l.contains("inconclusive"))
        .collect();
    assert!(!inconclusive.is_empty(), "{table}");
    assert!(
        inconclusive.iter().all(|l| l.contains("inconclusive: ")),
        "{table}"
    );
    let markdown = stdout(&mut diff(&["--markdown"], files), 0);
    assert!(
        markdown.starts_with("**no regression** beyond ±5%, but 1 of 1 component inconclusive"),
        "{markdown}"
    );
    let verdicts: Vec<String> = table_lines(&markdown)
        .into_iter()
        .skip(2)
        .map(|row| cells(row)[7].clone())
        .collect();
    assert_eq!(
        verdicts[2], "inconclusive: too few samples (2000 of the 10000 needed)",
        "{markdown}"
    );
    for verdict in verdicts.iter().filter(|v| v.starts_with("inconclusive")) {
        assert!(verdict.starts_with("inconclusive: "), "{markdown}");
    }
}

/// The table names the threshold and the error control; JSON carries them.
#[test]
fn the_table_names_the_threshold_and_the_error_control() {
    let d = cli_support::dir("markdown_control");
    let files = runs(&d, &MIXED, 1);
    let text = stdout(&mut diff(&["--threshold", "3"], &files), 1);
    let mut lines = text.lines();
    let first = lines.next().unwrap();
    // 15 verdicts, 14 intervals: the rare component's p99.9 has too few samples for one.
    assert!(first.contains("threshold ±3%, 99.929% intervals"), "{text}");
    assert_eq!(
        lines.next().unwrap(),
        "error control: Bonferroni over 14 intervals (each at 99.929%): at most a 1% chance \
         of any false alarm when nothing changed"
    );
    assert!(text.contains("99.929% INTERVAL"), "{text}");
    let json = stdout(&mut diff(&["--json"], &files), 1);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["family_wise"], 0.01);
    assert_eq!(json["comparisons"], 14);
    assert!(
        json["error_control"]
            .as_str()
            .unwrap()
            .starts_with("Bonferroni over 14 intervals"),
        "{json}"
    );
    // --filter leaves fewer intervals, and the control is over those.
    let text = stdout(&mut diff(&["--markdown", "--filter", "fast"], &files), 1);
    assert!(
        text.contains("Error control: Bonferroni over 3 intervals (each at 99.67%)"),
        "{text}"
    );
}

/// Call-tree nodes get a table of their own, by full path; the unchanged ones are
/// left out and counted.
#[test]
fn markdown_lists_call_tree_paths() {
    let d = cli_support::dir("markdown_tree");
    let base = tree_report(&d.join("base.json"), &TREE, &[], 1);
    let new = tree_report(&d.join("new.json"), &TREE, &[(2, 1.3)], 2);
    let text = stdout(tool().args(["diff", "--markdown"]).arg(&base).arg(&new), 1);
    let tree = &text[text.find("Call tree, by path").expect(&text)..];
    let physics: Vec<&str> = tree
        .lines()
        .filter(|l| l.starts_with("| Frame > Physics > Collide "))
        .collect();
    assert_eq!(physics.len(), 1, "{text}");
    assert!(physics[0].contains("**regressed**"), "{text}");
    assert!(
        text.starts_with("**regressed** beyond ±5%: 1 of 10 components and call-tree paths"),
        "{text}"
    );
    // The flat rows are the same histograms on both sides: no change, left out.
    assert!(
        text.contains("- 5 components") && text.contains("left out; `--all` shows them."),
        "{text}"
    );
}
