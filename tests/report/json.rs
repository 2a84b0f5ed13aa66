//! One report, one JSON: the agent's JSON reports are `Report::to_json` of the same
//! value, and a report read back from JSON is the report that was written.

use crate::common::{SharedSink, exclusive};
use latte::analyze::Calibration;
use latte::collect::Anomalies;
use latte::collect::{ComponentCapture, Sample, SampleKind, ThreadCapture};
use latte::report::JsonStyle;
use latte::{Capture, Data, Format, Id, Mode, Report, ReportOptions, Unit};
use std::time::Duration;

fn calibration() -> Calibration {
    Calibration {
        ticks_per_ns: 2.5,
        accuracy: 1e-6,
        resolution: 26,
        scope: [[20, 24, 31], [26, 33, 39], [41, 47, 58]],
        pulse: 18,
        inside: [[0.0; 3]; 3],
        took: Duration::from_millis(50),
    }
}

fn capture() -> Capture {
    let scope = SampleKind::Scope {
        start: Mode::Mid,
        stop: Mode::Hard,
    };
    let samples = (1..=500u64)
        .map(|i| Sample::new(100 + i % 37, scope, i % 97 == 0).unwrap())
        .collect();
    Capture {
        process_allocs: None,
        threads: vec![ThreadCapture {
            alloc_breach: None,
            outside_allocs: None,
            serial: 1,
            name: "worker".into(),
            exited: false,
            anomalies: Anomalies {
                orphaned_scopes: 3,
                ..Anomalies::default()
            },
            components: vec![ComponentCapture {
                allocs: None,
                parent: None,
                self_ticks: None,
                name: "parse",
                seen: 600,
                capacity: 512,
                first: 100,
                samples,
            }],
            unpaired: Vec::new(),
        }],
        teardown_drops: 2,
    }
}

#[test]
fn write_json_is_to_json_and_both_styles_are_one_value() {
    let options = ReportOptions {
        unit: Unit::Time,
        data: Data::Calibrated,
        ..Default::default()
    };
    let report = Report::from_capture(&capture(), &calibration(), &options);
    let mut line = Vec::new();
    report.write(&mut line, Format::Json).unwrap();
    let compact = report.to_json(JsonStyle::Compact);
    assert_eq!(String::from_utf8(line).unwrap(), format!("{compact}\n"));
    assert!(!compact.contains('\n'));
    let pretty = report.to_json(JsonStyle::Pretty);
    let value = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
    assert_eq!(value(&compact), value(&pretty));
    // Read back, it is the same report.
    let back: Report = serde_json::from_str(&pretty).unwrap();
    assert_eq!(back, report);
}

#[test]
fn the_agents_json_is_to_json_of_the_same_report() {
    let _one = exclusive();
    static WORK: Id = Id::new("json_agent_work");
    let sink = SharedSink::default();
    let guard = latte::builder()
        .format(Format::Json)
        .sink(sink.clone())
        .final_report(false)
        .start()
        .unwrap();
    for t in 0..50 {
        latte::record(&WORK, 1_000 + t);
    }
    guard.report().unwrap();
    guard.stop().unwrap();
    let text = sink.text();
    let line = text.lines().next().expect("one report");
    // The agent's line, read as a Report and serialised again, is the same text: the
    // agent writes exactly `to_json(Compact)` of the report it made.
    let report: Report = serde_json::from_str(line).unwrap();
    assert_eq!(report.to_json(JsonStyle::Compact), line);
    let row = report
        .all_threads
        .iter()
        .find(|r| r.component == "json_agent_work")
        .unwrap();
    assert_eq!(row.stats.seen, 50);
    assert!(report.environment.is_some() && report.footprint.is_some());
}

/// Real reports of JSON formats 1 (no `format_version`: `trading_loop --ticks 3000`
/// before the headline covered every sample) and 3 (`trading_loop --ticks 200`
/// before reports carried their series), kept in `tests/data/`: development builds'
/// formats, which no release wrote.
const FORMAT_1: &str = include_str!("../data/report-format-1.json");
const FORMAT_3: &str = include_str!("../data/report-format-3.json");

