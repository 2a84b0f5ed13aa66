//! The frame counters of a [`MetricSet`](super::MetricSet): frames and frames over
//! budget, per thread that marked frames ([`latte_frame!`](crate::latte_frame)).

use super::metrics::Thread;
use crate::report::Report;

/// A thread's frames (or all threads'), for the `frames_total` and
/// `frames_over_budget_total` counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frames {
    /// The thread, with the thread label.
    pub thread: Option<Thread>,
    /// Frames ended.
    pub frames: u64,
    /// Frames longer than [`Builder::frame_budget`](crate::Builder::frame_budget)
    /// (0 without a budget).
    pub over_budget: u64,
}

/// One frame counter: its name's words (an exporter joins them its own way:
/// `latte_frames_over_budget_total`, `latte.frames.over_budget`), its help text, and
/// which figure of [`Frames`] it reads.
#[derive(Clone, Copy, Debug)]
pub struct FrameCounter {
    /// The words after `latte`: `["frames"]`, `["frames", "over_budget"]`.
    pub words: &'static [&'static str],
    /// What it counts, for the exporter's help text.
    pub help: &'static str,
    /// Its value for one entry.
    pub value: fn(&Frames) -> u64,
}

impl Frames {
    /// Every frame counter, in the order exporters write them.
    ///
    /// ```
    /// use latte::exporter::Frames;
    /// let names: Vec<String> = Frames::COUNTERS.iter().map(|c| c.words.join("_")).collect();
    /// assert_eq!(names, ["frames", "frames_over_budget"]);
    /// let f = Frames { frames: 600, over_budget: 4, ..Frames::default() };
    /// assert_eq!((Frames::COUNTERS[1].value)(&f), 4);
    /// ```
    pub const COUNTERS: [FrameCounter; 2] = [
        FrameCounter {
            words: &["frames"],
            help: "Frames ended (latte_frame! marks after the first).",
            value: |f| f.frames,
        },
        FrameCounter {
            words: &["frames", "over_budget"],
            help: "Frames longer than the frame budget (0 without one).",
            value: |f| f.over_budget,
        },
    ];
}

/// The frame counters: per thread that marked frames if `by_thread`, else one over
/// all of them (none if no thread marked frames).
pub(super) fn frames(report: &Report, by_thread: bool) -> Vec<Frames> {
    let framed = report.threads.iter().filter_map(|t| {
        let f = t.per_frame.as_ref()?;
        let thread = Thread {
            name: t.name.clone(),
            serial: t.serial.to_string(),
        };
        Some(Frames {
            thread: Some(thread),
            frames: f.frames,
            over_budget: f.over_budget.unwrap_or(0),
        })
    });
    if by_thread {
        return framed.collect();
    }
    framed
        .reduce(|a, b| Frames {
            thread: None,
            frames: a.frames + b.frames,
            over_budget: a.over_budget + b.over_budget,
        })
        .map(|f| Frames { thread: None, ..f })
        .into_iter()
        .collect()
}
