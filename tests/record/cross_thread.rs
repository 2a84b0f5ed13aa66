//! Cross-thread latency: a `Timer` travels inside a message from the producer to the
//! consumer, and the consumer's thread reports one sample per message, over the whole
//! run. On the real clock (the mock's disagreeing cores are in
//! `tests/mock_clock/cross_core.rs`).

use crate::common;
use latte::{Id, Mode, ReportOptions, Timer};

static MESSAGE: Id = Id::new("xt_message");
const MESSAGES: u64 = 100_000;

struct Message {
    seq: u64,
    timer: Timer<'static>,
}

#[test]
fn a_timer_is_send_and_four_words() {
    fn send<T: Send>() {}
    send::<Timer<'static>>();
    send::<Message>();
    assert_eq!(size_of::<Timer<'static>>(), 4 * size_of::<u64>());
}

fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(body)
        .unwrap()
}

#[test]
fn the_consumer_reports_every_message() {
    let _one = common::exclusive();
    // Rings that hold the whole run, and a drain that folds it.
    let guard = latte::builder()
        .ring_capacity(1 << 17)
        .final_report(false)
        .start()
        .unwrap();
    let (tx, rx) = crossbeam_channel::bounded::<Message>(1024);
    let producer = spawn("xt_producer", move || {
        for seq in 0..MESSAGES {
            let timer = Timer::start(&MESSAGE, Mode::Fast, Mode::Mid);
            tx.send(Message { seq, timer }).unwrap();
        }
    });
    let consumer = spawn("xt_consumer", move || {
        for (expected, message) in (0..).zip(rx) {
            assert_eq!(message.seq, expected, "in order");
            drop(message.timer);
        }
    });
    producer.join().unwrap();
    consumer.join().unwrap();

    let report = latte::Report::collect(&ReportOptions::default());
    let thread = |name: &str| report.threads.iter().find(|t| t.name == name).cloned();
    let consumer = thread("xt_consumer").expect("the consumer recorded");
    let row = consumer
        .rows
        .iter()
        .find(|r| r.component == "xt_message")
        .expect("a row for the messages");
    // On a machine whose cores' counters disagree, those deltas are counted instead.
    let cross_core = consumer.anomalies.cross_core;
    println!("consumer: {:?}, {cross_core} cross-core", row.stats);
    assert_eq!(row.stats.seen + cross_core, MESSAGES);
    assert_eq!((row.stats.samples, row.stats.lost), (row.stats.seen, 0));
    assert_eq!(consumer.anomalies.clock_anomalies, 0);
    assert!(
        thread("xt_producer").is_none_or(|t| t.rows.is_empty()),
        "recorded where the timer drops, not where it starts"
    );
    let capture = latte::capture();
    let window = capture
        .thread("xt_consumer")
        .unwrap()
        .component("xt_message");
    assert_eq!(window.unwrap().seen + cross_core, MESSAGES);
    guard.stop().unwrap();
}
