//! The `latte-telemetry` command-line tool, run as a process on synthetic reports:
//! exit codes, `--json` output, and errors that name the file and the problem;
//! `diff --markdown` and inconclusive intervals in `cli/diff_markdown.rs`; reports no
//! latte writes, refused, in `cli/refused.rs`; `html` of a component below one counter
//! step in `cli/substep.rs`.

mod cli_support;
#[path = "cli/diff_markdown.rs"]
mod diff_markdown;
#[path = "cli/refused.rs"]
mod refused;
#[path = "cli/substep.rs"]
mod substep;

use assert_cmd::Command;
use cli_support::{COMPONENTS, dir, write, write_report};
use latte::report::Distribution;
use std::path::{Path, PathBuf};

/// The tool, its tables laid out 200 columns wide unless a test says otherwise (so
/// that a test reads whole verdicts; `diff_lines_fit_the_width` checks narrower
/// widths).
fn tool() -> Command {
    let mut cmd = Command::cargo_bin("latte-telemetry").unwrap();
    cmd.env("COLUMNS", "200");
    cmd
}

fn stdout(cmd: &mut Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().clone();
    String::from_utf8(out.stdout).unwrap()
}

fn stderr(cmd: &mut Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().clone();
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn diff_exit_status_follows_the_verdicts() {
    let d = dir("exit");
    let base = write(&d.join("base.json"), &COMPONENTS, 1.0, 1);
    let slower = write(&d.join("slower.json"), &COMPONENTS, 1.2, 2);
    let faster = write(&d.join("faster.json"), &COMPONENTS, 0.8, 3);
    let same = write(&d.join("same.json"), &COMPONENTS, 1.0, 4);

    let text = stdout(tool().args(["diff"]).arg(&base).arg(&slower), 1);
    assert!(
        text.contains("REGRESSED beyond ±5%: fast (p50, p99, p99.9)"),
        "{text}"
    );
    assert!(text.contains("one run per side"), "{text}");
    let text = stdout(tool().args(["diff"]).arg(&base).arg(&faster), 0);
    // 20% faster everywhere: `improved`, but for the wide component's p99.9 (40 values
    // beyond it, one per block), whose interval at 99.89% may well reach 0.
    assert!(text.matches("improved").count() >= 8, "{text}");
    assert!(!text.contains("regressed"), "{text}");
    let text = stdout(tool().args(["diff"]).arg(&base).arg(&same), 0);
    assert!(text.contains("no regression beyond ±5%"), "{text}");
    only_the_components_asked_for_decide(&d, &base);
    a_gate_that_compared_nothing_fails(&d, &base, &slower);
    // A reader that closes the pipe early does not turn a regression into an error.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_latte-telemetry"))
        .arg("diff")
        .arg(&base)
        .arg(&slower)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(1));
    // A threshold above the shift: a real change, but within the noise allowed.
    let text = stdout(
        tool()
            .args(["diff", "--threshold", "30"])
            .arg(&base)
            .arg(&slower),
        0,
    );
    assert!(!text.contains("regressed"), "{text}");
}

/// Only the components asked for decide the exit status: `slow` regressed alone.
fn only_the_components_asked_for_decide(d: &Path, base: &Path) {
    let partly = cli_support::report(
        COMPONENTS
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let shifted = cli_support::Component {
                    median: if c.name == "slow" {
                        c.median * 1.2
                    } else {
                        c.median
                    },
                    ..*c
                };
                cli_support::row(c.name, &cli_support::histogram(&shifted, 10 + i as u64))
            })
            .collect(),
    );
    let partly = write_report(&d.join("partly.json"), &partly);
    let text = stdout(tool().args(["diff"]).arg(base).arg(&partly), 1);
    assert!(text.contains("REGRESSED beyond ±5%: slow"), "{text}");
    let text = stdout(
        tool()
            .args(["diff", "--filter", "fa*"])
            .arg(base)
            .arg(&partly),
        0,
    );
    assert!(text.contains("no regression"), "{text}");
}

/// A gate that compared nothing does not pass: a filter that matches nothing, or
/// reports with no component in common, are errors (exit 2), not "no regression".
fn a_gate_that_compared_nothing_fails(d: &Path, base: &Path, slower: &Path) {
    let text = stderr(
        tool()
            .args(["diff", "--filter", "Fast*"])
            .arg(base)
            .arg(slower),
        2,
    );
    assert!(
        text.contains("--filter 'Fast*' matches no component of the reports"),
        "{text}"
    );
    let empty = write_report(&d.join("empty.json"), &cli_support::report(Vec::new()));
    let text = stderr(tool().args(["diff"]).arg(base).arg(&empty), 2);
    assert!(
        text.contains("nothing compared (only in base: fast, slow, wide"),
        "{text}"
    );
}

