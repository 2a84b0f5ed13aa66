//! `latte::flight::trace`: the flight recorder's trace-event JSON holds what Perfetto
//! and `chrome://tracing` need (required fields, thread metadata), its scopes nest by
//! time as they did in ticks, and it says the span it covers.

use crate::common::trace_events::validate;
use latte::flight::trace::{Lane, Span, Trace, Trigger};
use proptest::prelude::*;
use serde_json::Value;

/// A nest of scopes on one thread: every scope's children lie inside it in ticks.
fn nest(
    start: u64,
    len: u64,
    depth: u32,
    shape: &mut impl Iterator<Item = u64>,
    out: &mut Vec<Span>,
) {
    out.push(Span {
        name: format!("d{depth}"),
        start,
        end: Some(start + len),
        depth,
    });
    if depth >= 4 || len < 4 {
        return;
    }
    let mut at = start;
    for _ in 0..shape.next().unwrap_or(0) % 4 {
        let gap = shape.next().unwrap_or(1) % (len / 4 + 1);
        let child = shape.next().unwrap_or(1) % (len / 2 + 1);
        if at + gap + child > start + len {
            break;
        }
        nest(at + gap, child, depth + 1, shape, out);
        at += gap + child;
    }
}

/// Two threads at 2.6 ticks a ns (the reference guest's TSC: conversions round): a
/// request nest on one, ending in a slow db call that triggered; an open scope on the
/// other.
fn orders_and_feed() -> Trace {
    Trace {
        origin: 26_000,
        ticks_per_ns: 2.6,
        covers: (26_000, 2_626_000),
        lanes: vec![
            Lane {
                thread: "orders".into(),
                tid: 7,
                spans: vec![
                    Span {
                        name: "request".into(),
                        start: 30_001,
                        end: Some(2_000_003),
                        depth: 0,
                    },
                    Span {
                        name: "risk".into(),
                        start: 40_000,
                        end: Some(1_999_999),
                        depth: 1,
                    },
                    Span {
                        name: "db".into(),
                        start: 41_000,
                        end: Some(1_999_998),
                        depth: 2,
                    },
                    Span {
                        name: "parse".into(),
                        start: 30_002,
                        end: Some(39_000),
                        depth: 1,
                    },
                ],
            },
            Lane {
                thread: "feed".into(),
                tid: 9,
                spans: vec![Span {
                    name: "tick".into(),
                    start: 2_600_000,
                    end: None,
                    depth: 0,
                }],
            },
        ],
        trigger: Some(Trigger {
            component: "db".into(),
            tid: 7,
            at: 1_999_998,
            reason: "754.2 us, over its p99.9 of 12.0 us".into(),
        }),
    }
}

#[test]
fn a_hand_made_trace_holds_every_field_its_threads_names_and_its_span() {
    let trace = orders_and_feed();
    let mut out = Vec::new();
    trace.write_json(&mut out).unwrap();
    let json: Value = serde_json::from_slice(&out).unwrap();
    let spans = validate(&json).unwrap();
    // Parents before children, parse before risk: file order is time order.
    let names: Vec<&str> = spans[&7].iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["request", "parse", "risk", "db"]);
    // db: (1_999_998 - 26_000) / 2.6 ns from the origin, less its start.
    let db = &spans[&7][3];
    assert_eq!((db.ts, db.dur), (5_769, 759_230 - 5_769));
    // The open scope is drawn to the end of what the trace covers, and says so.
    let tick = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "tick")
        .unwrap();
    assert_eq!(tick["args"]["open"], true);
    assert_eq!(spans[&9][0].ts + spans[&9][0].dur, 1_000_000);
    assert_eq!(
        json["otherData"]["covers_us"],
        serde_json::json!([0.0, 1000.0])
    );
    // The trigger: an instant event where db ended, and db's own event names it.
    let events = json["traceEvents"].as_array().unwrap();
    let instant = events.iter().find(|e| e["ph"] == "i").unwrap();
    assert_eq!(
        (instant["tid"].as_u64(), instant["ts"].as_f64()),
        (Some(7), Some(759.23))
    );
    let db_event = events.iter().find(|e| e["name"] == "db").unwrap();
    assert_eq!(
        db_event["args"]["trigger"],
        "754.2 us, over its p99.9 of 12.0 us"
    );
    let thread_names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(thread_names, ["orders", "feed"]);
}

#[test]
fn the_validator_refuses_overlap_missing_names_and_wrong_depths() {
    let ok = serde_json::json!({ "traceEvents": [
        { "name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": { "name": "t" } },
        { "name": "a", "ph": "X", "pid": 1, "tid": 1, "ts": 1.0, "dur": 5.0, "args": { "depth": 0 } },
        { "name": "b", "ph": "X", "pid": 1, "tid": 1, "ts": 2.0, "dur": 1.0, "args": { "depth": 1 } },
    ]});
    validate(&ok).unwrap();
    let mut overlap = ok.clone();
    overlap["traceEvents"][2]["dur"] = serde_json::json!(4.5);
    assert!(validate(&overlap).unwrap_err().contains("overlaps"));
    let mut depth = ok.clone();
    depth["traceEvents"][2]["args"]["depth"] = serde_json::json!(0);
    assert!(
        validate(&depth)
            .unwrap_err()
            .contains("overlaps its sibling")
    );
    let mut deep = ok.clone();
    deep["traceEvents"][2]["args"]["depth"] = serde_json::json!(2);
    assert!(validate(&deep).unwrap_err().contains("depth 2"));
    let mut unnamed = ok.clone();
    unnamed["traceEvents"][0]["tid"] = serde_json::json!(2);
    assert!(validate(&unnamed).unwrap_err().contains("thread_name"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Scopes that nest in ticks nest in the JSON at any frequency and origin.
    #[test]
    fn nests_in_ticks_nest_in_the_json(
        shape in proptest::collection::vec(any::<u64>(), 0..200),
        origin in 0u64..1 << 40,
        ticks_per_ns in 0.0625f64..5.0,
        len in 1u64..10_000_000,
    ) {
        let mut spans = Vec::new();
        let mut shape = shape.into_iter();
        nest(origin + 1_000, len, 0, &mut shape, &mut spans);
        let trace = Trace {
            origin,
            ticks_per_ns,
            covers: (origin, origin + 2_000 + len),
            lanes: vec![Lane { thread: "t".into(), tid: 1, spans: spans.clone() }],
            trigger: None,
        };
        let json = trace.to_json();
        let checked = validate(&json).map_err(TestCaseError::fail)?;
        prop_assert_eq!(checked[&1].len(), spans.len());
    }
}
