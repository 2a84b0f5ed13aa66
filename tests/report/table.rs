//! The report table: snapshots of hand-built reports at several widths, and layout
//! invariants (every line fits, omitted columns are named).

use crate::common;

use latte::collect::{Anomalies, Unpaired};
use latte::report::{Column, Overhead, Row, Summary, TableOptions, ThreadReport, UnpairedScopes};
use latte::{Cleaning, Data, Report, Unit};
use unicode_width::UnicodeWidthStr;

/// A row of `stats`, whose TOTAL is `avg x samples` unless given.
fn row(component: &str, mut stats: Summary) -> Row {
    if stats.total == 0.0 {
        stats.total = stats.avg * stats.samples as f64;
    }
    Row {
        component: component.to_owned(),
        stats,
        ..Row::default()
    }
}

fn render(report: &Report) -> String {
    at(report, 100)
}

fn with(report: &Report, options: &TableOptions) -> String {
    let mut out = Vec::new();
    report
        .write(&mut out, latte::Format::Table(options.clone()))
        .unwrap();
    String::from_utf8(out).unwrap()
}

fn at(report: &Report, width: usize) -> String {
    let options = TableOptions {
        width: Some(width),
        ..TableOptions::default()
    };
    with(report, &options)
}

fn wide(report: &Report) -> String {
    let options = TableOptions {
        wide: true,
        width: Some(100),
        ..TableOptions::default()
    };
    with(report, &options)
}

/// The headers of the first table in `text`, in order.
fn headers(text: &str) -> Vec<String> {
    let line = text.lines().find(|l| l.starts_with("COMPONENT")).unwrap();
    common::header_titles(line)
        .into_iter()
        .map(|(title, _)| title.to_owned())
        .collect()
}

/// The columns the footer names as left out.
fn omitted(text: &str) -> Vec<String> {
    let joined = text.replace("\n  ", " ");
    let Some(at) = joined.find("left out to fit ") else {
        return Vec::new();
    };
    let rest = &joined[at..];
    let list = &rest[rest.find(": ").unwrap() + 2..rest.find(" (wide").unwrap()];
    list.split(", ").map(str::to_owned).collect()
}

/// Nanosecond statistics shaped like the seed table's.
fn time_rows() -> Vec<Row> {
    vec![
        row(
            "DP_Build_Total",
            Summary {
                samples: 1,
                seen: 1,
                avg: 38.07e9,
                median: 38.07e9,
                min: 38.07e9,
                p90: 38.07e9,
                p99: 38.07e9,
                p999: 38.07e9,
                max: 38.07e9,
                ..Summary::default()
            },
        ),
        sim_tick_total(),
        row(
            "Sim_RiskPnL",
            Summary {
                samples: 5_000,
                seen: 5_000,
                avg: 6.24,
                median: 9.59,
                std_dev: 4.67,
                skew: -0.57,
                min: 0.0,
                range: 19.82,
                p90: 12.0,
                p99: 18.5,
                p999: 19.8,
                max: 19.82,
                ..Summary::default()
            },
        ),
        order_book_rebuild(),
    ]
}

/// A component with everything counted: seen beyond the samples kept, BYPASS, migrated.
fn sim_tick_total() -> Row {
    row(
        "Sim_Tick_Total",
        Summary {
            samples: 5_000,
            seen: 120_000,
            avg: 226.79,
            median: 220.42,
            std_dev: 76.04,
            skew: 1.4,
            min: 110.21,
            range: 711.34,
            bypass: 3,
            outliers: 0,
            p90: 301.5,
            p99: 640.2,
            p999: 5_310.0,
            max: 31_150.0,
            migrated: 2,
            ..Summary::default()
        },
    )
}

/// A long id, with BYPASS and outliers.
fn order_book_rebuild() -> Row {
    row(
        "Order_Book_Rebuild_After_Snapshot_Gap",
        Summary {
            samples: 14,
            seen: 14,
            avg: 1.5e6,
            median: 1.25e6,
            std_dev: 0.4e6,
            skew: 0.91,
            min: 0.98e6,
            range: 1.52e6,
            bypass: 1,
            outliers: 1,
            p90: 2.4e6,
            p99: 9.9e6,
            p999: 12.0e6,
            max: 12.2e6,
            ..Summary::default()
        },
    )
}