#[test]
fn diff_json_parses_and_carries_intervals() {
    let d = dir("json");
    let base = write(&d.join("base.json"), &COMPONENTS, 1.0, 1);
    let new = write(&d.join("new.json"), &COMPONENTS, 1.2, 2);
    let text = stdout(tool().args(["diff", "--json"]).arg(&base).arg(&new), 1);
    let json: serde_json::Value = serde_json::from_str(&text).expect("diff --json is JSON");
    assert_eq!(json["regressed"], true);
    assert_eq!(json["method"], "blocks");
    assert_eq!(json["components"].as_array().unwrap().len(), 3);
    for component in json["components"].as_array().unwrap() {
        for change in component["changes"].as_array().unwrap() {
            let (low, high) = (
                change["low"].as_f64().unwrap(),
                change["high"].as_f64().unwrap(),
            );
            assert!(low <= 0.2 && 0.2 <= high, "{change}");
            // The wide component's p99.9 rests on 40 values: its interval may be
            // too wide to call.
            if component["component"] != "wide" {
                assert_eq!(change["verdict"], "regressed", "{change}");
            }
        }
    }
}

#[test]
fn diff_with_several_runs_and_components_on_one_side() {
    let d = dir("runs");
    let with_extra = |name: &'static str, shift, seed| {
        let mut components = COMPONENTS.to_vec();
        components.truncate(2);
        components.push(cli_support::Component {
            name,
            median: 900.0,
            sigma: 0.2,
            samples: 5_000,
        });
        write(
            &d.join(format!("{name}-{seed}.json")),
            &components,
            shift,
            seed,
        )
    };
    let base: Vec<_> = (1..=3).map(|s| with_extra("old_only", 1.0, s)).collect();
    let new: Vec<_> = (4..=6).map(|s| with_extra("new_only", 1.05, s)).collect();
    let mut cmd = tool();
    cmd.args(["diff", "--json", "--threshold", "2", "--base"])
        .args(&base)
        .arg("--new")
        .args(&new);
    let json: serde_json::Value = serde_json::from_str(&stdout(&mut cmd, 1)).unwrap();
    assert_eq!(json["method"], "runs");
    assert_eq!(json["only_in_base"], serde_json::json!(["old_only"]));
    assert_eq!(json["only_in_new"], serde_json::json!(["new_only"]));
    let fast = &json["components"][0];
    assert_eq!(fast["component"], "fast");
    assert_eq!(fast["changes"][0]["verdict"], "regressed", "{fast}");
    let mut cmd = tool();
    cmd.args(["diff", "--base"])
        .args(&base)
        .arg("--new")
        .args(&new);
    let text = stdout(&mut cmd, 1);
    assert!(
        text.contains("only in base: old_only") && text.contains("only in new: new_only"),
        "{text}"
    );
}

#[test]
fn bad_input_names_the_file_and_the_problem() {
    let d = dir("bad");
    let good = write(&d.join("good.json"), &COMPONENTS[..1], 1.0, 1);
    let cases = unusable_reports(&d);
    for (file, expected) in &cases {
        let text = stderr(tool().arg("diff").arg(&good).arg(file), 2);
        assert!(
            text.contains(expected),
            "diff with {}: {text}",
            file.display()
        );
        assert_eq!(text.lines().count(), 1, "one line: {text}");
        let html = d.join("page.html");
        let text = stderr(
            tool().arg("html").arg(&good).arg(file).arg("-o").arg(&html),
            2,
        );
        assert!(
            text.contains(expected),
            "html with {}: {text}",
            file.display()
        );
    }
    let not_json = &cases[1].0;
    let text = stderr(tool().arg("show").arg(not_json), 2);
    assert!(text.contains("notes.txt: not a latte report"), "{text}");
    arguments_that_cannot_work_are_named(&good);
    // A counter frequency that is no frequency (JSON has no infinities).
    for (name, value) in [("zero", 0.0), ("negative", -2.5)] {
        let mut report = cli_support::report(vec![cli_support::row(
            "fast",
            &cli_support::histogram(&COMPONENTS[0], 1),
        )]);
        report.ticks_per_ns = value;
        let file = write_report(&d.join(format!("{name}.json")), &report);
        let text = stderr(tool().arg("show").arg(&file), 2);
        assert!(
            text.contains(&format!("{name}.json: ticks_per_ns is")),
            "{name}: {text}"
        );
    }
    // Nothing to draw is an error too.
    let text = stderr(
        tool()
            .args(["html", "--filter", "nothing*", "-o"])
            .arg(d.join("none.html"))
            .arg(&good),
        2,
    );
    assert!(text.contains("matches no component with samples"), "{text}");
}

