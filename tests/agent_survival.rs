//! The agent survives its host's mistakes: extreme settings, sinks that panic or
//! crawl, and a drain thread that dies with commands queued. Nothing panics in the
//! caller, nothing waits forever.

mod common;
use common::one_agent;
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
    let _one = one_agent();
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
        .drain_interval(Duration::ZERO, Duration::from_millis(1))
        .start()
        .unwrap_err();
    assert!(matches!(err, Error::DrainInterval { .. }), "{err}");
}

#[test]
fn a_sink_that_panics_is_an_error_and_the_agent_goes_on() {
    let _one = one_agent();
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
    guard.stop().unwrap();
    // The one panic is one error: returned to the caller that asked, or counted for
    // a periodic report.
    assert_eq!(returned_errors + counted, 1);

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
    let _one = one_agent();
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
    let _one = one_agent();
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