/// (a) Time + Calibrated: overhead matrix, two threads, every kind of row.
/// The memory line's figures.
fn footprint() -> latte::collect::Footprint {
    latte::collect::Footprint {
        bytes: 3 << 20,
        ring_bytes_reserved: 24 << 20,
        memory_cap_used: 24 << 20,
        memory_cap: 1 << 30,
        rings: 48,
        rings_kept_small: 0,
        live_threads: 6,
        exited_threads: 12,
        merged_threads: 0,
        histograms: 0,
        histogram_bytes: 0,
        drain_cpu_ns: 12_345_678,
        flight_entries: 0,
        flight_window_ns: 0,
        flight_bytes: 0,
    }
}

fn calibrated_time() -> Report {
    let rows = time_rows();
    Report {
        figures: latte::report::Figures::All,
        label: Some("periodic #3, last 1.00 s".into()),
        unit: Unit::Time,
        data: Data::Calibrated,
        clock: "TSC".to_owned(),
        ticks_per_ns: 2.595,
        frequency_accuracy: 1.2e-6,
        resolution: 10.01,
        overhead: Some(Overhead {
            scope: [
                [0.21, 10.02, 10.02],
                [0.21, 10.02, 10.02],
                [0.21, 10.02, 10.02],
            ],
            pulse: 10.02,
            inside: [[0.0; 3]; 3],
        }),
        threads: two_threads(&rows),
        all_threads: vec![
            rows[0].clone(),
            rows[1].clone(),
            row(
                "Sim_RiskPnL",
                Summary {
                    samples: 10_000,
                    seen: 10_000,
                    ..rows[2].stats
                },
            ),
            rows[3].clone(),
            row("Idle_Component", Summary::default()),
        ],
        footprint: Some(footprint()),
        environment: Some(environment_with_a_warning()),
        periodic_failures: Some(latte::report::PeriodicFailures {
            count: 2,
            last_error: "writing the latte report failed: No space left on device".into(),
        }),
        ..Report::default()
    }
}

/// `main`, with misuse counted, and `feed-handler`, exited, with an idle component.
fn two_threads(rows: &[Row]) -> Vec<ThreadReport> {
    let main_anomalies = Anomalies {
        abandoned_scopes: 1,
        orphaned_scopes: 2,
        ..Anomalies::default()
    };
    vec![
        ThreadReport {
            alloc_breach: None,
            outside_allocs: None,
            name: "main".to_owned(),
            serial: 1,
            exited: false,
            anomalies: main_anomalies,
            unpaired: vec![UnpairedScopes {
                component: "Sim_Leaky".to_owned(),
                counts: Unpaired {
                    abandoned: 1,
                    orphaned: 2,
                    ..Unpaired::default()
                },
            }],
            open: Vec::new(),
            rows: rows.to_vec(),
            tree: Vec::new(),
            tree_left_out: 0,
            per_frame: None,
        },
        ThreadReport {
            alloc_breach: None,
            outside_allocs: None,
            name: "feed-handler".to_owned(),
            serial: 2,
            exited: true,
            anomalies: Anomalies::default(),
            unpaired: Vec::new(),
            open: Vec::new(),
            rows: vec![row("Idle_Component", Summary::default()), rows[2].clone()],
            tree: Vec::new(),
            tree_left_out: 0,
            per_frame: None,
        },
    ]
}

/// An ENVIRONMENT block with every fact and a warning.
fn environment_with_a_warning() -> latte::report::Environment {
    latte::report::Environment {
        cpu_model: Some("AMD EPYC".into()),
        clock: "TSC".into(),
        clock_reason: "the kernel itself keeps time with the TSC".into(),
        invariant_tsc: Some(true),
        hypervisor: None,
        clocksource_at_start: Some("tsc".into()),
        clocksource_now: Some("hpet".into()),
        governor: None,
        isolated_cpus: Some("none".into()),
        counter_hz: None,
        os: Some("linux".into()),
        frequency: Some("measured against CLOCK_MONOTONIC".into()),
        step_ticks: None,
        step_ns: None,
        warnings: vec!["the kernel clocksource changed from `tsc` to `hpet` during the run".into()],
    }
}

/// (b) Cycles + Raw: no overhead block, cleaning off, teardown drops.
fn raw_cycles() -> Report {
    let rows = raw_rows();
    Report {
        figures: latte::report::Figures::All,
        clock: "TSC".to_owned(),
        ticks_per_ns: 3.0,
        frequency_accuracy: 2.5e-6,
        resolution: 26.0,
        cleaning: Cleaning::OFF,
        threads: vec![ThreadReport {
            alloc_breach: None,
            outside_allocs: None,
            name: "main".to_owned(),
            serial: 1,
            exited: false,
            anomalies: Anomalies::default(),
            unpaired: Vec::new(),
            open: Vec::new(),
            rows: rows.clone(),
            tree: Vec::new(),
            tree_left_out: 0,
            per_frame: None,
        }],
        all_threads: rows,
        teardown_drops: 2,
        ..Report::default()
    }
}