/// Files that are no usable report, each with what the error says of it.
fn unusable_reports(d: &Path) -> [(PathBuf, &'static str); 6] {
    let missing = d.join("missing.json");
    let not_json = d.join("notes.txt");
    std::fs::write(&not_json, "median went up, I think\n").unwrap();
    let other_json = d.join("other.json");
    std::fs::write(&other_json, r#"{"name": "not a report"}"#).unwrap();
    let mut old = cli_support::report(vec![cli_support::row(
        "fast",
        &cli_support::histogram(&COMPONENTS[0], 1),
    )]);
    old.all_threads[0].distribution = Distribution::default();
    let old = write_report(&d.join("old.json"), &old);
    let mut in_ns = cli_support::report(vec![cli_support::row(
        "fast",
        &cli_support::histogram(&COMPONENTS[0], 1),
    )]);
    in_ns.unit = latte::Unit::Time;
    let in_ns = write_report(&d.join("ns.json"), &in_ns);
    let mut os_clock = cli_support::report(vec![cli_support::row(
        "fast",
        &cli_support::histogram(&COMPONENTS[0], 1),
    )]);
    os_clock.clock = "OS monotonic clock".into();
    let os_clock = write_report(&d.join("os.json"), &os_clock);

    [
        (missing, "missing.json: cannot read it"),
        (not_json, "notes.txt: not a latte report: not JSON"),
        (
            other_json,
            "other.json: not a latte report: a JSON document without latte's fields",
        ),
        (
            old,
            "old.json: component `fast` has no histogram: the report comes from an older latte",
        ),
        (in_ns, "ns.json: its values are in nanoseconds but"),
        (
            os_clock,
            "os.json: it was measured with the clock `OS monotonic clock` but",
        ),
    ]
}

/// Arguments that cannot work: a negative threshold, one report, one run given twice.
fn arguments_that_cannot_work_are_named(good: &Path) {
    let text = stderr(
        tool().args(["diff", "--threshold=-3"]).arg(good).arg(good),
        2,
    );
    assert!(text.contains("--threshold -3"), "{text}");
    let text = stderr(tool().args(["diff"]).arg(good), 2);
    assert!(text.contains("BASE.json NEW.json"), "{text}");
    // One run given twice would count as two alike runs.
    let text = stderr(
        tool()
            .args(["diff", "--base"])
            .arg(good)
            .arg(good)
            .arg("--new")
            .arg(good),
        2,
    );
    assert!(
        text.contains("good.json: given twice on one side"),
        "{text}"
    );
}

/// The agent's stream (one report per line, periodic ones first) is read as its
/// final report; a pretty-printed report reads too.
#[test]
fn a_stream_of_reports_is_read_as_its_final_report() {
    let d = dir("stream");
    let one = |name: &'static str, label: &str| {
        let hist = cli_support::histogram(&COMPONENTS[0], 1);
        let mut report = cli_support::report(vec![cli_support::row(name, &hist)]);
        report.label = Some(label.into());
        report
    };
    let lines = [
        one("in_periodic_1", "periodic #1, last 1.00 s"),
        one("in_final", "final"),
        one("in_periodic_2", "periodic #2, last 1.00 s"),
    ]
    .iter()
    .map(|r| r.to_json(latte::report::JsonStyle::Compact))
    .collect::<Vec<_>>()
    .join("\n");
    let stream = d.join("stream.json");
    std::fs::write(&stream, lines + "\n").unwrap();
    let text = stdout(tool().arg("show").arg(&stream), 0);
    assert!(
        text.contains("in_final") && !text.contains("in_periodic"),
        "{text}"
    );
    let pretty = d.join("pretty.json");
    std::fs::write(
        &pretty,
        one("pretty_one", "final").to_json(latte::report::JsonStyle::Pretty),
    )
    .unwrap();
    let text = stdout(tool().arg("show").arg(&pretty), 0);
    assert!(text.contains("pretty_one"), "{text}");
}

#[test]
fn show_takes_the_librarys_table_options() {
    let d = dir("show");
    let file = write(&d.join("r.json"), &COMPONENTS, 1.0, 1);
    let text = stdout(tool().args(["show", "--width", "80"]).arg(&file), 0);
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    for c in &COMPONENTS {
        assert!(text.contains(c.name), "{text}");
    }
    let args = [
        "show",
        "--sort",
        "median",
        "--top",
        "1",
        "--columns",
        "samples,median,p99.9",
    ];
    let text = stdout(tool().args(args).arg(&file), 0);
    assert!(
        text.contains("slow") && !text.contains("fast") && !text.contains("wide"),
        "{text}"
    );
    assert!(text.contains("P99.9") && !text.contains("P90"), "{text}");
    let text = stdout(
        tool()
            .args(["show", "--filter", "f*", "--unit", "time"])
            .arg(&file),
        0,
    );
    assert!(text.contains("fast") && !text.contains("slow"), "{text}");
    assert!(
        text.contains(" ns ") && !text.contains(" k "),
        "times in their units after --unit time, no tick multiples: {text}"
    );
    let text = stderr(tool().args(["show", "--columns", "bogus"]).arg(&file), 2);
    assert!(text.contains("no column `bogus`"), "{text}");
}

#[test]
fn html_writes_one_self_contained_page() {
    let d = dir("html");
    let a = write(&d.join("a.json"), &COMPONENTS, 1.0, 1);
    let b = write(&d.join("b.json"), &COMPONENTS[..2], 1.3, 2);
    let page = d.join("page.html");
    tool()
        .arg("html")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&page)
        .assert()
        .code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<figure class=\"plot\"").count(), 3);
    assert_eq!(html.matches("<svg").count(), 3);
    let only = d.join("only.html");
    tool()
        .args(["html", "--filter", "w*"])
        .arg(&a)
        .arg("-o")
        .arg(&only)
        .assert()
        .code(0);
    let html_only = std::fs::read_to_string(&only).unwrap();
    assert_eq!(
        html_only
            .matches("<figure class=\"plot\" data-component=\"wide\"")
            .count(),
        1
    );
    assert_eq!(html_only.matches("<figure").count(), 1);
    for fetch in ["src=", "href=", "url(", "@import", "<script", "<link"] {
        assert!(
            !html.contains(fetch),
            "the page must fetch nothing: found {fetch}"
        );
    }
}

