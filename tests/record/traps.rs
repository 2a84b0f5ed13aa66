//! The traps of recording across threads and of misuse, through the public API: a `Timer` stopped or cancelled in place
//! (inside the message it travels in), Stops that name their id, scopes open when a
//! report is taken. Each test records on threads of its own, named after it.

use crate::common::{self, on_named_thread};
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
    report.write(&mut out, Format::default()).unwrap();
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
    let _shared = common::shared();
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
        == latte::collect::SampleKind::Timer {
            start: Mode::Fast,
            stop: Mode::Mid
        }));
    assert_eq!(consumer.anomalies.total(), 0, "{:?}", consumer.anomalies);
    assert_eq!(consumer.unpaired("traps_queued").total(), 0);
}

#[test]
fn a_cancelled_timer_records_nothing_and_is_counted_as_information() {
    let _shared = common::shared();
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
    let counts = t.unpaired("traps_fetch");
    assert_eq!(counts.cancelled_timers, 1);
    assert_eq!(counts.scopes(), 0);
    assert_eq!(t.anomalies.total(), 0, "a cancel is not an anomaly");

    let report = Report::collect(&ReportOptions::default());
    let s = section(&report, "traps-cancel");
    let fetch = s.unpaired.iter().find(|f| f.component == "traps_fetch");
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

// ------------------------------------------------------ Stops that name their id

static PARSE: Id = Id::new("traps_parse");
static COMMIT: Id = Id::new("traps_commit");
static OUTER: Id = Id::new("traps_outer");

#[test]
fn empty_and_unmatched_stops_name_their_ids() {
    let _shared = common::shared();
    let t = on_named_thread("traps-stops", || {
        latte::stop(&PARSE, Mode::Fast); // nothing open: empty
        latte::stop(&PARSE, Mode::Fast);
        latte::start(&OUTER, Mode::Fast);
        latte::stop(&COMMIT, Mode::Fast); // no open scope of it: unmatched
        latte::stop(&OUTER, Mode::Fast); // the stack was left as it was
    });
    assert_eq!(t.unpaired("traps_parse").empty_stops, 2);
    assert_eq!(t.unpaired("traps_commit").unmatched_stops, 1);
    assert_eq!(t.unpaired("traps_outer").total(), 0);
    assert_eq!(t.component("traps_outer").unwrap().seen, 1);
    let a = t.anomalies;
    assert_eq!((a.empty_stops, a.unmatched_stops, a.total()), (2, 1, 3));

    let report = Report::collect(&ReportOptions::default());
    let s = section(&report, "traps-stops");
    let counts = |id: &str| {
        s.unpaired
            .iter()
            .find(|f| f.component == id)
            .map(|f| f.counts)
            .unwrap_or_else(|| panic!("{id} not in the report: {:?}", s.unpaired))
    };
    assert_eq!(counts("traps_parse").empty_stops, 2);
    assert_eq!(counts("traps_commit").unmatched_stops, 1);
    let text = section_text(&report, "traps-stops");
    let line = "anomalies: 2 empty stops (traps_parse 2), 1 unmatched stop (traps_commit)";
    assert!(text.iter().any(|l| l == line), "{text:#?}");
    // Stops that found no scope are not scopes that ended without their Stop.
    assert!(
        !text.iter().any(|l| l.starts_with("scopes without")),
        "{text:#?}"
    );
}

#[test]
fn a_long_list_of_ids_names_six_and_the_json_has_all() {
    let _shared = common::shared();
    let ids: Vec<&'static Id> = (0..8)
        .map(|k| Id::intern(&format!("traps_many_{k}")).unwrap())
        .collect();
    on_named_thread("traps-many", move || {
        for (k, id) in ids.iter().enumerate() {
            for _ in 0..=k {
                latte::stop(id, Mode::Fast); // traps_many_7 most often
            }
        }
    });
    let report = Report::collect(&ReportOptions::default());
    let s = section(&report, "traps-many");
    assert_eq!(s.anomalies.empty_stops, 36);
    let per_id: Vec<(String, u64)> = s
        .unpaired
        .iter()
        .map(|f| (f.component.clone(), f.counts.empty_stops))
        .collect();
    let all: Vec<(String, u64)> = (0..8).map(|k| (format!("traps_many_{k}"), k + 1)).collect();
    assert_eq!(per_id, all);
    // The line wraps at the table's width: read it unwrapped.
    let lines = section_text(&report, "traps-many");
    let text = lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
    assert!(
        text.contains(
            "anomalies: 36 empty stops (traps_many_7 8, traps_many_6 7, traps_many_5 6, \
             traps_many_4 5, traps_many_3 4, traps_many_2 3 and 2 more)"
        ),
        "{text}"
    );
}

/// Reports written before these counts existed still read: every new field defaults.
#[test]
fn a_report_without_the_new_fields_still_reads() {
    let _shared = common::shared();
    on_named_thread("traps-old-json", || {
        latte::stop(&PARSE, Mode::Fast);
        let mut t = Timer::start(&FETCH, Mode::Fast, Mode::Fast);
        t.cancel();
    });
    let report = Report::collect(&ReportOptions::default());
    let mut json = serde_json::to_value(&report).unwrap();
    for t in json["threads"].as_array_mut().unwrap() {
        let t = t.as_object_mut().unwrap();
        t.remove("open");
        for f in t["unpaired"].as_array_mut().unwrap() {
            let f = f.as_object_mut().unwrap();
            for key in ["empty_stops", "unmatched_stops", "cancelled_timers"] {
                assert!(f.remove(key).is_some(), "{key} is written");
            }
        }
    }
    let old: Report = serde_json::from_value(json).unwrap();
    let s = section(&old, "traps-old-json");
    assert_eq!(s.anomalies.empty_stops, 1);
    assert!(s.unpaired.iter().all(|f| f.counts.total() == 0));
    // Without per-id counts the line names no id.
    let text = section_text(&old, "traps-old-json");
    assert!(
        text.iter().any(|l| l == "anomalies: 1 empty stop"),
        "{text:#?}"
    );
}

// ------------------------------------------------ scopes open when a report is taken

static FRAME: Id = Id::new("traps_frame");
static PHYSICS: Id = Id::new("traps_physics");
static STUCK: Id = Id::new("traps_stuck");

/// Runs `body` on thread `name` until it has opened its scopes, then returns a
/// function that lets it finish (and joins it). No sleeping: two channels.
fn hold_open(name: &str, body: impl FnOnce() + Send + 'static) -> impl FnOnce() {
    let (opened, wait_opened) = std::sync::mpsc::channel::<()>();
    let (release, wait_release) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            body();
            opened.send(()).unwrap();
            wait_release.recv().unwrap();
        })
        .unwrap();
    wait_opened.recv().unwrap();
    move || {
        release.send(()).unwrap();
        thread.join().unwrap();
    }
}

