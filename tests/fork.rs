//! Own binary: it forks the test process, where another test's thread could hold a lock.
//!
//! A forked child of a multi-threaded, recording parent can still record and report,
//! start its own agent, and die of a signal; the parent is unaffected. (Threads do not
//! survive `fork`: in the child only the forking thread exists.) Every child leaves
//! with `_exit`, on every path, never returning into the test harness.
//! Unix only: Windows has no `fork`.
#![cfg(unix)]
#![allow(unsafe_code)] // fork, waitpid, _exit, raise

mod common;
use common::{SharedSink, exclusive};
use latte::Format;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Barrier;
use std::time::{Duration, Instant};

#[test]
fn a_forked_child_records_and_reports() {
    let _one = exclusive();
    // A parent with other threads recording and alive at the moment of the fork.
    let ready = Barrier::new(3);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for k in 0..2 {
            let (ready, done) = (&ready, &done);
            s.spawn(move || {
                latte::latte_start!("fork_parent_worker");
                latte::latte_stop!("fork_parent_worker");
                ready.wait();
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    latte::latte_pulse!("fork_parent_spin");
                    std::hint::spin_loop();
                }
                let _ = k;
            });
        }
        ready.wait();
        latte::latte_start!("fork_parent");
        latte::latte_stop!("fork_parent");
        let guard = latte::builder()
            .sink(std::io::sink())
            .final_report(false)
            .start()
            .unwrap();

        let (reader, writer) = std::io::pipe().unwrap();
        // SAFETY: fork in a test process; the child only runs latte and std code below
        // and leaves with `_exit`, never returning into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // The child: record on this thread and on a new one, then report.
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                record_and_report_in_the_child(guard, &writer);
            }));
            // SAFETY: leave the child at once, without running the harness's exit path.
            unsafe { libc::_exit(if ok.is_ok() { 0 } else { 1 }) };
        }
        drop(writer);
        let text = read_all(reader);
        let status = wait(pid);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let text = text.join().unwrap();
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child failed: {status}\n{text}"
        );
        // The child's report has its own samples and the parent's, taken at the fork.
        for id in [
            "fork_child",
            "fork_child_thread",
            "fork_parent",
            "fork_parent_worker",
        ] {
            assert!(
                text.contains(id),
                "{id} missing from the child's report:\n{text}"
            );
        }
        // The parent's agent is unaffected by the child.
        guard_check();
    });
}

/// In the forked child: records on this thread and on a new one, finds the parent's
/// agent gone, and writes a table report to `writer`.
fn record_and_report_in_the_child(guard: latte::Guard, writer: &std::io::PipeWriter) {
    for _ in 0..3 {
        latte::latte_start!("fork_child");
        latte::latte_stop!("fork_child");
    }
    std::thread::spawn(|| {
        latte::latte_start!("fork_child_thread");
        latte::latte_stop!("fork_child_thread");
    })
    .join()
    .unwrap();
    // The parent's agent does not exist here: the guard says so.
    assert_eq!(guard.report(), Err(latte::Error::AgentStopped));
    drop(guard); // and dropping it neither hangs nor panics
    let mut out = Vec::new();
    latte::Report::collect(&latte::ReportOptions::default())
        .write(&mut out, latte::Format::default())
        .unwrap();
    // SAFETY: the write end of the pipe is a valid, open fd in the child.
    let mut w = unsafe { std::fs::File::from_raw_fd(libc::dup(writer.as_raw_fd())) };
    w.write_all(&out).unwrap();
}

fn guard_check() {
    assert_eq!(latte::init().unwrap_err(), latte::Error::AlreadyRunning);
}

/// Forks; the child runs `child` and leaves with `_exit(0)`, or `_exit(1)` if it
/// panicked. Returns the child's pid.
fn fork(child: impl FnOnce()) -> libc::pid_t {
    // SAFETY: fork in a test process; the child runs only latte and std code and
    // leaves with `_exit`, never returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).is_ok();
        // SAFETY: leave the child at once, without running the harness's exit path.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    pid
}

/// How long a child may take: a child that hangs (on a lock it inherited held) is
/// killed and fails the test, rather than hanging it.
const CHILD_DEADLINE: Duration = Duration::from_secs(120);

/// Waits for the child `pid` (within [`CHILD_DEADLINE`]): its raw wait status.
fn wait(pid: libc::pid_t) -> i32 {
    let deadline = Instant::now() + CHILD_DEADLINE;
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our child; `status` is a valid place to write.
        match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
            0 if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            0 => {
                // SAFETY: kill(2) and waitpid(2) of our own child, by its pid.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                panic!("the child did not finish within {CHILD_DEADLINE:?}: killed");
            }
            done => {
                assert_eq!(done, pid);
                return status;
            }
        }
    }
}

/// Everything the child writes to `reader`, read on a thread of its own (so the
/// parent can wait for the child with a deadline meanwhile).
fn read_all(reader: std::io::PipeReader) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let mut reader = reader;
        reader.read_to_string(&mut text).unwrap();
        text
    })
}

/// A file on a duplicate of `fd` (the child writes its report there).
fn file_on(fd: &OwnedFd) -> std::fs::File {
    // SAFETY: `dup` of an open fd returns a new fd (checked), which the file owns.
    let copy = unsafe { libc::dup(fd.as_raw_fd()) };
    assert!(copy >= 0, "dup failed");
    // SAFETY: `copy` is an open fd that nothing else owns.
    unsafe { std::fs::File::from_raw_fd(copy) }
}

/// `id`'s samples over all threads in a JSON report (`None`: no row).
fn folded(report: &serde_json::Value, id: &str) -> Option<u64> {
    report["all_threads"]
        .as_array()?
        .iter()
        .find(|r| r["component"] == id)
        .and_then(|r| r["stats"]["samples"].as_u64())
}