#[test]
fn show_and_diff_read_the_previous_format_and_refuse_a_newer_one() {
    // The library's own fixture of its previous format.
    let old = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/report-format-4.json"
    );
    let text = stdout(tool().args(["show", "--width", "100", old]), 0);
    assert!(text.contains("Sim_Tick_Total"), "{text}");
    // The old report beside itself: every component compared, nothing regressed.
    let text = stdout(tool().args(["diff", old, old]), 0);
    assert!(text.contains("Sim_Tick_Total"), "{text}");
    one_run_of_a_previous_format_is_inconclusive();
    // A format from a newer latte: refused, naming the file and the version.
    let d = dir("newer_format");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(old).unwrap()).unwrap();
    let version = latte::Report::FORMAT_VERSION + 1;
    json["format_version"] = version.into();
    let newer = d.join("newer.json");
    std::fs::write(&newer, json.to_string()).unwrap();
    let text = stderr(tool().arg("show").arg(&newer), 2);
    assert!(
        text.contains("newer.json") && text.contains(&format!("report format version {version}")),
        "{text}"
    );
}

/// A report without blocks of time (the previous format's fixture with its series
/// taken out, as an interval's report has none), one run per side: every verdict
/// `inconclusive`, each saying why, and the gate passes with a warning unless
/// `--strict`.
fn one_run_of_a_previous_format_is_inconclusive() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/report-format-4.json"
    );
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("series").unwrap();
    let old = dir("no_blocks").join("no-blocks.json");
    std::fs::write(&old, json.to_string()).unwrap();
    let old = old.to_str().unwrap();
    let json = stdout(tool().args(["diff", "--json", old, old]), 0);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let changes: Vec<&serde_json::Value> = ["components", "nodes"]
        .iter()
        .flat_map(|rows| json[rows].as_array().unwrap())
        .flat_map(|c| c["changes"].as_array().unwrap())
        .collect();
    assert!(!changes.is_empty());
    // Figures of 0 (below one clock step) need no blocks: every other is inconclusive.
    let inconclusive = changes
        .iter()
        .filter(|c| c["verdict"] != "below_resolution")
        .count();
    assert!(inconclusive > 0);
    for change in changes
        .iter()
        .filter(|c| c["verdict"] != "below_resolution")
    {
        assert_eq!(change["verdict"], "inconclusive", "{change}");
        let note = change["note"].as_str().unwrap();
        assert!(
            note.ends_with(
                "no-blocks.json: no blocks of time (a capture's or an interval's report)"
            ) || note.starts_with("too few samples")
                || note.ends_with("runs at other paths too (blocks are per id)"),
            "{note}"
        );
    }
    let warning = stderr(tool().args(["diff", old, old]), 0);
    assert!(
        warning.starts_with(&format!(
            "warning: {inconclusive} of {} verdicts inconclusive",
            changes.len()
        )) && warning.contains("no blocks of time"),
        "{warning}"
    );
    let failure = stderr(tool().args(["diff", "--strict", old, old]), 1);
    assert!(failure.contains("--strict fails on that"), "{failure}");
}

