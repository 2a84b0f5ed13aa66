//! Own binary: the cap and its report count every ring the process made, whoever made it.
//!
//! The memory cap: rings are
//! charged against `Builder::memory_cap` when an id is first used on a thread; past
//! it the id records nothing there, and every record it drops is counted under its
//! name, in the capture, the report's table and its JSON. `start()` refuses a cap that
//! cannot hold one ring. The whole run's histograms are charged too, by the fold: they
//! leave less for new rings, and past the cap pooled rings are freed for them.

mod common;
use latte::collect::Limit;
use latte::report::JsonStyle;
use latte::{Error, Id, Report, ReportOptions};

/// 1,024 samples: 8 KiB per ring.
const CAPACITY: usize = 1024;
const RING: u64 = 8 * CAPACITY as u64;

static IDS: [Id; 5] = [
    Id::new("cap/m0"),
    Id::new("cap/m1"),
    Id::new("cap/m2"),
    Id::new("cap/m3"),
    Id::new("cap/m4"),
];
static PULSED: Id = Id::new("cap/pulsed");

/// The table's text without its frame, wrapped lines joined by one space.
fn flat(table: &str) -> String {
    let words: Vec<&str> = table
        .lines()
        .map(|l| l.trim_matches(|c| c == '|' || c == '#'))
        .flat_map(str::split_whitespace)
        .collect();
    words.join(" ")
}

#[test]
fn caps_that_cannot_hold_one_ring_are_refused_by_value() {
    let _one = common::exclusive();
    for cap in [0, RING - 1] {
        let err = latte::builder()
            .ring_capacity(CAPACITY)
            .memory_cap(cap)
            .start()
            .unwrap_err();
        assert_eq!(
            err,
            Error::MemoryCap {
                cap,
                ring_bytes: RING
            }
        );
        let message = err.to_string();
        assert!(
            message.contains(&format!("one ring takes {RING} bytes")),
            "{message}"
        );
        assert!(message.contains("raise Builder::memory_cap"), "{message}");
    }
    // The largest ring needs a cap above the default.
    let err = latte::builder()
        .ring_capacity(Limit::RING_CAPACITY.max)
        .start()
        .unwrap_err();
    assert_eq!(
        err,
        Error::MemoryCap {
            cap: Limit::MEMORY_CAP.default as u64,
            ring_bytes: 1 << 31
        }
    );
    common::assert_a_new_agent_can_start();
}

/// cap-a's first three ids got rings; the rest, and cap-b's prepared id, recorded
/// nothing and were counted per id and per thread.
fn the_capture_counts_what_was_refused() {
    let capture = latte::capture();
    let a = capture.thread("cap-a").unwrap();
    for id in &IDS[..3] {
        assert_eq!(a.component(id.name()).unwrap().seen, 10, "{}", id.name());
        assert_eq!(a.unpaired(id.name()).over_cap, 0);
    }
    for id in [&IDS[3], &IDS[4], &PULSED] {
        assert!(a.component(id.name()).is_none(), "{} has a ring", id.name());
    }
    assert_eq!(a.unpaired("cap/m3").over_cap, 10);
    assert_eq!(a.unpaired("cap/m4").over_cap, 10);
    assert_eq!(a.unpaired("cap/pulsed").over_cap, 3);
    assert_eq!(a.anomalies.over_cap, 23);
    let b = capture.thread("cap-b").unwrap();
    assert!(b.components.is_empty(), "{:?}", b.components);
    assert_eq!(b.unpaired("cap/m0").over_cap, 5);
    assert_eq!(b.anomalies.over_cap, 5);
}

/// Named in the report: once for the run, and per thread; exact in the JSON.
fn the_report_names_what_was_refused() {
    let report = Report::collect(&ReportOptions::default());
    let mut table = Vec::new();
    report.write(&mut table, latte::Format::default()).unwrap();
    let text = flat(&String::from_utf8(table).unwrap());
    assert!(
        text.contains("memory cap reached: cap/m3, cap/m4, cap/pulsed, cap/m0 recorded nothing"),
        "{text}"
    );
    assert!(text.contains("(28 records dropped)"), "{text}");
    assert!(
        text.contains("past the memory cap, not recorded: cap/m3 10, cap/m4 10, cap/pulsed 3"),
        "{text}"
    );
    assert!(
        text.contains("anomalies: 23 records past the memory cap"),
        "{text}"
    );
    assert!(text.contains("not recorded: cap/m0 5"), "{text}");
    let back: Report = serde_json::from_str(&report.to_json(JsonStyle::Compact)).unwrap();
    let a = back.threads.iter().find(|t| t.name == "cap-a").unwrap();
    let m4 = a.unpaired.iter().find(|f| f.component == "cap/m4").unwrap();
    assert_eq!(m4.counts.over_cap, 10);
    assert_eq!(a.anomalies.over_cap, 23);
}

