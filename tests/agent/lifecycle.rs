//! The agent's lifecycle: final report on drop and on panic, one agent per process,
//! invalid options, failing sinks. One agent at a time, so these tests take a lock.

use crate::common::{self, SharedSink, assert_a_new_agent_can_start, exclusive as serial};
use latte::{Error, Id};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[test]
fn final_report_when_the_guard_drops() {
    let _one = serial();
    let sink = SharedSink::default();
    let guard = latte::builder().sink(sink.clone()).start().unwrap();
    // Ids of at most 16 characters are never cut in the table (other tests' longer ids
    // share this process's report).
    latte::latte_start!("agent_drop");
    latte::latte_stop!("agent_drop");
    assert!(sink.text().is_empty(), "nothing is written before the end");
    drop(guard);
    let text = sink.text();
    assert!(
        text.contains("LATTE TELEMETRY [TIME][CAL] final"),
        "the builder's defaults are time units on calibrated data: {text}"
    );
    assert!(text.contains("agent_drop"));
    assert!(
        text.contains("memory: "),
        "the header shows latte's footprint"
    );
}

#[test]
fn final_report_when_main_unwinds_from_a_panic() {
    let _one = serial();
    let sink = SharedSink::default();
    let s = sink.clone();
    let result = std::thread::spawn(move || {
        let _latte = latte::builder().sink(s).start().unwrap();
        latte::latte_start!("agent_panic");
        latte::latte_stop!("agent_panic");
        panic!("the instrumented program fails");
    })
    .join();
    assert!(result.is_err());
    let text = sink.text();
    assert!(
        text.contains("final") && text.contains("agent_panic"),
        "{text}"
    );
    // The agent is gone: a new one can start.
    assert_a_new_agent_can_start();
}

#[test]
fn a_second_agent_is_an_error_not_a_second_agent() {
    let _one = serial();
    let first = latte::builder().sink(std::io::sink()).start().unwrap();
    assert_eq!(latte::init().unwrap_err(), Error::AlreadyRunning);
    assert!(
        latte::init()
            .unwrap_err()
            .to_string()
            .contains("already running")
    );
    first.stop().unwrap();
    assert_a_new_agent_can_start();
}

#[test]
fn invalid_options_are_errors_and_change_nothing() {
    let _one = serial();
    let before = common::new_ring_capacity("agent_capacity_before");
    let err = latte::builder().ring_capacity(1000).start().unwrap_err();
    assert_eq!(err, Error::RingCapacity { requested: 1000 });
    assert_eq!(common::new_ring_capacity("agent_capacity_after"), before);
    let err = latte::builder().stack_depth(0).start().unwrap_err();
    assert_eq!(err, Error::StackDepth { requested: 0 });
    // Asking for the other clock than the one already read is refused.
    let other = if latte::clock::decision().hardware {
        latte::clock::ClockChoice::Os
    } else {
        latte::clock::ClockChoice::Hardware
    };
    if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        // Both clocks exist here, so the other one is a real change.
        assert!(matches!(
            latte::builder().clock(other).start().unwrap_err(),
            Error::ClockAlreadySelected { .. }
        ));
    }
    let zero = std::time::Duration::ZERO;
    assert_eq!(
        latte::builder().periodic(zero).start().unwrap_err(),
        Error::Interval { requested: zero }
    );
    // None of them started an agent.
    assert_a_new_agent_can_start();
}

/// A sink that fails while `broken` is set.
struct Flaky {
    broken: Arc<AtomicBool>,
    inner: SharedSink,
}

