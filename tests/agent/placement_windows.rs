//! Windows: the drain thread is pinned and lowered when asked, a placement Windows
//! refuses is an error, and the report says how much CPU the drain used.
#![cfg(windows)]

use crate::common::{self, exclusive};
use latte::{Error, Format};

static STEADY: latte::Id = latte::Id::new("placement_windows_steady");

#[test]
fn the_drain_is_placed_and_its_cpu_time_reported() {
    let _one = exclusive();
    let sink = common::SharedSink::default();
    // On any OS but Linux and Windows this start is an error (`needs Linux or Windows`).
    let guard = latte::builder()
        .drain_cpus([0])
        .drain_nice(10)
        .format(Format::Json)
        .sink(sink.clone())
        .start()
        .unwrap();
    // Enough work for the drain to use CPU time that even a 10 ms clock sees (Wine
    // reads a thread's time from Linux in 10 ms ticks): fold and report repeatedly.
    let mut cpu = 0;
    for _ in 0..200 {
        for v in 0..100_000u64 {
            latte::record(&STEADY, v % 1_000);
        }
        guard.report().unwrap();
        cpu = sink.json_reports().last().unwrap()["footprint"]["drain_cpu_ns"]
            .as_u64()
            .unwrap();
        if cpu > 0 {
            break;
        }
    }
    guard.stop().unwrap();
    assert!(cpu > 0, "the drain's CPU time stayed 0");
    println!("drain CPU time: {cpu} ns");
}

#[test]
fn placements_windows_refuses_are_errors() {
    let _one = exclusive();
    // Past the first processor group's 64 CPUs.
    let err = latte::builder().drain_cpus([64]).start().unwrap_err();
    assert!(matches!(err, Error::DrainPlacement(_)), "{err}");
    assert!(err.to_string().contains("CPU 64"), "{err}");
    for nice in [-1, 20] {
        let err = latte::builder().drain_nice(nice).start().unwrap_err();
        assert!(matches!(err, Error::DrainPlacement(_)), "{err}");
    }
    // A CPU the machine does not have: Windows refuses a mask outside the process's.
    let cpus = std::thread::available_parallelism().unwrap().get();
    if cpus < 63 {
        let err = latte::builder().drain_cpus([cpus + 1]).start().unwrap_err();
        assert!(matches!(err, Error::DrainPlacement(_)), "{err}");
    }
    common::assert_a_new_agent_can_start();
}