#[test]
fn ids_past_the_memory_cap_record_nothing_and_are_counted_and_named() {
    let _one = common::exclusive();
    let used = latte::collect::footprint().memory_cap_used;
    let cap = used + 3 * RING;
    // The settings stay after the agent stops: no drain thread holds rings meanwhile.
    latte::builder()
        .sink(std::io::sink())
        .final_report(false)
        .ring_capacity(CAPACITY)
        .memory_cap(cap)
        .start()
        .unwrap()
        .stop()
        .unwrap();

    common::on_named_thread("cap-a", move || {
        for id in &IDS {
            (0..10).for_each(|v| latte::record(id, v));
        }
        (0..3).for_each(|_| latte::pulse(&PULSED));
        // Exactly three rings charged: the cap, to the byte.
        assert_eq!(latte::collect::footprint().memory_cap_used, cap);
        // While cap-a holds the whole cap: a prepared id gets no ring either.
        common::on_named_thread("cap-b", || {
            latte::collect::prepare(&[&IDS[0]]);
            (0..5).for_each(|v| latte::record(&IDS[0], v));
        });
    });

    the_capture_counts_what_was_refused();
    the_report_names_what_was_refused();

    // The footprint shows the cap full; an exited thread's rings are pooled (still
    // charged) or freed, so a new thread's id records again.
    let f = latte::collect::footprint();
    assert_eq!(f.memory_cap, cap);
    assert!(f.memory_cap_used <= cap, "{f:?}");
    common::on_named_thread("cap-c", || (0..2).for_each(|v| latte::record(&IDS[4], v)));
    let c = latte::capture();
    let c = c.thread("cap-c").unwrap();
    assert_eq!(c.component("cap/m4").unwrap().seen, 2);
    assert_eq!(c.anomalies.over_cap, 0);
    assert!(latte::collect::footprint().memory_cap_used <= cap);
}

/// 2,048 samples: 16 KiB per ring (a size no other test here uses, so no ring pooled
/// by another test is reused).
const BIG: usize = 2048;
const BIG_RING: u64 = 8 * BIG as u64;

static HIST: [Id; 5] = [
    Id::new("cap/h0"),
    Id::new("cap/h1"),
    Id::new("cap/h2"),
    Id::new("cap/h3"),
    Id::new("cap/h4"),
];

/// Records 1,000 distinct values under `id`: more buckets than a table form holds
/// below 2,048 ticks, so its whole-run histogram is a dense one, 16 KiB and more. The
/// ring is prepared first, so it holds its capacity (rings start smaller and grow).
fn spread(id: &Id) {
    latte::collect::prepare(&[id]);
    (0..1_000).for_each(|v| latte::record(id, v));
}

/// Ten records under `id`, in a prepared ring (of the capacity, see [`spread`]).
fn ten(id: &Id) {
    latte::collect::prepare(&[id]);
    (0..10).for_each(|v| latte::record(id, v));
}

/// The rings charged against the cap: what it counts besides the histograms.
fn rings_charged(f: &latte::collect::Footprint) -> u64 {
    f.memory_cap_used - f.histogram_bytes
}

