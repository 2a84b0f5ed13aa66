//! Own binary: it lowers glibc's mmap threshold (`mallopt`) for the whole process, for good.
//!
//! `latte::collect::prepare` readies a thread ahead of its hot loop: after it, a loop
//! that fills every ring once takes no page fault. Without it, the same loop does.
//!
//! Page faults are read with `getrusage(RUSAGE_THREAD)`: the calling thread's own
//! minor faults, so other test threads cannot disturb the count. Each test runs its
//! loop on a thread of its own. The loop itself allocates nothing: the ids are made
//! beforehand and the loop only calls latte.
//!
//! Rings of the default size (512 KiB) are above glibc's mmap threshold, so their
//! pages are fresh zero pages that the OS backs only when written. The test's small
//! rings (8 KiB, to stay light) would come from the heap, where `calloc` may clear
//! them with `memset` and so back their pages before `prepare` writes anything; the
//! test lowers the threshold so its rings are mapped like default-sized ones, and
//! the prepared loop's zero faults are `prepare`'s doing (checked: without the page
//! writes in `prepare`, this test sees thousands). Under qemu-user the count also holds
//! the emulator's own faults on the thread, so a few are allowed there
//! (`allowed_faults`).
#![cfg(all(target_os = "linux", target_env = "gnu"))]
#![allow(unsafe_code)] // getrusage

mod common;
use latte::{Id, Mode};

/// Ids per thread.
const IDS: usize = 1_000;
/// Samples per ring (small, so 1,000 prepared rings stay light: 8 MiB).
const CAPACITY: usize = 1_024;

/// Lowers the mmap threshold (once); rings of `CAPACITY` samples until the guard drops.
fn setup() -> common::Exclusive {
    static LOWER_MMAP_THRESHOLD: std::sync::Once = std::sync::Once::new();
    LOWER_MMAP_THRESHOLD.call_once(|| {
        // SAFETY: mallopt only changes a malloc tuning parameter; 4 KiB is valid.
        let ok = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 4096) };
        assert_eq!(ok, 1, "mallopt(M_MMAP_THRESHOLD)");
    });
    common::exclusive_with(|b| b.ring_capacity(CAPACITY))
}

/// `n` fresh ids named `<prefix>_<i>`.
fn ids(prefix: &str, n: usize) -> Vec<&'static Id> {
    (0..n)
        .map(|i| {
            let name: &'static str = Box::leak(format!("{prefix}_{i}").into_boxed_str());
            &*Box::leak(Box::new(Id::new(name)))
        })
        .collect()
}

/// The calling thread's minor page faults so far.
fn minor_faults() -> i64 {
    // SAFETY: `rusage` is plain old data, for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD with a valid pointer to a `rusage` the call may fill.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    assert_eq!(rc, 0, "getrusage(RUSAGE_THREAD)");
    usage.ru_minflt
}

/// Fills every ring of `ids` exactly once: `CAPACITY` samples each, alternately a
/// recorded value and a Start/Stop pair, nested `2` deep every other round so the
/// stack is used too. No allocation: only latte calls on the given ids.
fn hot_loop(ids: &[&'static Id]) {
    hot_rounds(ids, 0..CAPACITY / 2);
}

/// `rounds` of the loop.
#[inline(never)]
fn hot_rounds(ids: &[&'static Id], rounds: std::ops::Range<usize>) {
    for round in rounds {
        for pair in ids.chunks(2) {
            let outer = pair[0];
            latte::record(outer, round as u64);
            latte::start(outer, Mode::Fast);
            if let Some(&inner) = pair.get(1) {
                latte::record(inner, round as u64);
                latte::start(inner, Mode::Fast);
                latte::stop(inner, Mode::Fast);
            }
            latte::stop(outer, Mode::Fast);
        }
    }
}

/// On a new thread `name`: `before(ids, warm)`, a warm-up run of the loop on `warm`
/// (so the loop's own code and stack pages are mapped), then the measured loop on
/// `ids`. Returns the faults the measured loop took and the thread's capture.
fn measure(
    name: &str,
    before: fn(&[&'static Id], &[&'static Id]),
) -> (i64, latte::collect::ThreadCapture) {
    let _rings = setup();
    let (ids, warm) = (ids(name, IDS), ids(&format!("{name}_warm"), 2));
    let faults = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            before(&ids, &warm);
            hot_loop(&warm);
            // One round makes the call-tree paths (`inner` under `outer`): a path is
            // not known before it runs, so `prepare` cannot make it; a path of
            // prepared ids is made whole, with its pages written, when it first runs.
            hot_rounds(&ids, 0..1);
            let start = minor_faults();
            hot_rounds(&ids, 1..CAPACITY / 2);
            minor_faults() - start
        })
        .unwrap()
        .join()
        .unwrap();
    let thread = common::named(&latte::capture(), name)
        .next()
        .cloned()
        .expect("the thread recorded");
    (faults, thread)
}