impl Write for Flaky {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.broken.load(Ordering::Relaxed) {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_sink_is_an_error_and_the_agent_keeps_working() {
    let _one = serial();
    let broken = Arc::new(AtomicBool::new(true));
    let inner = SharedSink::default();
    let guard = latte::builder()
        .sink(Flaky {
            broken: broken.clone(),
            inner: inner.clone(),
        })
        .start()
        .unwrap();
    static ID: Id = Id::new("agent_flaky");
    latte::record(&ID, 42);
    let err = guard.report().unwrap_err();
    assert!(
        matches!(&err, Error::Sink(e) if e.kind() == std::io::ErrorKind::BrokenPipe),
        "{err}"
    );
    assert!(std::error::Error::source(&err).is_some());
    // Still working: snapshots, and reports once the sink recovers.
    assert_eq!(latte::snapshot("agent_flaky"), [42]);
    broken.store(false, Ordering::Relaxed);
    guard.report().unwrap();
    assert!(inner.text().contains("agent_flaky"));
    guard.stop().unwrap();
}

#[test]
fn a_closed_pipe_is_an_error_and_the_final_report_says_so() {
    let _one = serial();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let guard = latte::builder().sink(writer).start().unwrap();
    latte::latte_pulse!("agent_pipe");
    latte::latte_pulse!("agent_pipe");
    let err = guard.report().unwrap_err();
    assert!(
        matches!(&err, Error::Sink(e) if e.kind() == std::io::ErrorKind::BrokenPipe),
        "{err}"
    );
    assert_eq!(latte::snapshot("agent_pipe").len(), 1);
    assert!(matches!(guard.stop(), Err(Error::Sink(_))));
}

#[test]
fn without_an_agent_everything_still_records_and_reports() {
    let _one = serial();
    latte::latte_start!("agent_none");
    latte::latte_stop!("agent_none");
    let mut out = Vec::new();
    latte::Report::collect(&latte::ReportOptions::default())
        .write(&mut out, latte::Format::default())
        .unwrap();
    assert!(String::from_utf8(out).unwrap().contains("agent_none"));
}

/// The `/proc/self/task` entries of this process's threads named `name`.
#[cfg(target_os = "linux")]
fn threads_named(name: &str) -> Vec<std::path::PathBuf> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(Result::ok)
        .map(|t| t.path())
        .filter(|t| std::fs::read_to_string(t.join("comm")).is_ok_and(|c| c.trim_end() == name))
        .collect()
}

/// Agent after agent in one process (as in this test binary) install latte's SIGTERM
/// and SIGINT handler once and start one listening thread, whatever they ask.
#[cfg(target_os = "linux")]
#[test]
fn agents_one_after_another_share_one_signal_listener() {
    let _one = serial();
    for on_signals in [true, true, false, true] {
        latte::builder()
            .final_report_on_signals(on_signals)
            .sink(std::io::sink())
            .start()
            .unwrap()
            .stop()
            .unwrap();
    }
    assert_eq!(threads_named("latte-signals").len(), 1);
}

/// The listening thread, which outlives every agent, blocks the signals a program sends
/// its process (its timer, SIGUSR1, SIGTERM and SIGINT themselves), so they reach the
/// program's threads; not those a fault raises on the faulting thread.
#[cfg(target_os = "linux")]
#[test]
fn the_signal_listener_leaves_the_programs_signals_to_its_threads() {
    let _one = serial();
    latte::builder()
        .sink(std::io::sink())
        .start()
        .unwrap()
        .stop()
        .unwrap();
    let listener = threads_named("latte-signals");
    let status = std::fs::read_to_string(listener[0].join("status")).unwrap();
    let blocked = status
        .lines()
        .find_map(|l| l.strip_prefix("SigBlk:"))
        .map(|hex| u64::from_str_radix(hex.trim(), 16).unwrap())
        .unwrap();
    let is_blocked = |signal: i32| blocked & (1 << (signal - 1)) != 0;
    for signal in [libc::SIGALRM, libc::SIGUSR1, libc::SIGTERM, libc::SIGINT] {
        assert!(is_blocked(signal), "signal {signal}: SigBlk {blocked:x}");
    }
    for fault in [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL] {
        assert!(!is_blocked(fault), "signal {fault}: SigBlk {blocked:x}");
    }
}