/// A component of cycles, and one of seconds' worth of them.
fn raw_rows() -> Vec<Row> {
    vec![
        row(
            "Frame_Total",
            Summary {
                samples: 1_000,
                seen: 1_000,
                avg: 588.6,
                median: 571.0,
                std_dev: 97.35,
                skew: 2.114,
                min: 412.0,
                range: 1_492.0,
                p90: 702.0,
                p99: 1_100.0,
                p999: 1_890.0,
                max: 1_904.0,
                migrated: 4,
                ..Summary::default()
            },
        ),
        row(
            "Batch_Replay",
            Summary {
                samples: 3,
                seen: 3,
                avg: 1.234e10,
                median: 1.2e10,
                std_dev: 9.8e8,
                skew: 0.0,
                min: 1.12e10,
                range: 2.4e9,
                p90: 1.36e10,
                p99: 1.36e10,
                p999: 1.36e10,
                max: 1.36e10,
                ..Summary::default()
            },
        ),
    ]
}

/// (c) Nothing recorded.
fn empty() -> Report {
    Report {
        figures: latte::report::Figures::All,
        clock: "TSC".to_owned(),
        ticks_per_ns: 2.595,
        frequency_accuracy: 1.2e-6,
        resolution: 10.01,
        ..Report::default()
    }
}

/// Statistics at the ends of their types: NaN, infinities, the largest values.
fn extreme_summary() -> Summary {
    Summary {
        samples: u64::MAX,
        seen: u64::MAX,
        avg: f64::NAN,
        median: f64::INFINITY,
        std_dev: f64::NEG_INFINITY,
        skew: -123_456_789.0,
        min: -1e300,
        range: 4.5e15,
        bypass: u64::MAX,
        outliers: u64::MAX,
        p90: 8.64e14,
        p99: 1e20,
        p999: f64::NAN,
        max: f64::MAX,
        migrated: u64::MAX,
        lost: u64::MAX,
        p9999: f64::INFINITY,
        total: f64::MAX,
        bypass_total: f64::INFINITY,
        outliers_total: -1.0,
        cleaned: latte::report::CleanedSummary {
            samples: u64::MAX,
            avg: f64::NAN,
            median: 1e300,
            std_dev: f64::INFINITY,
            skew: f64::NAN,
            min: -1.0,
            max: f64::MAX,
            range: 1e-300,
        },
    }
}

/// Every anomaly, each at its largest count.
fn every_anomaly() -> Anomalies {
    Anomalies {
        alloc_breaches: 0,
        abandoned_scopes: u64::MAX,
        empty_stops: u64::MAX,
        unmatched_stops: u64::MAX,
        unordered_stops: u64::MAX,
        orphaned_scopes: u64::MAX,
        clock_anomalies: u64::MAX,
        cross_core: u64::MAX,
        open_at_exit: u64::MAX,
        reentrant: u64::MAX,
        over_cap: u64::MAX,
        folded_paths: u64::MAX,
        frames_lost: u64::MAX,
    }
}

/// Everything that could push a line out of the box.
fn extreme() -> Report {
    let (huge, all) = (extreme_summary(), every_anomaly());
    Report {
        figures: latte::report::Figures::All,
        unit: Unit::Time,
        data: Data::Calibrated,
        clock: "a clock whose name is\nfar too long for any header line ".repeat(8),
        ticks_per_ns: f64::NAN,
        frequency_accuracy: f64::INFINITY,
        resolution: f64::NAN,
        overhead: Some(Overhead {
            scope: [[f64::MAX, f64::NAN, 1e300]; 3],
            pulse: -1e300,
            inside: [[0.0; 3]; 3],
        }),
        threads: vec![ThreadReport {
            alloc_breach: None,
            outside_allocs: None,
            name: "t".repeat(500),
            serial: u64::MAX,
            exited: true,
            anomalies: all,
            unpaired: Vec::new(),
            open: Vec::new(),
            rows: vec![row(&"é\t".repeat(40), huge)],
            tree: Vec::new(),
            tree_left_out: 0,
            per_frame: None,
        }],
        all_threads: vec![row("x", huge)],
        teardown_drops: u64::MAX,
        ..Report::default()
    }
}

