//! The windows a report covers, cut from the ledger's folds: the whole run (since the
//! start, or since the last [`reset`](super::reset)) and the interval since the
//! previous periodic report.
//!
//! Each sample is folded into one window only (`ledger.rs`): the open interval once
//! there is one, else the whole run. The whole run a report shows is the ledger's
//! `whole` plus the open interval, added up here when a report asks; ending an
//! interval moves its samples into `whole`. A window being accumulated holds its
//! components' samples and, for the counters that only grow (anomalies, scopes ended
//! without their Stop, teardown drops), their values when the window began; what it
//! shows is the increments over those.
//!
//! The fold's observers go with the whole run; an interval has none.

use super::ledger::{Ledger, ledger};
use super::totals::{ComponentTotals, ThreadTotals, Totals};
use super::watch::{self, Watches};
use crate::config;
use crate::diagnostics::Unpaired;
use std::collections::BTreeMap;

/// Folds, then runs `f` on the whole run's totals (since the last reset, if any) and
/// the fold's observers.
pub(crate) fn whole_run<R>(f: impl FnOnce(&Totals, &Watches) -> R) -> R {
    let mut ledger = ledger();
    ledger.fold();
    ledger.note_open_scopes();
    let Ledger {
        whole,
        interval,
        since_reset,
        watches,
        ..
    } = &*ledger;
    match (interval, since_reset) {
        // Every sample went into `whole`, and every counter counts from the start.
        (None, None) => f(whole, watches),
        (interval, since_reset) => f(
            &run(whole, interval.as_ref(), since_reset.as_ref()),
            watches,
        ),
    }
}

/// Folds, then hands out what was recorded since the previous call (the first call:
/// the whole run so far) and begins a new interval. Components with nothing new are
/// left out; anomaly counters are the increments over the interval.
pub(crate) fn take_interval() -> Totals {
    let mut ledger = ledger();
    ledger.fold();
    ledger.note_open_scopes();
    let Ledger {
        whole,
        interval,
        since_reset,
        ..
    } = &mut *ledger;
    match interval {
        Some(open) => {
            let taken = increments(whole, open, open);
            settle(whole, open);
            rebase(open, whole);
            // Settling may have grown the whole run's tallies.
            ledger.publish_size();
            taken
        }
        None => {
            let first = run(whole, None, since_reset.as_ref());
            *interval = Some(starting_now(whole));
            first
        }
    }
}

/// Drops what was recorded so far from the whole run and the open interval, and tells
/// the fold's observers: all start again from now, emptied in place. See [`reset`](super::reset).
pub(crate) fn reset() {
    let mut ledger = ledger();
    ledger.fold();
    let Ledger {
        whole,
        interval,
        since_reset,
        watches,
        ..
    } = &mut *ledger;
    watches.reset(watch::clock_ms(std::time::Instant::now()));
    for window in std::iter::once(&mut *whole).chain(interval.as_mut()) {
        window.threads.values_mut().for_each(|t| {
            t.components.iter_mut().for_each(ComponentTotals::clear);
            t.parts.clear();
        });
    }
    if let Some(open) = interval {
        rebase(open, whole);
    }
    *since_reset = Some(counters(whole));
}

/// The whole run a report shows: `whole`'s samples plus the open interval's, and
/// the counters as they are now, or, after a reset, their increments since
/// (`since_reset`: threads and components with nothing since are then left out).
fn run(whole: &Totals, interval: Option<&Totals>, since_reset: Option<&Totals>) -> Totals {
    let mut run = whole.clone();
    if let Some(open) = interval {
        settle(&mut run, open);
    }
    match since_reset {
        None => run,
        Some(base) => increments(&run, base, &run),
    }
}

