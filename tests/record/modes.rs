//! Timer modes: every start x stop pair is reachable and travels with the sample, and
//! a scope that moved between CPUs is flagged when both ends know the CPU.

use crate::common::{self, my_samples};
use latte::collect::SampleKind;
use latte::{Id, Mode, clock};

#[test]
fn every_start_stop_pair_is_recorded_with_its_modes() {
    let _shared = common::shared();
    static PAIRS: Id = Id::new("mode_pairs");
    for start in Mode::ALL {
        for stop in Mode::ALL {
            latte::start(&PAIRS, start);
            latte::stop(&PAIRS, stop);
        }
    }
    let kinds: Vec<SampleKind> = my_samples("mode_pairs").iter().map(|s| s.kind()).collect();
    let expected: Vec<SampleKind> = Mode::ALL
        .iter()
        .flat_map(|&start| {
            Mode::ALL
                .iter()
                .map(move |&stop| SampleKind::Scope { start, stop })
        })
        .collect();
    assert_eq!(kinds, expected);
}

#[test]
fn macros_reach_every_mode() {
    let _shared = common::shared();
    latte::latte_start!("mode_macro", Hard);
    latte::latte_stop!("mode_macro", Fast);
    latte::latte_start!("mode_macro", Fast);
    latte::latte_stop!("mode_macro", Mid);
    {
        let _s = latte::latte_scope!("mode_macro", Mid, Hard);
    }
    let kinds: Vec<SampleKind> = my_samples("mode_macro").iter().map(|s| s.kind()).collect();
    use Mode::*;
    assert_eq!(
        kinds,
        [
            SampleKind::Scope {
                start: Hard,
                stop: Fast
            },
            SampleKind::Scope {
                start: Fast,
                stop: Mid
            },
            SampleKind::Scope {
                start: Mid,
                stop: Hard
            },
        ]
    );
}

/// Pins the calling thread to `core` and returns the CPU id RDTSCP then reports.
fn pin(core: core_affinity::CoreId) -> Option<u32> {
    core_affinity::set_for_current(core).then(|| clock::read(Mode::Mid).cpu)
}

#[test]
fn a_scope_that_changed_cpu_is_flagged_in_mid_and_hard_only() {
    let _shared = common::shared();
    if clock::source() != clock::Source::Tsc {
        return; // only RDTSCP reports the CPU
    }
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    assert!(
        cores.len() >= 2,
        "this test needs two cores to move between"
    );
    let (a, b) = (cores[0], cores[1]);
    static MOVED: Id = Id::new("mode_moved");
    // (start, stop, pin between?) -> expected flag
    let cases = [
        (Mode::Mid, Mode::Mid, true, true),
        (Mode::Hard, Mode::Mid, true, true),
        (Mode::Mid, Mode::Hard, false, false),
        (Mode::Fast, Mode::Hard, true, false), // Fast start does not know its CPU
        (Mode::Hard, Mode::Fast, true, false), // Fast stop does not know its CPU
    ];
    for (start, stop, hop, _) in cases {
        let cpu_a = pin(a).expect("pinning to core a");
        latte::start(&MOVED, start);
        if hop {
            let cpu_b = pin(b).expect("pinning to core b");
            assert_ne!(cpu_a, cpu_b, "RDTSCP reports the CPU");
        }
        latte::stop(&MOVED, stop);
    }
    let flags: Vec<bool> = my_samples("mode_moved")
        .iter()
        .map(|s| s.migrated())
        .collect();
    let expected: Vec<bool> = cases.iter().map(|c| c.3).collect();
    assert_eq!(flags, expected);
}
