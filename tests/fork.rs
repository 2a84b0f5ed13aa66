//! A forked child of a multi-threaded, recording parent can still record and report.
//! (Threads do not survive `fork`: in the child only the forking thread exists.)
#![allow(unsafe_code)] // fork, waitpid, _exit

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::Barrier;

#[test]
fn a_forked_child_records_and_reports() {
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
                    .write(&mut out, latte::Format::Table)
                    .unwrap();
                // SAFETY: the write end of the pipe is a valid, open fd in the child.
                let mut w = unsafe { std::fs::File::from_raw_fd(libc::dup(writer.as_raw_fd())) };
                w.write_all(&out).unwrap();
            }));
            // SAFETY: leave the child at once, without running the harness's exit path.
            unsafe { libc::_exit(if ok.is_ok() { 0 } else { 1 }) };
        }
        drop(writer);
        let mut text = String::new();
        let mut reader = reader;
        reader.read_to_string(&mut text).unwrap();
        let mut status = 0;
        // SAFETY: `pid` is our child; `status` is a valid place to write.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
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

fn guard_check() {
    assert_eq!(latte::init().unwrap_err(), latte::Error::AlreadyRunning);
}