/// Adds the open interval's samples to `whole`'s (they were recorded after them).
fn settle(whole: &mut Totals, open: &Totals) {
    let keep = config::slowest();
    for (serial, t) in &open.threads {
        let mine = &mut whole
            .threads
            .get_mut(serial)
            .expect("the interval's threads are the whole run's")
            .components;
        for (k, c) in t.components.iter().enumerate().filter(|(_, c)| c.any()) {
            mine[k].add(c, keep);
        }
        let whole = whole.threads.get_mut(serial).expect("listed above");
        whole.parts.add(&t.parts);
        whole.outside = whole.outside.plus(&t.outside);
    }
}

/// Begins `window` again from now: its samples emptied (their memory kept), its
/// counters' values taken from `now`.
fn rebase(window: &mut Totals, now: &Totals) {
    window.teardown_drops = now.teardown_drops;
    window.process_allocs = now.process_allocs;
    for (serial, t) in &mut window.threads {
        let now = &now.threads[serial];
        t.anomalies = now.anomalies;
        t.unpaired.clone_from(&now.unpaired);
        t.components
            .iter_mut()
            .filter(|c| c.any())
            .for_each(ComponentTotals::clear);
        t.parts.clear();
        t.outside = Default::default();
    }
}

/// A window beginning now: `whole`'s threads and components, with nothing in them,
/// and today's counters as its base.
fn starting_now(whole: &Totals) -> Totals {
    let mut next = counters(whole);
    for (serial, t) in &mut next.threads {
        t.components = whole.threads[serial]
            .components
            .iter()
            .map(ComponentTotals::emptied)
            .collect();
    }
    next
}

/// `now`'s threads and their counters, without components.
fn counters(now: &Totals) -> Totals {
    let threads = now
        .threads
        .iter()
        .map(|(serial, t)| {
            let t = ThreadTotals {
                anomalies: t.anomalies,
                unpaired: t.unpaired.clone(),
                breach: t.breach,
                ..ThreadTotals::new(t.name.clone(), t.exited)
            };
            (*serial, t)
        })
        .collect();
    Totals {
        threads,
        teardown_drops: now.teardown_drops,
        process_allocs: now.process_allocs,
    }
}

/// What a window shows, per thread: the components of `samples` (a thread only if
/// one has anything seen, or something else to show), and the counters' increments from `base` to `now` (threads with nothing to show
/// left out). `base` and `samples` have the threads of `now`.
fn increments(now: &Totals, base: &Totals, samples: &Totals) -> Totals {
    let mut out = Totals {
        threads: BTreeMap::new(),
        teardown_drops: now.teardown_drops - base.teardown_drops,
        process_allocs: now.process_allocs.since(&base.process_allocs),
    };
    for (serial, t) in &samples.threads {
        let (now, base) = (&now.threads[serial], &base.threads[serial]);
        let since = now.anomalies.since(&base.anomalies);
        let unpaired = unpaired_since(&now.unpaired, &base.unpaired);
        // Every component, those with nothing seen too: a call-tree node names its
        // parent by its place in the list (rows leave the empty ones out).
        let components = t.components.clone();
        let any = components.iter().any(ComponentTotals::any) || !t.outside.is_empty();
        // A thread with nothing new but a scope open is shown: it may be stuck there.
        let open = now.open.clone();
        let parts = t.parts.clone();
        let any = any || !parts.is_empty();
        if any || since.total() > 0 || !unpaired.is_empty() || !open.is_empty() {
            let thread = ThreadTotals {
                name: t.name.clone(),
                exited: t.exited,
                anomalies: since,
                unpaired,
                open,
                components,
                parts,
                outside: t.outside,
                breach: now.breach.filter(|_| since.alloc_breaches > 0),
            };
            out.threads.insert(*serial, thread);
        }
    }
    out
}

