//! The drain thread stays off the user's cores when asked: pinned to given CPUs, at a
//! lower priority, and the report says how much CPU it used. Linux only.
#![cfg(target_os = "linux")]

use crate::common::{self, exclusive};
use latte::{Error, Format};

/// The OS thread id of the thread named `name` in this process.
fn tid_of(name: &str) -> libc::pid_t {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap();
    tasks
        .filter_map(Result::ok)
        .find(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == name)
        })
        .and_then(|t| t.file_name().to_str()?.parse().ok())
        .unwrap_or_else(|| panic!("no thread named {name}"))
}

/// The CPUs thread `tid` may run on, as the kernel lists them (`0`, `0-3`, `0,2`).
fn affinity(tid: libc::pid_t) -> String {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_owned()
}

fn nice_of(tid: libc::pid_t) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
    // Fields after the command name (which ends with ')'): nice is field 19 overall.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    rest.split(' ').nth(16).unwrap().parse().unwrap()
}

#[test]
fn the_drain_runs_where_and_how_it_was_told() {
    let _one = exclusive();
    let sink = common::SharedSink::default();
    let guard = latte::builder()
        .drain_cpus([0])
        .drain_nice(10)
        .format(Format::Json)
        .sink(sink.clone())
        .start()
        .unwrap();
    let tid = tid_of("latte-drain");
    assert_eq!(affinity(tid), "0");
    // The calling thread is not affected.
    let mine = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    let mine = mine
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    if std::thread::available_parallelism().unwrap().get() > 1 {
        assert_ne!(mine, "0");
    }
    assert_eq!(nice_of(tid), 10);
    // Some work for the drain, then its CPU time shows in the report's footprint.
    for v in 0..200_000u64 {
        latte::record(&STEADY, v % 1_000);
    }
    guard.report().unwrap();
    guard.stop().unwrap();
    let report = sink.json_reports().pop().unwrap();
    let cpu = report["footprint"]["drain_cpu_ns"].as_u64().unwrap();
    assert!(cpu > 0, "{}", report["footprint"]);
    println!("drain CPU time: {cpu} ns");
}

static STEADY: latte::Id = latte::Id::new("placement_steady");

#[test]
fn placements_the_os_refuses_are_errors() {
    let _one = exclusive();
    let err = latte::builder().drain_cpus([100_000]).start().unwrap_err();
    assert!(matches!(err, Error::DrainPlacement(_)), "{err}");
    assert!(err.to_string().contains("CPU 100000"), "{err}");
    for nice in [-1, 20] {
        let err = latte::builder().drain_nice(nice).start().unwrap_err();
        assert!(matches!(err, Error::DrainPlacement(_)), "{err}");
    }
    // A CPU the machine does not have: the kernel refuses an empty effective set.
    let cpus = std::thread::available_parallelism().unwrap().get();
    let err = latte::builder().drain_cpus([cpus + 7]).start().unwrap_err();
    assert!(matches!(err, Error::DrainPlacement(_)), "{err}");
    // Nothing was left running.
    common::assert_a_new_agent_can_start();
}
