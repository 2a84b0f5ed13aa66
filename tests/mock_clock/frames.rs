//! Frames on a counter under the test's control: exact per-frame distributions of a
//! known tree (frames without a call as zeros, recursion counted once), what ate the
//! longest frame, and frames past the queue counted. The budget's count is in the
//! analysis' unit tests (`src/frames/analyze.rs`): the mock counter has no frequency
//! to turn a budget into ticks.

use crate::common::on_named_thread;
use crate::{at, mock, scope};
use latte::report::{PerFrame, Spread};
use latte::{Data, Id, Report, ReportOptions, Unit};
use std::time::Duration;

static FRAME: Id = Id::new("frames_frame");
static A: Id = Id::new("frames_a");
static B: Id = Id::new("frames_b");
static C: Id = Id::new("frames_c");
static D: Id = Id::new("frames_d");

/// Five frames of 1,000 ticks, mark to mark (the fourth 1,400): frame [100, 200]
/// holds a [110, 160] holding b [120, 125 + 5k], and, in even frames only, c
/// [170, 190]; d [300, 340] holds another d [310, 320]. In the fourth frame (k = 3) a
/// runs 400 ticks longer, and the frame with it.
fn record_frames() {
    let mut base = 0;
    at(base);
    latte::latte_frame!();
    for k in 0..5u64 {
        let late = if k == 3 { 400 } else { 0 };
        scope(&FRAME, base + 100, base + 200 + late, || {
            scope(&A, base + 110, base + 160 + late, || {
                scope(&B, base + 120, base + 125 + 5 * k, || {});
            });
            if k % 2 == 0 {
                scope(&C, base + 170 + late, base + 190 + late, || {});
            }
        });
        scope(&D, base + 300 + late, base + 340 + late, || {
            scope(&D, base + 310 + late, base + 320 + late, || {});
        });
        base += 1_000 + late;
        at(base);
        latte::latte_frame!();
    }
}

fn spread(p50: f64, p99: f64, max: f64, mean: f64) -> Spread {
    Spread {
        p50,
        p99,
        max,
        mean,
    }
}

fn frames_of(report: &Report, thread: &str) -> PerFrame {
    let t = report.threads.iter().find(|t| t.name == thread).unwrap();
    t.per_frame.clone().expect("the thread marked frames")
}

#[test]
fn a_known_tree_gives_exact_per_frame_distributions_and_names_what_ate_the_long_frame() {
    let _clock = mock();
    on_named_thread("frames-known", record_frames);
    let options = ReportOptions {
        unit: Unit::Cycles,
        data: Data::Raw,
        ..ReportOptions::default()
    };
    let report = Report::collect(&options);
    let f = frames_of(&report, "frames-known");
    // The JSON carries the frames whole.
    let json = report.to_json(latte::report::JsonStyle::Compact);
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(frames_of(&back, "frames-known"), f);
    assert_eq!(f.frames, 5);
    assert_eq!(f.length, spread(1_000.0, 1_400.0, 1_400.0, 1_080.0));
    // Without a budget: no count, and the longest frames, longest first.
    assert_eq!(f.over_budget, None);
    let longest: Vec<(u64, f64)> = f.worst.iter().map(|w| (w.number, w.length)).collect();
    assert_eq!(
        longest,
        [
            (4, 1_400.0),
            (1, 1_000.0),
            (2, 1_000.0),
            (3, 1_000.0),
            (5, 1_000.0)
        ]
    );
    let of = |id: &Id| {
        let c = f.components.iter().find(|c| c.component == id.name());
        let c = c.unwrap_or_else(|| panic!("{} has per-frame figures", id.name()));
        (c.frames_with_calls, c.time, c.calls)
    };
    let once = spread(1.0, 1.0, 1.0, 1.0);
    assert_eq!(of(&FRAME), (5, spread(100.0, 500.0, 500.0, 180.0), once));
    assert_eq!(of(&A), (5, spread(50.0, 450.0, 450.0, 130.0), once));
    assert_eq!(of(&B), (5, spread(15.0, 25.0, 25.0, 15.0), once));
    // c ran in three frames of five: the other two count as 0.
    assert_eq!(
        of(&C),
        (
            3,
            spread(20.0, 20.0, 20.0, 12.0),
            spread(1.0, 1.0, 1.0, 0.6)
        )
    );
    // Recursion: the outer d's time holds the inner one's; both calls count.
    assert_eq!(
        of(&D),
        (
            5,
            spread(40.0, 40.0, 40.0, 40.0),
            spread(2.0, 2.0, 2.0, 2.0)
        )
    );
    what_ate_the_longest(&f);
    // A budget needs the counter's frequency, which the mock counter does not have
    // (the analysis' unit tests hold frames to a budget in ticks).
    let options = ReportOptions {
        frame_budget: Some(Duration::from_micros(1)),
        ..options
    };
    let f = frames_of(&Report::collect(&options), "frames-known");
    assert_eq!((f.budget, f.over_budget), (None, None));
}

/// The longest frame is the fourth: a took 400 more than its median, and the frame
/// scope holding it is the same time (left out); b's 5 extra ticks are under 1% of
/// the frame.
fn what_ate_the_longest(f: &PerFrame) {
    let w = &f.worst[0];
    assert_eq!(
        (w.number, w.length, w.outside_scopes),
        (4, 1_400.0, 1_400.0 - 500.0 - 40.0)
    );
    let named: Vec<(&str, f64, f64, f64)> = w
        .culprits
        .iter()
        .map(|c| (c.component.as_str(), c.time, c.median, c.excess))
        .collect();
    assert_eq!(named, [(A.name(), 450.0, 50.0, 400.0)]);
}

#[test]
fn frames_past_the_queue_are_counted_and_the_rest_kept() {
    let _clock = mock();
    const MARKS: u64 = 5_000;
    on_named_thread("frames-flood", || {
        for k in 0..MARKS {
            // From 10: a pulse at tick 0 would read as having no baseline.
            at(10 * k + 10);
            latte::latte_pulse!("frames_flood");
            latte::latte_frame!();
        }
    });
    let report = Report::collect(&ReportOptions::default());
    let t = report
        .threads
        .iter()
        .find(|t| t.name == "frames-flood")
        .unwrap();
    let f = t.per_frame.as_ref().unwrap();
    let lost = t.anomalies.frames_lost;
    // Nothing read the queue while the thread ran: it kept the first 4,096 frames.
    assert_eq!((f.frames, lost), (4_096, MARKS - 1 - 4_096));
    let pulse = f
        .components
        .iter()
        .find(|c| c.component == "frames_flood")
        .unwrap();
    assert_eq!(pulse.calls, spread(1.0, 1.0, 1.0, 1.0));
}
