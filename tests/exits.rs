//! The run survives exits. A child process (this test binary run again, running only
//! `child_process`) records, and the parent ends it: SIGTERM or SIGINT with
//! `Builder::final_report_on_signals` (the final report is complete and the child dies
//! of the signal; a second signal does not wait for a stuck sink), `std::process::exit`
//! after `Guard::stop_running`, and `kill -9` with the interval log on (every interval
//! whose periodic report was written is in the log). The parent and the child talk
//! through the child's stdout, line by line: no sleep stands in for a handshake.
#![cfg(unix)]
#![allow(unsafe_code)] // kill(2)

mod common;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ChildStdout, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Which part the child plays.
const ROLE: &str = "LATTE_EXITS_CHILD";
/// Where the `kill -9` child writes its interval log.
const HLOG: &str = "LATTE_EXITS_HLOG";
/// Lines the child says to the parent start with this.
const SAYS: &str = "latte-exits-child: ";
/// Scopes the child records on its main thread, and on a thread that exits.
const MAIN_SCOPES: u64 = 1_000;
const WORKER_SCOPES: u64 = 500;
/// A child still running after this has hung: it is killed and the test fails.
const HUNG: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------
// The child.

/// The child process's entry point. Ignored in a normal run; the tests below run it by
/// name in a new process, with `ROLE` set (without it, there is nothing to do).
#[test]
#[ignore = "the child process of the other tests"]
fn child_process() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    match role.as_str() {
        "signal" => signal_child(),
        "stuck_sink" => stuck_sink_child(),
        "exit" => exit_child(),
        "kill9" => kill9_child(),
        _ => panic!("unknown role {role}"),
    }
}

fn say(what: &str) {
    println!("{SAYS}{what}");
}