/// Per id, the unpaired counts gained since `base` (ids with none left out).
fn unpaired_since(
    now: &[(&'static str, Unpaired)],
    base: &[(&'static str, Unpaired)],
) -> Vec<(&'static str, Unpaired)> {
    now.iter()
        .map(|(name, c)| {
            let before = base
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, b)| *b)
                .unwrap_or_default();
            (*name, c.since(&before))
        })
        .filter(|(_, c)| c.total() > 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Mode;
    use crate::collect::{Sample, SampleKind};
    use std::collections::HashSet;

    /// One thread (serial 1) with one component holding nothing yet.
    fn one_component() -> Totals {
        let thread = ThreadTotals {
            components: vec![ComponentTotals::new(0, "c")],
            ..ThreadTotals::new("t".to_owned(), false)
        };
        Totals {
            process_allocs: Default::default(),
            threads: BTreeMap::from([(1, thread)]),
            teardown_drops: 0,
        }
    }

    fn component(t: &mut Totals) -> &mut ComponentTotals {
        &mut t.threads.get_mut(&1).unwrap().components[0]
    }

    /// A gone thread with something folded is merged into `<exited threads>`; one
    /// with nothing (latte's own thread, seen for a moment before it marked itself
    /// internal) leaves no entry at all.
    #[test]
    fn gone_threads_merge_unless_empty() {
        let mut totals = one_component();
        totals
            .threads
            .insert(2, ThreadTotals::new("latte-calibration".to_owned(), false));
        totals.merge_gone(&HashSet::from([1]));
        assert_eq!(totals.threads.keys().copied().collect::<Vec<_>>(), [1]);
        component(&mut totals).fold(&words(10), config::slowest(), (1, 2), &mut |_, _| {});
        totals.merge_gone(&HashSet::new());
        assert_eq!(totals.threads.keys().copied().collect::<Vec<_>>(), [0]);
        let merged = &totals.threads[&0];
        assert_eq!(merged.name, crate::record::registry::MERGED_NAME);
        assert_eq!(merged.components.len(), 1);
    }

    /// Seeded sample words of three kinds, some migrated.
    fn words(n: u64) -> Vec<u64> {
        let kinds = [
            SampleKind::Pulse,
            SampleKind::Recorded,
            SampleKind::Scope {
                start: Mode::Mid,
                stop: Mode::Hard,
            },
        ];
        let mut x = 7u64;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let ticks = match (x >> 60) % 4 {
                    0 => (x >> 20) % 100_000_000,
                    _ => 2_600 + 26 * ((x >> 30) % 40),
                };
                let kind = kinds[((x >> 40) % 3) as usize];
                Sample::new(ticks, kind, i % 7 == 0).unwrap().to_bits()
            })
            .collect()
    }

    #[test]
    fn the_whole_run_is_the_same_however_intervals_cut_it() {
        let all = words(20_000);
        let keep = config::slowest();
        let mut one = one_component();
        component(&mut one).fold(&all, keep, (1, 2), &mut |_, _| {});
        component(&mut one).seen = all.len() as u64;
        // Folded into `whole` until the first interval, then into the open interval,
        // settled at each cut.
        let mut whole = one_component();
        let mut open: Option<Totals> = None;
        for (i, chunk) in all.chunks(3_001).enumerate() {
            let window = open.as_mut().unwrap_or(&mut whole);
            component(window).fold(chunk, keep, (1, 2), &mut |_, _| {});
            component(window).seen += chunk.len() as u64;
            match (&mut open, i % 2) {
                (None, 1) => open = Some(starting_now(&whole)),
                (Some(o), 1) => {
                    settle(&mut whole, o);
                    rebase(o, &whole);
                }
                _ => {}
            }
        }
        let mut shown = run(&whole, open.as_ref(), None);
        let (got, want) = (component(&mut shown).clone(), component(&mut one).clone());
        assert_eq!(
            (got.seen, got.lost, got.migrated),
            (want.seen, 0, want.migrated)
        );
        assert_eq!(got.slowest, want.slowest);
        assert_eq!(got.kinds.len(), want.kinds.len());
        for ((k1, t1), (k2, t2)) in got.kinds.iter().zip(&want.kinds) {
            assert_eq!(k1, k2, "kinds in order of first appearance");
            assert_eq!(t1.exact, t2.exact);
            assert!(*t1.histogram() == *t2.histogram(), "{k1:?}");
        }
    }
}