/// `p50`, `mean`, `p99`, `max` in microseconds (the report's unit is ns).
fn us(p50: f64, mean: f64, p99: f64, max: f64) -> latte::report::Spread {
    latte::report::Spread {
        p50: p50 * 1e3,
        p99: p99 * 1e3,
        max: max * 1e3,
        mean: mean * 1e3,
    }
}

/// Calls per frame.
fn calls(p50: f64, mean: f64, p99: f64, max: f64) -> latte::report::Spread {
    latte::report::Spread {
        p50,
        p99,
        max,
        mean,
    }
}

/// A game loop's frames on `main`: a budget, components of every kind of per-frame
/// figure (called every frame, now and then, a pulse), and the longest frames.
fn framed() -> Report {
    use latte::report::{Culprit, FrameComponent, PerFrame, RowKind, Spread, WorstFrame};
    let once = calls(1.0, 1.0, 1.0, 1.0);
    let component = |name: &str, with: u64, time: Spread, calls: Spread| FrameComponent {
        allocs: None,
        component: name.to_owned(),
        frames_with_calls: with,
        time,
        calls,
    };
    let culprit = |name: &str, time: f64, median: f64| Culprit {
        component: name.to_owned(),
        time: time * 1e3,
        median: median * 1e3,
        excess: (time - median) * 1e3,
    };
    let mut report = calibrated_time();
    let mut delta = row("Frame_Delta", Summary::default());
    delta.kind = RowKind::Pulse;
    report.threads[0].rows.push(delta);
    report.threads[0].per_frame = Some(PerFrame {
        frames: 3_599,
        length: us(2_000.0, 2_004.0, 2_492.0, 11_520.0),
        budget: Some(2_200e3),
        over_budget: Some(11),
        components: vec![
            component("Physics", 3_599, us(20.72, 32.8, 281.7, 411.8), once),
            component(
                "Physics_Collide_Broadphase_Sweep_And_Prune",
                3_599,
                us(15.78, 24.9, 225.8, 340.7),
                calls(12.0, 40.5, 1_024.0, 4_096.0),
            ),
            component(
                "AI_Replan",
                119,
                us(0.0, 54.34, 171.2, 9_518.0),
                calls(0.0, 0.03, 1.0, 1.0),
            ),
            component("Frame_Delta", 3_599, Spread::default(), once),
        ],
        worst: vec![WorstFrame {
            number: 150,
            length: 11_520e3,
            outside_scopes: 1_942e3,
            culprits: vec![
                culprit("AI_Replan", 9_518.0, 0.0),
                culprit("Physics", 131.2, 20.72),
            ],
        }],
        unlisted: 0,
    });
    report
}

/// The lines from the frames block's first line to the blank line after its last.
fn frames_block(text: &str) -> String {
    let from = text.find("FRAMES of").expect("a frames block");
    let rest = &text[from..];
    let to = rest.find("\n\nFLAGGED").unwrap_or(rest.len());
    rest[..to].to_owned()
}

#[test]
fn the_frames_block_at_80_and_100_columns() {
    let report = framed();
    let at_100 = frames_block(&at(&report, 100));
    insta::assert_snapshot!("frames_100", at_100);
    let at_80 = frames_block(&at(&report, 80));
    insta::assert_snapshot!("frames_80", at_80);
    // At 100 every column (the long id shortened); at 80 the calls' P99 and MAX give way.
    let header = |text: &str| {
        let line = text.lines().find(|l| l.starts_with("PER FRAME")).unwrap();
        line.split("  ").filter(|t| !t.trim().is_empty()).count()
    };
    assert_eq!((header(&at_100), header(&at_80)), (9, 7), "{at_100}{at_80}");
    assert!(
        at_80.contains("MEAN") && at_80.contains("IN FRAMES"),
        "{at_80}"
    );
    assert!(at_100.contains("Physics_Collide_Broad") && !at_100.contains("Sweep_And_Prune"));
    // A pulse counts calls only.
    let delta = at_100
        .lines()
        .find(|l| l.starts_with("Frame_Delta"))
        .unwrap();
    assert!(delta.contains(" - "), "{delta}");
}

#[test]
fn the_table_names_the_worst_few_frames_and_counts_the_rest() {
    let mut report = framed();
    let f = report.threads[0].per_frame.as_mut().unwrap();
    let first = f.worst[0].clone();
    // 11 frames over budget listed in the JSON, 5 more counted only.
    f.worst = (0..11u64)
        .map(|k| latte::report::WorstFrame {
            number: 150 + k,
            length: first.length - k as f64 * 1e3,
            ..first.clone()
        })
        .collect();
    f.unlisted = 5;
    let block = frames_block(&at(&report, 160));
    let named = block.lines().filter(|l| l.starts_with('#')).count();
    assert_eq!(named, latte::report::PerFrame::WORST, "{block}");
    assert!(
        block.contains("#150 11.52 ms (1.942 ms in no scope)"),
        "{block}"
    );
    assert!(
        block.contains("in no scope (sleep, waits, uninstrumented code)"),
        "{block}"
    );
    assert!(
        block.contains("and 8 more over budget: 3 in the JSON, 5 not kept whole"),
        "{block}"
    );
}