/// Calibrated scopes of a spin of varying length, and values across many buckets. The
/// spin runs up to 30,000 rounds: this package's tests are built optimised (root
/// Cargo.toml), where 3,000 rounds left the p99 at 1.2 us, inside the buckets of one
/// tick on the OS clock's nanosecond ticks.
fn record_spins_and_values() {
    static SPIN: latte::Id = latte::Id::new("cli_spin");
    static VALUE: latte::Id = latte::Id::new("cli_value");
    for i in 0..20_000u64 {
        let _scope = latte::scope(&SPIN, latte::Mode::Fast, latte::Mode::Fast);
        (0..(i * 7_919) % 30_000).for_each(|k| {
            std::hint::black_box(k);
        });
        latte::record(&VALUE, 100 + (i * 104_729) % 5_000_000);
    }
}

/// `diff` of a report file against itself gives each row's median, p99 and p99.9 to
/// the bit, on both sides.
fn diff_gives_the_rows_own_quantiles(file: &Path, rows: &[&latte::report::Row]) {
    let json = stdout(tool().args(["diff", "--json"]).arg(file).arg(file), 0);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    for row in rows {
        let compared = json["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["component"] == row.component.as_str())
            .unwrap();
        let own = [row.stats.median, row.stats.p99, row.stats.p999];
        for (change, own) in compared["changes"].as_array().unwrap().iter().zip(own) {
            for side in ["base", "new"] {
                assert_eq!(
                    change[side].as_f64().unwrap().to_bits(),
                    own.to_bits(),
                    "{change}"
                );
            }
        }
    }
}

/// `html` tabulates each row's median, p99 and p99.9 as the report prints them.
fn html_tabulates_the_rows_own_quantiles(d: &Path, file: &Path, rows: &[&latte::report::Row]) {
    let page = d.join("page.html");
    tool()
        .arg("html")
        .arg(file)
        .arg("-o")
        .arg(&page)
        .assert()
        .code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    for row in rows {
        let at = html.find(&format!("<h2>{}</h2>", row.component)).unwrap();
        let quantiles = &html[at..];
        let table = &quantiles[quantiles.find("class=\"quantiles\"").unwrap()..];
        let table = &table[..table.find("</table>").unwrap()];
        for v in [row.stats.median, row.stats.p99, row.stats.p999] {
            assert!(
                table.contains(&latte::report::numbers::time(v)),
                "{v} in {table}"
            );
        }
    }
}

/// The tool reads quantiles as the report does (one decoder, the library's): on a real
/// report (calibrated scopes, in time, values across many buckets), `show` prints the
/// report's own table, `diff` of the report against itself gives each row's median,
/// p99 and p99.9 to the bit, and `html` tabulates the same values.
#[test]
fn show_diff_and_html_give_the_reports_own_quantiles() {
    use latte::report::{Column, Focus, TableOptions, numbers};
    record_spins_and_values();
    let report = latte::Report::collect(&latte::ReportOptions::default());
    let d = dir("own_quantiles");
    let file = write_report(&d.join("run.json"), &report);
    // What the tool reads: the report back from its JSON.
    let report: latte::Report =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let rows: Vec<_> = ["cli_spin", "cli_value"]
        .iter()
        .map(|name| {
            report
                .all_threads
                .iter()
                .find(|r| r.component == *name)
                .unwrap()
        })
        .collect();
    assert!(
        rows.iter()
            .all(|r| r.stats.p99 * report.ticks_per_ns > 2_048.0),
        "values beyond the buckets of one tick: {rows:?}"
    );

    let text = stdout(
        tool()
            .env_remove("COLUMNS")
            .args(["show", "--wide", "--columns", "median,p90,p99,p99.9"])
            .arg(&file),
        0,
    );
    let options = TableOptions {
        columns: Some(vec![Column::Median, Column::P90, Column::P99, Column::P999]),
        wide: true,
        ..TableOptions::default()
    };
    let mut table = Vec::new();
    let focused = report.focus(&Focus::default()).unwrap();
    focused
        .write(&mut table, latte::Format::Table(options.clone()))
        .unwrap();
    assert_eq!(text, String::from_utf8(table).unwrap());
    for row in &rows {
        let line = text.lines().find(|l| l.contains(&row.component)).unwrap();
        for v in [row.stats.median, row.stats.p99, row.stats.p999] {
            assert!(line.contains(&numbers::time(v)), "{v} in {line}");
        }
    }

    diff_gives_the_rows_own_quantiles(&file, &rows);
    html_tabulates_the_rows_own_quantiles(&d, &file, &rows);
}

/// A node of a synthetic call tree: its id, its parent's index and its depth.
type Shape = (&'static str, Option<usize>, u32);

/// Base run's tree: two `Collide` nodes under different parents, and `Old`.
const TREE: [Shape; 6] = [
    ("Frame", None, 0),
    ("Physics", Some(0), 1),
    ("Collide", Some(1), 2),
    ("Render", Some(0), 1),
    ("Collide", Some(3), 2),
    ("Old", Some(0), 1),
];

/// A report whose all-threads tree has the nodes of `shape` (real histograms, 200,000
/// log-normal samples each, node `i` with median `1000 * (i + 1)` times its factor in
/// `slower`), and flat rows of the same ids drawn unchanged from `flat_seed`: a
/// synthetic report, so the flat rows are not the merge of the nodes, which lets a
/// test see the nodes decide on their own.
fn tree_report(path: &Path, shape: &[Shape], slower: &[(usize, f64)], seed: u64) -> PathBuf {
    let component = |name, i: usize, factor: f64| cli_support::Component {
        name,
        median: 1_000.0 * (i + 1) as f64 * factor,
        sigma: 0.2,
        samples: 200_000,
    };
    let mut flat: Vec<latte::report::Row> = Vec::new();
    for (i, (name, _, _)) in shape.iter().enumerate() {
        if !flat.iter().any(|r| r.component == *name) {
            let hist = cli_support::histogram(&component(name, i, 1.0), 7 + i as u64);
            flat.push(cli_support::row(name, &hist));
        }
    }
    let mut report = cli_support::report(flat);
    report.tree = shape
        .iter()
        .enumerate()
        .map(|(i, &(name, parent, depth))| {
            let factor = slower.iter().find(|s| s.0 == i).map_or(1.0, |s| s.1);
            let hist = cli_support::histogram(&component(name, i, factor), seed * 100 + i as u64);
            tree_node(parent, depth, cli_support::row(name, &hist))
        })
        .collect();
    write_report(path, &report)
}

/// The changes of the node at `path` in `diff --json` output.
fn node_verdicts(json: &serde_json::Value, path: &[&str]) -> Vec<String> {
    let node = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["path"] == serde_json::json!(path))
        .unwrap_or_else(|| panic!("no node {path:?} in {json}"));
    node["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn diff_compares_call_tree_nodes_by_path() {
    let d = dir("tree");
    let base = tree_report(&d.join("base.json"), &TREE, &[], 1);
    // `Frame > Physics > Collide` 30% slower; `Old` gone and `New` in its place.
    let mut shape = TREE;
    shape[5].0 = "New";
    let new = tree_report(&d.join("new.json"), &shape, &[(2, 1.3)], 2);

    let text = stdout(tool().args(["diff"]).arg(&base).arg(&new), 1);
    let tree = &text[text.find("CALL TREE (by path").expect(&text)..];
    assert!(tree.contains("Frame > Physics > Collide"), "{text}");
    assert!(tree.contains("only in base: Frame > Old"), "{text}");
    assert!(tree.contains("only in new: Frame > New"), "{text}");
    assert!(
        text.contains("REGRESSED beyond ±5%: path Frame > Physics > Collide (p50, p99, p99.9)"),
        "only the node regressed, no flat row: {text}"
    );

    let json = stdout(tool().args(["diff", "--json"]).arg(&base).arg(&new), 1);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        node_verdicts(&json, &["Frame", "Physics", "Collide"]),
        ["regressed"; 3]
    );
    // The same id under another parent did not change.
    let other = node_verdicts(&json, &["Frame", "Render", "Collide"]);
    assert_eq!(other[0], "no_change", "{other:?}");
    assert!(!other.contains(&"regressed".to_string()), "{other:?}");
    // Nodes with a parent only: the root is its flat row.
    let paths: Vec<&serde_json::Value> = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["path"])
        .collect();
    assert_eq!(paths.len(), 4, "{paths:?}");
    assert_eq!(
        json["paths_only_in_base"],
        serde_json::json!([["Frame", "Old"]])
    );
    assert_eq!(
        json["paths_only_in_new"],
        serde_json::json!([["Frame", "New"]])
    );
    assert_eq!(json["regressed"], true);

    flat_and_filter_choose_what_decides(&base, &new);
}

