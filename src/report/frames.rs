//! Per-frame figures as a report carries them: a thread's frames (cut by
//! [`latte_frame!`](crate::latte_frame) marks), each component's time and calls per
//! frame, and with a budget the frames over it and what ate them.

use serde::{Deserialize, Serialize};

/// A thread's frames: from each `latte_frame!` mark to the next.
///
/// Per-frame figures are whole-run distributions over the thread's frames: a frame in
/// which a component made no call counts as 0 for it. A scope counts in the frame in
/// which it closes. Work on other threads is outside the thread's frames (a [`Timer`]
/// closed on this thread counts here; one started here and closed elsewhere counts on
/// the thread that closed it). Times are counter ticks as recorded, in the report's
/// unit: each call's instrumentation overhead (the report's `overhead`) is inside them,
/// even for calibrated data.
///
/// ```
/// use std::time::Duration;
/// use latte::{Report, ReportOptions};
/// for _ in 0..5 {
///     latte::latte_start!("doc_per_frame");
///     latte::latte_stop!("doc_per_frame");
///     latte::latte_frame!();
/// }
/// let options = ReportOptions { frame_budget: Some(Duration::from_secs(1)), ..Default::default() };
/// let report = Report::collect(&options);
/// let me = std::thread::current().name().unwrap().to_owned();
/// let frames = report.threads.iter().find(|t| t.name == me).unwrap().per_frame.clone().unwrap();
/// assert_eq!((frames.frames, frames.over_budget), (4, Some(0)));
/// let work = frames.components.iter().find(|c| c.component == "doc_per_frame").unwrap();
/// assert_eq!((work.calls.p50, work.calls.max, work.frames_with_calls), (1.0, 1.0, 4));
/// ```
///
/// [`Timer`]: crate::Timer
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerFrame {
    /// Frames: marks after the first.
    pub frames: u64,
    /// The frames' lengths, mark to mark.
    pub length: Spread,
    /// The budget a frame's length is held to ([`ReportOptions::frame_budget`](crate::ReportOptions::frame_budget)).
    pub budget: Option<f64>,
    /// Frames longer than the budget (the bucket a length falls in decides, within
    /// 1/2,048 of it); `None` without a budget.
    pub over_budget: Option<u64>,
    /// Each component with a call in some frame, the largest median time per frame
    /// first.
    pub components: Vec<FrameComponent>,
    /// With a budget, every frame over it among the longest frames the thread keeps
    /// whole ([`Builder::frames_listed`](crate::Builder::frames_listed), 1,000 by
    /// default), longest first; without one, the [`PerFrame::WORST`] longest frames.
    pub worst: Vec<WorstFrame>,
    /// Frames over budget beyond `worst` (the thread kept fewer whole): counted, not
    /// listed. Format 5 on.
    #[serde(default)]
    pub unlisted: u64,
}

impl PerFrame {
    /// The longest frames the table names (the JSON lists every frame over budget).
    pub const WORST: usize = 8;
}

/// Median, 99th percentile, maximum and mean of a per-frame figure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Median (frames without a call count as 0).
    #[serde(deserialize_with = "super::wire::figure")]
    pub p50: f64,
    /// 99th percentile.
    #[serde(deserialize_with = "super::wire::figure")]
    pub p99: f64,
    /// Largest, exact.
    #[serde(deserialize_with = "super::wire::figure")]
    pub max: f64,
    /// Mean over every frame, exact.
    #[serde(deserialize_with = "super::wire::figure")]
    pub mean: f64,
}

/// One component's share of a thread's frames.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameComponent {
    /// Its id.
    pub component: String,
    /// Frames in which it made a call (the others count as 0 in `time` and `calls`).
    pub frames_with_calls: u64,
    /// Its time per frame: its outermost calls' time (a call inside another of the
    /// same id is in it already).
    pub time: Spread,
    /// Its calls per frame.
    pub calls: Spread,
    /// With a [`Counting`](crate::alloc::Counting) allocator installed: its
    /// allocations per frame (its outermost calls', the scopes inside them included),
    /// format 8 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocs: Option<Spread>,
}

/// One of the longest frames, and the components that took more of it than they
/// usually do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorstFrame {
    /// Its number in the thread's frames (1 is the frame the second mark ends).
    pub number: u64,
    /// Its length, mark to mark.
    pub length: f64,
    /// The part of its length in no scope of the thread: a sleep or a wait for the
    /// next frame, uninstrumented code, the loop's own.
    #[serde(default)]
    pub outside_scopes: f64,
    /// At most 3: the components whose time in this frame exceeded their median time
    /// per frame by the most (and by at least 1% of the frame's length), largest
    /// excess first. A component is left out when one that ran inside it accounts
    /// for half its excess or more: that one names the same time.
    pub culprits: Vec<Culprit>,
}

/// A component that took more of a frame than it usually does.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Culprit {
    /// Its id.
    pub component: String,
    /// Its time in the frame.
    pub time: f64,
    /// Its median time per frame.
    pub median: f64,
    /// `time - median`.
    pub excess: f64,
}
