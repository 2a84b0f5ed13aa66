//! Threads: isolation, exited threads, identity across call sites.

use crate::common::{self, mine, named};
use latte::Id;

#[test]
fn two_threads_never_see_each_others_samples() {
    let _shared = common::shared();
    static SHARED: Id = Id::new("iso_shared");
    let run = |name: &str, base: u64| {
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || (0..500).for_each(|i| latte::record(&SHARED, base + i)))
            .unwrap()
    };
    let (a, b) = (run("iso_a", 0), run("iso_b", 1_000_000));
    a.join().unwrap();
    b.join().unwrap();
    let capture = latte::capture();
    for (name, base) in [("iso_a", 0), ("iso_b", 1_000_000)] {
        let t = capture.thread(name).unwrap();
        let got: Vec<u64> = t
            .component("iso_shared")
            .unwrap()
            .samples
            .iter()
            .map(|s| s.ticks())
            .collect();
        assert_eq!(got, (base..base + 500).collect::<Vec<_>>(), "{name}");
    }
    // Scopes too: a Start on one thread is not closed by a Stop on another.
    std::thread::Builder::new()
        .name("iso_starter".into())
        .spawn(|| latte::latte_start!("iso_scope"))
        .unwrap()
        .join()
        .unwrap();
    latte::latte_stop!("iso_scope");
    assert_eq!(mine().anomalies.empty_stops, 1);
    assert!(mine().component("iso_scope").is_none());
}

#[test]
fn samples_survive_their_threads_exit_under_its_name() {
    let _shared = common::shared();
    for round in 0..3 {
        std::thread::Builder::new()
            .name("exiting_worker".into())
            .spawn(move || {
                for _ in 0..=round {
                    latte::latte_start!("survivor");
                    latte::latte_stop!("survivor");
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }
    let capture = latte::capture();
    let workers: Vec<_> = named(&capture, "exiting_worker").collect();
    assert_eq!(workers.len(), 3);
    let mut counts: Vec<usize> = workers
        .iter()
        .map(|t| {
            assert!(t.exited);
            t.component("survivor").unwrap().samples.len()
        })
        .collect();
    counts.sort();
    assert_eq!(counts, [1, 2, 3]);
    assert_eq!(latte::snapshot("survivor").len(), 6);
}

#[test]
fn unnamed_threads_get_a_stable_name() {
    let _shared = common::shared();
    std::thread::spawn(|| latte::latte_pulse!("unnamed_pulse"))
        .join()
        .unwrap();
    std::thread::spawn(|| latte::record(&Id::new("unnamed_rec"), 5))
        .join()
        .unwrap();
    let capture = latte::capture();
    let t = capture
        .threads
        .iter()
        .find(|t| t.component("unnamed_rec").is_some())
        .unwrap();
    assert_eq!(t.name, format!("thread-{}", t.serial));
}

#[test]
fn same_text_at_different_addresses_is_one_component() {
    let _shared = common::shared();
    // Three call sites, three statics; one of them with a heap-built copy of the text.
    fn site_a() {
        latte::latte_start!("same_text");
        latte::latte_stop!("same_text");
    }
    fn site_b() {
        let _g = latte::latte_scope!("same_text", Mid);
    }
    let copy: &'static str = Box::leak(String::from("same_text").into_boxed_str());
    let dynamic: &'static Id = Box::leak(Box::new(Id::new(copy)));
    assert_ne!(copy.as_ptr(), "same_text".as_ptr());
    site_a();
    site_b();
    latte::start(dynamic, latte::Mode::Fast);
    latte::stop(dynamic, latte::Mode::Fast);
    // A Start at one site is closed by a Stop at another with the same text.
    latte::latte_start!("same_text");
    latte::stop(dynamic, latte::Mode::Fast);

    let me = mine();
    let same: Vec<_> = me
        .components
        .iter()
        .filter(|c| c.name == "same_text")
        .collect();
    assert_eq!(same.len(), 1);
    assert_eq!(same[0].samples.len(), 4);
    assert_eq!(me.anomalies.total(), 0);
}
