//! A checker of Chrome trace-event JSON as latte's flight recorder writes it: the
//! fields Perfetto and `chrome://tracing` need, thread names, and scopes that nest by
//! time as their depths say.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A complete event as read back: name, start and length in whole ns, depth.
#[derive(Debug)]
pub struct Event {
    pub name: String,
    pub ts: i64,
    pub dur: i64,
    pub depth: u64,
}

/// Checks `json` against the trace-event format as the flight recorder writes it;
/// returns the complete events per tid, in file order.
pub fn validate(json: &Value) -> Result<BTreeMap<u64, Vec<Event>>, String> {
    let events = json["traceEvents"]
        .as_array()
        .ok_or("no traceEvents array")?;
    let mut named = BTreeSet::new();
    let mut complete: BTreeMap<u64, Vec<Event>> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().ok_or(format!("no ph: {e}"))?;
        e["pid"].as_u64().ok_or(format!("no pid: {e}"))?;
        let tid = e["tid"].as_u64().ok_or(format!("no tid: {e}"))?;
        let name = e["name"].as_str().ok_or(format!("no name: {e}"))?;
        match ph {
            "M" if name == "thread_name" => {
                e["args"]["name"]
                    .as_str()
                    .ok_or(format!("unnamed thread: {e}"))?;
                named.insert(tid);
            }
            "M" => {}
            "X" => complete
                .entry(tid)
                .or_default()
                .push(complete_event(e, name)?),
            "i" => {
                e["ts"].as_f64().ok_or(format!("instant without ts: {e}"))?;
            }
            other => return Err(format!("unexpected ph {other}: {e}")),
        }
    }
    for (tid, spans) in &complete {
        if !named.contains(tid) {
            return Err(format!("tid {tid} has no thread_name"));
        }
        nested(spans)?;
    }
    Ok(complete)
}

/// A complete event's fields: `ts` and `dur` in microseconds of whole nanoseconds,
/// `dur` not negative, the depth in `args`.
fn complete_event(e: &Value, name: &str) -> Result<Event, String> {
    let ts = e["ts"].as_f64().ok_or(format!("no ts: {e}"))?;
    let dur = e["dur"].as_f64().ok_or(format!("no dur: {e}"))?;
    if dur < 0.0 {
        return Err(format!("negative dur: {e}"));
    }
    let (ts_ns, dur_ns) = ((ts * 1e3).round() as i64, (dur * 1e3).round() as i64);
    if ((ts * 1e3) - ts_ns as f64).abs() > 1e-6 {
        return Err(format!("ts not in whole ns: {e}"));
    }
    let depth = e["args"]["depth"]
        .as_u64()
        .ok_or(format!("no depth: {e}"))?;
    Ok(Event {
        name: name.to_owned(),
        ts: ts_ns,
        dur: dur_ns,
        depth,
    })
}

/// In file order (by start), each event lies inside the one its depth puts it in and
/// after the sibling before it.
pub fn nested(spans: &[Event]) -> Result<(), String> {
    let mut open: Vec<(i64, i64)> = Vec::new(); // (start, end) per depth
    let mut last_ts = i64::MIN;
    for Event {
        name,
        ts,
        dur,
        depth,
    } in spans
    {
        let (ts, depth, end) = (*ts, *depth as usize, ts + dur);
        if ts < last_ts {
            return Err(format!("{name} at {ts} ns comes after a later start"));
        }
        last_ts = ts;
        if depth > open.len() {
            return Err(format!(
                "{name} at {ts} ns: depth {depth} inside {} open",
                open.len()
            ));
        }
        if let Some(&(_, sibling_end)) = open.get(depth)
            && ts < sibling_end
        {
            return Err(format!(
                "{name} at {ts} ns overlaps its sibling ending {sibling_end}"
            ));
        }
        open.truncate(depth);
        if let Some(&(parent_start, parent_end)) = open.last()
            && (ts < parent_start || end > parent_end)
        {
            return Err(format!(
                "{name} at {ts} ns (+{dur}) overlaps its parent [{parent_start}, {parent_end}]"
            ));
        }
        open.push((ts, end));
    }
    Ok(())
}