#[test]
fn reports_of_formats_no_release_wrote_are_refused_saying_so() {
    let old: serde_json::Value = serde_json::from_str(FORMAT_1).unwrap();
    assert!(
        old.get("format_version").is_none(),
        "the fixture is format 1"
    );
    let err = serde_json::from_str::<Report>(FORMAT_1).unwrap_err();
    assert!(
        err.to_string().contains(
            "missing field `cleaned`: a summary without it is format 1's, which no release \
             of latte wrote; this latte reads versions 4 to 8"
        ),
        "{err}"
    );
    let old: serde_json::Value = serde_json::from_str(FORMAT_3).unwrap();
    assert_eq!(old["format_version"], 3, "the fixture is format 3");
    let err = serde_json::from_str::<Report>(FORMAT_3).unwrap_err();
    assert!(
        err.to_string()
            .contains("report format version 3: no release of latte wrote it"),
        "{err}"
    );
}

#[test]
fn a_newer_format_is_refused_with_its_version() {
    let mut newer: serde_json::Value = serde_json::from_str(
        &Report::collect(&ReportOptions::default()).to_json(JsonStyle::Compact),
    )
    .unwrap();
    let next = Report::FORMAT_VERSION + 1;
    newer["format_version"] = next.into();
    let err = serde_json::from_value::<Report>(newer).unwrap_err();
    let expected = format!(
        "report format version {next}: this latte reads versions 4 to {}",
        Report::FORMAT_VERSION
    );
    assert!(err.to_string().contains(&expected), "{err}");
}

/// A real report of JSON format 4 (`trading_loop --ticks 200` before the call tree's
/// accounts, 2026-11-28), kept in `tests/data/`.
const FORMAT_4: &str = include_str!("../data/report-format-4.json");

#[test]
fn a_format_4_report_reads_with_no_accounts_and_its_pulses_lose_their_self_time() {
    let old: serde_json::Value = serde_json::from_str(FORMAT_4).unwrap();
    assert_eq!(old["format_version"], 4, "the fixture is format 4");
    let pulses = old["tree"].as_array().unwrap().iter();
    assert!(
        pulses
            .filter(|n| n["row"]["kind"] == "Pulse")
            .all(|n| n["self_time"].is_object()),
        "format 4 gave pulses a self time"
    );
    let report: Report = serde_json::from_str(FORMAT_4).unwrap();
    assert_eq!(report.format_version, 4);
    assert!(!report.tree.is_empty());
    for node in &report.tree {
        assert_eq!(node.account, None, "format 4 has no accounts");
        let scope = node.row.kind == latte::report::RowKind::Scope;
        assert_eq!(node.self_time.is_some(), scope, "{}", node.row.component);
    }
    // It renders: SELF is `-` on the pulses' lines.
    let options = latte::report::TableOptions {
        width: Some(160),
        ..Default::default()
    };
    let mut out = Vec::new();
    report.write(&mut out, Format::Table(options)).unwrap();
    let table = String::from_utf8(out).unwrap();
    let gap = table
        .lines()
        .find(|l| l.starts_with("Sim_Tick_Gap"))
        .unwrap();
    assert!(gap.split_whitespace().rev().nth(1) == Some("-"), "{gap}");
}

#[test]
fn a_current_format_report_round_trips_with_its_series() {
    static STEP: Id = Id::new("json_series_step");
    (1..=100).for_each(|v| latte::record(&STEP, v));
    let report = Report::collect(&ReportOptions::default());
    let series = report
        .series
        .as_ref()
        .expect("a whole-run report has a series");
    assert_eq!(series.components.len(), report.all_threads.len());
    assert!(series.components.iter().any(|c| c.component == STEP.name()));
    let json = report.to_json(JsonStyle::Compact);
    let version = format!("{{\"format_version\":{},", Report::FORMAT_VERSION);
    assert!(json.starts_with(&version), "{json}");
    assert!(json.contains("\"series\":{\"block_ms\":"), "{json}");
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.series, report.series);
    assert_eq!(back.to_json(JsonStyle::Compact), json);
    // A report without one (made from a capture) has no `series` in its JSON.
    let stored = Report::from_capture(&capture(), &calibration(), &ReportOptions::default());
    assert_eq!(stored.series, None);
    assert!(!stored.to_json(JsonStyle::Compact).contains("\"series\""));
}

