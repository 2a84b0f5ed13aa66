//! The agent survives its host's mistakes: extreme settings, sinks that panic or
//! crawl, and a drain thread that dies with commands queued. Nothing panics in the
//! caller, nothing waits forever.

use crate::common::{self, exclusive};
use latte::{Error, Format};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// A sink whose `n`-th write (1-based) panics; every other write succeeds.
#[derive(Clone)]
struct PanicsOnWrite {
    writes: Arc<AtomicUsize>,
    panic_on: usize,
}

impl Write for PanicsOnWrite {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.writes.fetch_add(1, Ordering::Relaxed) + 1 == self.panic_on {
            panic!("sink broke on purpose");
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn periods_at_and_past_their_limits() {
    let _one = exclusive();
    for too_short in [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_micros(999),
    ] {
        let err = latte::builder().periodic(too_short).start().unwrap_err();
        assert_eq!(
            err,
            Error::Interval {
                requested: too_short
            }
        );
        assert!(err.to_string().contains("at least 1ms"), "{err}");
    }
    // The shortest accepted, and one too long to ever fall due: both run and stop.
    for period in [latte::Builder::MIN_PERIODIC, Duration::MAX] {
        let sink = common::SharedSink::default();
        let guard = latte::builder()
            .periodic(period)
            .format(Format::Json)
            .sink(sink.clone())
            .start()
            .unwrap();
        latte::latte_pulse!("survival_period");
        guard.report().unwrap();
        guard.stop().unwrap();
        let labels: Vec<String> = sink
            .json_reports()
            .iter()
            .map(|r| r["label"].as_str().unwrap_or("").to_owned())
            .collect();
        // The last interval is written at shutdown, then the final report.
        assert_eq!(
            labels.last().map(String::as_str),
            Some("final"),
            "{labels:?}"
        );
        assert!(
            labels.iter().any(|l| l.starts_with("periodic #")),
            "{labels:?}"
        );
    }
    let err = latte::builder()
        .drain_pace(Duration::ZERO, Duration::from_millis(1))
        .start()
        .unwrap_err();
    assert!(matches!(err, Error::DrainPace { .. }), "{err}");
}

#[test]
fn a_sink_that_panics_is_an_error_and_the_agent_goes_on() {
    let _one = exclusive();
    let writes = Arc::new(AtomicUsize::new(0));
    let sink = PanicsOnWrite {
        writes: writes.clone(),
        panic_on: 2,
    };
    let guard = latte::builder()
        .format(Format::Json)
        .periodic(Duration::from_millis(5))
        .sink(sink)
        .start()
        .unwrap();
    latte::latte_pulse!("survival_sink");
    // Periodic reports write too; whichever write is the second, it panics, and
    // every caller still gets an answer.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut returned_errors = 0;
    while writes.load(Ordering::Relaxed) < 3 {
        match guard.report() {
            Ok(()) => {}
            Err(Error::Sink(e)) => {
                assert!(e.to_string().contains("sink broke on purpose"), "{e}");
                returned_errors += 1;
            }
            Err(e) => panic!("{e}"),
        }
        assert!(Instant::now() < deadline, "the agent stopped writing");
    }
    // Later reports work.
    guard.report().unwrap();
    guard.report_interval().unwrap();
    let counted = guard.sink_errors();
    let stopped = guard.stop();
    // The one panic is one error: returned to the caller that asked, or counted for
    // a periodic report (and then named by `stop`).
    assert_eq!(returned_errors + counted, 1);
    match counted {
        0 => stopped.unwrap(),
        _ => assert!(
            matches!(stopped, Err(Error::PeriodicReports { failed: 1, .. })),
            "{stopped:?}"
        ),
    }

    // A final report whose sink panics: `stop` returns the error.
    let guard = latte::builder()
        .sink(PanicsOnWrite {
            writes: Arc::new(AtomicUsize::new(0)),
            panic_on: 1,
        })
        .start()
        .unwrap();
    let err = guard.stop().unwrap_err();
    assert!(err.to_string().contains("the sink panicked"), "{err}");
}

#[test]
fn commands_queued_when_the_drain_dies_are_all_answered() {
    let _one = exclusive();
    // The first report's sink says it has been entered, then waits until the test has
    // queued ten more commands and asked the drain to die.
    let gate = Arc::new(Barrier::new(2));
    let (entered_tx, entered) = std::sync::mpsc::channel();
    struct Gated(Arc<Barrier>, Mutex<Option<std::sync::mpsc::Sender<()>>>);
    impl Write for Gated {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Some(entered) = self.1.lock().unwrap().take() {
                entered.send(()).unwrap();
                self.0.wait();
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let guard = latte::builder()
        .sink(Gated(gate.clone(), Mutex::new(Some(entered_tx))))
        .final_report(false)
        .start()
        .unwrap();
    let results = std::thread::scope(|s| {
        let first = s.spawn(|| guard.report());
        entered.recv().unwrap(); // the drain is inside the first report's sink
        let queued: Vec<_> = (0..10).map(|_| s.spawn(|| guard.report())).collect();
        while latte::test_hooks::queued_commands(&guard) < 10 {
            std::thread::yield_now();
        }
        latte::test_hooks::kill_drain(&guard);
        gate.wait();
        let first = first.join().unwrap();
        let rest: Vec<_> = queued.into_iter().map(|h| h.join().unwrap()).collect();
        (first, rest)
    });
    assert_eq!(results.0, Ok(()));
    assert_eq!(results.1, vec![Err(Error::AgentStopped); 10]);
    // Later commands fail at once, and the guard stops cleanly.
    assert_eq!(guard.report(), Err(Error::AgentStopped));
    assert_eq!(guard.stop(), Err(Error::AgentStopped));
    // And a new agent can start.
    common::assert_a_new_agent_can_start();
}

#[test]
fn a_slow_sink_is_waited_for() {
    let _one = exclusive();
    struct Slow;
    impl Write for Slow {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_secs(3));
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let guard = latte::builder()
        .sink(Slow)
        .final_report(false)
        .start()
        .unwrap();
    let began = Instant::now();
    guard.report().unwrap();
    assert!(began.elapsed() >= Duration::from_secs(3));
    guard.stop().unwrap();
}

/// How a sink breaks.
#[derive(Clone, Copy, Debug)]
enum Breaks {
    /// Its flush returns an error.
    Fails,
    /// Its flush panics.
    Panics,
}

/// A sink that breaks when it is handed periodic reports #2 and #3, and says which
/// report it has written.
struct BreaksOnPeriodic {
    buffer: Vec<u8>,
    breaks: Breaks,
    written: std::sync::mpsc::Sender<String>,
}

impl Write for BreaksOnPeriodic {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let report = String::from_utf8(std::mem::take(&mut self.buffer)).unwrap();
        if report.contains("periodic #2,") || report.contains("periodic #3,") {
            match self.breaks {
                Breaks::Fails => return Err(std::io::Error::other("broke on purpose")),
                Breaks::Panics => panic!("broke on purpose"),
            }
        }
        let _ = self.written.send(report);
        Ok(())
    }
}

/// `report` (in `format`) shows two failed periodic reports, the last because of `why`.
fn assert_shows_two_failures(report: &str, format: Format, why: &str) {
    match format {
        // Text lines wrap at the table's width, continuing indented.
        Format::Table(_) => {
            let shown = "2 periodic reports could not be written: ".to_owned() + why;
            assert!(report.replace("\n  ", " ").contains(&shown), "{report}");
        }
        _ => {
            let json: serde_json::Value = serde_json::from_str(report).unwrap();
            let failures = &json["periodic_failures"];
            assert_eq!(failures["count"], 2, "{json}");
            let last = failures["last_error"].as_str().unwrap_or_default();
            assert!(last.starts_with(why), "{json}");
        }
    }
}

#[test]
fn periodic_failures_are_kept_shown_in_the_next_report_and_returned_by_stop() {
    let _one = exclusive();
    for (breaks, format) in [
        (Breaks::Fails, Format::Json),
        (Breaks::Panics, Format::default()),
    ] {
        let (tx, written) = std::sync::mpsc::channel();
        let guard = latte::builder()
            .format(format.clone())
            .periodic(Duration::from_millis(5))
            .sink(BreaksOnPeriodic {
                buffer: Vec::new(),
                breaks,
                written: tx,
            })
            .start()
            .unwrap();
        latte::latte_pulse!("survival_periodic");
        let next = || {
            written
                .recv_timeout(Duration::from_secs(60))
                .expect("the agent stopped writing")
        };
        let why = match breaks {
            Breaks::Fails => "writing the latte report failed: broke on purpose",
            Breaks::Panics => {
                "writing the latte report failed: the sink panicked: broke on purpose"
            }
        };
        // #1 is written; #2 and #3 fail; #4 shows both failures, and #5 none.
        let first = next();
        assert!(first.contains("periodic #1,"), "{first}");
        assert!(!first.contains("could not be written"), "{first}");
        let fourth = next();
        assert!(fourth.contains("periodic #4,"), "{breaks:?}: {fourth}");
        assert_shows_two_failures(&fourth, format, why);
        assert_eq!(guard.sink_errors(), 2);
        let fifth = next();
        assert!(fifth.contains("periodic #5,"), "{fifth}");
        assert!(!fifth.contains("could not be written"), "{fifth}");
        assert!(!fifth.contains("\"periodic_failures\":{"), "{fifth}");
        // Later reports work, and `stop` names the run's periodic failures.
        guard.report().unwrap();
        let err = guard.stop().unwrap_err();
        let Error::PeriodicReports { failed: 2, last } = &err else {
            panic!("{err:?}");
        };
        assert!(last.to_string().starts_with(why), "{last}");
        assert!(
            err.to_string()
                .starts_with("2 periodic latte reports could not be written"),
            "{err}"
        );
        // The final report was written all the same.
        let rest: Vec<String> = written.try_iter().collect();
        assert!(
            rest.iter().any(|r| r.contains("final")),
            "{breaks:?}: {rest:?}"
        );
    }
}
