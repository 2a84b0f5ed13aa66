//! The per-thread stack: nesting, LIFO pairing and every counted misuse.

use crate::common::{self, mine, my_component};
use latte::collect::SampleKind;
use latte::{Id, Mode, latte_start, latte_stop};

#[test]
fn nested_scopes_pair_lifo() {
    let _shared = common::shared();
    latte_start!("nest_outer");
    latte_start!("nest_inner", Mid);
    for _ in 0..3 {
        latte_start!("nest_leaf", Hard);
        std::hint::black_box(0);
        latte_stop!("nest_leaf", Hard);
    }
    latte_stop!("nest_inner", Mid);
    latte_stop!("nest_outer");

    let me = mine();
    let count = |id| me.component(id).map_or(0, |c| c.samples.len());
    assert_eq!(
        (count("nest_outer"), count("nest_inner"), count("nest_leaf")),
        (1, 1, 3)
    );
    let ticks = |id| me.component(id).unwrap().samples[0].ticks();
    // Each scope contains the ones it encloses.
    assert!(ticks("nest_outer") >= ticks("nest_inner"));
    let leaves: u64 = me
        .component("nest_leaf")
        .unwrap()
        .samples
        .iter()
        .map(|s| s.ticks())
        .sum();
    assert!(ticks("nest_inner") >= leaves);
    assert_eq!(
        me.component("nest_inner").unwrap().samples[0].kind(),
        SampleKind::Scope {
            start: Mode::Mid,
            stop: Mode::Mid
        }
    );
    assert_eq!(me.anomalies.total(), 0, "{:?}", me.anomalies);
}

#[test]
fn sixty_fifth_start_gives_up_the_oldest_frame_while_the_rest_pair() {
    let _shared = common::shared();
    // Default depth is 64: open 65 distinct scopes, then close them in LIFO order.
    let ids: Vec<&'static Id> = (0..65)
        .map(|i| {
            &*Box::leak(Box::new(Id::new(Box::leak(
                format!("deep_{i}").into_boxed_str(),
            ))))
        })
        .collect();
    for id in &ids {
        latte::start(id, Mode::Fast);
    }
    for id in ids.iter().rev() {
        latte::stop(id, Mode::Fast);
    }
    let me = mine();
    // The 65th Start took the place of the oldest frame, deep_0; its Stop was absorbed.
    for (i, id) in ids.iter().enumerate() {
        let n = me.component(id.name()).map_or(0, |c| c.samples.len());
        assert_eq!(n, usize::from(i > 0), "{}", id.name());
    }
    assert_eq!(me.anomalies.abandoned_scopes, 1);
    assert_eq!(me.anomalies.total(), 1, "{:?}", me.anomalies);
    assert_eq!(me.unpaired("deep_0").abandoned, 1);
    assert_eq!(me.unpaired.len(), 1, "{:?}", me.unpaired);

    // The stack is empty again: a new pair works and nothing else was counted.
    latte_start!("deep_after");
    latte_stop!("deep_after");
    assert_eq!(my_component("deep_after").unwrap().samples.len(), 1);
    assert_eq!(mine().anomalies.total(), 1);
}

#[test]
fn stop_on_empty_stack_is_counted() {
    let _shared = common::shared();
    latte_stop!("empty_stop");
    latte_stop!("empty_stop", Hard);
    let me = mine();
    assert_eq!(me.anomalies.empty_stops, 2);
    assert!(me.component("empty_stop").is_none());
    // And recording still works afterwards.
    latte_start!("empty_after");
    latte_stop!("empty_after");
    assert_eq!(my_component("empty_after").unwrap().samples.len(), 1);
}

