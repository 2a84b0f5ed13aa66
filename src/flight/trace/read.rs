//! Trace-event JSON read back into a [`Trace`] ([`Trace::from_json`]).

use super::{Lane, Span, Trace, Trigger};
use serde_json::Value;
use std::collections::BTreeMap;

/// A complete event, its times in nanoseconds as written.
struct Event {
    tid: u64,
    name: String,
    start: i64,
    end: i64,
    depth: Option<u32>,
    open: bool,
}

/// A thread as its metadata and events name it.
#[derive(Default)]
struct Thread {
    name: Option<String>,
    sort: Option<i64>,
    first: usize,
}

/// Microseconds to whole nanoseconds.
fn ns(us: f64) -> i64 {
    (us * 1_000.0).round() as i64
}

/// `field` of event `i` as a number, or an error naming both.
fn number(event: &Value, i: usize, field: &str) -> Result<f64, String> {
    event[field]
        .as_f64()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("trace event {i} has no numeric `{field}`"))
}

/// The trigger's instant event: thread, component, time in ns, reason.
type Instant = (u64, String, i64, String);

/// What the events of a trace say, times in nanoseconds as written.
#[derive(Default)]
struct Parsed {
    threads: BTreeMap<u64, Thread>,
    spans: Vec<Event>,
    trigger: Option<Instant>,
}

/// The events read one by one: metadata, complete events, the trigger's instant.
fn parse(events: &[Value]) -> Result<Parsed, String> {
    let mut out = Parsed::default();
    for (i, event) in events.iter().enumerate() {
        let ph = event["ph"].as_str().unwrap_or_default();
        let name = event["name"].as_str().unwrap_or_default();
        let Some(tid) = event["tid"].as_u64() else {
            continue; // process-wide metadata, or a tool's own kind of thread id
        };
        let first = out.threads.len();
        let thread = out.threads.entry(tid).or_insert_with(|| Thread {
            first,
            ..Thread::default()
        });
        match (ph, name) {
            ("M", "thread_name") => thread.name = event["args"]["name"].as_str().map(String::from),
            ("M", "thread_sort_index") => thread.sort = event["args"]["sort_index"].as_i64(),
            ("X", _) => {
                let (ts, dur) = (number(event, i, "ts")?, number(event, i, "dur")?);
                if dur < 0.0 {
                    return Err(format!("trace event {i} ({name}) lasts {dur} us"));
                }
                let args = &event["args"];
                out.spans.push(Event {
                    tid,
                    name: name.to_string(),
                    start: ns(ts),
                    end: ns(ts + dur),
                    depth: args["depth"].as_u64().and_then(|d| u32::try_from(d).ok()),
                    open: args["open"].as_bool() == Some(true),
                });
            }
            ("i" | "I", _) if name.starts_with("trigger: ") => {
                let component = name["trigger: ".len()..].to_string();
                let reason = event["args"]["reason"].as_str().unwrap_or_default();
                let at = ns(number(event, i, "ts")?);
                out.trigger = Some((tid, component, at, reason.to_string()));
            }
            _ => {}
        }
    }
    Ok(out)
}

pub(super) fn trace(json: &Value) -> Result<Trace, String> {
    let events = json
        .get("traceEvents")
        .and_then(Value::as_array)
        .or_else(|| json.as_array())
        .ok_or("not trace-event JSON: no `traceEvents` array")?;
    let parsed = parse(events)?;
    let spans = &parsed.spans;
    let covers = json["otherData"]["covers_us"]
        .as_array()
        .and_then(|c| Some((ns(c.first()?.as_f64()?), ns(c.get(1)?.as_f64()?))))
        .or_else(|| {
            let first = spans.iter().map(|s| s.start).min()?;
            Some((first, spans.iter().map(|s| s.end).max()?))
        })
        .unwrap_or((0, 0));
    // Ticks are nanoseconds from an origin no time lies before.
    let lowest = spans
        .iter()
        .map(|s| s.start)
        .chain([covers.0])
        .chain(parsed.trigger.as_ref().map(|t| t.2))
        .min()
        .unwrap_or(0);
    let origin = lowest.min(0).unsigned_abs();
    let tick = |ns: i64| (ns + origin as i64) as u64;
    let written = &json["otherData"]["trigger"];
    Ok(Trace {
        origin,
        ticks_per_ns: 1.0,
        covers: (tick(covers.0), tick(covers.1)),
        lanes: lanes(&parsed, tick),
        trigger: parsed.trigger.map(|(tid, component, at, reason)| Trigger {
            reason: match written["reason"].as_str() {
                Some(r) if reason.is_empty() => r.to_string(),
                _ => reason,
            },
            component,
            tid,
            at: tick(at),
        }),
    })
}

