//! The trace-event document as serde structs, serialised as the [`Trace`] is walked:
//! no tree of JSON values is built.

use super::{PID, Trace};
use serde::{Serialize, Serializer};

/// The trace-event document in its object form.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Document<'a> {
    pub(super) trace_events: Events<'a>,
    pub(super) display_time_unit: &'static str,
    pub(super) other_data: OtherData<'a>,
}

/// The events, serialised one at a time from the trace.
pub(super) struct Events<'a> {
    pub(super) trace: &'a Trace,
}

impl Serialize for Events<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.trace.events())
    }
}

/// latte's own fields: the span covered, the frequency, the trigger.
#[derive(Serialize)]
pub(super) struct OtherData<'a> {
    pub(super) generator: &'static str,
    pub(super) covers_us: [f64; 2],
    pub(super) ticks_per_ns: f64,
    pub(super) trigger: Option<TriggerData<'a>>,
}

#[derive(Serialize)]
pub(super) struct TriggerData<'a> {
    pub(super) component: &'a str,
    pub(super) tid: u64,
    pub(super) reason: &'a str,
}

/// One event of the trace-event format.
#[derive(Serialize)]
pub(super) struct Event<'a> {
    pub(super) name: Name<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) cat: Option<&'static str>,
    pub(super) ph: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) s: Option<&'static str>,
    pub(super) pid: u64,
    pub(super) tid: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) dur: Option<f64>,
    pub(super) args: Args<'a>,
}

impl<'a> Event<'a> {
    /// A metadata event of thread `tid` (0: the process).
    pub(super) fn meta(name: &'static str, tid: u64, args: Args<'a>) -> Event<'a> {
        Event {
            name: Name::Plain(name),
            cat: None,
            ph: "M",
            s: None,
            pid: PID,
            tid,
            ts: None,
            dur: None,
            args,
        }
    }
}

/// An event's name: as it is, or the trigger's (`trigger: COMPONENT`).
pub(super) enum Name<'a> {
    Plain(&'a str),
    Trigger(&'a str),
}

impl Serialize for Name<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Name::Plain(name) => serializer.serialize_str(name),
            Name::Trigger(component) => {
                serializer.collect_str(&format_args!("trigger: {component}"))
            }
        }
    }
}

/// An event's `args`.
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum Args<'a> {
    Name {
        name: &'a str,
    },
    Sort {
        sort_index: usize,
    },
    Reason {
        reason: &'a str,
    },
    Span {
        depth: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        open: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        began_before_the_trace: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        trigger: Option<&'a str>,
    },
}