/// `--flat` leaves the tree out; `--filter` keeps the nodes by their own id.
fn flat_and_filter_choose_what_decides(base: &Path, new: &Path) {
    // --flat: the flat rows alone, which did not change.
    let text = stdout(tool().args(["diff", "--flat"]).arg(base).arg(new), 0);
    assert!(!text.contains("CALL TREE"), "{text}");
    // --filter matches a node's own id: both Collide nodes, nothing else.
    let json = stdout(
        tool()
            .args(["diff", "--json", "--filter", "Coll*"])
            .arg(base)
            .arg(new),
        1,
    );
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let kept: Vec<String> = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].to_string())
        .collect();
    assert_eq!(
        kept,
        [
            r#"["Frame","Physics","Collide"]"#,
            r#"["Frame","Render","Collide"]"#
        ]
    );
    assert_eq!(json["paths_only_in_base"], serde_json::json!([]));
    let text = stdout(
        tool()
            .args(["diff", "--filter", "Render"])
            .arg(base)
            .arg(new),
        0,
    );
    assert!(text.contains("no regression"), "{text}");
}

#[test]
fn diff_of_reports_without_a_tree_is_flat() {
    let d = dir("no_tree");
    let base = write(&d.join("base.json"), &COMPONENTS, 1.0, 1);
    let slower = write(&d.join("slower.json"), &COMPONENTS, 1.2, 2);
    // As a report of threads that opened no scope inside another has it: no `tree`.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    assert!(json.get("tree").is_none());
    let old = d.join("no-tree.json");
    std::fs::write(&old, json.to_string()).unwrap();
    let text = stdout(tool().args(["diff"]).arg(&old).arg(&slower), 1);
    assert!(
        !text.contains("CALL TREE") && !text.contains("call tree"),
        "{text}"
    );
    assert!(
        text.contains("REGRESSED beyond ±5%: fast (p50, p99, p99.9)"),
        "{text}"
    );
    let json = stdout(tool().args(["diff", "--json"]).arg(&old).arg(&old), 0);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (json["tree_compared"].clone(), json["nodes"].clone()),
        (false.into(), serde_json::json!([]))
    );
    // One side with a tree, one without: the flat rows, and a note why no tree.
    let tree = tree_report(&d.join("tree.json"), &TREE[..3], &[], 1);
    let flat = cli_support::write_report(&d.join("flat.json"), &{
        let mut r: latte::Report =
            serde_json::from_str(&std::fs::read_to_string(&tree).unwrap()).unwrap();
        r.tree.clear();
        r
    });
    let text = stdout(tool().args(["diff"]).arg(&tree).arg(&flat), 0);
    assert!(
        text.contains("note: call tree not compared: no tree in") && !text.contains("CALL TREE"),
        "{text}"
    );
}

