//! Cores whose counters disagree, on the mock clock: a `Timer` that closes on another
//! thread, or a scope whose Mid/Hard reads name two CPUs, and whose delta is
//! implausible (the counter appears to go backwards, or jumps) is counted as
//! `cross_core`, never as a clock anomaly; the same delta on one core still is a
//! clock anomaly.

use crate::mock;
use latte::test_hooks::{set_mock_core, set_mock_ticks};
use latte::{Id, Mode, Timer};

fn anomalies(thread: &str) -> latte::collect::Anomalies {
    latte::capture().thread(thread).expect("recorded").anomalies
}

fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(body)
        .unwrap()
}

/// Where the consumer's core reads for message `seq`: with the producer's, 2^40
/// ticks behind it (every delta negative), or 2^60 ahead (past `Sample::MAX_TICKS`).
fn consumer_offset(seq: u64) -> u64 {
    match seq % 3 {
        0 => 0,
        1 => (1u64 << 40).wrapping_neg(),
        _ => 1 << 60,
    }
}

#[test]
fn timers_closed_on_a_disagreeing_core_are_cross_core() {
    let _clock = mock();
    static MESSAGE: Id = Id::new("xc_message");
    const MESSAGES: u64 = 100_000;
    let (tx, rx) = crossbeam_channel::bounded::<(u64, Timer<'static>)>(256);
    // The producer moves the shared counter forward only, so a consumer on the same
    // offset always sees a plausible delta.
    let producer = spawn("xc_producer", move || {
        for seq in 0..MESSAGES {
            set_mock_ticks(1_000 + seq);
            tx.send((seq, Timer::start(&MESSAGE, Mode::Fast, Mode::Fast)))
                .unwrap();
        }
    });
    let consumer = spawn("xc_consumer", move || {
        for (seq, timer) in rx {
            set_mock_core(consumer_offset(seq), latte::clock::CPU_UNKNOWN);
            drop(timer);
        }
    });
    producer.join().unwrap();
    consumer.join().unwrap();

    let agreeing = (0..MESSAGES).filter(|&s| consumer_offset(s) == 0).count() as u64;
    let a = anomalies("xc_consumer");
    assert_eq!(a.cross_core, MESSAGES - agreeing);
    assert_eq!(a.clock_anomalies, 0);
    let capture = latte::capture();
    let consumer = capture.thread("xc_consumer").unwrap();
    assert_eq!(consumer.component("xc_message").unwrap().seen, agreeing);
    assert!(
        consumer
            .component("xc_message")
            .unwrap()
            .samples
            .iter()
            .all(|s| s.ticks() < MESSAGES),
        "every kept delta is plausible"
    );
}

#[test]
fn on_one_thread_a_backwards_timer_is_a_clock_anomaly() {
    let _clock = mock();
    static ID: Id = Id::new("xc_same_thread");
    spawn("xc_same_thread", || {
        set_mock_ticks(500);
        let timer = Timer::start(&ID, Mode::Fast, Mode::Fast);
        set_mock_ticks(400);
        drop(timer);
    })
    .join()
    .unwrap();
    let a = anomalies("xc_same_thread");
    assert_eq!((a.clock_anomalies, a.cross_core), (1, 0));
}

#[test]
fn a_scope_whose_reads_name_two_cpus_is_cross_core() {
    let _clock = mock();
    static ID: Id = Id::new("xc_scope");
    spawn("xc_scope", || {
        set_mock_ticks(10_000);
        // (start mode, stop mode, CPU at the Stop): the Stop runs 100 ticks behind.
        for (start, stop, cpu) in [
            (Mode::Mid, Mode::Mid, 2),  // two CPUs: cross-core
            (Mode::Hard, Mode::Mid, 2), // two CPUs: cross-core
            (Mode::Mid, Mode::Mid, 1),  // one CPU: a clock anomaly
            (Mode::Fast, Mode::Mid, 2), // the Start does not know its CPU: a clock anomaly
        ] {
            set_mock_core(0, 1);
            latte::start(&ID, start);
            set_mock_core(100u64.wrapping_neg(), cpu);
            latte::stop(&ID, stop);
        }
        // Two CPUs whose counters agree: a normal, migrated sample.
        set_mock_core(0, 1);
        let timer = Timer::start(&ID, Mode::Mid, Mode::Mid);
        set_mock_core(0, 2);
        set_mock_ticks(10_007);
        drop(timer);
    })
    .join()
    .unwrap();
    let a = anomalies("xc_scope");
    assert_eq!((a.cross_core, a.clock_anomalies), (2, 2));
    let capture = latte::capture();
    let samples = &capture
        .thread("xc_scope")
        .unwrap()
        .component("xc_scope")
        .unwrap()
        .samples;
    assert_eq!(samples.len(), 1);
    assert_eq!((samples[0].ticks(), samples[0].migrated()), (7, true));
}