#[test]
fn exporter_failures_round_trip_and_are_left_out_when_there_are_none() {
    let mut report = Report::from_capture(&capture(), &calibration(), &ReportOptions::default());
    let json = report.to_json(JsonStyle::Compact);
    assert!(!json.contains("exporter_failures"), "{json}");
    // Older reports have no such field: they read with none.
    let back: Report = serde_json::from_str(&json).unwrap();
    assert!(back.exporter_failures.is_empty());
    report.exporter_failures = vec![latte::report::ExporterFailures {
        exporter: "otlp".into(),
        count: 2,
        last_error: "status 503".into(),
    }];
    let json = report.to_json(JsonStyle::Compact);
    assert!(
        json.contains(
            "\"exporter_failures\":[{\"exporter\":\"otlp\",\"count\":2,\"last_error\":\"status 503\"}]"
        ),
        "{json}"
    );
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.exporter_failures, report.exporter_failures);
}

#[test]
fn a_format_5_report_reads_its_frames_list_as_unpaired_and_its_captures_as_dumps() {
    static OUTER: Id = Id::new("json_format5_outer");
    static LEAKED: Id = Id::new("json_format5_leaked");
    let name = "json_format5";
    orphan_on_a_thread(name, &OUTER, &LEAKED);
    let mut report = Report::collect(&ReportOptions::default());
    report.dumps = Some(latte::report::Dumps {
        dir: "latte-dumps".into(),
        written: 2,
        ..Default::default()
    });
    let thread = report.threads.iter().find(|t| t.name == name).unwrap();
    let leaked = thread
        .unpaired
        .iter()
        .find(|u| u.component == LEAKED.name());
    assert_eq!(leaked.map(|u| u.counts.orphaned), Some(1), "{thread:?}");
    // Format 5 wrote the same list under `frames`, and the flight recorder's dumps
    // under `captures`.
    let mut old: serde_json::Value =
        serde_json::from_str(&report.to_json(JsonStyle::Compact)).unwrap();
    old["format_version"] = 5.into();
    let dumps = old.as_object_mut().unwrap().remove("dumps").unwrap();
    old["captures"] = dumps;
    for t in old["threads"].as_array_mut().unwrap() {
        let list = t.as_object_mut().unwrap().remove("unpaired").unwrap();
        t["frames"] = list;
    }
    let back: Report = serde_json::from_value(old).unwrap();
    assert_eq!(back.format_version, 5);
    let thread_back = back.threads.iter().find(|t| t.name == name).unwrap();
    assert_eq!(thread_back.unpaired, thread.unpaired);
    assert_eq!(back.dumps, report.dumps);
}

#[test]
fn a_format_6_report_reads_its_abandoned_and_orphaned_frames_as_scopes() {
    static OUTER: Id = Id::new("json_format6_outer");
    static LEAKED: Id = Id::new("json_format6_leaked");
    let name = "json_format6";
    orphan_on_a_thread(name, &OUTER, &LEAKED);
    let report = Report::collect(&ReportOptions::default());
    let thread = report.threads.iter().find(|t| t.name == name).unwrap();
    assert_eq!(thread.anomalies.orphaned_scopes, 1, "{thread:?}");
    let json = report.to_json(JsonStyle::Compact);
    assert!(!json.contains("orphaned_frames") && !json.contains("abandoned_frames"));
    // Format 6 wrote the two counters as `abandoned_frames` and `orphaned_frames`.
    let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
    old["format_version"] = 6.into();
    for t in old["threads"].as_array_mut().unwrap() {
        let counts = t["anomalies"].as_object_mut().unwrap();
        for (new, was) in [
            ("abandoned_scopes", "abandoned_frames"),
            ("orphaned_scopes", "orphaned_frames"),
        ] {
            let n = counts.remove(new).unwrap();
            counts.insert(was.into(), n);
        }
    }
    let back: Report = serde_json::from_value(old).unwrap();
    assert_eq!(back.format_version, 6);
    let thread_back = back.threads.iter().find(|t| t.name == name).unwrap();
    assert_eq!(thread_back.anomalies, thread.anomalies);
    assert_eq!(thread_back.anomalies.orphaned_scopes, 1);
}

/// On a thread named `name`: `leaked` opened inside `outer` and left open, so the
/// Stop of `outer` drops it as an orphan.
fn orphan_on_a_thread(name: &str, outer: &'static Id, leaked: &'static Id) {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            latte::start(outer, Mode::Fast);
            latte::start(leaked, Mode::Fast); // its Stop is missed
            latte::stop(outer, Mode::Fast); // drops `leaked` as an orphan
        })
        .unwrap()
        .join()
        .unwrap();
}