#[test]
fn scopes_open_when_a_report_is_taken_are_listed_per_thread_and_id() {
    let _shared = common::shared();
    let finish = hold_open("traps-open", || {
        latte::start(&FRAME, Mode::Fast);
        latte::start(&PHYSICS, Mode::Fast);
        latte::start(&PHYSICS, Mode::Fast); // nested: a recursion
        latte::start(&PHYSICS, Mode::Fast);
        latte::stop(&PHYSICS, Mode::Fast); // one closed: two left
    });
    let report = Report::collect(&ReportOptions::default());
    let s = section(&report, "traps-open");
    let open: Vec<(&str, u64)> = s
        .open
        .iter()
        .map(|o| (o.component.as_str(), o.count))
        .collect();
    assert_eq!(open, [("traps_frame", 1), ("traps_physics", 2)]);
    let text = section_text(&report, "traps-open");
    assert!(
        text.iter()
            .any(|l| l == "open now: traps_frame 1, traps_physics 2"),
        "{text:#?}"
    );
    // In the JSON too.
    let json: serde_json::Value =
        serde_json::from_str(&report.to_json(Default::default())).unwrap();
    let thread = json["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "traps-open")
        .unwrap();
    assert_eq!(thread["open"][1]["component"], "traps_physics");
    assert_eq!(thread["open"][1]["count"], 2);

    // Once the thread has exited, its open scopes are `open at exit`, not `open now`.
    finish();
    let report = Report::collect(&ReportOptions::default());
    let s = section(&report, "traps-open");
    assert!(s.exited && s.open.is_empty(), "{:?}", s.open);
    let at_exit = |id: &str| {
        s.unpaired
            .iter()
            .find(|f| f.component == id)
            .unwrap()
            .counts
    };
    assert_eq!(at_exit("traps_frame").open_at_exit, 1);
    assert_eq!(at_exit("traps_physics").open_at_exit, 2);
    assert!(
        !section_text(&report, "traps-open")
            .iter()
            .any(|l| l.starts_with("open now")),
    );
}

#[test]
fn the_agents_interval_report_shows_a_thread_stuck_in_a_scope() {
    let _one = common::exclusive();
    let sink = common::SharedSink::default();
    let guard = latte::builder()
        .format(Format::Json)
        .sink(sink.clone())
        .final_report(false)
        .start()
        .unwrap();
    let finish = hold_open("traps-stuck", || {
        latte::start(&STUCK, Mode::Fast);
        latte::start(&STUCK, Mode::Fast);
        latte::stop(&STUCK, Mode::Fast); // one sample; one scope left open
    });
    guard.report_interval().unwrap(); // the sample
    guard.report_interval().unwrap(); // nothing new: the thread is shown for its scope
    finish();
    guard.stop().unwrap();
    let reports = sink.json_reports();
    let stuck = |report: &serde_json::Value| {
        report["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "traps-stuck")
            .cloned()
    };
    let (first, second) = (stuck(&reports[0]).unwrap(), stuck(&reports[1]).unwrap());
    assert_eq!(first["rows"][0]["stats"]["seen"], 1);
    assert!(second["rows"].as_array().unwrap().is_empty(), "{second}");
    for t in [&first, &second] {
        assert_eq!(t["open"][0]["component"], "traps_stuck", "{t}");
        assert_eq!(t["open"][0]["count"], 1, "{t}");
    }
}

#[test]
fn a_long_open_list_names_six_ids() {
    let _shared = common::shared();
    let ids: Vec<&'static Id> = (0..9)
        .map(|k| Id::intern(&format!("traps_deep_{k}")).unwrap())
        .collect();
    let finish = hold_open("traps-deep", move || {
        for id in ids {
            latte::start(id, Mode::Fast);
        }
    });
    let report = Report::collect(&ReportOptions::default());
    finish();
    assert_eq!(section(&report, "traps-deep").open.len(), 9);
    let lines = section_text(&report, "traps-deep");
    let text = lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
    assert!(
        text.contains(
            "open now: traps_deep_0 1, traps_deep_1 1, traps_deep_2 1, traps_deep_3 1, \
             traps_deep_4 1, traps_deep_5 1 and 3 more"
        ),
        "{text}"
    );
}
