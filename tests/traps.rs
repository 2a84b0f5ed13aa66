//! Issue 23's traps, through the public API: a `Timer` stopped or cancelled in place
//! (inside the message it travels in), Stops that name their id, scopes open when a
//! report is taken. Each test records on threads of its own, named after it.

mod common;
use common::on_named_thread;
use latte::{Format, Id, Mode, Report, ReportOptions, Timer};

/// The report's section of thread `name`.
fn section(report: &Report, name: &str) -> latte::report::ThreadReport {
    report
        .threads
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no section for {name}"))
        .clone()
}

/// The report as the table a user reads.
fn table(report: &Report) -> String {
    let mut out = Vec::new();
    report.write(&mut out, Format::Table).unwrap();
    String::from_utf8(out).unwrap()
}

/// The table's lines of thread `name`'s section: from its title to the blank line.
fn section_text(report: &Report, name: &str) -> Vec<String> {
    let text = table(report);
    let title = format!("THREAD {name} (");
    text.lines()
        .skip_while(|l| !l.starts_with(&title))
        .take_while(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

// ---------------------------------------------------------------- Timer stop/cancel

static QUEUED: Id = Id::new("traps_queued");
static FETCH: Id = Id::new("traps_fetch");

struct Order {
    seq: u64,
    queued: Timer<'static>,
}

#[test]
fn a_timer_in_a_message_stops_in_place_and_the_message_is_used_after() {
    const ORDERS: u64 = 50;
    let (tx, rx) = std::sync::mpsc::channel::<Order>();
    let producer = std::thread::Builder::new()
        .name("traps-producer".into())
        .spawn(move || {
            for seq in 0..ORDERS {
                let queued = Timer::start(&QUEUED, Mode::Fast, Mode::Mid);
                tx.send(Order { seq, queued }).unwrap();
            }
        })
        .unwrap();
    let (measured, forwarded) = std::sync::mpsc::channel::<(u64, Option<u64>)>();
    let consumer = on_named_thread("traps-consumer", move || {
        let (forward, kept) = std::sync::mpsc::channel::<Order>();
        for mut order in rx {
            let ticks = order.queued.stop(); // in place: `order` stays whole
            assert_eq!(order.queued.stop(), None, "a second stop measures nothing");
            measured.send((order.seq, ticks)).unwrap();
            forward.send(order).unwrap(); // the E0382 case: used after the stop
        }
        drop(forward);
        // The spent timers drop here, with their messages: nothing more is recorded.
        assert_eq!(
            kept.iter().map(|o| o.seq).sum::<u64>(),
            (0..ORDERS).sum::<u64>()
        );
    });
    producer.join().unwrap();
    let measured: Vec<(u64, Option<u64>)> = forwarded.iter().collect();
    let returned: Vec<u64> = measured.iter().map(|(_, t)| t.unwrap()).collect();
    assert_eq!(measured.len() as u64, ORDERS);
    // One sample per order, on the consumer (the thread that stopped it), each the
    // value `stop` returned, with the timer's modes.
    let queued = consumer.component("traps_queued").unwrap();
    assert_eq!(queued.seen, ORDERS);
    let recorded: Vec<u64> = queued.samples.iter().map(|s| s.ticks()).collect();
    assert_eq!(recorded, returned);
    assert!(queued.samples.iter().all(|s| s.kind()
        == latte::collect::SampleKind::Scope {
            start: Mode::Fast,
            stop: Mode::Mid
        }));
    assert_eq!(consumer.anomalies.total(), 0, "{:?}", consumer.anomalies);
    assert_eq!(consumer.frame_counts("traps_queued").total(), 0);
}

#[test]
fn a_cancelled_timer_records_nothing_and_is_counted_as_information() {
    let t = on_named_thread("traps-cancel", || {
        let mut fetch = Timer::start(&FETCH, Mode::Fast, Mode::Fast);
        fetch.cancel();
        assert_eq!(fetch.stop(), None, "a cancelled timer measures nothing");
        fetch.cancel(); // again: nothing more is counted
        drop(fetch);
        // A timer that runs to its drop still records.
        drop(Timer::start(&FETCH, Mode::Fast, Mode::Fast));
    });
    assert_eq!(t.component("traps_fetch").unwrap().seen, 1);
    let counts = t.frame_counts("traps_fetch");
    assert_eq!(counts.cancelled_timers, 1);
    assert_eq!(counts.frames(), 0);
    assert_eq!(t.anomalies.total(), 0, "a cancel is not an anomaly");

    let report = Report::collect(&ReportOptions::default());
    let s = section(&report, "traps-cancel");
    let fetch = s.frames.iter().find(|f| f.component == "traps_fetch");
    assert_eq!(fetch.map(|f| f.counts.cancelled_timers), Some(1));
    let text = section_text(&report, "traps-cancel");
    assert!(
        text.iter()
            .any(|l| l == "cancelled timers (not recorded): traps_fetch"),
        "{text:#?}"
    );
    assert!(
        !text.iter().any(|l| l.starts_with("anomalies:")),
        "{text:#?}"
    );
}
