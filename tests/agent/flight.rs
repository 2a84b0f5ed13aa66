//! The flight recorder (`Builder::flight_recorder`): every live thread's recent scopes
//! and its open ones, read while the threads record, nest as they ran; the buffer's
//! bound holds; the report's header states the memory; bad settings are refused.

use crate::common::{self, trace_events};
use latte::{Id, Mode, Report, ReportOptions};
use std::sync::Barrier;
use std::time::Duration;

static REQUEST: Id = Id::new("flight/request");
static PARSE: Id = Id::new("flight/parse");
static RISK: Id = Id::new("flight/risk");
static DB: Id = Id::new("flight/db");
static OTHER: Id = Id::new("flight/other");

const REQUESTS: usize = 50;
const OTHERS: usize = 100;

fn scope(id: &Id, inside: impl FnOnce()) {
    latte::start(id, Mode::Fast);
    inside();
    latte::stop(id, Mode::Fast);
}

/// `REQUESTS` requests (request > parse, request > risk > db) on a thread named
/// `worker`, then one request left open while `read` runs on the calling thread; a
/// thread named `other` closes `OTHERS` scopes and holds one open meanwhile. Returns
/// what `read` returned.
fn run<T>(worker: &str, other: &str, read: impl FnOnce() -> T) -> T {
    let (opened, read_done) = (Barrier::new(3), Barrier::new(3));
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name(other.into())
            .spawn_scoped(s, || {
                for _ in 0..OTHERS {
                    scope(&OTHER, || {});
                }
                latte::start(&OTHER, Mode::Fast);
                opened.wait();
                read_done.wait();
                latte::stop(&OTHER, Mode::Fast);
            })
            .unwrap();
        std::thread::Builder::new()
            .name(worker.into())
            .spawn_scoped(s, || {
                for _ in 0..REQUESTS {
                    scope(&REQUEST, || {
                        scope(&PARSE, || {});
                        scope(&RISK, || scope(&DB, || {}));
                    });
                }
                latte::start(&REQUEST, Mode::Fast);
                opened.wait();
                read_done.wait();
                latte::stop(&REQUEST, Mode::Fast);
            })
            .unwrap();
        opened.wait();
        let value = read();
        read_done.wait();
        value
    })
}

#[test]
fn a_timeline_holds_each_threads_scopes_nested_and_the_open_one() {
    let _turn = common::exclusive_with(|b| {
        b.flight_recorder(Duration::from_secs(30))
            .flight_entries(1024)
    });
    let trace = run("fl-worker", "fl-other", latte::flight::timeline);
    let lane = |name: &str| {
        trace
            .lanes
            .iter()
            .find(|l| l.thread == name)
            .unwrap_or_else(|| panic!("no lane {name}: {trace:?}"))
    };
    let worker = lane("fl-worker");
    let count = |name: &Id, depth: u32, open: bool| {
        worker
            .spans
            .iter()
            .filter(|s| s.name == name.name() && s.depth == depth && s.end.is_none() == open)
            .count()
    };
    // Every closed scope, at its depth (200 entries: the buffer holds them all), and
    // the request still open, at depth 0.
    assert_eq!(count(&REQUEST, 0, false), REQUESTS, "{worker:?}");
    assert_eq!(count(&PARSE, 1, false), REQUESTS);
    assert_eq!(count(&RISK, 1, false), REQUESTS);
    assert_eq!(count(&DB, 2, false), REQUESTS);
    assert_eq!(count(&REQUEST, 0, true), 1);
    assert_eq!(worker.spans.len(), 4 * REQUESTS + 1);
    // Each db lies inside a risk, inside a request, in ticks.
    let within = |inner: &latte::flight::trace::Span, outer: &str, depth: u32| {
        worker.spans.iter().any(|o| {
            o.name == outer
                && o.depth == depth
                && o.start <= inner.start
                && inner.end.zip(o.end).is_some_and(|(i, o)| i <= o)
        })
    };
    for db in worker.spans.iter().filter(|s| s.name == DB.name()) {
        assert!(within(db, RISK.name(), 1), "{db:?} in no risk");
    }
    for child in worker.spans.iter().filter(|s| s.depth == 1) {
        assert!(within(child, REQUEST.name(), 0), "{child:?} in no request");
    }
    let other = lane("fl-other");
    assert_eq!(other.spans.len(), OTHERS + 1, "{other:?}");
    assert_eq!(other.spans.iter().filter(|s| s.end.is_none()).count(), 1);
    // Everything within what the trace says it covers, from the agent's start.
    assert!(trace.origin <= trace.covers.0 && trace.covers.0 <= trace.covers.1);
    for s in trace.lanes.iter().flat_map(|l| &l.spans) {
        assert!(s.start <= trace.covers.1, "{s:?} after {:?}", trace.covers);
    }

    json_holds_them(&trace, worker.tid);
}

/// The JSON: the fields Perfetto needs, the nesting, every scope of `tid`, the open
/// request marked.
fn json_holds_them(trace: &latte::flight::trace::Trace, tid: u64) {
    let json = trace.to_json();
    let events = trace_events::validate(&json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(events[&tid].len(), 4 * REQUESTS + 1);
    let open: Vec<_> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["args"]["open"] == true)
        .collect();
    assert!(
        open.iter().any(|e| e["name"] == REQUEST.name()),
        "the open request is marked: {open:?}"
    );
}

#[test]
fn a_busy_thread_keeps_its_newest_scopes_and_the_trace_says_what_it_covers() {
    let _turn = common::exclusive_with(|b| {
        b.flight_recorder(Duration::from_secs(30))
            .flight_entries(16)
    });
    let trace = run("fl-busy", "fl-beside", latte::flight::timeline);
    let worker = trace.lanes.iter().find(|l| l.thread == "fl-busy").unwrap();
    let closed: Vec<_> = worker.spans.iter().filter(|s| s.end.is_some()).collect();
    assert!(
        (1..=16).contains(&closed.len()),
        "at most the buffer's 16: {}",
        closed.len()
    );
    // 200 scopes closed, 16 kept: the trace starts where the kept ones do, not at
    // the window's start 30 s back.
    let oldest_end = closed.iter().filter_map(|s| s.end).min().unwrap();
    assert!(
        trace.covers.0 >= oldest_end,
        "{:?} {oldest_end}",
        trace.covers
    );
    let json = trace.to_json();
    trace_events::validate(&json).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_header_states_the_reach_and_the_memory_and_bad_settings_are_refused() {
    let _turn = common::exclusive_with(|b| {
        b.flight_recorder(Duration::from_millis(50))
            .flight_entries(4096)
    });
    let text = run("fl-header", "fl-header-other", || {
        let mut out = Vec::new();
        Report::collect(&ReportOptions::default())
            .write(&mut out, latte::Format::default())
            .unwrap();
        String::from_utf8(out).unwrap()
    });
    let line = text
        .lines()
        .find(|l| l.starts_with("flight recorder:"))
        .unwrap_or_else(|| panic!("no flight recorder line:\n{text}"));
    assert!(
        line.contains("50.00 ms or 4,096 scopes a thread (96.0 KiB each, "),
        "{line}"
    );
    for bad in [
        latte::builder().flight_recorder(Duration::ZERO),
        latte::builder().flight_recorder(Duration::from_secs(61)),
        latte::builder().flight_entries(1000),
        latte::builder().flight_entries(1 << 25),
    ] {
        let err = bad.start().unwrap_err();
        assert!(err.to_string().contains("flight recorder"), "{err}");
    }
}