fn spin(d: std::time::Duration) {
    let t = std::time::Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

#[test]
fn missed_stop_recovers_the_right_component_and_counts_orphans() {
    let _shared = common::shared();
    latte_start!("mm_outer");
    latte_start!("mm_a");
    latte_start!("mm_probe"); // closed inside mm_a, before the orphans open
    spin(std::time::Duration::from_millis(2));
    latte_stop!("mm_probe");
    latte_start!("mm_b"); // never stopped
    latte_start!("mm_c"); // never stopped
    latte_stop!("mm_a"); // top is mm_c: search down, drop mm_c and mm_b
    latte_stop!("mm_outer"); // pairs normally: the orphans are gone

    let me = mine();
    assert_eq!(me.anomalies.orphaned_scopes, 2);
    assert_eq!(me.anomalies.total(), 2, "{:?}", me.anomalies);
    for orphan in ["mm_b", "mm_c"] {
        assert_eq!(me.unpaired(orphan).orphaned, 1, "{orphan}");
    }
    // Their Starts made their nodes; no sample was stored.
    assert!(me.samples("mm_b").is_empty() && me.samples("mm_c").is_empty());
    let t = |id| {
        let c = me.component(id).unwrap();
        assert_eq!(c.samples.len(), 1, "{id}");
        c.samples[0].ticks()
    };
    // Containment on one thread's counter, no timing assumption: mm_a's true span
    // contains mm_probe's. A blind pop (the C++ behaviour) would record mm_c's span,
    // from mm_c's Start to the Stop, which does not contain the probe's 2 ms spin.
    assert!(
        t("mm_a") >= t("mm_probe"),
        "mm_a {} < probe {}",
        t("mm_a"),
        t("mm_probe")
    );
    assert!(t("mm_probe") > 0);
    assert!(t("mm_outer") >= t("mm_a"));
}

#[test]
fn stop_of_an_id_that_is_not_open_changes_nothing() {
    let _shared = common::shared();
    latte_start!("um_open");
    latte_stop!("um_never_started");
    latte_stop!("um_open");
    let me = mine();
    assert_eq!(me.anomalies.unmatched_stops, 1);
    assert_eq!(me.anomalies.orphaned_scopes, 0);
    assert_eq!(me.component("um_open").unwrap().samples.len(), 1);
}

#[test]
fn same_id_recursion_pairs_innermost_first() {
    let _shared = common::shared();
    fn recurse(n: u32) {
        latte_start!("recursive");
        if n > 0 {
            recurse(n - 1);
        }
        latte_stop!("recursive");
    }
    recurse(4);
    // One call-tree node per level, outermost first: durations shrink inwards.
    let samples = mine().samples("recursive");
    assert_eq!(samples.len(), 5);
    let t: Vec<u64> = samples.iter().map(|s| s.ticks()).collect();
    assert!(t.windows(2).all(|w| w[0] >= w[1]), "{t:?}");
}

#[test]
fn scopes_left_open_at_thread_exit_are_counted() {
    let _shared = common::shared();
    std::thread::Builder::new()
        .name("open_at_exit".into())
        .spawn(|| {
            latte_start!("oae_outer");
            latte_start!("oae_inner");
            latte_start!("oae_done");
            latte_stop!("oae_done");
        })
        .unwrap()
        .join()
        .unwrap();
    let capture = latte::capture();
    let t = capture.thread("open_at_exit").unwrap();
    assert!(t.exited);
    assert_eq!(t.anomalies.open_at_exit, 2);
    for open in ["oae_outer", "oae_inner"] {
        assert_eq!(t.unpaired(open).open_at_exit, 1, "{open}");
    }
    assert_eq!(t.unpaired.len(), 2);
    assert_eq!(t.component("oae_done").unwrap().samples.len(), 1);
}

#[test]
fn scope_guard_closes_on_every_path() {
    let _shared = common::shared();
    fn work(fail: bool) -> Result<u32, &'static str> {
        let _scope = latte::latte_scope!("guard_paths", Fast, Hard);
        if fail {
            return Err("early");
        }
        Ok(1)
    }
    let _ = work(true);
    let _ = work(false);
    let unwound = std::panic::catch_unwind(|| {
        let _scope = latte::latte_scope!("guard_paths", Fast, Hard);
        panic!("unwinding through a guard");
    });
    assert!(unwound.is_err());
    let c = my_component("guard_paths").unwrap();
    assert_eq!(c.samples.len(), 3);
    assert!(c.samples.iter().all(|s| s.kind()
        == SampleKind::Scope {
            start: Mode::Fast,
            stop: Mode::Hard
        }));
    assert_eq!(mine().anomalies.total(), 0);
}
