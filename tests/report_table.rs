//! The report table: snapshots of hand-built reports, and layout invariants.

use latte::report::{Anomalies, EndedFrames, FrameCounts, Overhead, Row, Summary, ThreadReport};
use latte::{Cleaning, Data, Report, Unit};

fn row(component: &str, stats: Summary) -> Row {
    Row {
        component: component.to_owned(),
        stats,
        ..Row::default()
    }
}

fn render(report: &Report) -> String {
    let mut out = Vec::new();
    report.write(&mut out, latte::Format::Table).unwrap();
    String::from_utf8(out).unwrap()
}

/// Nanosecond statistics shaped like the seed table's.
fn time_rows() -> Vec<Row> {
    vec![
        row(
            "DP_Build_Total",
            Summary {
                samples: 1,
                folded: 1,
                seen: 1,
                avg: 38.07e9,
                median: 38.07e9,
                min: 38.07e9,
                max: 38.07e9,
                p90: 38.07e9,
                p99: 38.07e9,
                p999: 38.07e9,
                max_all: 38.07e9,
                ..Summary::default()
            },
        ),
        row(
            "Sim_Tick_Total",
            Summary {
                samples: 4_997,
                folded: 5_000,
                seen: 120_000,
                avg: 226.79,
                median: 220.42,
                std_dev: 76.04,
                skew: 1.4,
                min: 110.21,
                max: 821.55,
                range: 711.34,
                bypass: 3,
                outliers: 0,
                p90: 301.5,
                p99: 640.2,
                p999: 5_310.0,
                max_all: 31_150.0,
                migrated: 2,
                ..Summary::default()
            },
        ),
        row(
            "Sim_RiskPnL",
            Summary {
                samples: 5_000,
                folded: 5_000,
                seen: 5_000,
                avg: 6.24,
                median: 9.59,
                std_dev: 4.67,
                skew: -0.57,
                min: 0.0,
                max: 19.82,
                range: 19.82,
                p90: 12.0,
                p99: 18.5,
                p999: 19.8,
                max_all: 19.82,
                ..Summary::default()
            },
        ),
        row(
            "Order_Book_Rebuild_After_Snapshot_Gap",
            Summary {
                samples: 12,
                folded: 14,
                seen: 14,
                avg: 1.5e6,
                median: 1.25e6,
                std_dev: 0.4e6,
                skew: 0.91,
                min: 0.98e6,
                max: 2.5e6,
                range: 1.52e6,
                bypass: 1,
                outliers: 1,
                p90: 2.4e6,
                p99: 9.9e6,
                p999: 12.0e6,
                max_all: 12.2e6,
                ..Summary::default()
            },
        ),
    ]
}

/// (a) Time + Calibrated: overhead matrix, two threads, every kind of row.
fn calibrated_time() -> Report {
    let rows = time_rows();
    let main_anomalies = Anomalies {
        abandoned_frames: 1,
        orphaned_frames: 2,
        ..Anomalies::default()
    };
    Report {
        label: Some("periodic #3, last 1.00 s".into()),
        unit: Unit::Time,
        data: Data::Calibrated,
        clock: "TSC".to_owned(),
        ticks_per_ns: 2.595,
        frequency_accuracy: 1.2e-6,
        resolution: 10.01,
        cleaning: Cleaning::default(),
        overhead: Some(Overhead {
            scope: [
                [0.21, 10.02, 10.02],
                [0.21, 10.02, 10.02],
                [0.21, 10.02, 10.02],
            ],
            pulse: 10.02,
        }),
        threads: vec![
            ThreadReport {
                name: "main".to_owned(),
                serial: 1,
                exited: false,
                anomalies: main_anomalies,
                frames: vec![EndedFrames {
                    component: "Sim_Leaky".to_owned(),
                    counts: FrameCounts {
                        abandoned: 1,
                        orphaned: 2,
                        open_at_exit: 0,
                        over_cap: 0,
                    },
                }],
                rows: rows.clone(),
            },
            ThreadReport {
                name: "feed-handler".to_owned(),
                serial: 2,
                exited: true,
                anomalies: Anomalies::default(),
                frames: Vec::new(),
                rows: vec![row("Idle_Component", Summary::default()), rows[2].clone()],
            },
        ],
        all_threads: vec![
            rows[0].clone(),
            rows[1].clone(),
            row(
                "Sim_RiskPnL",
                Summary {
                    samples: 10_000,
                    folded: 10_000,
                    seen: 10_000,
                    ..rows[2].stats
                },
            ),
            rows[3].clone(),
            row("Idle_Component", Summary::default()),
        ],
        teardown_drops: 0,
        footprint: Some(latte::report::Footprint {
            bytes: 3 << 20,
            ring_bytes_reserved: 24 << 20,
            memory_cap_used: 24 << 20,
            memory_cap: 1 << 30,
            rings: 48,
            live_threads: 6,
            exited_threads: 12,
            folded_threads: 0,
            histograms: 0,
            histogram_bytes: 0,
            drain_cpu_ns: 12_345_678,
        }),
        environment: Some(latte::report::Environment {
            cpu_model: Some("AMD EPYC".into()),
            clock: "TSC".into(),
            clock_reason: "the kernel itself keeps time with the TSC".into(),
            invariant_tsc: Some(true),
            hypervisor: None,
            clocksource_at_start: Some("tsc".into()),
            clocksource_now: Some("hpet".into()),
            governor: None,
            isolated_cpus: Some("none".into()),
            warnings: vec![
                "the kernel clocksource changed from `tsc` to `hpet` during the run".into(),
            ],
        }),
        periodic_failures: Some(latte::report::PeriodicFailures {
            count: 2,
            last_error: "writing the latte report failed: No space left on device".into(),
        }),
    }
}