/// `diff`'s table fits the width the report tables use (`COLUMNS` here): long paths
/// and reasons wrap, no line passes it. Wider, the same table has longer lines.
#[test]
fn diff_lines_fit_the_width() {
    let d = dir("width");
    let base = tree_report(&d.join("base.json"), &TREE, &[], 1);
    let mut shape = TREE;
    shape[5].0 = "New";
    let new = tree_report(&d.join("new.json"), &shape, &[(2, 1.3)], 2);
    let (same_a, same_b) = (
        write(&d.join("a.json"), &COMPONENTS, 1.0, 3),
        write(&d.join("b.json"), &COMPONENTS, 1.0, 4),
    );
    let longest = |columns: &str, a: &Path, b: &Path, code: i32| {
        let text = stdout(
            tool().env("COLUMNS", columns).arg("diff").arg(a).arg(b),
            code,
        );
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        (widest, text)
    };
    for (a, b, code) in [(&base, &new, 1), (&same_a, &same_b, 0)] {
        let (widest, text) = longest("80", a, b, code);
        assert!(widest <= 80, "a line of {widest} columns:\n{text}");
        assert!(text.contains("REGRESSED") == (code == 1), "{text}");
        let (widest, text) = longest("200", a, b, code);
        assert!(
            widest > 100,
            "at 200 columns the table spreads out:\n{text}"
        );
    }
}

