//! State-machine property test of the per-thread recorder.
//!
//! Random sequences of Start / Stop / Pulse / Record, nested (child) threads and
//! thread exits are run against latte and against a plain reference model of its
//! documented semantics; after each sequence every anomaly counter, every (thread, id)
//! count of frames that ended without their Stop, and every (thread, id) sample
//! sequence latte reports must equal the model's prediction, and nothing may panic.
//!
//! The model keeps the stack as the policy states it, not as latte stores it: a list
//! of at most `DEPTH` held frames over a count of frames given up below them. latte
//! keeps a circular array, a floor and tombstones (`src/record/stack.rs`); the two
//! must agree.
//!
//! Each segment of a sequence runs on a fresh, uniquely named thread that exits at the
//! end of it, so every segment starts from a clean recorder and is found in
//! `latte::capture()` by name.

use crate::common;
use latte::collect::Anomalies;
use latte::collect::{Sample, SampleKind, Unpaired};
use latte::{Capture, Id, Mode};
use proptest::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Stack depth used by every test of this binary (set before any thread records), small
/// so that overflow is easy to reach.
const DEPTH: usize = 8;

/// Distinct components.
const COMPONENTS: usize = 4;

/// The ids the operations use. The last one has the same text as the first: two `Id`s
/// with one text are one component.
static IDS: [Id; COMPONENTS + 1] = [
    Id::new("sm_a"),
    Id::new("sm_b"),
    Id::new("sm_c"),
    Id::new("sm_d"),
    Id::new("sm_a"),
];

/// The component an entry of [`IDS`] stands for.
fn component(id: usize) -> usize {
    id % COMPONENTS
}

/// One call into latte.
#[derive(Clone, Copy, Debug)]
enum Op {
    Start(usize, Mode),
    Stop(usize, Mode),
    Pulse(usize),
    Record(usize, u64),
}

/// One step of a thread: a call, or a child thread running calls and exiting.
#[derive(Clone, Debug)]
enum Step {
    Op(Op),
    Child(Vec<Op>),
}

/// A sample as the model predicts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expected {
    Scope(Mode, Mode),
    Pulse,
    Recorded(u64),
    /// A kind the model never makes (a timer, a span's busy time): never expected.
    Other(SampleKind),
}

/// The reference model of one thread's recorder.
#[derive(Debug, Default)]
struct Model {
    /// Open scopes whose Stop has not come yet, abandoned ones included.
    depth: usize,
    /// Abandoned scopes below the held ones (given up on a full stack, Stop to come).
    abandoned: usize,
    /// The held frames: (component, start mode), bottom first; at most `DEPTH`.
    frames: Vec<(usize, Mode)>,
    /// Frames that ended without their Stop, and Stops without a frame, per component.
    ends: [Unpaired; COMPONENTS],
    /// Whether the component has had its baseline pulse.
    pulsed: [bool; COMPONENTS],
    /// Samples recorded per component, in order.
    samples: [Vec<Expected>; COMPONENTS],
    anomalies: Anomalies,
    /// Whether any call was made (only then does the thread appear in a capture).
    registered: bool,
}

impl Model {
    fn apply(&mut self, op: Op) {
        self.registered = true;
        match op {
            Op::Start(id, mode) => {
                if self.frames.len() == DEPTH {
                    // Full: the oldest held frame is given up, under its own id.
                    let (oldest, _) = self.frames.remove(0);
                    self.ends[oldest].abandoned += 1;
                    self.anomalies.abandoned_scopes += 1;
                    self.abandoned += 1;
                }
                self.frames.push((component(id), mode));
                self.depth += 1;
            }
            Op::Stop(id, mode) => {
                let c = component(id);
                if self.depth == 0 {
                    self.ends[c].empty_stops += 1;
                    self.anomalies.empty_stops += 1;
                } else if self.frames.is_empty() {
                    // Only abandoned scopes are open: this closes one, whatever the id.
                    self.abandoned -= 1;
                    self.depth -= 1;
                } else if let Some(k) = self.frames.iter().rposition(|&(f, _)| f == c) {
                    // Innermost held scope of this id; the frames above it are orphans.
                    for &(orphan, _) in &self.frames[k + 1..] {
                        self.ends[orphan].orphaned += 1;
                        self.anomalies.orphaned_scopes += 1;
                    }
                    let (_, start) = self.frames[k];
                    self.frames.truncate(k);
                    self.depth = self.abandoned + k;
                    self.samples[c].push(Expected::Scope(start, mode));
                } else {
                    self.ends[c].unmatched_stops += 1;
                    self.anomalies.unmatched_stops += 1;
                }
            }
            Op::Pulse(id) => {
                let c = component(id);
                if std::mem::replace(&mut self.pulsed[c], true) {
                    self.samples[c].push(Expected::Pulse);
                }
            }
            Op::Record(id, ticks) => {
                if ticks > Sample::MAX_TICKS {
                    self.anomalies.clock_anomalies += 1;
                } else {
                    self.samples[component(id)].push(Expected::Recorded(ticks));
                }
            }
        }
        debug_assert!(self.frames.len() <= DEPTH);
        debug_assert_eq!(self.abandoned + self.frames.len(), self.depth);
    }