const WIDTHS: [usize; 3] = [80, 100, 160];

#[test]
fn snapshots_at_80_100_160_columns_and_wide() {
    let report = calibrated_time();
    for width in WIDTHS {
        insta::assert_snapshot!(format!("calibrated_time_{width}"), at(&report, width));
    }
    insta::assert_snapshot!("calibrated_time_wide", wide(&report));
    insta::assert_snapshot!("raw_cycles", render(&raw_cycles()));
    insta::assert_snapshot!("empty", render(&empty()));
}

#[test]
fn no_line_is_wider_than_the_width() {
    for (name, report) in [
        ("calibrated_time", calibrated_time()),
        ("raw_cycles", raw_cycles()),
        ("empty", empty()),
        ("extreme", extreme()),
        ("framed", framed()),
    ] {
        for width in [40, 60, 80, 100, 160, 300] {
            let text = at(&report, width);
            assert!(text.ends_with('\n'), "{name}");
            for line in text.lines() {
                assert!(line.width() <= width, "{name} at {width}: {line:?}");
            }
            assert!(!text.contains("NaN") && !text.contains("inf"), "{name}");
        }
        // Wide mode: as wide as the table needs; text wraps to that width.
        let text = wide(&report);
        let widest = text.lines().map(UnicodeWidthStr::width).max().unwrap();
        let table = text
            .lines()
            .find(|l| l.starts_with("---"))
            .map_or(0, str::len);
        assert!(widest <= table.max(100), "{name}: {widest} > {table}");
    }
}

#[test]
fn the_footer_names_every_column_left_out() {
    let report = calibrated_time();
    let names = |columns: &[Column]| -> Vec<String> {
        columns.iter().map(|c| c.header().to_owned()).collect()
    };
    let mut counts = Vec::new();
    for width in [40, 60, 80, 100, 119] {
        // Below 120 columns: the narrow set, as much as fits, by priority.
        let text = at(&report, width);
        let shown = headers(&text);
        let left_out = omitted(&text);
        let mut together: Vec<String> = shown[1..].iter().chain(&left_out).cloned().collect();
        together.sort();
        let mut narrow = names(&Column::NARROW);
        narrow.sort();
        assert_eq!(together, narrow, "at {width}");
        // What is left out is the end of the narrow set in priority order.
        let priority: Vec<String> = Column::PRIORITY
            .iter()
            .filter(|c| Column::NARROW.contains(c))
            .map(|c| c.header().to_owned())
            .collect();
        assert_eq!(
            left_out,
            priority[priority.len() - left_out.len()..],
            "at {width}"
        );
        counts.push(shown.len());
    }
    assert!(
        counts.windows(2).all(|w| w[0] <= w[1]) && counts[0] < counts[4],
        "{counts:?}"
    );
    assert_eq!(
        counts[4],
        1 + Column::NARROW.len(),
        "119 columns hold the narrow set"
    );
    // From 120 on, the seed's columns in its order, and nothing is left out.
    let text = at(&report, 120);
    assert_eq!(headers(&text)[1..], names(&Column::SEED));
    assert!(omitted(&text).is_empty() && !text.contains("left out"));
    // Wide: every column but a call tree's SELF and % PARENT (this report is flat) and
    // the allocation columns (no allocator counted here).
    let text = wide(&report);
    assert_eq!(headers(&text), names(&Column::ALL[..Column::ALL.len() - 4]));
    assert!(omitted(&text).is_empty() && !text.contains("left out"));
}

#[test]
fn chosen_columns_come_in_their_order() {
    let options = TableOptions {
        width: Some(80),
        columns: Some(vec![Column::P99, Column::Samples, Column::Lost]),
        ..TableOptions::default()
    };
    let text = with(&calibrated_time(), &options);
    assert_eq!(headers(&text), ["COMPONENT", "P99", "SAMPLES", "LOST"]);
    assert!(!text.contains("left out"), "nothing chosen was left out");
}