/// (b) Cycles + Raw: no overhead block, cleaning off, teardown drops.
fn raw_cycles() -> Report {
    let rows = vec![
        row(
            "Frame_Total",
            Summary {
                samples: 1_000,
                folded: 1_000,
                seen: 1_000,
                avg: 588.6,
                median: 571.0,
                std_dev: 97.35,
                skew: 2.114,
                min: 412.0,
                max: 1_904.0,
                range: 1_492.0,
                p90: 702.0,
                p99: 1_100.0,
                p999: 1_890.0,
                max_all: 1_904.0,
                migrated: 4,
                ..Summary::default()
            },
        ),
        row(
            "Batch_Replay",
            Summary {
                samples: 3,
                folded: 3,
                seen: 3,
                avg: 1.234e10,
                median: 1.2e10,
                std_dev: 9.8e8,
                skew: 0.0,
                min: 1.12e10,
                max: 1.36e10,
                range: 2.4e9,
                p90: 1.36e10,
                p99: 1.36e10,
                p999: 1.36e10,
                max_all: 1.36e10,
                ..Summary::default()
            },
        ),
    ];
    Report {
        label: None,
        unit: Unit::Cycles,
        data: Data::Raw,
        clock: "TSC".to_owned(),
        ticks_per_ns: 3.0,
        frequency_accuracy: 2.5e-6,
        resolution: 26.0,
        cleaning: Cleaning::OFF,
        overhead: None,
        threads: vec![ThreadReport {
            name: "main".to_owned(),
            serial: 1,
            exited: false,
            anomalies: Anomalies::default(),
            frames: Vec::new(),
            rows: rows.clone(),
        }],
        all_threads: rows,
        teardown_drops: 2,
        footprint: None,
        environment: None,
        periodic_failures: None,
    }
}

/// (c) Nothing recorded.
fn empty() -> Report {
    Report {
        label: None,
        unit: Unit::Cycles,
        data: Data::Raw,
        clock: "TSC".to_owned(),
        ticks_per_ns: 2.595,
        frequency_accuracy: 1.2e-6,
        resolution: 10.01,
        cleaning: Cleaning::default(),
        overhead: None,
        threads: Vec::new(),
        all_threads: Vec::new(),
        teardown_drops: 0,
        footprint: None,
        environment: None,
        periodic_failures: None,
    }
}

/// Everything that could push a line out of the box.
fn extreme() -> Report {
    let huge = Summary {
        samples: u64::MAX,
        folded: u64::MAX,
        seen: u64::MAX,
        avg: f64::NAN,
        median: f64::INFINITY,
        std_dev: f64::NEG_INFINITY,
        skew: -123_456_789.0,
        min: -1e300,
        max: f64::MAX,
        range: 4.5e15,
        bypass: u64::MAX,
        outliers: u64::MAX,
        p90: 8.64e14,
        p99: 1e20,
        p999: f64::NAN,
        max_all: f64::MAX,
        migrated: u64::MAX,
        lost: u64::MAX,
        p50: 1e19,
        p9999: f64::INFINITY,
        avg_all: f64::NAN,
        std_dev_all: 1e300,
        min_all: -1.0,
    };
    let all = Anomalies {
        abandoned_frames: u64::MAX,
        empty_stops: u64::MAX,
        unmatched_stops: u64::MAX,
        unordered_stops: u64::MAX,
        orphaned_frames: u64::MAX,
        clock_anomalies: u64::MAX,
        cross_core: u64::MAX,
        open_at_exit: u64::MAX,
        reentrant: u64::MAX,
        over_cap: u64::MAX,
    };
    Report {
        label: None,
        unit: Unit::Time,
        data: Data::Calibrated,
        clock: "a clock whose name is\nfar too long for any header line ".repeat(8),
        ticks_per_ns: f64::NAN,
        frequency_accuracy: f64::INFINITY,
        resolution: f64::NAN,
        cleaning: Cleaning::default(),
        overhead: Some(Overhead {
            scope: [[f64::MAX, f64::NAN, 1e300]; 3],
            pulse: -1e300,
        }),
        threads: vec![ThreadReport {
            name: "t".repeat(500),
            serial: u64::MAX,
            exited: true,
            anomalies: all,
            frames: Vec::new(),
            rows: vec![row(&"é\t".repeat(40), huge)],
        }],
        all_threads: vec![row("x", huge)],
        teardown_drops: u64::MAX,
        footprint: None,
        environment: None,
        periodic_failures: None,
    }
}