    /// The thread exits: the held frames are open at exit (the abandoned ones were
    /// counted when they were given up).
    fn exit(&mut self) {
        for &(open, _) in &self.frames {
            self.ends[open].open_at_exit += 1;
            self.anomalies.open_at_exit += 1;
        }
    }

    fn run(ops: impl IntoIterator<Item = Op>) -> Model {
        let mut model = Model::default();
        for op in ops {
            model.apply(op);
        }
        model.exit();
        model
    }
}

/// Makes the call `op` describes.
fn call(op: Op) {
    match op {
        Op::Start(id, mode) => latte::start(&IDS[id], mode),
        Op::Stop(id, mode) => latte::stop(&IDS[id], mode),
        Op::Pulse(id) => latte::pulse(&IDS[id]),
        Op::Record(id, ticks) => latte::record(&IDS[id], ticks),
    }
}

/// The stack depth `DEPTH` for threads that start recording until the guard drops;
/// every test holds it while it spawns.
fn setup() -> common::Exclusive {
    common::exclusive_with(|b| b.stack_depth(DEPTH))
}

/// Runs `steps` on a new thread `name` (children as `name-c<j>`) that then exits, and
/// returns the model of every thread it started: (name, model).
fn run_segment(name: &str, steps: &[Step]) -> Vec<(String, Model)> {
    let mut expected = vec![(
        name.to_owned(),
        Model::run(steps.iter().filter_map(|s| match s {
            Step::Op(op) => Some(*op),
            Step::Child(_) => None,
        })),
    )];
    let mut children = 0;
    for step in steps {
        if let Step::Child(ops) = step {
            expected.push((
                format!("{name}-c{children}"),
                Model::run(ops.iter().copied()),
            ));
            children += 1;
        }
    }

    let steps = steps.to_vec();
    let parent = name.to_owned();
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let mut children = 0;
            for step in steps {
                match step {
                    Step::Op(op) => call(op),
                    Step::Child(ops) => {
                        std::thread::Builder::new()
                            .name(format!("{parent}-c{children}"))
                            .spawn(move || ops.into_iter().for_each(call))
                            .expect("spawn child")
                            .join()
                            .expect("child thread panicked");
                        children += 1;
                    }
                }
            }
        })
        .expect("spawn segment")
        .join()
        .expect("segment thread panicked");
    expected
}

/// Compares the model of thread `name` with what `capture` holds for it.
fn check(capture: &Capture, name: &str, model: &Model) -> Result<(), TestCaseError> {
    let threads: Vec<_> = capture.threads.iter().filter(|t| t.name == name).collect();
    if !model.registered {
        prop_assert!(threads.is_empty(), "{name} made no call but was captured");
        return Ok(());
    }
    prop_assert_eq!(threads.len(), 1, "thread {} captured once", name);
    let thread = threads[0];
    prop_assert!(thread.exited, "{name} has exited");
    prop_assert_eq!(thread.anomalies, model.anomalies, "anomalies of {}", name);
    let with_ends = model.ends.iter().filter(|e| e.total() > 0).count();
    prop_assert_eq!(
        thread.unpaired.len(),
        with_ends,
        "{}: {:?}",
        name,
        thread.unpaired
    );
    for (c, ends) in model.ends.iter().enumerate() {
        let id = IDS[c].name();
        prop_assert_eq!(thread.unpaired(id), *ends, "{}: frames of {}", name, id);
    }

    // An id's samples are spread over its call-tree nodes (a Start makes one; a
    // first pulse makes the root's, which keeps the baseline). Each node keeps its
    // samples in order; across nodes the model's order is not kept, so each id's
    // samples are compared as a multiset.
    for (c, expected) in model.samples.iter().enumerate() {
        let id = IDS[c].name();
        let nodes: Vec<_> = thread.components.iter().filter(|n| n.name == id).collect();
        if model.pulsed[c] {
            prop_assert!(!nodes.is_empty(), "{}: no ring for pulsed {}", name, id);
        }
        let seen: u64 = nodes.iter().map(|n| n.seen).sum();
        prop_assert_eq!(seen, expected.len() as u64, "{}: seen of {}", name, id);
        let key = |e: &Expected| format!("{e:?}");
        let mut got: Vec<Expected> = nodes
            .iter()
            .flat_map(|n| &n.samples)
            .map(|s| match s.kind() {
                SampleKind::Scope { start, stop } => Expected::Scope(start, stop),
                SampleKind::Pulse => Expected::Pulse,
                SampleKind::Recorded => Expected::Recorded(s.ticks()),
                other => Expected::Other(other),
            })
            .collect();
        let mut want = expected.clone();
        got.sort_by_key(key);
        want.sort_by_key(key);
        prop_assert_eq!(&got, &want, "{}: samples of {}", name, id);
    }
    Ok(())
}