#[test]
fn compact_is_one_table_over_all_threads_and_brief_drops_what_was_seen() {
    let compact = TableOptions {
        width: Some(100),
        compact: true,
        ..TableOptions::default()
    };
    let text = with(&calibrated_time(), &compact);
    let full = render(&calibrated_time());
    assert!(text.starts_with("=====") && text.contains("LATTE TELEMETRY [TIME][CAL] periodic #3"));
    for gone in [
        "memory:",
        "flagged, and kept",
        "THREAD main (#1)",
        "FLAGGED (in every",
    ] {
        assert!(!text.contains(gone) && full.contains(gone), "{gone}");
    }
    for kept in [
        "clock TSC",
        "ALL THREADS (2 threads)",
        "Sim_Tick_Total",
        "main (#1): anomalies: 1 abandoned scope",
        "periodic reports could not",
    ] {
        assert!(text.contains(kept), "{kept}:\n{text}");
    }
    // Its opening rule only: the next report's closes it.
    let rules = text.lines().filter(|l| l.starts_with("=====")).count();
    assert_eq!(rules, 1, "{text}");
    // Each thread's table too, when asked.
    let per_thread = TableOptions {
        per_thread: true,
        ..compact.clone()
    };
    let text = with(&calibrated_time(), &per_thread);
    assert!(
        text.contains("THREAD main (#1)") && text.contains("ALL THREADS"),
        "{text}"
    );
    // Brief: no ENVIRONMENT or OVERHEAD, but a clocksource that changed still shows.
    let brief = TableOptions {
        brief: true,
        ..compact
    };
    let text = with(&calibrated_time(), &brief);
    for gone in ["ENVIRONMENT", "OVERHEAD"] {
        assert!(!text.contains(gone) && full.contains(gone), "{gone}");
    }
    assert!(text.contains("warning: the kernel clocksource changed from `tsc` to `hpet`"));
    assert!(text.lines().count() + 15 < full.lines().count());
}

#[test]
fn a_compact_table_shows_twenty_rows_and_counts_the_rest() {
    let rows: Vec<Row> = (0..25u64)
        .map(|i| {
            let stats = Summary {
                samples: 10,
                seen: 10,
                avg: 100.0,
                median: 100.0,
                total: 1_000.0 * (25 - i) as f64,
                ..Summary::default()
            };
            row(&format!("component_{i:02}"), stats)
        })
        .collect();
    let report = Report {
        all_threads: rows.clone(),
        tree: Vec::new(),
        tree_left_out: 0,
        threads: vec![ThreadReport {
            alloc_breach: None,
            outside_allocs: None,
            name: "main".into(),
            serial: 1,
            exited: false,
            anomalies: Anomalies::default(),
            unpaired: Vec::new(),
            open: Vec::new(),
            rows,
            tree: Vec::new(),
            tree_left_out: 0,
            per_frame: None,
        }],
        ..empty()
    };
    let options = TableOptions {
        width: Some(100),
        compact: true,
        ..TableOptions::default()
    };
    let text = with(&report, &options);
    assert!(
        text.contains("component_19") && !text.contains("component_20"),
        "{text}"
    );
    assert!(text.contains("and 5 more (wide shows every row)"), "{text}");
    let wide = TableOptions {
        wide: true,
        ..options
    };
    assert!(with(&report, &wide).contains("component_24"));
}

#[test]
fn write_uses_the_default_options() {
    let report = raw_cycles();
    let mut out = Vec::new();
    report.write(&mut out, latte::Format::default()).unwrap();
    let width = TableOptions::default().resolved_width();
    assert_eq!(String::from_utf8(out).unwrap(), at(&report, width));
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
        assert_eq!(
            text.lines().nth(1).unwrap(),
            format!("LATTE TELEMETRY {tags}")
        );
    }
}

#[test]
fn every_cell_has_its_own_unit_and_below_a_step_is_said() {
    let text = wide(&calibrated_time());
    let header = text.lines().find(|l| l.starts_with("COMPONENT")).unwrap();
    assert!(!header.contains('('), "headers carry no unit: {header}");
    let tick = text
        .lines()
        .find(|l| l.starts_with("Sim_Tick_Total"))
        .unwrap();
    for cell in [
        "5,000", "226.8 ns", "220.4 ns", "76.04 ns", "1.40", "31.15 us", "5.310 us",
    ] {
        assert!(tick.contains(cell), "{cell}: {tick}");
    }
    let risk = text.lines().find(|l| l.starts_with("Sim_RiskPnL")).unwrap();
    assert!(
        risk.contains("< 1 step") && risk.contains("6.240 ns"),
        "the median of 9.59 ns is under a 10.01 ns step, the mean is a number: {risk}"
    );
    let build = text
        .lines()
        .find(|l| l.starts_with("DP_Build_Total"))
        .unwrap();
    assert!(build.contains("38.07 s"), "{build}");
    let raw = render(&raw_cycles());
    assert!(
        raw.contains(" 588.6 ") && raw.contains(" 12.34 G "),
        "cycles in SI multiples: {raw}"
    );
}