#[test]
fn histogram_bytes_count_against_the_cap_and_leave_less_for_rings() {
    let _one = common::exclusive();
    let base = latte::collect::footprint();
    // The settings stay after the agent stops.
    let set_cap = |cap| {
        latte::builder()
            .sink(std::io::sink())
            .final_report(false)
            .ring_capacity(BIG)
            .memory_cap(cap)
            .start()
            .unwrap()
            .stop()
            .unwrap();
    };
    set_cap(base.memory_cap_used + 16 * BIG_RING);

    // One ring; once a fold has read it, histograms larger than the ring (the id's
    // tally, and its table in the open block of the run's series).
    common::on_named_thread("hist-a", || spread(&HIST[0]));
    let before = latte::collect::footprint(); // hist-a compacted: its ring pooled, still charged
    assert_eq!(before.memory_cap_used, base.memory_cap_used + BIG_RING);
    Report::collect(&ReportOptions::default());
    let after = latte::collect::footprint();
    let grown = after.histogram_bytes - before.histogram_bytes;
    assert!(grown > BIG_RING, "{after:?}");
    assert_eq!(after.memory_cap_used, before.memory_cap_used + grown);

    // Left under the cap: room for two new rings and half of one (the series may
    // close a block meanwhile, a few KiB). With the pooled ring, reused without a new
    // charge, three ids get rings; the fourth new id is refused.
    let cap = after.memory_cap_used + 2 * BIG_RING + BIG_RING / 2;
    set_cap(cap);
    common::on_named_thread("hist-b", || {
        spread(&HIST[1]);
        HIST[2..].iter().for_each(ten);
    });
    let capture = latte::capture();
    let b = capture.thread("hist-b").unwrap();
    for id in &HIST[1..4] {
        assert!(
            b.component(id.name()).is_some(),
            "{} has no ring",
            id.name()
        );
    }
    assert!(b.component("cap/h4").is_none());
    assert_eq!(b.unpaired("cap/h4").over_cap, 10);

    // The next fold makes hist-b's first histograms dense too: with hist-b's three
    // rings pooled, that passes the cap, and pooled rings are freed (newest first)
    // until the total is back under it, and no more.
    let f = latte::collect::footprint();
    assert_eq!(rings_charged(&f), rings_charged(&base) + 3 * BIG_RING);
    Report::collect(&ReportOptions::default());
    let f = latte::collect::footprint();
    assert!(
        f.histogram_bytes - after.histogram_bytes > BIG_RING,
        "{f:?}"
    );
    assert!(f.memory_cap_used <= cap, "{f:?}");
    assert!(
        f.memory_cap_used + BIG_RING > cap,
        "one ring too many freed: {f:?}"
    );
    assert!(
        rings_charged(&f) < rings_charged(&base) + 3 * BIG_RING,
        "{f:?}"
    );
    // The next test's report names the ids refused: not these.
    latte::collect::reset();
}

static GROWN: Id = Id::new("cap/grown");

/// A ring grows on its writer's side while the cap affords it: here from 1,024 slots
/// (8 KiB) to 2,048 (16 KiB more), and the doubling to 4,096 (32 KiB more) is refused,
/// so it keeps 2,048 slots and wraps there; the refusal is counted and named.
#[test]
fn a_growth_past_the_cap_keeps_the_ring_as_it_is_and_is_named() {
    let _one = common::exclusive();
    let used = latte::collect::footprint().memory_cap_used;
    let kept_small = latte::collect::footprint().rings_kept_small;
    let cap = used + 8 * 4096; // room for one ring of 4,096, not for 8 + 16 + 32 KiB
    latte::builder()
        .sink(std::io::sink())
        .final_report(false)
        .ring_capacity(4096)
        .memory_cap(cap)
        .start()
        .unwrap()
        .stop()
        .unwrap();
    common::on_named_thread("cap-grown", || {
        (0..5_000).for_each(|v| latte::record(&GROWN, v));
    });
    let capture = latte::capture();
    let grown = capture
        .thread("cap-grown")
        .unwrap()
        .component("cap/grown")
        .unwrap();
    assert_eq!((grown.seen, grown.capacity), (5_000, 2_048));
    let kept: Vec<u64> = grown.samples.iter().map(|s| s.ticks()).collect();
    assert_eq!(kept, (5_000 - 2_048..5_000).collect::<Vec<_>>());
    assert_eq!(latte::collect::footprint().rings_kept_small, kept_small + 1);
    let mut table = Vec::new();
    Report::collect(&ReportOptions::default())
        .write(&mut table, latte::Format::default())
        .unwrap();
    let text = flat(&String::from_utf8(table).unwrap());
    assert!(
        text.contains("ring kept below its capacity (they wrap sooner); raise Builder::memory_cap")
            || text.contains("rings kept below their capacity"),
        "{text}"
    );
}
