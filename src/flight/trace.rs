//! A stretch of the run's timeline as Chrome trace-event JSON: the format Perfetto UI
//! and `chrome://tracing` open.
//!
//! A [`Trace`] holds, per thread, the scopes it ran in a span of time, in counter
//! ticks on the one axis of the run; [`Trace::write_json`] writes them as complete
//! events (`"ph": "X"`, `ts` and `dur` in microseconds), each thread's name as a
//! metadata event, and the trigger that asked for the trace as an instant event. The
//! flight recorder fills a `Trace` around a slow moment; one can also be built by hand,
//! as below.
//!
//! **One axis.** Every tick converts through the same monotone function (the
//! calibrated frequency, the trace's `origin` as zero, whole nanoseconds), and a
//! scope's `dur` is its converted end minus its converted start: a scope that nests
//! inside another in ticks nests inside it in the JSON too, to the nanosecond. Across
//! threads, the alignment is as good as the counters' synchronisation across cores
//! (an invariant TSC is one counter for every core; the OS clock is one clock).
//!
//! ```
//! use latte::flight::trace::{Lane, Span, Trace, Trigger};
//! // 1 tick per ns: a request of 5 us with a parse of 1 us inside, on thread 1.
//! let trace = Trace {
//!     origin: 1_000,
//!     ticks_per_ns: 1.0,
//!     covers: (1_000, 9_000),
//!     lanes: vec![Lane {
//!         thread: "worker".into(),
//!         tid: 1,
//!         spans: vec![
//!             Span { name: "request".into(), start: 2_000, end: Some(7_000), depth: 0 },
//!             Span { name: "parse".into(), start: 2_500, end: Some(3_500), depth: 1 },
//!         ],
//!     }],
//!     trigger: Some(Trigger {
//!         component: "request".into(),
//!         tid: 1,
//!         at: 7_000,
//!         reason: "5.00 us, over its p99.9 of 2.00 us".into(),
//!     }),
//! };
//! let mut json = Vec::new();
//! trace.write_json(&mut json).unwrap();
//! let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
//! let request = &v["traceEvents"]
//!     .as_array()
//!     .unwrap()
//!     .iter()
//!     .find(|e| e["name"] == "request" && e["ph"] == "X")
//!     .unwrap();
//! assert_eq!((request["ts"].as_f64(), request["dur"].as_f64()), (Some(1.0), Some(5.0)));
//! ```

use serde_json::Value;
use std::io::{self, Write};

mod read;
mod write;

use write::{Args, Document, Event, Events, Name, OtherData, TriggerData};

/// A stretch of the run's timeline: every thread's scopes within [`covers`](Self::covers).
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The tick that is zero on the trace's axis (the run's start).
    pub origin: u64,
    /// Counter ticks per nanosecond (the calibrated frequency).
    pub ticks_per_ns: f64,
    /// The ticks the trace really covers, first and last: a scope that began before
    /// is cut at the first (kept whole if it ended inside), one still open is drawn to
    /// the last.
    pub covers: (u64, u64),
    /// One lane per thread.
    pub lanes: Vec<Lane>,
    /// What asked for the trace, if anything did.
    pub trigger: Option<Trigger>,
}

/// One thread's scopes.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// The thread's name.
    pub thread: String,
    /// A number for the thread, unique within the trace.
    pub tid: u64,
    /// Its scopes, in any order.
    pub spans: Vec<Span>,
}

/// One scope: its component, its start and end ticks, its depth in its thread's stack.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The component's name.
    pub name: String,
    /// The tick its Start read.
    pub start: u64,
    /// The tick its Stop read; `None` while it is still open.
    pub end: Option<u64>,
    /// Its depth: 0 for a scope opened on an empty stack.
    pub depth: u32,
}

/// The sample that asked for a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    /// The component whose sample it was.
    pub component: String,
    /// The thread it ran on ([`Lane::tid`]).
    pub tid: u64,
    /// The tick at which it ended.
    pub at: u64,
    /// Why it triggered, in words ("41.0 us, over its p99.9 of 12.0 us").
    pub reason: String,
}

/// `ticks_per_ns` if it is a positive number, else 1: a counter calibration could not
/// measure (a test's mock counter) counts a tick as a nanosecond wherever the flight
/// recorder converts (windows, thresholds, the trace's axis).
pub(crate) fn usable_ticks_per_ns(ticks_per_ns: f64) -> f64 {
    if ticks_per_ns > 0.0 && ticks_per_ns.is_finite() {
        ticks_per_ns
    } else {
        1.0
    }
}

/// The process id written into every event: one process per trace.
const PID: u64 = 1;

impl Trace {
    /// Nanoseconds from [`origin`](Self::origin) to `tick`, whole: the one conversion
    /// every timestamp of the trace goes through (monotone in `tick`).
    /// A frequency that is not a positive number (a counter that calibration could
    /// not measure, as a test's mock counter) counts a tick as a nanosecond.
    fn ns(&self, tick: u64) -> i64 {
        let ticks = tick as i128 - self.origin as i128;
        (ticks as f64 / usable_ticks_per_ns(self.ticks_per_ns)).round() as i64
    }

    /// Nanoseconds in `ticks` of this trace's counter: the one conversion of its
    /// durations. A frequency that is not a positive number (a counter calibration
    /// could not measure) counts a tick as a nanosecond.
    ///
    /// ```
    /// # use latte::flight::trace::Trace;
    /// let trace = Trace { origin: 0, ticks_per_ns: 2.0, covers: (0, 0), lanes: vec![], trigger: None };
    /// assert_eq!(trace.nanos(500.0), 250.0);
    /// ```
    pub fn nanos(&self, ticks: f64) -> f64 {
        ticks / usable_ticks_per_ns(self.ticks_per_ns)
    }

