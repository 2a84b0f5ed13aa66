//! Every anomaly counter reaches every renderer: each counter set to a distinct value
//! is found, with its name and value, in the table and in the JSON. The counters come
//! from their one definition (`Anomalies::NAMES` and `LABELS`), so a counter added
//! there is covered here without editing this test.

use latte::analyze::Calibration;
use latte::collect::Anomalies;
use latte::collect::ThreadCapture;
use latte::report::JsonStyle;
use latte::{Capture, Format, Report, ReportOptions};
use std::time::Duration;

/// Every counter set to a distinct value, built from the names alone.
fn distinct() -> (Anomalies, Vec<u64>) {
    let values: Vec<u64> = (0..Anomalies::NAMES.len() as u64)
        .map(|i| 1_000 + 7 * i)
        .collect();
    let json: serde_json::Map<String, serde_json::Value> = Anomalies::NAMES
        .iter()
        .zip(&values)
        .map(|(name, v)| ((*name).to_owned(), (*v).into()))
        .collect();
    let anomalies: Anomalies = serde_json::from_value(json.into()).unwrap();
    (anomalies, values)
}

fn report(anomalies: Anomalies) -> Report {
    let capture = Capture {
        process_allocs: None,
        threads: vec![ThreadCapture {
            alloc_breach: None,
            outside_allocs: None,
            serial: 1,
            name: "misused".into(),
            exited: true,
            anomalies,
            components: Vec::new(),
            unpaired: Vec::new(),
        }],
        teardown_drops: 0,
    };
    let calibration = Calibration {
        ticks_per_ns: 1.0,
        accuracy: 0.0,
        resolution: 1,
        scope: [[0; 3]; 3],
        pulse: 0,
        inside: [[0.0; 3]; 3],
        took: Duration::ZERO,
    };
    Report::from_capture(&capture, &calibration, &ReportOptions::default())
}

#[test]
fn each_counter_is_named_with_its_value_in_table_and_json() {
    let (anomalies, values) = distinct();
    assert_eq!(Anomalies::NAMES.len(), Anomalies::LABELS.len());
    assert_eq!(
        anomalies.iter().map(|(_, v)| v).collect::<Vec<_>>(),
        values,
        "every counter was set from its name"
    );
    let report = report(anomalies);

    let mut table = Vec::new();
    report.write(&mut table, Format::default()).unwrap();
    // The anomalies line may wrap: join the table's text cells back into one string.
    let table: String = String::from_utf8(table)
        .unwrap()
        .lines()
        .map(|l| l.trim_matches(|c| c == '|' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ");
    for ((name, value), (_, plural)) in anomalies.iter().zip(Anomalies::LABELS) {
        let phrase = format!("{} {plural}", latte::report::numbers::count(value));
        assert!(
            table.contains(&phrase),
            "{name}: `{phrase}` not in the table:\n{table}"
        );
    }

    let json: serde_json::Value =
        serde_json::from_str(&report.to_json(JsonStyle::Compact)).unwrap();
    let shown = &json["threads"][0]["anomalies"];
    for (name, value) in anomalies.iter() {
        assert_eq!(shown[name], value, "{name} in the JSON");
    }
}