/// Records `MAIN_SCOPES` scopes here and `WORKER_SCOPES` on a thread that then exits.
fn record() {
    for _ in 0..MAIN_SCOPES {
        latte::latte_start!("exits_main");
        latte::latte_stop!("exits_main");
    }
    std::thread::Builder::new()
        .name("exits-worker".into())
        .spawn(|| {
            for _ in 0..WORKER_SCOPES {
                latte::latte_start!("exits_worker");
                latte::latte_stop!("exits_worker");
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

/// An agent whose drain never folds by itself within the test: whatever the final
/// report holds, the exit path folded.
fn agent() -> latte::Builder {
    let idle = Duration::from_secs(60);
    latte::builder()
        .format(latte::Format::Json)
        .drain_interval(idle, idle)
}

/// Waits for a signal: until stdin ends, which means the parent is gone.
fn wait_for_the_parent() {
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    say("stdin closed");
}

fn signal_child() {
    let _latte = agent().final_report_on_signals(true).start().unwrap();
    record();
    say("recorded");
    wait_for_the_parent();
}

fn stuck_sink_child() {
    /// A sink that never returns once written to.
    struct Stuck;
    impl std::io::Write for Stuck {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            say("in the sink");
            loop {
                std::thread::park();
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let _latte = agent()
        .final_report_on_signals(true)
        .sink(Stuck)
        .start()
        .unwrap();
    record();
    say("recorded");
    wait_for_the_parent();
}

fn exit_child() {
    let _latte = agent().start().unwrap();
    record();
    leave(3);
}

/// Far from the guard, which never drops: `exit` runs no destructor.
fn leave(code: i32) -> ! {
    let stopped = latte::Guard::stop_running();
    say(&format!("stopped: {stopped:?}"));
    std::process::exit(code);
}

fn kill9_child() {
    let hlog = std::env::var(HLOG).unwrap();
    let _latte = latte::builder()
        .format(latte::Format::Json)
        .periodic(Duration::from_millis(20))
        .hlog(hlog)
        .start()
        .unwrap();
    let began = Instant::now();
    while began.elapsed() < HUNG {
        latte::latte_start!("exits_hlog");
        latte::latte_stop!("exits_hlog");
        std::thread::sleep(Duration::from_micros(200)); // a steady pace, not a wait
    }
    say("never killed");
}

// ---------------------------------------------------------------------------------
// The parent.

/// A running child, killed if the test ends (or it hangs) before it does.
struct Running {
    child: Child,
    stdout: BufReader<ChildStdout>,
    stderr: Option<JoinHandle<String>>,
    /// Every line read from the child's stdout.
    lines: Vec<String>,
    /// Dropped when the child has been waited for: stops the watchdog.
    _watch: mpsc::Sender<()>,
}

fn spawn(role: &str, env: &[(&str, &str)]) -> Running {
    let mut child = common::this_test_binary()
        .args(["child_process", "--exact", "--ignored", "--nocapture"])
        .args(["--test-threads=1"])
        .env(ROLE, role)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    // The watchdog: a child that outlives `HUNG` is killed, so the test fails instead
    // of hanging.
    let (watch, watched) = mpsc::channel::<()>();
    let pid = child.id() as libc::pid_t;
    std::thread::spawn(move || {
        if watched.recv_timeout(HUNG) == Err(mpsc::RecvTimeoutError::Timeout) {
            // SAFETY: kill(2) with a pid and a signal number; no memory is involved.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    Running {
        stdout: BufReader::new(child.stdout.take().unwrap()),
        child,
        stderr: Some(stderr),
        lines: Vec::new(),
        _watch: watch,
    }
}

impl Running {
    /// The next line of the child's stdout, `None` at its end.
    fn next_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                // The test harness may have begun the line ("test child_process ... ").
                let report = line.find("{\"format_version\"").unwrap_or(0);
                let line = line[report..].trim_end().to_owned();
                self.lines.push(line.clone());
                Some(line)
            }
        }
    }

    /// Reads until the child says `what`.
    fn wait_until_it_says(&mut self, what: &str) {
        let said = format!("{SAYS}{what}");
        while let Some(line) = self.next_line() {
            if line.ends_with(&said) {
                return;
            }
        }
        panic!(
            "the child ended before saying {what:?}:\n{}",
            self.lines.join("\n")
        );
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) with our child's pid and a signal number; no memory is
        // involved.
        let sent = unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
        assert_eq!(sent, 0, "kill failed");
    }

    /// Reads the child's stdout to its end and waits for it: its exit status, every
    /// line it wrote, and its stderr.
    fn finish(mut self) -> (ExitStatus, Vec<String>, String) {
        while self.next_line().is_some() {}
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (status, std::mem::take(&mut self.lines), stderr)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Ends the child if a failed assertion left it running (no-op once waited for).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The JSON reports among the child's lines; a line cut short by `kill -9` is left
/// out when `cut_ok`.
fn reports(lines: &[String], cut_ok: bool) -> Vec<serde_json::Value> {
    let json: Vec<&String> = lines.iter().filter(|l| l.starts_with('{')).collect();
    let last = json.len().saturating_sub(1);
    json.iter()
        .enumerate()
        .filter_map(|(i, l)| match serde_json::from_str(l) {
            Ok(report) => Some(report),
            Err(_) if cut_ok && i == last => None,
            Err(e) => panic!("a report that is not JSON ({e}): {l}"),
        })
        .collect()
}

/// A component's all-threads statistics in a JSON report.
fn stats<'a>(report: &'a serde_json::Value, id: &str) -> Option<&'a serde_json::Value> {
    report["all_threads"]
        .as_array()?
        .iter()
        .find(|r| r["component"] == id)
        .map(|r| &r["stats"])
}

/// The final report holds every scope the child recorded, none lost.
fn assert_complete(lines: &[String], stderr: &str) {
    let reports = reports(lines, false);
    let finals: Vec<_> = reports.iter().filter(|r| r["label"] == "final").collect();
    assert_eq!(finals.len(), 1, "one final report:\n{lines:?}\n{stderr}");
    for (id, recorded) in [("exits_main", MAIN_SCOPES), ("exits_worker", WORKER_SCOPES)] {
        let s = stats(finals[0], id).unwrap_or_else(|| panic!("no {id} row: {stderr}"));
        assert_eq!(s["samples"], recorded, "{id}: {s}");
        assert_eq!(s["seen"], recorded, "{id}: {s}");
        assert_eq!(s["lost"], 0, "{id}: {s}");
    }
}

fn signal_writes_the_final_report_then_ends_the_process(signal: i32) {
    let mut child = spawn("signal", &[]);
    child.wait_until_it_says("recorded");
    child.signal(signal);
    let (status, lines, stderr) = child.finish();
    assert_eq!(
        status.signal(),
        Some(signal),
        "{status:?}\n{lines:?}\n{stderr}"
    );
    assert!(
        !lines.iter().any(|l| l.ends_with("stdin closed")),
        "{lines:?}"
    );
    assert_complete(&lines, &stderr);
}

#[test]
fn sigterm_writes_the_final_report_then_ends_the_process() {
    signal_writes_the_final_report_then_ends_the_process(libc::SIGTERM);
}

#[test]
fn sigint_writes_the_final_report_then_ends_the_process() {
    signal_writes_the_final_report_then_ends_the_process(libc::SIGINT);
}

#[test]
fn a_second_signal_does_not_wait_for_a_stuck_sink() {
    let mut child = spawn("stuck_sink", &[]);
    child.wait_until_it_says("recorded");
    child.signal(libc::SIGTERM);
    // The final report is being written, into a sink that never returns.
    child.wait_until_it_says("in the sink");
    child.signal(libc::SIGTERM);
    let (status, lines, stderr) = child.finish();
    assert_eq!(
        status.signal(),
        Some(libc::SIGTERM),
        "{status:?}\n{lines:?}\n{stderr}"
    );
}

#[test]
fn stop_running_before_exit_writes_the_final_report() {
    let (status, lines, stderr) = spawn("exit", &[]).finish();
    assert_eq!(status.code(), Some(3), "{status:?}\n{lines:?}\n{stderr}");
    let said = format!("{SAYS}stopped: Ok(())");
    assert!(lines.iter().any(|l| l.ends_with(&said)), "{lines:?}");
    assert_complete(&lines, &stderr);
}

#[test]
fn kill_9_loses_at_most_the_interval_being_written() {
    let hlog = std::env::temp_dir().join(format!("latte-exits-{}.hlog", std::process::id()));
    let mut child = spawn("kill9", &[(HLOG, hlog.to_str().unwrap())]);
    // Let it write a few periodic reports with samples, then kill it.
    let mut written = 0;
    while written < 5 {
        let line = child.next_line().expect("the child ended early");
        if line.starts_with('{') && line.contains("\"periodic #") && line.contains("exits_hlog") {
            written += 1;
        }
    }
    child.signal(libc::SIGKILL);
    let (status, lines, stderr) = child.finish();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}\n{stderr}");
    // Per periodic report that reached the sink, in order: its samples of the id.
    let reported: Vec<u64> = reports(&lines, true)
        .iter()
        .filter_map(|r| stats(r, "exits_hlog"))
        .map(|s| s["samples"].as_u64().unwrap())
        .collect();
    let logged = common::hlog_interval_counts(&hlog, "exits_hlog");
    std::fs::remove_file(&hlog).unwrap();
    // The log is written before each report: every reported interval is in it, and at
    // most one more (written to the log, not to the sink, when the kill came).
    assert!(reported.len() >= 5, "{reported:?}");
    assert!(
        logged.len() == reported.len() || logged.len() == reported.len() + 1,
        "logged {logged:?}, reported {reported:?}"
    );
    assert_eq!(logged[..reported.len()], reported[..]);
}
