//! The flight recorder's dumps on a counter under the test's control (1 tick = 1 ns
//! under the mock: calibration cannot measure it): a 2 ms stall in `db`, under `risk`
//! under `request`, among 2,000 requests of 100 ticks, while two other threads hold
//! scopes open; a p99.9 trigger dumps the stall with its parents and the other
//! threads' scopes; a frame over its budget is dumped as the outermost scope of its
//! thread; continuous triggers keep the directory within its bounds; a directory that
//! cannot be written is counted, not fatal.

use crate::common::{SharedSink, trace_events};
use crate::{at, mock};
use latte::flight::DumpTrigger;
use latte::{Format, Id, Mode};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

static REQUEST: Id = Id::new("mock_flight/request");
static PARSE: Id = Id::new("mock_flight/parse");
static RISK: Id = Id::new("mock_flight/risk");
static DB: Id = Id::new("mock_flight/db");
static OTHER_A: Id = Id::new("mock_flight/other_a");
static OTHER_B: Id = Id::new("mock_flight/other_b");
static UPDATE: Id = Id::new("mock_flight/update");

/// What a puppet thread does, at mock ticks the test chooses.
enum Act {
    Start(&'static Id, u64),
    Stop(&'static Id, u64),
    /// request [t, t+100+db]: parse [t+10, t+30], risk [t+40, t+60+db] holding db
    /// [t+50, t+50+db].
    Request {
        t: u64,
        db: u64,
    },
    /// A frame mark (`latte_frame!()`) at the tick.
    Frame(u64),
}

/// A named thread that does what it is told, one act at a time, and lives until
/// dropped: the mock counter is one for the process, so the test orders every read.
struct Puppet {
    tx: Option<Sender<(Act, Sender<()>)>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Puppet {
    fn new(name: &str) -> Puppet {
        let (tx, rx) = channel::<(Act, Sender<()>)>();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for (act, done) in rx {
                    match act {
                        Act::Start(id, t) => {
                            at(t);
                            latte::start(id, Mode::Fast);
                        }
                        Act::Stop(id, t) => {
                            at(t);
                            latte::stop(id, Mode::Fast);
                        }
                        Act::Request { t, db } => request(t, db),
                        Act::Frame(t) => {
                            at(t);
                            latte::latte_frame!();
                        }
                    }
                    done.send(()).unwrap();
                }
            })
            .unwrap();
        Puppet {
            tx: Some(tx),
            handle: Some(handle),
        }
    }

    fn act(&self, act: Act) {
        let (done, wait) = channel();
        self.tx.as_ref().unwrap().send((act, done)).unwrap();
        wait.recv().unwrap();
    }
}

impl Drop for Puppet {
    fn drop(&mut self) {
        drop(self.tx.take());
        let _ = self.handle.take().unwrap().join();
    }
}

fn request(t: u64, db: u64) {
    let mark = |id: &Id, tick: u64, start: bool| {
        at(tick);
        if start {
            latte::start(id, Mode::Fast);
        } else {
            latte::stop(id, Mode::Fast);
        }
    };
    mark(&REQUEST, t, true);
    mark(&PARSE, t + 10, true);
    mark(&PARSE, t + 30, false);
    mark(&RISK, t + 40, true);
    mark(&DB, t + 50, true);
    mark(&DB, t + 50 + db, false);
    mark(&RISK, t + 60 + db, false);
    mark(&REQUEST, t + 100 + db, false);
}

/// A fresh directory for a test's dumps.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("latte-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The dump files in `dir`.
fn dumps_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Polls `done` until it holds, for at most 30 s (the drain dumps on its own folds,
/// every few milliseconds: the wait ends as soon as it has).
fn wait_for<T>(what: &str, mut done: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(value) = done() {
            return value;
        }
        assert!(Instant::now() < deadline, "no {what} after 30 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The complete event of `name` on thread `tid` whose `dur` is `dur_us`.
fn event<'a>(events: &'a [Value], tid: u64, name: &str, dur_us: f64) -> &'a Value {
    events
        .iter()
        .find(|e| e["ph"] == "X" && e["tid"] == tid && e["name"] == name && e["dur"] == dur_us)
        .unwrap_or_else(|| panic!("no {name} of {dur_us} us on {tid}"))
}

fn span(e: &Value) -> (f64, f64) {
    let ts = e["ts"].as_f64().unwrap();
    (ts, ts + e["dur"].as_f64().unwrap())
}

fn tid_of(events: &[Value], thread: &str) -> u64 {
    events
        .iter()
        .find(|e| e["name"] == "thread_name" && e["args"]["name"] == thread)
        .and_then(|e| e["tid"].as_u64())
        .unwrap_or_else(|| panic!("no lane {thread}"))
}

/// The other threads' scopes over the stall `d` (ts, end in us): a's closed after
/// it, b's still open.
fn others_over(events: &[Value], d: (f64, f64)) {
    let other = |thread: &str, name: &str| {
        let tid = tid_of(events, thread);
        events
            .iter()
            .find(|e| e["ph"] == "X" && e["tid"] == tid && e["name"] == name)
            .unwrap_or_else(|| panic!("no {name} on {thread}"))
            .clone()
    };
    let (oa, ob) = (
        other("mf-other-a", OTHER_A.name()),
        other("mf-other-b", OTHER_B.name()),
    );
    assert!(span(&oa).0 <= d.0 && span(&oa).1 >= d.1, "{oa}");
    assert!(span(&ob).0 <= d.0 && span(&ob).1 >= d.1, "{ob}");
    assert_eq!(ob["args"]["open"], true, "{ob}");
}

/// 2,000 requests of 120 ticks on `worker` while `a` and `b` hold scopes open, then
/// the stall: db 2 ms (2,000,000 ticks), request [500,000, 2,500,120]; `a` closes its
/// scope after it.
fn record_the_stall(guard: &latte::Guard, [worker, a, b]: [&Puppet; 3], dir: &Path) {
    a.act(Act::Start(&OTHER_A, 1_000));
    b.act(Act::Start(&OTHER_B, 1_500));
    for i in 0..2_000 {
        worker.act(Act::Request {
            t: 10_000 + i * 200,
            db: 20,
        });
    }
    // Two folds: the first takes the samples, the next the components' p99.9.
    guard.report().unwrap();
    guard.report().unwrap();
    assert!(dumps_in(dir).is_empty(), "nothing slow yet");
    worker.act(Act::Request {
        t: 500_000,
        db: 2_000_000,
    });
    a.act(Act::Stop(&OTHER_A, 3_000_000));
}

#[test]
fn a_tail_trigger_dumps_the_stall_its_parents_and_the_other_threads() {
    let _mock = mock();
    let dir = fresh_dir("mock-flight-stall");
    at(100); // the agent's start: zero on the dump's axis
    // No gap between dumps: the drain folds on its own pace, and a fold that lands
    // between the stall's inner Stops and the request's (db, then risk, then request)
    // dumps the inner scope it read first, as it should; the request's fold dumps the
    // request. Without a gap the request's dump is never skipped.
    let guard = latte::builder()
        .flight_recorder(Duration::from_secs(10))
        .dump_when(DumpTrigger::tail(0.999, 1_000))
        .dump_dir(&dir)
        .dump_gap(Duration::ZERO)
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    let (worker, a, b) = (
        Puppet::new("mf-worker"),
        Puppet::new("mf-other-a"),
        Puppet::new("mf-other-b"),
    );
    record_the_stall(&guard, [&worker, &a, &b], &dir);
    let read = |file: &PathBuf| -> Value {
        serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
    };
    let json = wait_for("the request's dump", || {
        dumps_in(&dir)
            .iter()
            .map(read)
            .find(|d| d["otherData"]["trigger"]["component"] == REQUEST.name())
    });
    trace_events::validate(&json).unwrap_or_else(|e| panic!("{e}"));
    let events = json["traceEvents"].as_array().unwrap();
    let tid = tid_of(events, "mf-worker");

    // The slowest of the fold's hits: the request that holds the stall.
    let trigger = &json["otherData"]["trigger"];
    assert_eq!(trigger["component"], REQUEST.name(), "{trigger}");
    assert_eq!(trigger["tid"], tid);
    let reason = trigger["reason"].as_str().unwrap();
    // p99.9 of 2,000 requests of 120 ticks: 120 ns at 1 tick/ns.
    assert_eq!(reason, "2.000 ms, over its running p99.9 of 120.0 ns");
    // Its parents, nested as they ran, with their lengths (the axis starts at 100).
    let request = event(events, tid, REQUEST.name(), 2_000.1);
    let risk = event(events, tid, RISK.name(), 2_000.02);
    let db = event(events, tid, DB.name(), 2_000.0);
    assert_eq!(span(request).0, (500_000.0 - 100.0) / 1e3);
    assert_eq!(request["args"]["trigger"], reason, "the scope is marked");
    let (r, k, d) = (span(request), span(risk), span(db));
    assert!(
        r.0 <= k.0 && k.0 <= d.0 && d.1 <= k.1 && k.1 <= r.1,
        "{r:?} {k:?} {d:?}"
    );
    assert_eq!(
        (
            request["args"]["depth"].as_u64(),
            risk["args"]["depth"].as_u64(),
            db["args"]["depth"].as_u64()
        ),
        (Some(0), Some(1), Some(2))
    );
    // The other threads' scopes over the stall: a's closed after it, b's still open.
    others_over(events, span(db));

    b.act(Act::Stop(&OTHER_B, 3_100_000));
    drop((worker, a, b));
    guard.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_frame_over_budget_is_dumped_as_the_outermost_scope_of_its_thread() {
    let _mock = mock();
    let dir = fresh_dir("mock-flight-frame");
    at(100);
    let guard = latte::builder()
        .flight_recorder(Duration::from_secs(10))
        .frame_budget(Duration::from_nanos(16_000))
        .dump_when(DumpTrigger::frame_over_budget())
        .dump_dir(&dir)
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    // A fold arms the budget (in ticks, once the drain has the frequency).
    guard.report().unwrap();
    let game = Puppet::new("mf-game");
    // Marks every 10,000 ticks, an update of 5,000 in each frame: frames 1 to 20.
    for t in (10_000..=200_000).step_by(10_000) {
        game.act(Act::Frame(t));
        game.act(Act::Start(&UPDATE, t + 1_000));
        game.act(Act::Stop(&UPDATE, t + 6_000));
    }
    game.act(Act::Frame(210_000));
    guard.report().unwrap();
    assert!(dumps_in(&dir).is_empty(), "no frame over budget yet");
    // The update after the mark at 210,000 is long: frame 21 lasts 40,000 ticks.
    game.act(Act::Start(&UPDATE, 212_000));
    game.act(Act::Stop(&UPDATE, 247_000));
    game.act(Act::Frame(250_000));
    guard.report().unwrap();
    let file = wait_for("dump", || dumps_in(&dir).pop());
    let json: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    trace_events::validate(&json).unwrap_or_else(|e| panic!("{e}"));
    let events = json["traceEvents"].as_array().unwrap();
    let tid = tid_of(events, "mf-game");

    let trigger = &json["otherData"]["trigger"];
    assert_eq!(trigger["component"], "frame 21", "{trigger}");
    assert_eq!(trigger["tid"], tid);
    let reason = "40.00 us long, over the frame budget of 16.00 us";
    assert_eq!(trigger["reason"], reason);
    // The frame, outermost; the long update inside it one deeper; the update of an
    // earlier frame where it was.
    let frame = event(events, tid, "frame 21", 40.0);
    assert_eq!(span(frame).0, (210_000.0 - 100.0) / 1e3);
    assert_eq!(frame["args"]["depth"], 0);
    assert_eq!(frame["args"]["trigger"], reason, "the frame is marked");
    let long = event(events, tid, UPDATE.name(), 35.0);
    assert_eq!(long["args"]["depth"], 1);
    let (f, u) = (span(frame), span(long));
    assert!(f.0 <= u.0 && u.1 <= f.1, "{f:?} {u:?}");
    let earlier = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["tid"] == tid && e["name"] == UPDATE.name())
        .filter(|e| span(e).1 <= f.0)
        .collect::<Vec<_>>();
    assert_eq!(earlier.len(), 20, "the earlier updates");
    assert!(earlier.iter().all(|e| e["args"]["depth"] == 0));

    drop(game);
    guard.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The agent's report of the dumps so far, from its JSON.
fn dumps(guard: &latte::Guard, sink: &SharedSink) -> Value {
    guard.report().unwrap();
    let reports = sink.json_reports();
    reports.last().unwrap()["dumps"].clone()
}

#[test]
fn continuous_triggers_keep_the_directory_within_its_bounds() {
    let _mock = mock();
    let dir = fresh_dir("mock-flight-bounds");
    let sink = SharedSink::default();
    at(100);
    let guard = latte::builder()
        .flight_recorder(Duration::from_secs(10))
        .dump_when(DumpTrigger::above(&DB, Duration::from_micros(1)))
        .dump_gap(Duration::ZERO)
        .dump_limits(3, 1 << 30)
        .dump_dir(&dir)
        .format(Format::Json)
        .final_report(false)
        .sink(sink.clone())
        .start()
        .unwrap();
    let worker = Puppet::new("mf-bounds");
    let mut t = 10_000;
    let written = wait_for("8 dumps", || {
        // Every db of 5,000 ticks is over the 1 us (1,000 ticks) threshold.
        worker.act(Act::Request { t, db: 5_000 });
        t += 10_000;
        let c = dumps(&guard, &sink);
        let written = c["written"].as_u64().unwrap_or(0);
        assert!(dumps_in(&dir).len() <= 3, "{:?}", dumps_in(&dir));
        (written >= 8).then_some(written)
    });
    assert!(written >= 8);
    assert_eq!(dumps_in(&dir).len(), 3, "the newest 3 of {written}");
    drop(worker);
    guard.stop().unwrap();

    // A byte bound no dump fits: none written, each counted as failed.
    let sink = SharedSink::default();
    let small = fresh_dir("mock-flight-small");
    let guard = latte::builder()
        .flight_recorder(Duration::from_secs(10))
        .dump_when(DumpTrigger::above(&DB, Duration::from_micros(1)))
        .dump_limits(16, 100)
        .dump_dir(&small)
        .format(Format::Json)
        .final_report(false)
        .sink(sink.clone())
        .start()
        .unwrap();
    let worker = Puppet::new("mf-small");
    let c = wait_for("a failed dump", || {
        // Until the triggers are armed (once the drain has the calibration) and fire.
        worker.act(Act::Request { t, db: 5_000 });
        t += 10_000;
        let c = dumps(&guard, &sink);
        (c["failed"].as_u64() >= Some(1)).then_some(c)
    });
    assert_eq!(c["written"], 0, "{c}");
    assert!(
        c["last_error"]
            .as_str()
            .unwrap()
            .contains("over the directory's bound of 100 bytes"),
        "{c}"
    );
    assert!(dumps_in(&small).is_empty());
    drop(worker);
    guard.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_that_cannot_be_written_is_counted_and_the_agent_goes_on() {
    let _mock = mock();
    let file = std::env::temp_dir().join(format!("latte-mock-flight-file-{}", std::process::id()));
    std::fs::write(&file, "not a directory").unwrap();
    let sink = SharedSink::default();
    let guard = latte::builder()
        .flight_recorder(Duration::from_secs(10))
        .dump_dir(file.join("dumps"))
        .format(Format::Json)
        .final_report(false)
        .sink(sink.clone())
        .start()
        .unwrap();
    let err = guard.dump_timeline().unwrap_err();
    assert!(matches!(err, latte::Error::Dump { .. }), "{err:?}");
    assert!(err.to_string().contains("latte-mock-flight-file"), "{err}");
    let c = dumps(&guard, &sink);
    assert_eq!(
        (c["written"].as_u64(), c["failed"].as_u64()),
        (Some(0), Some(1)),
        "{c}"
    );
    // Still working: another report, a clean stop.
    guard.report().unwrap();
    guard.stop().unwrap();
    std::fs::remove_file(&file).unwrap();

    // And without the flight recorder, a dump is refused with what to set.
    let guard = latte::builder()
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    let err = guard.dump_timeline().unwrap_err();
    assert!(
        err.to_string().contains("Builder::flight_recorder"),
        "{err}"
    );
    guard.stop().unwrap();
    let refused = latte::builder()
        .dump_when(DumpTrigger::tail(0.999, 10))
        .start()
        .unwrap_err();
    assert!(
        refused.to_string().contains("needs the flight recorder"),
        "{refused}"
    );
}