#[test]
fn snapshot_calibrated_time() {
    insta::assert_snapshot!("calibrated_time", render(&calibrated_time()));
}

#[test]
fn snapshot_raw_cycles() {
    insta::assert_snapshot!("raw_cycles", render(&raw_cycles()));
}

#[test]
fn snapshot_empty() {
    insta::assert_snapshot!("empty", render(&empty()));
}

#[test]
fn every_line_has_the_same_width() {
    for (name, report) in [
        ("calibrated_time", calibrated_time()),
        ("raw_cycles", raw_cycles()),
        ("empty", empty()),
        ("extreme", extreme()),
    ] {
        let text = render(&report);
        assert!(text.ends_with('\n'), "{name}");
        let lines: Vec<&str> = text.lines().collect();
        let width = lines[0].chars().count();
        for line in &lines {
            assert_eq!(line.chars().count(), width, "{name}: {line:?}");
            let (first, last) = (line.chars().next(), line.chars().last());
            assert!(
                matches!(
                    (first, last),
                    (Some('#'), Some('#')) | (Some('|'), Some('|'))
                ),
                "{name}: {line:?}"
            );
            if line.starts_with('|') && !line.starts_with("|-") {
                assert!(
                    line.starts_with("| ") && line.ends_with(" |"),
                    "{name}: {line:?}"
                );
            }
        }
        assert!(lines[0].starts_with("#=") && lines.last().unwrap().starts_with("#="));
        assert!(!text.contains("NaN") && !text.contains("inf"), "{name}");
    }
}

#[test]
fn title_tags_follow_unit_and_data() {
    for (unit, data, tags) in [
        (Unit::Cycles, Data::Raw, "[CYCLES][RAW]"),
        (Unit::Cycles, Data::Calibrated, "[CYCLES][CAL]"),
        (Unit::Time, Data::Raw, "[TIME][RAW]"),
        (Unit::Time, Data::Calibrated, "[TIME][CAL]"),
    ] {
        let text = render(&Report {
            unit,
            data,
            ..empty()
        });
        let title = text.lines().nth(1).unwrap();
        let expected = format!("| LATTE TELEMETRY {tags} ");
        assert!(title.starts_with(&expected), "{title:?}");
        assert_eq!(title.trim_end_matches('|').trim_end(), expected.trim_end());
    }
}

#[test]
fn sections_and_rows() {
    let text = render(&calibrated_time());
    assert!(text.contains("| ENVIRONMENT "));
    assert!(
        text.contains("hypervisor: unknown; invariant TSC: yes; governor: unknown"),
        "missing facts say unknown"
    );
    assert!(text.contains("kernel clocksource: tsc at start, hpet now: CHANGED"));
    assert!(text.contains("| warning: the kernel clocksource changed"));
    assert!(text.contains("| THREAD main (#1) "));
    assert!(text.contains("| THREAD feed-handler (#2) exited "));
    assert!(text.contains("| ALL THREADS "));
    assert!(text.contains("| anomalies: 1 abandoned frame, 2 orphaned frames "));
    assert_eq!(
        text.matches("anomalies:").count(),
        1,
        "only threads with anomalies"
    );
    assert!(
        text.contains("| Order_Book_Rebuild_After_Snapshot_Gap "),
        "long names widen the column"
    );
    assert!(text.contains("| OVERHEAD H[Start] x W[Stop] "));
    assert!(text.contains("| PULSE           10.02 ns "));
    assert!(text.contains("clock TSC @ 2.595 GHz (±1.2 ppm)"));
    assert!(
        text.contains(
            "cleaning: bypass > max(10x median, median + 2000 ns), fences Q1/Q3 ± 1.5 IQR"
        )
    );
    assert!(!text.contains("teardown"));
    let header = text.lines().find(|l| l.starts_with("| COMPONENT")).unwrap();
    let titles = [
        "SAMPLES", "AVG", "MEDIAN", "STD DEV", "SKEW", "MIN", "MAX", "RANGE", "BYPASS", "OUTLIERS",
        "P90", "P99", "P99.9", "MAX ALL", "SEEN", "MIGR",
    ];
    let mut at = 0;
    for title in titles {
        at += header[at..]
            .find(title)
            .unwrap_or_else(|| panic!("{title} after {at}"));
    }

    let raw = render(&raw_cycles());
    assert!(!raw.contains("OVERHEAD") && !raw.contains(" ns "));
    assert!(raw.contains("cleaning: off"));
    assert!(raw.contains("teardown drops: 2"));
    assert!(raw.contains(" 588.6 ") && raw.contains(" 1.234e10 "));

    let none = render(&empty());
    assert!(none.contains("| no samples were recorded "));
    assert!(!none.contains("COMPONENT") && !none.contains("ALL THREADS"));
}