/// Every id of thread `t` under `prefix` recorded a ring's capacity (at the root, and
/// under its outer id for every other id) and nothing was misused.
fn assert_filled(t: &latte::collect::ThreadCapture, prefix: &str) {
    let mut names: Vec<&str> = t
        .components
        .iter()
        .map(|c| c.name)
        .filter(|n| n.starts_with(&format!("{prefix}_")) && !n.contains("warm"))
        .collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), IDS);
    for name in names {
        let seen: u64 = t
            .components
            .iter()
            .filter(|c| c.name == name)
            .map(|c| c.seen)
            .sum();
        assert_eq!(seen, CAPACITY as u64, "{name}");
    }
    assert_eq!(t.anomalies.total(), 0, "{:?}", t.anomalies);
}

#[test]
fn after_prepare_a_loop_filling_every_ring_takes_no_page_fault() {
    let (faults, t) = measure("prep", |ids, warm| {
        let all: Vec<&Id> = ids.iter().chain(warm).copied().collect();
        latte::collect::prepare(&all);
        // Prepared rings exist and are empty.
        let me = common::mine();
        let prepared: Vec<_> = me
            .components
            .iter()
            .filter(|c| c.name.starts_with("prep_"))
            .collect();
        assert_eq!(prepared.len(), IDS + 2);
        assert!(prepared.iter().all(|c| c.seen == 0 && c.samples.is_empty()));
    });
    let allowed = allowed_faults();
    println!(
        "prepared: {faults} minor faults over {IDS} rings x {CAPACITY} samples (allowed: {allowed})"
    );
    assert_filled(&t, "prep");
    assert!(
        faults <= allowed,
        "{faults} page faults in the prepared hot loop"
    );
}

/// Faults the prepared loop may take: none natively. Under qemu-user the host kernel
/// counts the emulator's own faults on the thread as well (its translation cache and
/// bookkeeping, which grow when the test's other threads run new code): one was seen
/// in a CI run, none in 27 runs on the development machine. A hundredth of a fault
/// per ring is still about a thousandth of what the loop takes there without
/// `prepare` (~9,400).
fn allowed_faults() -> i64 {
    if common::under_qemu() {
        IDS as i64 / 100
    } else {
        0
    }
}

#[test]
fn without_prepare_the_same_loop_faults() {
    let (faults, t) = measure("unprep", |_, _| {});
    println!("not prepared: {faults} minor faults over {IDS} rings x {CAPACITY} samples");
    assert_filled(&t, "unprep");
    // Each ring's slots span 3 pages, two of them first touched inside the loop: 2,000
    // faults, less up to 16 rings' worth that the ring pool recycles (1,941 to 2,000 in
    // 31 runs here). One fresh-clone CI run on 2026-11-27 counted 639, cause not found
    // (the same machine, nothing else running); the claim is that the loop faults where
    // the prepared one does not, so a quarter of a fault per ring is asked.
    assert!(faults >= IDS as i64 / 4, "{faults} faults");
}

#[test]
fn a_prepared_id_never_recorded_has_no_report_row() {
    let _rings = setup();
    static UNUSED: Id = Id::new("prepare_unused");
    static USED: Id = Id::new("prepare_used");
    std::thread::Builder::new()
        .name("prepare-rows".into())
        .spawn(|| {
            latte::collect::prepare(&[&UNUSED, &USED]);
            latte::record(&USED, 5);
        })
        .unwrap()
        .join()
        .unwrap();
    let report = latte::Report::collect(&latte::ReportOptions::default());
    let t = report
        .threads
        .iter()
        .find(|t| t.name == "prepare-rows")
        .unwrap();
    let rows: Vec<&str> = t.rows.iter().map(|r| r.component.as_str()).collect();
    assert_eq!(rows, ["prepare_used"]);
    assert!(
        report
            .all_threads
            .iter()
            .all(|r| r.component != "prepare_unused")
    );
}