const PARENT_SCOPES: u64 = 40;
const PARENT_LATER: u64 = 2;
const CHILD_SCOPES: u64 = 7;

/// In the forked child: the parent's agent is not this process's, so the child starts
/// its own, records, and writes its final JSON report to `writer`.
fn start_an_agent_in_the_child(writer: &OwnedFd) {
    let child = latte::builder()
        .format(Format::Json)
        .sink(file_on(writer))
        .start()
        .expect("a forked child starts its own agent");
    assert_eq!(latte::init().unwrap_err(), latte::Error::AlreadyRunning);
    for _ in 0..CHILD_SCOPES {
        latte::latte_start!("fork_own_child");
        latte::latte_stop!("fork_own_child");
    }
    child.stop().unwrap();
}

#[test]
fn a_forked_child_runs_its_own_agent_and_the_parent_is_unaffected() {
    let _one = exclusive();
    let sink = SharedSink::default();
    let guard = latte::builder()
        .format(Format::Json)
        .sink(sink.clone())
        .start()
        .unwrap();
    for _ in 0..PARENT_SCOPES {
        latte::latte_start!("fork_own_parent");
        latte::latte_stop!("fork_own_parent");
    }
    let (reader, writer) = std::io::pipe().unwrap();
    let writer = OwnedFd::from(writer);
    let pid = fork(|| start_an_agent_in_the_child(&writer));
    drop(writer);
    let mut text = String::new();
    let mut reader = reader;
    reader.read_to_string(&mut text).unwrap();
    let status = wait(pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: {status}\n{text}"
    );
    let child: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON report");
    assert_eq!(child["label"], "final");
    // Exactly the child's own samples; the whole run it inherited from the parent at
    // the fork is its history too (docs/reliability.md).
    assert_eq!(
        folded(&child, "fork_own_child"),
        Some(CHILD_SCOPES),
        "{text}"
    );
    assert_eq!(
        folded(&child, "fork_own_parent"),
        Some(PARENT_SCOPES),
        "{text}"
    );

    // The parent's agent still runs, and its report knows nothing of the child's.
    assert_eq!(latte::init().unwrap_err(), latte::Error::AlreadyRunning);
    for _ in 0..PARENT_LATER {
        latte::latte_start!("fork_own_parent");
        latte::latte_stop!("fork_own_parent");
    }
    guard.stop().unwrap();
    let parent = sink.json_reports();
    let last = parent.last().expect("the parent's final report");
    assert_eq!(last["label"], "final");
    assert_eq!(
        folded(last, "fork_own_parent"),
        Some(PARENT_SCOPES + PARENT_LATER)
    );
    assert_eq!(folded(last, "fork_own_child"), None);
}

#[test]
fn a_forked_child_of_a_process_reporting_on_signals_still_dies_of_sigterm() {
    let _one = exclusive();
    let sink = SharedSink::default();
    let guard = latte::builder()
        .final_report_on_signals(true)
        .format(Format::Json)
        .sink(sink.clone())
        .start()
        .unwrap();
    // The child inherits the signal handler, not the thread that writes the report.
    let pid = fork(|| {
        // SAFETY: raise(3) with a signal number; no memory is involved.
        unsafe { libc::raise(libc::SIGTERM) };
    });
    let status = wait(pid);
    assert!(
        libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGTERM,
        "the child should have died of SIGTERM: {status}"
    );
    // The parent's agent neither reported nor stopped.
    assert!(sink.text().is_empty());
    guard.report().unwrap();
    guard.stop().unwrap();
    assert_eq!(sink.json_reports().len(), 2);
}

/// A fork while the locks the drain takes on every fold are held (housekeeping, the
/// list of frame queues, the reader turn of a ring it is copying): the child still
/// marks frames, collects a report and leaves. When those locks were process-wide
/// statics, or a ring's turn a mutex, a child forked while the drain folded waited on
/// them forever (the turn: a CI run of 2026-11-27 hung so).
#[test]
fn a_child_forked_while_the_drain_folds_still_reports() {
    let _one = exclusive();
    // The forking thread has marked frames (its queue is the parent's) and has a ring,
    // whose reader turn is held across the fork.
    latte::latte_frame!();
    latte::latte_frame!();
    latte::latte_start!("fork_locks_parent");
    latte::latte_stop!("fork_locks_parent");
    let (reader, writer) = std::io::pipe().unwrap();
    let pid = latte::test_hooks::while_fold_locks_held(|| {
        fork(|| {
            latte::latte_start!("fork_locks_child");
            latte::latte_stop!("fork_locks_child");
            latte::latte_frame!();
            latte::latte_frame!();
            let report = latte::Report::collect(&latte::ReportOptions::default());
            let _ = latte::collect::footprint();
            let samples = report
                .all_threads
                .iter()
                .find(|r| r.component == "fork_locks_child")
                .map_or(0, |r| r.stats.samples);
            let frames: u64 = report
                .threads
                .iter()
                .filter_map(|t| t.per_frame.as_ref())
                .map(|f| f.frames)
                .sum();
            // SAFETY: the write end of the pipe is a valid, open fd in the child.
            let mut w = unsafe { std::fs::File::from_raw_fd(libc::dup(writer.as_raw_fd())) };
            write!(w, "samples {samples} frames {frames}").unwrap();
        })
    });
    drop(writer);
    let text = read_all(reader);
    let status = wait(pid);
    let text = text.join().unwrap();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: {status}: {text}"
    );
    // The child's own frame (its second mark ends it) and its scope.
    assert_eq!(text, "samples 1 frames 1");
}
