//! One report, one JSON: the agent's JSON reports are `Report::to_json` of the same
//! value, and a report read back from JSON is the report that was written.

mod common;
use common::{SharedSink, one_agent};
use latte::analyze::Calibration;
use latte::collect::{ComponentCapture, Sample, SampleKind, ThreadCapture};
use latte::report::{Anomalies, JsonStyle};
use latte::{Capture, Data, Format, Id, Mode, Report, ReportOptions, Unit};
use std::time::Duration;

fn calibration() -> Calibration {
    Calibration {
        ticks_per_ns: 2.5,
        accuracy: 1e-6,
        resolution: 26,
        scope: [[20, 24, 31], [26, 33, 39], [41, 47, 58]],
        pulse: 18,
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
        threads: vec![ThreadCapture {
            serial: 1,
            name: "worker".into(),
            exited: false,
            anomalies: Anomalies {
                orphaned_frames: 3,
                ..Anomalies::default()
            },
            components: vec![ComponentCapture {
                name: "parse",
                seen: 600,
                capacity: 512,
                first: 100,
                samples,
            }],
            frames: Vec::new(),
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
    let _one = one_agent();
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