/// Runs the segments (one thread each, in order) and checks every thread.
fn run_and_check(prefix: &str, segments: &[Vec<Step>]) -> Result<(), TestCaseError> {
    let mut expected = Vec::new();
    for (i, steps) in segments.iter().enumerate() {
        expected.extend(run_segment(&format!("{prefix}-{i}"), steps));
    }
    let capture = latte::capture();
    for (name, model) in &expected {
        check(&capture, name, model)?;
    }
    Ok(())
}

// ------------------------------------------------------------------ strategies

fn mode() -> impl Strategy<Value = Mode> {
    prop::sample::select(Mode::ALL.to_vec())
}

fn id() -> impl Strategy<Value = usize> {
    0..IDS.len()
}

fn ticks() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 0..1_000u64,
        1 => Just(Sample::MAX_TICKS),
        1 => Just(Sample::MAX_TICKS + 1),
        1 => Just(u64::MAX),
    ]
}

/// One call; `start` and `stop` weigh Starts against Stops.
fn op(start: u32, stop: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        start => (id(), mode()).prop_map(|(i, m)| Op::Start(i, m)),
        stop => (id(), mode()).prop_map(|(i, m)| Op::Stop(i, m)),
        2 => id().prop_map(Op::Pulse),
        1 => (id(), ticks()).prop_map(|(i, t)| Op::Record(i, t)),
    ]
}

fn steps(start: u32, stop: u32, len: usize) -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            24 => op(start, stop).prop_map(Step::Op),
            1 => prop::collection::vec(op(start, stop), 0..12).prop_map(Step::Child),
        ],
        0..len,
    )
}

/// Balanced segments (mismatches, orphans, empty stops), Start-heavy ones (a full
/// stack, abandoned scopes, scopes open at exit) and long ones that climb past a full
/// stack and back down several times (the slots reused, the Stops of abandoned scopes).
fn segments() -> impl Strategy<Value = Vec<Vec<Step>>> {
    prop::collection::vec(
        prop_oneof![steps(4, 4, 30), steps(8, 3, 30), steps(6, 4, 120)],
        1..=3,
    )
}

static CASE: AtomicU64 = AtomicU64::new(0);

#[test]
fn recorder_matches_reference_model() {
    let _depth = setup(); // for every case
    let config = ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(segments in segments())| {
        let case = CASE.fetch_add(1, Ordering::Relaxed);
        run_and_check(&format!("sm-{case}"), &segments)?;
    });
}

// ------------------------------------------------------------ fixed regressions

use Op::{Pulse, Record, Start, Stop};
use latte::Mode::{Fast, Hard, Mid};

const A: usize = 0;
const B: usize = 1;
const C: usize = 2;
const D: usize = 3;
/// Same text as `A`.
const A2: usize = 4;

/// Runs `ops` on one thread named `sm-fixed-<name>-0`, checks latte against the model,
/// and returns the model so the test can pin its prediction too.
fn fixed(name: &str, ops: &[Op]) -> Model {
    let _depth = setup();
    let steps: Vec<Step> = ops.iter().copied().map(Step::Op).collect();
    if let Err(e) = run_and_check(&format!("sm-fixed-{name}"), &[steps]) {
        panic!("{e}");
    }
    Model::run(ops.iter().copied())
}

