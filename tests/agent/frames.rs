//! Frames on the real counter through the agent: `Builder::frame_budget` reaches the
//! report an exporter is pushed at stop, which counts the frames over budget, names
//! the scope that ate each, and carries `frames_total` and `frames_over_budget_total`.

use crate::common;
use latte::exporter::{Buckets, Exporter, Handle, MetricSet, Push, StartError};
use latte::{Id, Mode, Report};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An exporter that keeps the final push's report.
#[derive(Clone, Default)]
struct Last(Arc<Mutex<Option<Arc<Report>>>>);

impl Exporter for Last {
    fn name(&self) -> &str {
        "last"
    }
    // Too long to fall due: the final push only.
    fn interval(&self) -> Option<Duration> {
        Some(Duration::MAX)
    }
    fn start(&mut self, _agent: Handle) -> Result<(), StartError> {
        Ok(())
    }
    fn push(&mut self, report: Arc<Report>, push: Push) {
        if push == Push::Final {
            *self.0.lock().unwrap() = Some(report);
        }
    }
}

static FRAME: Id = Id::new("agent_frames_frame");
static STEP: Id = Id::new("agent_frames_step");
static SLOW: Id = Id::new("agent_frames_slow");

/// The frames in which the slow scope runs, of 12 (numbered from 1, as the report
/// numbers them).
const SLOW_FRAMES: [u64; 3] = [3, 7, 10];
/// The budget, and how long a slow scope spins: far apart, so only a preemption of
/// more than the budget in a frame of a few microseconds could add a frame over.
const BUDGET: Duration = Duration::from_millis(40);
const SPIN: Duration = Duration::from_millis(80);

fn frames() {
    latte::latte_frame!();
    for k in 1..=12u64 {
        let _frame = latte::scope(&FRAME, Mode::Fast, Mode::Fast);
        drop(latte::scope(&STEP, Mode::Fast, Mode::Fast));
        if SLOW_FRAMES.contains(&k) {
            let _slow = latte::scope(&SLOW, Mode::Fast, Mode::Fast);
            let began = Instant::now();
            while began.elapsed() < SPIN {
                std::hint::spin_loop();
            }
        }
        drop(_frame);
        latte::latte_frame!();
    }
}

#[test]
fn a_builder_budget_counts_the_frames_over_it_and_names_what_ate_them() {
    let last = Last::default();
    let turn = common::exclusive_with(|b| b.frame_budget(BUDGET).exporter(last.clone()));
    std::thread::Builder::new()
        .name("agent-frames".into())
        .spawn(frames)
        .unwrap()
        .join()
        .unwrap();
    drop(turn);
    let report = last.0.lock().unwrap().take().expect("a final push");
    let thread = report.threads.iter().find(|t| t.name == "agent-frames");
    let f = thread.unwrap().per_frame.clone().expect("frames");
    assert_eq!(f.frames, 12);
    assert_eq!(f.budget, Some(BUDGET.as_nanos() as f64));
    let over = f.over_budget.unwrap();
    assert!(over >= 3, "{over} frames over budget");
    // Each slow frame is among the worst kept, with the slow scope named first (its
    // frame scope holds the same time and is left out).
    for number in SLOW_FRAMES {
        let w = f.worst.iter().find(|w| w.number == number);
        let w = w.unwrap_or_else(|| panic!("frame {number} kept: {:?}", f.worst));
        assert!(w.length >= SPIN.as_nanos() as f64, "{w:?}");
        assert_eq!(w.culprits[0].component, SLOW.name(), "{w:?}");
        assert!(
            w.culprits.iter().all(|c| c.component != FRAME.name()),
            "{w:?}"
        );
    }
    let slow = f.components.iter().find(|c| c.component == SLOW.name());
    let slow = slow.expect("the slow scope per frame");
    assert_eq!((slow.frames_with_calls, slow.time.p50), (3, 0.0));
    // The exporters' counters, per thread.
    let buckets = Buckets::new([Duration::from_millis(1)]).unwrap();
    let set = MetricSet::of(&report, &buckets, true);
    let mine = set
        .frames
        .iter()
        .find(|f| f.thread.as_ref().is_some_and(|t| t.name == "agent-frames"));
    let mine = mine.expect("frame counters for the thread");
    assert_eq!((mine.frames, mine.over_budget), (12, over));
}
