//! The run survives exits; a process of its own per case, since each ends the process.
//! A child process (this test binary run again, running only `child_process`) records,
//! and the parent ends it: SIGTERM or SIGINT with the default
//! `Builder::final_report_on_signals` (the final report is complete and the child dies
//! of the signal; a second signal does not wait for a stuck sink, nor does one signal
//! wait for it past the bound), and with it off (the child dies at once, no report);
//! SIGINT or SIGTERM to a program with its own handling (tokio, `ctrlc`, signal-hook,
//! installed before or after `init`: it shuts down its own way, with one report);
//! `std::process::exit` after `Guard::stop_running`; and `kill -9` with the interval
//! log on (every interval whose periodic report was written is in the log). The parent
//! and the child talk through the child's stdout, line by line: no sleep stands in for
//! a handshake, and a watchdog kills a child that hangs.
#![cfg(unix)]
#![allow(unsafe_code)] // kill(2), and the child's signal dispositions before exec

use crate::common;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStdout, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Which part the child plays.
const ROLE: &str = "LATTE_EXITS_CHILD";
/// Where the `kill -9` child writes its interval log.
const HLOG: &str = "LATTE_EXITS_HLOG";
/// The bound on the final report on a signal, in milliseconds, if the child sets it.
const TIMEOUT_MS: &str = "LATTE_EXITS_TIMEOUT_MS";
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
        "init" => init_child(),
        "off" => off_child(),
        "stuck_sink" => stuck_sink_child(),
        "stuck_before" => stuck_before_child(),
        "tokio_after" => tokio_after_child(),
        "tokio_before" => tokio_before_child(),
        "ctrlc_after" => ctrlc_child(false),
        "ctrlc_before" => ctrlc_child(true),
        "signal_hook_after" => signal_hook_child(false),
        "signal_hook_before" => signal_hook_child(true),
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
        .drain_pace(idle, idle)
}

/// Waits for a signal: until stdin ends, which means the parent is gone.
fn wait_for_the_parent() {
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    say("stdin closed");
}

fn signal_child() {
    let _latte = agent().start().unwrap(); // final_report_on_signals: on by default
    record();
    say("recorded");
    wait_for_the_parent();
}

/// The plainest program: `latte::init()`, the table on stdout.
fn init_child() {
    let _latte = latte::init().expect("latte");
    record();
    say("recorded");
    wait_for_the_parent();
}

fn off_child() {
    let _latte = agent().final_report_on_signals(false).start().unwrap();
    record();
    say("recorded");
    wait_for_the_parent();
}

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

/// Sets the bound on the final report on a signal if the parent asked for one.
fn bound_the_report() {
    if let Ok(ms) = std::env::var(TIMEOUT_MS) {
        let ms = ms.parse().expect("milliseconds");
        latte::test_hooks::set_signal_report_timeout(Duration::from_millis(ms));
    }
}

fn stuck_sink_child() {
    bound_the_report();
    let _latte = agent().sink(Stuck).start().unwrap();
    record();
    say("recorded");
    wait_for_the_parent();
}

/// The drain is stuck in the sink before any signal comes.
fn stuck_before_child() {
    bound_the_report();
    let latte = agent().sink(Stuck).start().unwrap();
    record();
    std::thread::scope(|s| {
        s.spawn(|| latte.report()); // never returns: the sink does not
        wait_for_the_parent();
    });
}

/// A program with its own shutdown records, then says it is ready for the signal (its
/// handler is installed).
fn ready() {
    record();
    say("ready");
}

/// Its shutdown: work recorded as `shutdown_work`, then it says so. The program then
/// returns, and the guard's drop writes the report.
fn shutdown_work() {
    let _scope = latte::latte_scope!("shutdown_work");
    std::thread::sleep(Duration::from_millis(20)); // the program's own work
    say("shutdown done");
}

/// tokio's `ctrl_c`, first polled (so installed) after `init`.
#[tokio::main]
async fn tokio_after_child() {
    let _latte = latte::init().expect("latte");
    tokio::select! {
        biased; // `ctrl_c` is polled, and its handler installed, before `ready` runs
        _ = tokio::signal::ctrl_c() => {}
        _ = async {
            ready();
            std::future::pending::<()>().await
        } => {}
    }
    shutdown_work();
}

/// tokio's SIGINT stream, installed before `init`.
#[tokio::main]
async fn tokio_before_child() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).expect("tokio signal");
    let _latte = latte::init().expect("latte");
    ready();
    interrupt.recv().await;
    shutdown_work();
}

/// The `ctrlc` crate's handler (its own `sigaction`), set before or after `init`.
fn ctrlc_child(before: bool) {
    let (tx, interrupted) = mpsc::channel();
    let handle = move || ctrlc::set_handler(move || tx.send(()).unwrap()).expect("ctrlc");
    let latte = if before {
        handle();
        latte::init().expect("latte")
    } else {
        let latte = latte::init().expect("latte");
        handle();
        latte
    };
    ready();
    interrupted.recv().unwrap();
    shutdown_work();
    drop(latte);
}