#[test]
fn full_stack_gives_up_the_oldest_then_mismatched_stops() {
    let mut ops: Vec<Op> = [A, B, C, D, A, B, C, D]
        .into_iter()
        .map(|i| Start(i, Fast))
        .collect();
    ops.extend([
        Start(A, Mid),  // position 8: gives up position 0 (A)
        Start(B, Hard), // position 9: gives up position 1 (B); held: 2..=9
        Stop(C, Fast),  // top is B: C at position 6, orphans D, A, B above it
        Stop(B, Hard),  // plain pop of position 5
        Stop(A, Fast),  // plain pop of position 4
        Stop(B, Fast),  // held are D, C: unmatched, stack unchanged
        Stop(D, Mid),   // plain pop of position 3
        Stop(C, Fast),  // plain pop of position 2: only abandoned scopes are left
        Stop(B, Fast),  // closes abandoned position 1 (its slot was reused: tombstone)
        Stop(D, Fast),  // closes abandoned position 0, whatever the id
        Stop(A, Fast),  // empty
    ]);
    let m = fixed("overflow-mismatch", &ops);
    assert_eq!(
        m.anomalies,
        Anomalies {
            abandoned_scopes: 2,
            orphaned_scopes: 3,
            unmatched_stops: 1,
            empty_stops: 1,
            ..Anomalies::default()
        }
    );
    let ends = |abandoned, orphaned| Unpaired {
        abandoned,
        orphaned,
        ..Unpaired::default()
    };
    // The unmatched Stop was B's, the empty one A's.
    let b = Unpaired {
        unmatched_stops: 1,
        ..ends(1, 1)
    };
    let a = Unpaired {
        empty_stops: 1,
        ..ends(1, 1)
    };
    assert_eq!(m.ends, [a, b, ends(0, 0), ends(0, 1)]);
    assert_eq!(m.samples[A], [Expected::Scope(Fast, Fast)]);
    assert_eq!(m.samples[B], [Expected::Scope(Fast, Hard)]);
    assert_eq!(m.samples[C], [Expected::Scope(Fast, Fast); 2]);
    assert_eq!(m.samples[D], [Expected::Scope(Fast, Mid)]);
}

#[test]
fn newest_scope_records_on_a_full_stack_and_abandoned_stops_are_absorbed() {
    let mut ops: Vec<Op> = (0..DEPTH).map(|_| Start(A, Fast)).collect();
    ops.extend([
        Start(A2, Mid), // gives up the bottom A, takes its slot
        Stop(A2, Mid),  // recorded: the newest scope keeps recording
    ]);
    ops.extend((1..DEPTH).map(|_| Stop(A, Hard))); // the held As
    ops.extend([
        // The abandoned A: absorbed, nothing recorded or counted. Its slot last held
        // the A2 frame: a stale frame of the same id, which must not pair.
        Stop(A, Hard),
        Stop(B, Hard), // empty
        Start(C, Fast),
        Stop(C, Fast), // a fresh pair in the slot the abandoned A had
    ]);
    let m = fixed("abandoned-stop", &ops);
    assert_eq!(
        m.anomalies,
        Anomalies {
            abandoned_scopes: 1,
            empty_stops: 1,
            ..Anomalies::default()
        }
    );
    assert_eq!(m.ends[A].abandoned, 1);
    let mut a = vec![Expected::Scope(Mid, Mid)];
    a.extend([Expected::Scope(Fast, Hard); DEPTH - 1]);
    assert_eq!(m.samples[A], a);
    assert!(m.samples[B].is_empty());
    assert_eq!(m.samples[C], [Expected::Scope(Fast, Fast)]);
}

#[test]
fn recursion_with_a_missed_inner_stop() {
    let m = fixed(
        "recursion",
        &[
            Start(A, Fast),
            Start(A2, Mid), // same component, recursive
            Start(B, Hard),
            Stop(A, Hard), // innermost A (the Mid one); B orphaned
            Stop(A2, Fast),
            Start(A, Hard),
            Start(A, Mid),
            Stop(A, Fast), // inner one closes; the outer Stop is missed
        ],
    );
    assert_eq!(
        m.anomalies,
        Anomalies {
            orphaned_scopes: 1,
            open_at_exit: 1,
            ..Anomalies::default()
        }
    );
    assert_eq!(
        m.samples[A],
        [
            Expected::Scope(Mid, Hard),
            Expected::Scope(Fast, Fast),
            Expected::Scope(Mid, Fast),
        ]
    );
    assert!(m.samples[B].is_empty());
}

#[test]
fn pulses_and_records_are_per_thread_and_bounded() {
    let _depth = setup();
    let parent = [
        Pulse(C),
        Pulse(C),
        Record(D, Sample::MAX_TICKS),
        Record(D, Sample::MAX_TICKS + 1),
    ];
    let child = vec![Pulse(C), Pulse(C), Pulse(C), Record(D, 0), Stop(D, Fast)];
    let mut steps: Vec<Step> = parent.iter().copied().map(Step::Op).collect();
    steps.insert(1, Step::Child(child.clone()));
    if let Err(e) = run_and_check("sm-fixed-pulse", &[steps]) {
        panic!("{e}");
    }
    let (p, c) = (Model::run(parent), Model::run(child));
    assert_eq!(p.samples[C], [Expected::Pulse]);
    assert_eq!(
        p.samples[D],
        [Expected::Recorded(Sample::MAX_TICKS)],
        "Sample::MAX_TICKS + 1 is dropped"
    );
    assert_eq!(p.anomalies.clock_anomalies, 1);
    assert_eq!(c.samples[C], [Expected::Pulse, Expected::Pulse]);
    assert_eq!(c.anomalies.empty_stops, 1);
}
