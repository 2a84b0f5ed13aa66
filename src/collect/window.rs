//! The windows a report covers, cut from the ledger's folds: the whole run (since the
//! start, or since the last [`reset`](super::reset)) and the interval since the
//! previous periodic report.
//!
//! A window being accumulated holds its components' samples and, for the counters
//! that only grow (anomalies, frames ended without their Stop, teardown drops), their
//! values when the window began; what it shows is the increments over those.

use super::ledger::{Ledger, ledger};
use super::totals::{ComponentTotals, ThreadTotals, Totals};
use crate::diagnostics::FrameCounts;
use std::collections::BTreeMap;

/// Folds, then runs `f` on the whole run's totals (since the last reset, if any).
pub(crate) fn whole_run<R>(f: impl FnOnce(&Totals) -> R) -> R {
    let mut ledger = ledger();
    ledger.fold();
    ledger.note_open_scopes();
    match &ledger.since_reset {
        None => f(&ledger.whole),
        Some(base) => {
            let mut base = base.clone();
            f(&increments(&ledger.whole, &mut base, false))
        }
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
        Some(open) => increments(whole, open, true),
        None => {
            let first = match since_reset {
                Some(base) => increments(whole, &mut base.clone(), false),
                None => whole.clone(),
            };
            *interval = Some(starting_now(whole));
            first
        }
    }
}

/// Drops what was recorded so far from the whole run and the open interval: both
/// start again from now. See [`reset`](super::reset).
pub(crate) fn reset() {
    let mut ledger = ledger();
    ledger.fold();
    let fresh = starting_now(&ledger.whole);
    if ledger.interval.is_some() {
        ledger.interval = Some(fresh.clone());
    }
    ledger.since_reset = Some(fresh);
}

/// A window beginning now: `whole`'s threads and components, emptied, with today's
/// counters as its base.
fn starting_now(whole: &Totals) -> Totals {
    let mut next = whole.clone();
    next.threads
        .values_mut()
        .flat_map(|t| &mut t.components)
        .for_each(ComponentTotals::clear);
    next
}

/// What `window` holds beyond its base, per thread (threads with nothing left out).
/// With `advance`, the window then begins again: its components are taken and its
/// base moves to now.
fn increments(whole: &Totals, window: &mut Totals, advance: bool) -> Totals {
    let mut out = Totals {
        threads: BTreeMap::new(),
        teardown_drops: whole.teardown_drops - window.teardown_drops,
    };
    if advance {
        window.teardown_drops = whole.teardown_drops;
    }
    for (serial, t) in &mut window.threads {
        let now = &whole.threads[serial];
        let since = now.anomalies.since(&t.anomalies);
        let frames = frames_since(&now.frames, &t.frames);
        if advance {
            t.anomalies = now.anomalies;
            t.frames.clone_from(&now.frames);
        }
        let components: Vec<ComponentTotals> = t
            .components
            .iter_mut()
            .filter(|c| c.seen > 0)
            .map(|c| {
                let taken = c.clone();
                if advance {
                    c.clear();
                }
                taken
            })
            .collect();
        // A thread with nothing new but a scope open is shown: it may be stuck there.
        let open = now.open.clone();
        if !components.is_empty() || since.total() > 0 || !frames.is_empty() || !open.is_empty() {
            let thread = ThreadTotals {
                name: t.name.clone(),
                exited: t.exited,
                anomalies: since,
                frames,
                open,
                components,
            };
            out.threads.insert(*serial, thread);
        }
    }
    out
}

/// Per id, the frame counts gained since `base` (ids with none left out).
fn frames_since(
    now: &[(&'static str, FrameCounts)],
    base: &[(&'static str, FrameCounts)],
) -> Vec<(&'static str, FrameCounts)> {
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