#[test]
fn sections_and_rows() {
    let text = at(&calibrated_time(), 160);
    assert!(text.contains("\nENVIRONMENT\n"));
    assert!(
        text.contains("hypervisor: unknown; invariant TSC: yes; governor: unknown"),
        "missing facts say unknown"
    );
    assert!(text.contains("kernel clocksource: tsc at start, hpet now: CHANGED"));
    assert!(text.contains("\nwarning: the kernel clocksource changed"));
    assert!(text.contains("\nTHREAD main (#1)\n"));
    assert!(text.contains("\nTHREAD feed-handler (#2) exited\n"));
    assert!(
        text.contains("\nALL THREADS (2 threads)\n"),
        "a component on both threads"
    );
    assert!(text.contains("\nanomalies: 1 abandoned scope, 2 orphaned scopes\n"));
    assert_eq!(
        text.matches("anomalies:").count(),
        1,
        "only threads with anomalies"
    );
    let cut = at(&calibrated_time(), 120)
        .lines()
        .find(|l| l.starts_with("Order_Book_"))
        .unwrap()
        .to_owned();
    assert!(
        cut.contains("~ ") && !cut.contains("Gap"),
        "cut to let columns in: {cut}"
    );
    assert!(wide(&calibrated_time()).contains("\nOrder_Book_Rebuild_After_Snapshot_Gap "));
    assert!(text.contains("\nOVERHEAD H[Start] x W[Stop]\n"));
    assert!(text.contains("clock TSC @ 2.595 GHz (±1.2 ppm), resolution 10.01 ns"));
    assert!(text.contains(
        "flagged, and kept in every figure: far (BYPASS) > max(10x median, median + 2000 ns), \
         outside the IQR fences Q1/Q3 ± 1.5 IQR"
    ));
    assert!(!text.contains("teardown"));

    let raw = render(&raw_cycles());
    assert!(!raw.contains("OVERHEAD") && !raw.contains(" ns "));
    assert!(raw.contains("cleaning: off (nothing flagged)"));
    assert!(raw.contains("teardown drops: 2"));

    let none = render(&empty());
    assert!(none.contains("\nno samples were recorded\n"));
    assert!(!none.contains("COMPONENT") && !none.contains("ALL THREADS"));
    assert!(!none.contains("left out"), "no table, no footer");
}

/// The ENVIRONMENT block's counter line, if the table has one.
fn counter_line(env: latte::report::Environment) -> Option<String> {
    let report = Report {
        environment: Some(env),
        ..calibrated_time()
    };
    // Wide enough that the line is not wrapped.
    let text = at(&report, 400);
    text.lines()
        .find(|l| l.trim_start().starts_with("counter:"))
        .map(|l| l.trim().to_owned())
}

#[test]
fn the_counter_line_shows_frequency_step_and_whether_the_kernel_uses_the_counter() {
    let base = calibrated_time().environment.unwrap();
    let on =
        |hz: Option<u64>, step: Option<(u64, f64)>, clocksource: &str| latte::report::Environment {
            counter_hz: hz,
            frequency: hz.map(|hz| format!("CNTFRQ_EL0 states {hz} Hz")),
            step_ticks: step.map(|s| s.0),
            step_ns: step.map(|s| s.1),
            clocksource_at_start: Some(clocksource.into()),
            ..base.clone()
        };
    // aarch64 under qemu-user: the host's clocksource, not the counter's.
    assert_eq!(
        counter_line(on(Some(62_500_000), Some((63, 1008.0)), "tsc")).unwrap(),
        "counter: CNTFRQ_EL0 states 62500000 Hz; measured step 63 ticks (1008.00 ns); \
         kernel clocksource is arch_sys_counter: no (`tsc`)"
    );
    let native = counter_line(on(Some(24_000_000), Some((1, 41.67)), "arch_sys_counter"));
    assert!(
        native.as_deref().unwrap().ends_with(
            "measured step 1 tick (41.67 ns); kernel clocksource is arch_sys_counter: yes"
        ),
        "{native:?}"
    );
    assert!(
        counter_line(on(Some(24_000_000), None, "arch_sys_counter"))
            .unwrap()
            .contains("measured step unknown;")
    );
    // The TSC states no frequency, and the title line gives the step: no line.
    assert_eq!(counter_line(on(None, Some((26, 10.01)), "tsc")), None);
    // A report from before the frequency's source was recorded: aarch64's register.
    let old = latte::report::Environment {
        frequency: None,
        ..on(Some(24_000_000), Some((1, 41.67)), "arch_sys_counter")
    };
    assert!(
        counter_line(old)
            .unwrap()
            .starts_with("counter: CNTFRQ_EL0 states 24000000 Hz;")
    );
}