/// A run whose blocks drift from its first to its last (each block's median 4% above
/// the one before) holds too few independent stretches for a bound: the interval is
/// open, printed as `[-100%, open]` with the run length a bound needs, and the JSON
/// says open (`"open": true`, `"high": null`), never a huge number.
#[test]
fn diff_prints_an_interval_the_data_cannot_bound_as_open() {
    let d = dir("open");
    let write_drifting = |name: &str, seed: u64| -> PathBuf {
        let path = write(&d.join(name), &COMPONENTS, 1.0, seed);
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        json["series"]["blocks"] = 24.into();
        for (i, c) in json["series"]["components"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
        {
            let blocks: Vec<serde_json::Value> = (0..24)
                .map(|b| {
                    let drifted = cli_support::Component {
                        median: COMPONENTS[i].median * 1.04f64.powi(b),
                        samples: 2_000,
                        ..COMPONENTS[i]
                    };
                    let values = cli_support::histogram(&drifted, seed * 100 + b as u64);
                    serde_json::to_value(Distribution::from_ticks(&values)).unwrap()
                })
                .collect();
            c["blocks"] = blocks.into();
        }
        std::fs::write(&path, json.to_string()).unwrap();
        path
    };
    let (base, new) = (
        write_drifting("base.json", 1),
        write_drifting("new.json", 2),
    );
    let text = stdout(tool().arg("diff").arg(&base).arg(&new), 0);
    assert!(text.contains("[-100%, open]"), "{text}");
    assert!(
        text.contains("open: a bound needs") && text.contains("the run has 24"),
        "{text}"
    );
    let json = stdout(tool().args(["diff", "--json"]).arg(&base).arg(&new), 0);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        json["comparisons"], 0,
        "open intervals are not in the family"
    );
    for component in json["components"].as_array().unwrap() {
        for change in component["changes"].as_array().unwrap() {
            assert_eq!(change["open"], true, "{change}");
            assert_eq!(change["high"], serde_json::Value::Null, "{change}");
            assert_eq!(change["low"], -1.0, "{change}");
        }
    }
}

/// Runs calibrated apart (their overhead matrices 40 cycles apart) are shifted against
/// each other by up to that: the interval widens by 40 cycles at each end, in value
/// space, on top of the clock's step.
#[test]
fn diff_widens_by_the_runs_calibration_spread() {
    let d = dir("calibration");
    let with_overhead = |name: &str, seed: u64, cycles: f64| -> PathBuf {
        let path = write(&d.join(name), &COMPONENTS, 1.0, seed);
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let scope = [[cycles; 3]; 3];
        json["overhead"] = serde_json::json!({ "scope": scope, "pulse": cycles });
        std::fs::write(&path, json.to_string()).unwrap();
        path
    };
    let fast_p50 = |base: &Path, new: &Path| -> (f64, f64, f64) {
        let text = stdout(tool().args(["diff", "--json"]).arg(base).arg(new), 0);
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let change = &json["components"][0]["changes"][0];
        assert_eq!(json["components"][0]["component"], "fast");
        let f = |k: &str| change[k].as_f64().unwrap();
        (f("base"), f("low"), f("high"))
    };
    let base = with_overhead("base.json", 1, 20.0);
    let same = with_overhead("same.json", 2, 20.0);
    let apart = with_overhead("apart.json", 2, 60.0);
    let (value, low, high) = fast_p50(&base, &same);
    let (_, low_apart, high_apart) = fast_p50(&base, &apart);
    assert!(
        ((low - low_apart) * value - 40.0).abs() < 1e-6
            && ((high_apart - high) * value - 40.0).abs() < 1e-6,
        "[{low}, {high}] against [{low_apart}, {high_apart}] at {value} cycles"
    );
}

/// A call-tree node over `row`, `depth` deep under `parent`: its self time its row's
/// (a node with nothing inside), no account (as a format-4 report has none).
fn tree_node(
    parent: Option<usize>,
    depth: u32,
    row: latte::report::Row,
) -> latte::report::TreeNode {
    latte::report::TreeNode {
        allocs: None,
        parent,
        depth,
        self_time: Some(latte::report::SelfTime {
            calls: row.stats.seen,
            total: row.stats.total,
            mean: row.stats.avg,
        }),
        account: None,
        row,
        of_parent: None,
        of_root: 1.0,
    }
}