/// A signal-hook iterator over SIGTERM, made before or after `init`.
fn signal_hook_child(before: bool) {
    use signal_hook::iterator::Signals;
    let listen = || Signals::new([libc::SIGTERM]).expect("signal-hook");
    let (mut signals, latte) = if before {
        (listen(), latte::init().expect("latte"))
    } else {
        let latte = latte::init().expect("latte");
        (listen(), latte)
    };
    ready();
    signals.forever().next();
    shutdown_work();
    drop(latte);
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
    let mut command = common::this_test_binary();
    command
        .arg(common::test_name(module_path!(), "child_process"))
        .args(["--exact", "--ignored", "--nocapture"])
        .args(["--test-threads=1"])
        .env(ROLE, role)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The child starts as a program started from a terminal does: SIGTERM and SIGINT
    // at their default, unblocked. (A shell's background job inherits SIGINT ignored,
    // which latte, as it should, leaves ignored.)
    // SAFETY: `start_as_from_a_terminal` only calls sigaction(2) and sigprocmask(2),
    // async-signal-safe, on values made before the fork.
    unsafe { command.pre_exec(start_as_from_a_terminal()) };
    let mut child = command.spawn().unwrap();
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

/// What the child runs between `fork` and `exec`: SIGTERM and SIGINT to their default
/// disposition and unblocked.
fn start_as_from_a_terminal() -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
    // SAFETY: all-zero bytes are a valid `sigaction` (SIG_DFL, no flags) and `sigset_t`.
    let (default, mut set): (libc::sigaction, libc::sigset_t) =
        unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
    // SAFETY: `set` is a valid, owned `sigset_t`.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
    }
    move || {
        for signal in [libc::SIGTERM, libc::SIGINT] {
            // SAFETY: sets a valid default action; the old one is not asked for.
            if unsafe { libc::sigaction(signal, &default, std::ptr::null_mut()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        // SAFETY: unblocks a valid set in the only thread of the forked child.
        if unsafe { libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
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
                let report = line.find("{\"").unwrap_or(0);
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

/// The table reports among the child's lines (their title lines).
fn tables(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|l| l.contains("LATTE TELEMETRY"))
        .collect()
}

fn init_writes_the_final_report_then_ends_the_process(signal: i32) {
    let mut child = spawn("init", &[]);
    child.wait_until_it_says("recorded");
    child.signal(signal);
    let (status, lines, stderr) = child.finish();
    let text = lines.join("\n");
    assert_eq!(
        status.signal(),
        Some(signal),
        "{status:?}\n{text}\n{stderr}"
    );
    let tables = tables(&lines);
    assert_eq!(tables.len(), 1, "one report:\n{text}\n{stderr}");
    assert!(tables[0].contains("final"), "{text}");
    assert!(text.contains("exits_main"), "{text}");
}

#[test]
fn sigterm_to_a_plain_init_writes_the_final_report_then_ends_the_process() {
    init_writes_the_final_report_then_ends_the_process(libc::SIGTERM);
}

#[test]
fn sigint_to_a_plain_init_writes_the_final_report_then_ends_the_process() {
    init_writes_the_final_report_then_ends_the_process(libc::SIGINT);
}

#[test]
fn with_the_report_on_signals_off_sigterm_ends_the_process_at_once() {
    let mut child = spawn("off", &[]);
    child.wait_until_it_says("recorded");
    child.signal(libc::SIGTERM);
    let (status, lines, stderr) = child.finish();
    assert_eq!(
        status.signal(),
        Some(libc::SIGTERM),
        "{status:?}\n{lines:?}\n{stderr}"
    );
    assert!(reports(&lines, false).is_empty(), "{lines:?}");
}

/// A program with its own handling of `signal` gets it, shuts down its own way and
/// exits with its own status (0: the child's test passed), and the guard's drop writes
/// the one final report, with the shutdown's work in it.
fn own_handling_shuts_down_its_own_way(role: &str, signal: i32) {
    let mut child = spawn(role, &[]);
    child.wait_until_it_says("ready");
    child.signal(signal);
    let (status, lines, stderr) = child.finish();
    let text = lines.join("\n");
    assert_eq!(status.code(), Some(0), "{status:?}\n{text}\n{stderr}");
    let done = format!("{SAYS}shutdown done");
    assert!(lines.iter().any(|l| l.ends_with(&done)), "{text}");
    let tables = tables(&lines);
    assert_eq!(tables.len(), 1, "exactly one report:\n{text}\n{stderr}");
    assert!(tables[0].contains("final"), "{text}");
    assert!(text.contains("shutdown_work"), "{text}");
}

#[test]
fn tokio_ctrl_c_installed_after_init_shuts_down_its_own_way() {
    own_handling_shuts_down_its_own_way("tokio_after", libc::SIGINT);
}

#[test]
fn tokio_signal_installed_before_init_shuts_down_its_own_way() {
    own_handling_shuts_down_its_own_way("tokio_before", libc::SIGINT);
}

#[test]
fn ctrlc_set_after_init_shuts_down_its_own_way() {
    own_handling_shuts_down_its_own_way("ctrlc_after", libc::SIGINT);
}

#[test]
fn ctrlc_set_before_init_shuts_down_its_own_way() {
    own_handling_shuts_down_its_own_way("ctrlc_before", libc::SIGINT);
}

#[test]
fn signal_hook_registered_after_init_shuts_down_its_own_way() {
    own_handling_shuts_down_its_own_way("signal_hook_after", libc::SIGTERM);
}

#[test]
fn signal_hook_registered_before_init_shuts_down_its_own_way() {
    own_handling_shuts_down_its_own_way("signal_hook_before", libc::SIGTERM);
}

#[test]
fn one_signal_does_not_wait_past_the_bound_for_a_stuck_sink() {
    // The drain is stuck in the sink before the signal; 100 ms is the bound here.
    let mut child = spawn("stuck_before", &[(TIMEOUT_MS, "100")]);
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
fn a_second_signal_does_not_wait_for_a_stuck_sink() {
    // The bound is longer than the watchdog's patience: only the second signal can end
    // the child in time.
    let never = (HUNG * 2).as_millis().to_string();
    let mut child = spawn("stuck_sink", &[(TIMEOUT_MS, &never)]);
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