#[test]
fn windows_and_macos_say_where_the_frequency_comes_from_and_that_no_clocksource_is_named() {
    let base = calibrated_time().environment.unwrap();
    let on = |os: &str, hz: Option<u64>, frequency: &str| latte::report::Environment {
        os: Some(os.into()),
        counter_hz: hz,
        frequency: Some(frequency.into()),
        clocksource_at_start: None,
        clocksource_now: None,
        step_ticks: Some(2),
        step_ns: Some(0.95),
        ..base.clone()
    };
    assert_eq!(
        counter_line(on(
            "windows",
            None,
            "measured against QueryPerformanceCounter"
        ))
        .unwrap(),
        "counter: frequency measured against QueryPerformanceCounter; measured step 2 ticks \
         (0.95 ns)"
    );
    assert_eq!(
        counter_line(on(
            "macos",
            Some(24_000_000),
            "CNTFRQ_EL0 states 24000000 Hz"
        ))
        .unwrap(),
        "counter: CNTFRQ_EL0 states 24000000 Hz; measured step 2 ticks (0.95 ns)"
    );
    let report = Report {
        environment: Some(on(
            "windows",
            None,
            "measured against QueryPerformanceCounter",
        )),
        ..calibrated_time()
    };
    let text = at(&report, 400);
    assert!(
        text.contains("kernel clocksource: none (Windows names none)"),
        "{text}"
    );
    // On Linux the line stays as it was: the title line gives the TSC's frequency.
    assert_eq!(
        counter_line(on("linux", None, "measured against CLOCK_MONOTONIC")),
        None
    );
}

/// The default width is the terminal's when stdout is one (read in a real terminal,
/// a tmux pane 93 columns wide), and 100 when stdout is a pipe. The test runs itself
/// as the child in both places (`LATTE_WIDTH_OUT` names the file the child writes).
#[test]
fn the_default_width_is_the_terminal_s_when_stdout_is_one() {
    const NAME: &str = "table::the_default_width_is_the_terminal_s_when_stdout_is_one";
    if let Some(out) = std::env::var_os("LATTE_WIDTH_OUT") {
        let width = TableOptions::default().resolved_width();
        std::fs::write(out, width.to_string()).unwrap();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let dir = std::env::temp_dir().join(format!("latte-width-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let child = |out: &std::path::Path| {
        let mut c = std::process::Command::new(&exe);
        c.args([NAME, "--exact", "--test-threads=1"])
            .env_remove("COLUMNS")
            .env("LATTE_WIDTH_OUT", out);
        c
    };
    // Piped: no terminal on stdout.
    let piped = dir.join("piped");
    assert!(child(&piped).output().unwrap().status.success());
    assert_eq!(std::fs::read_to_string(&piped).unwrap(), "100");
    let tmux = std::process::Command::new("tmux").arg("-V").output();
    if !tmux.is_ok_and(|o| o.status.success()) {
        eprintln!("tmux not installed: the terminal half is left out (.ci/run installs it)");
        return;
    }
    let pane = dir.join("pane");
    let session = format!("latte-width-{}", std::process::id());
    let command = format!(
        "env -u COLUMNS LATTE_WIDTH_OUT='{}' '{}' '{NAME}' --exact --test-threads=1",
        pane.display(),
        exe.display()
    );
    let status = std::process::Command::new("tmux")
        .args(["new-session", "-d", "-s", &session, "-x", "93", "-y", "10"])
        .arg(&command)
        .status()
        .unwrap();
    assert!(status.success(), "tmux new-session failed");
    let began = std::time::Instant::now();
    let written = loop {
        match std::fs::read_to_string(&pane) {
            Ok(text) if !text.is_empty() => break Some(text),
            _ if began.elapsed() > std::time::Duration::from_secs(60) => break None,
            _ => std::thread::yield_now(),
        }
    };
    let _ = std::process::Command::new("tmux")
        .args(["kill-session", "-t", &session])
        .status();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(written.as_deref(), Some("93"));
}