    /// Microseconds, as a JSON number with at most three decimals (whole nanoseconds).
    fn us(ns: i64) -> f64 {
        ns as f64 / 1_000.0
    }

    /// The trace as a JSON value in the trace-event format's object form (what
    /// [`write_json`](Self::write_json) writes).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.document()).expect("a trace serialises to JSON")
    }

    /// The document, serialised as it is walked: no tree of JSON values is built (a
    /// dump of 18,000 scopes took 105-143 ms on the drain that way).
    fn document(&self) -> Document<'_> {
        let (first, last) = (self.ns(self.covers.0), self.ns(self.covers.1));
        Document {
            trace_events: Events { trace: self },
            display_time_unit: "ns",
            other_data: OtherData {
                generator: "latte",
                covers_us: [Self::us(first), Self::us(last)],
                ticks_per_ns: self.ticks_per_ns,
                trigger: self.trigger.as_ref().map(|t| TriggerData {
                    component: &t.component,
                    tid: t.tid,
                    reason: &t.reason,
                }),
            },
        }
    }

    /// Every event, in order: the process's name; per lane its name, its place and its
    /// scopes, outer before inner; the trigger's instant.
    fn events(&self) -> impl Iterator<Item = Event<'_>> {
        let (first, last) = (self.ns(self.covers.0), self.ns(self.covers.1));
        let process = Event::meta(
            "process_name",
            0,
            Args::Name {
                name: "latte flight recorder",
            },
        );
        let lanes = self
            .lanes
            .iter()
            .enumerate()
            .flat_map(move |(order, lane)| {
                let mut spans: Vec<&Span> = lane.spans.iter().collect();
                // Outer before inner at the same start: viewers nest by order.
                spans.sort_by_key(|s| (s.start, s.depth));
                [
                    Event::meta("thread_name", lane.tid, Args::Name { name: &lane.thread }),
                    Event::meta(
                        "thread_sort_index",
                        lane.tid,
                        Args::Sort { sort_index: order },
                    ),
                ]
                .into_iter()
                .chain(
                    spans
                        .into_iter()
                        .map(move |span| self.span_event(lane, span, (first, last))),
                )
            });
        let trigger = self.trigger.as_ref().map(|t| Event {
            name: Name::Trigger(&t.component),
            cat: Some("latte"),
            ph: "i",
            s: Some("g"),
            pid: PID,
            tid: t.tid,
            ts: Some(Self::us(self.ns(t.at))),
            dur: None,
            args: Args::Reason { reason: &t.reason },
        });
        std::iter::once(process).chain(lanes).chain(trigger)
    }

    /// `span` of `lane` as a complete event; `covers` in ns from the origin.
    fn span_event<'a>(
        &'a self,
        lane: &Lane,
        span: &'a Span,
        (first, last): (i64, i64),
    ) -> Event<'a> {
        let start = self.ns(span.start);
        let end = span.end.map_or(last, |e| self.ns(e));
        let trigger = self
            .trigger
            .as_ref()
            .filter(|t| t.tid == lane.tid && t.component == span.name && span.end == Some(t.at));
        Event {
            name: Name::Plain(&span.name),
            cat: Some("latte"),
            ph: "X",
            s: None,
            pid: PID,
            tid: lane.tid,
            ts: Some(Self::us(start)),
            dur: Some(Self::us(end - start)),
            args: Args::Span {
                depth: span.depth,
                open: span.end.is_none().then_some(true),
                began_before_the_trace: (start < first).then_some(true),
                trigger: trigger.map(|t| t.reason.as_str()),
            },
        }
    }

    /// Writes the trace as trace-event JSON to `w`.
    pub fn write_json(&self, mut w: impl Write) -> io::Result<()> {
        serde_json::to_writer(&mut w, &self.document())?;
        w.write_all(b"\n")
    }

    /// Reads a trace back from trace-event JSON in the object form (what
    /// [`write_json`](Self::write_json) writes, or another tool's complete events):
    /// one lane per thread in the order of its `thread_sort_index` (else of its first
    /// event), each `"ph": "X"` event a span, its depth from `args.depth` or else from
    /// how it nests in time on its thread, `args.open` making it open. Ticks are
    /// nanoseconds (`ticks_per_ns` 1), the origin so placed that none is negative; the
    /// span covered is `otherData.covers_us`, else the events' own; the trigger is
    /// the instant event `trigger: COMPONENT` with `otherData.trigger`'s reason.
    ///
    /// ```
    /// use latte::flight::trace::Trace;
    /// let json = serde_json::json!({ "traceEvents": [
    ///     { "name": "thread_name", "ph": "M", "pid": 1, "tid": 7, "args": { "name": "io" } },
    ///     { "name": "read", "ph": "X", "pid": 1, "tid": 7, "ts": 10.0, "dur": 4.5 },
    ///     { "name": "decode", "ph": "X", "pid": 1, "tid": 7, "ts": 11.0, "dur": 1.0 },
    /// ]});
    /// let trace = Trace::from_json(&json).unwrap();
    /// let io = &trace.lanes[0];
    /// assert_eq!((io.thread.as_str(), io.spans.len()), ("io", 2));
    /// assert_eq!(io.spans[1].depth, 1); // nested in time under `read`
    /// assert_eq!(io.spans[0].end.unwrap() - io.spans[0].start, 4_500); // ns
    /// assert!(Trace::from_json(&serde_json::json!({ "rows": [] })).is_err());
    /// ```
    pub fn from_json(json: &Value) -> Result<Trace, String> {
        read::trace(json)
    }
}