/// One lane per thread that has a name or a scope, in the order of its sort index
/// (else of its first event); times through `tick`.
fn lanes(parsed: &Parsed, tick: impl Fn(i64) -> u64) -> Vec<Lane> {
    let mut order: Vec<(&u64, &Thread)> = parsed.threads.iter().collect();
    order.sort_by_key(|(_, t)| (t.sort.is_none(), t.sort, t.first));
    order
        .into_iter()
        .filter_map(|(&tid, thread)| {
            let mut own: Vec<&Event> = parsed.spans.iter().filter(|s| s.tid == tid).collect();
            if own.is_empty() && thread.name.is_none() {
                return None;
            }
            own.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end), s.depth));
            let nested = nesting(&own);
            Some(Lane {
                thread: thread
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("thread {tid}")),
                tid,
                spans: own
                    .iter()
                    .zip(nested)
                    .map(|(s, depth)| Span {
                        name: s.name.clone(),
                        start: tick(s.start),
                        end: (!s.open).then(|| tick(s.end)),
                        depth: s.depth.unwrap_or(depth),
                    })
                    .collect(),
            })
        })
        .collect()
}

/// Each event's depth by how it nests in time among `events` (one thread's, sorted by
/// start, longer first): the number of earlier events still open when it starts.
fn nesting(events: &[&Event]) -> Vec<u32> {
    let mut open: Vec<i64> = Vec::new();
    events
        .iter()
        .map(|e| {
            while open.last().is_some_and(|&end| end <= e.start) {
                open.pop();
            }
            let depth = open.len() as u32;
            open.push(e.end);
            depth
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{Lane, Span, Trace, Trigger};

    fn span(name: &str, start: u64, end: Option<u64>, depth: u32) -> Span {
        Span {
            name: name.into(),
            start,
            end,
            depth,
        }
    }

    /// What `write_json` writes, `from_json` reads back whole (a trace in nanoseconds
    /// from its origin, spans in the writer's order).
    #[test]
    fn a_written_trace_reads_back_the_same() {
        let trace = Trace {
            origin: 0,
            ticks_per_ns: 1.0,
            covers: (1_000, 90_000),
            lanes: vec![
                Lane {
                    thread: "gateway".into(),
                    tid: 4,
                    spans: vec![
                        span("request", 200, Some(60_000), 0),
                        span("parse", 1_500, Some(2_500), 1),
                        span("risk", 3_000, Some(59_000), 1),
                        span("db", 3_100, Some(58_000), 2),
                        span("request", 70_000, None, 0),
                    ],
                },
                Lane {
                    thread: "md".into(),
                    tid: 2,
                    spans: vec![span("tick", 10_000, Some(10_040), 0)],
                },
            ],
            trigger: Some(Trigger {
                component: "request".into(),
                tid: 4,
                at: 60_000,
                reason: "59.80 us, over 10.00 us".into(),
            }),
        };
        let read = Trace::from_json(&trace.to_json()).unwrap();
        assert_eq!(read, trace);
    }

    #[test]
    fn events_before_zero_and_without_metadata_still_read() {
        let json = serde_json::json!([
            { "name": "a", "ph": "X", "pid": 1, "tid": 3, "ts": -2.0, "dur": 5.0 },
            { "name": "b", "ph": "X", "pid": 1, "tid": 3, "ts": -1.0, "dur": 1.0 },
            { "name": "c", "ph": "X", "pid": 1, "tid": 3, "ts": 0.0, "dur": 1.0 },
        ]);
        let trace = Trace::from_json(&json).unwrap();
        assert_eq!(trace.origin, 2_000);
        assert_eq!(trace.covers, (0, 5_000));
        let lane = &trace.lanes[0];
        assert_eq!(lane.thread, "thread 3");
        let depths: Vec<(&str, u64, u32)> = lane
            .spans
            .iter()
            .map(|s| (s.name.as_str(), s.start, s.depth))
            .collect();
        assert_eq!(depths, [("a", 0, 0), ("b", 1_000, 1), ("c", 2_000, 1)]);
    }

    #[test]
    fn what_is_not_a_trace_is_refused_with_the_reason() {
        let err = |v: serde_json::Value| Trace::from_json(&v).unwrap_err();
        assert!(err(serde_json::json!({ "rows": [] })).contains("no `traceEvents`"));
        let bad = serde_json::json!({ "traceEvents": [
            { "name": "a", "ph": "X", "tid": 1, "ts": 1.0 }
        ]});
        assert_eq!(err(bad), "trace event 0 has no numeric `dur`");
        let negative = serde_json::json!({ "traceEvents": [
            { "name": "a", "ph": "X", "tid": 1, "ts": 1.0, "dur": -1.0 }
        ]});
        assert!(err(negative).contains("lasts -1 us"));
    }
}
