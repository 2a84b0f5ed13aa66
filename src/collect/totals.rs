//! The whole run's data as the analysis reads it: per thread, per id, per sample kind,
//! a [`Tally`]; plus how many samples were recorded and lost. Built by the ledger's
//! folds, or from a stored [`Capture`].

use super::parts::Parts;
use super::tally::Tally;
use super::{Capture, Sample, SampleKind};
use crate::config;
use crate::diagnostics::{Anomalies, OpenScopes, Unpaired};
use crate::record::alloc::Allocs;
use crate::record::id;
use crate::record::node::{RingKey, merge_by_path};
use crate::record::registry::MERGED_NAME;
use std::collections::{BTreeMap, HashSet};

/// Every sample of one window (the whole run, or one interval), per thread and id.
#[derive(Clone, Debug, Default)]
pub(crate) struct Totals {
    /// By serial (order of first record); serial 0 is `<exited threads>`.
    pub(crate) threads: BTreeMap<u64, ThreadTotals>,
    /// Records dropped during thread teardown.
    pub(crate) teardown_drops: u64,
    /// Allocations by threads without a recorder (`record/alloc/`), counted so far
    /// (a counter, as `teardown_drops`).
    pub(crate) process_allocs: Allocs,
}

/// One thread's share of [`Totals`].
#[derive(Clone, Debug)]
pub(crate) struct ThreadTotals {
    pub(crate) name: String,
    pub(crate) exited: bool,
    /// The thread's counters (in an interval being accumulated: their values when the
    /// interval began).
    pub(crate) anomalies: Anomalies,
    /// Per id, the scopes that ended without their Stop (in an interval being
    /// accumulated: their values when the interval began).
    pub(crate) unpaired: Vec<(&'static str, Unpaired)>,
    /// The scopes open on the thread when the report is taken: set in the whole run
    /// just before (`Ledger::note_open_scopes`), read from there by every window.
    pub(crate) open: Vec<OpenScopes>,
    /// In order of first record (the order of the thread's rings).
    pub(crate) components: Vec<ComponentTotals>,
    /// What features keep of the thread beside its components (its frames).
    pub(crate) parts: Parts,
    /// Allocations counted while no scope was open on it (folded as samples are:
    /// into the open window).
    pub(crate) outside: Allocs,
    /// Its first allocation in an allocation-free scope (whole run): the node's
    /// position in `components`, and its size.
    pub(crate) breach: Option<(u32, u64)>,
}

impl ThreadTotals {
    /// Whether nothing was folded for the thread: no component, counter or part.
    fn is_empty(&self) -> bool {
        self.components.is_empty()
            && self.anomalies == Anomalies::default()
            && self.unpaired.is_empty()
            && self.parts.is_empty()
            && self.outside.is_empty()
    }

    /// A thread with nothing folded yet.
    pub(crate) fn new(name: String, exited: bool) -> ThreadTotals {
        ThreadTotals {
            name,
            exited,
            anomalies: Anomalies::default(),
            unpaired: Vec::new(),
            open: Vec::new(),
            components: Vec::new(),
            parts: Parts::default(),
            outside: Allocs::default(),
            breach: None,
        }
    }

    /// The thread's flat view: one entry per id, the exact merge of the id's call-tree
    /// nodes (in order of each id's first node), as every per-id figure reads it.
    /// Borrowed when no id has two nodes.
    pub(crate) fn flat(&self) -> std::borrow::Cow<'_, [ComponentTotals]> {
        // By name: a stored capture's ids need not be interned here (index 0).
        let mut ids = HashSet::new();
        if self.components.iter().all(|c| ids.insert(c.name)) {
            return std::borrow::Cow::Borrowed(&self.components);
        }
        let keep = config::slowest();
        let mut flat: Vec<ComponentTotals> = Vec::new();
        for c in &self.components {
            match flat.iter_mut().find(|f| f.name == c.name) {
                Some(f) => f.add(c, keep),
                None => flat.push(ComponentTotals {
                    parent: None,
                    ..c.clone()
                }),
            }
        }
        std::borrow::Cow::Owned(flat)
    }
}

/// One (thread, ring)'s samples: a node of the thread's call tree, or its self times.
#[derive(Clone, Debug)]
pub(crate) struct ComponentTotals {
    /// The id's dense index.
    pub(crate) index: u32,
    pub(crate) name: &'static str,
    /// The call-tree node's parent: its position in `components` (`None` at the
    /// root).
    pub(crate) parent: Option<u32>,
    /// Self time of the `seen` scopes, summed (see `ComponentCapture::self_ticks`).
    pub(crate) self_ticks: u64,
    /// Allocations counted while the node was the innermost open scope (see
    /// `ComponentCapture::allocs`).
    pub(crate) allocs: Allocs,
    /// Samples recorded: folded + lost.
    pub(crate) seen: u64,
    /// Samples overwritten before a fold read them.
    pub(crate) lost: u64,
    /// Folded samples whose Start and Stop ran on different CPUs.
    pub(crate) migrated: u64,
    /// One tally per sample kind, in order of first appearance.
    pub(crate) kinds: Vec<(SampleKind, Tally)>,
    /// The largest samples folded, largest first, at most `config::slowest()`.
    pub(crate) slowest: Vec<Slow>,
}

/// One of the slowest samples of a (thread, id), and when it was recorded: between two
/// folds, so within the drain's pacing (milliseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slow {
    pub(crate) ticks: u64,
    pub(crate) kind: SampleKind,
    /// Wall-clock bounds, milliseconds since the Unix epoch (`not_before` is 0 when
    /// the sample was recorded before the first fold, at an unknown time).
    pub(crate) not_before_ms: u64,
    pub(crate) not_after_ms: u64,
}

impl ComponentTotals {
    pub(crate) fn new(index: u32, name: &'static str) -> ComponentTotals {
        ComponentTotals {
            index,
            name,
            parent: None,
            self_ticks: 0,
            allocs: Allocs::default(),
            seen: 0,
            lost: 0,
            migrated: 0,
            kinds: Vec::new(),
            slowest: Vec::new(),
        }
    }

    /// What the ring recorded.
    pub(crate) fn key(&self) -> RingKey {
        RingKey {
            idx: self.index,
            parent: self.parent,
        }
    }

    /// The `quantile` of its scope samples in ticks (all timer modes together), once
    /// it holds at least `min_count` of them.
    pub(crate) fn scope_quantile(&self, quantile: f64, min_count: u64) -> Option<u64> {
        let mut scopes = self
            .kinds
            .iter()
            .filter(|(k, _)| k.modes().is_some())
            .map(|(_, t)| t.histogram());
        let mut all = scopes.next()?.into_owned();
        for h in scopes {
            all.add(&*h).ok()?;
        }
        (all.len() >= min_count.max(1)).then(|| all.value_at_quantile(quantile))
    }

    /// Keeps `slow` if it is among the `keep` largest so far.
    #[inline]
    pub(crate) fn note_slow(&mut self, slow: Slow, keep: usize) {
        if self.slowest.len() == keep && self.slowest.last().is_none_or(|s| slow.ticks <= s.ticks) {
            return;
        }
        let at = self.slowest.partition_point(|s| s.ticks >= slow.ticks);
        self.slowest.insert(at, slow);
        self.slowest.truncate(keep);
    }

    /// Folds one sample.
    #[inline]
    pub(crate) fn record(&mut self, sample: Sample) {
        let k = self.tally_for(sample.kind());
        self.kinds[k].1.record(sample.ticks());
        self.migrated += u64::from(sample.migrated());
    }

    /// Folds the samples of one ring read, recorded between `when.0` and `when.1`
    /// (milliseconds since the Unix epoch), keeping the `keep` largest; hands each run
    /// of one kind's ticks to `also` too (the series log's open block).
    ///
    /// The fold's per-sample path. A ring's samples come in runs of one kind (most
    /// rings hold one kind only): each run is decoded once and handed to its tally
    /// whole, in blocks that stay in the first-level cache, and a sample is compared
    /// with the slowest kept only when it could join them.
    pub(super) fn fold(
        &mut self,
        words: &[u64],
        keep: usize,
        when: (u64, u64),
        also: &mut impl FnMut(SampleKind, &[u64]),
    ) {
        /// Words per block: 16 KiB, and as much again for their ticks.
        const BLOCK: usize = 2048;
        let mut ticks = [0u64; BLOCK];
        for block in words.chunks(BLOCK) {
            let mut rest = block;
            while let Some(&first) = rest.first() {
                let kind = Sample::from_bits(first).kind();
                let n = self.note_run(rest, kind, keep, when, &mut ticks);
                let k = self.tally_for(kind);
                self.kinds[k].1.record_all(&ticks[..n]);
                also(kind, &ticks[..n]);
                rest = &rest[n..];
            }
        }
    }

    /// Finds how many of `words` are samples of `kind` (of the first), in a row, and
    /// puts their ticks in `ticks`; counts the migrated ones and keeps their slowest.
    /// Returns how many.
    #[inline]
    fn note_run(
        &mut self,
        words: &[u64],
        kind: SampleKind,
        keep: usize,
        when: (u64, u64),
        ticks: &mut [u64],
    ) -> usize {
        let (not_before_ms, not_after_ms) = when;
        let bits = words
            .first()
            .map_or(0, |&w| Sample::from_bits(w).kind_bits());
        let mut floor = slow_floor(&self.slowest, keep);
        let (mut n, mut migrated) = (0, 0);
        for (&w, out) in words.iter().zip(ticks) {
            let sample = Sample::from_bits(w);
            if sample.kind_bits() != bits {
                break;
            }
            n += 1;
            *out = sample.ticks();
            migrated += u64::from(sample.migrated());
            if sample.ticks() >= floor {
                let slow = Slow {
                    ticks: sample.ticks(),
                    kind,
                    not_before_ms,
                    not_after_ms,
                };
                self.note_slow(slow, keep);
                floor = slow_floor(&self.slowest, keep);
            }
        }
        self.migrated += migrated;
        n
    }

    /// The index in `kinds` of `kind`'s tally, made if new.
    fn tally_for(&mut self, kind: SampleKind) -> usize {
        match self.kinds.iter().position(|(k, _)| *k == kind) {
            Some(i) => i,
            None => {
                self.kinds.push((kind, Tally::default()));
                self.kinds.len() - 1
            }
        }
    }

    /// Whether anything was folded into it: samples or allocations.
    pub(crate) fn any(&self) -> bool {
        self.seen > 0 || !self.allocs.is_empty()
    }

    /// Adds everything of `other` (the same id; if it is the same thread, recorded
    /// after this), keeping the `keep` slowest of both.
    pub(super) fn add(&mut self, other: &ComponentTotals, keep: usize) {
        self.seen += other.seen;
        self.self_ticks = self.self_ticks.wrapping_add(other.self_ticks);
        self.allocs = self.allocs.plus(&other.allocs);
        self.lost += other.lost;
        self.migrated += other.migrated;
        for (kind, tally) in &other.kinds {
            match self.kinds.iter_mut().find(|(k, _)| k == kind) {
                Some((_, mine)) => mine.add(tally),
                None => self.kinds.push((*kind, tally.clone())),
            }
        }
        for &slow in &other.slowest {
            self.note_slow(slow, keep);
        }
    }

    /// The same id with nothing in it: its kinds listed, with empty tallies (the
    /// start of a new window).
    pub(super) fn emptied(&self) -> ComponentTotals {
        ComponentTotals {
            kinds: self
                .kinds
                .iter()
                .map(|(kind, _)| (*kind, Tally::default()))
                .collect(),
            parent: self.parent,
            ..ComponentTotals::new(self.index, self.name)
        }
    }

    /// Empties the tallies, keeping their memory (the start of a new interval).
    pub(super) fn clear(&mut self) {
        self.slowest.clear();
        self.seen = 0;
        self.self_ticks = 0;
        self.allocs = Allocs::default();
        self.lost = 0;
        self.migrated = 0;
        for (_, t) in &mut self.kinds {
            t.clear();
        }
    }
}

/// The fewest ticks a sample needs for [`ComponentTotals::note_slow`] to keep it, with
/// `slowest` kept so far: any while fewer than `keep` are kept (or more, after `keep`
/// shrank), none for `keep` 0, else more than the smallest kept.
fn slow_floor(slowest: &[Slow], keep: usize) -> u64 {
    match slowest.last() {
        _ if slowest.len() != keep => 0,
        None => u64::MAX,
        Some(s) => s.ticks + 1,
    }
}

/// The self time of scopes with no scope inside: their ticks, summed (pulses and
/// records have none).
fn own_of(samples: &[Sample]) -> u64 {
    let scope = |s: &&Sample| matches!(s.kind(), SampleKind::Scope { .. });
    samples.iter().filter(scope).map(|s| s.ticks()).sum()
}

impl Totals {
    /// Totals of a stored capture: every retained sample folded, every overwritten one
    /// lost.
    pub(crate) fn from_capture(capture: &Capture) -> Totals {
        let mut totals = Totals {
            teardown_drops: capture.teardown_drops,
            process_allocs: capture.process_allocs.unwrap_or_default(),
            ..Totals::default()
        };
        for t in &capture.threads {
            let components = t
                .components
                .iter()
                .map(|c| {
                    // The id's index in this process, if it has one (a stored capture
                    // may come from elsewhere): it finds the id's declared period.
                    let index = id::lookup(c.name).unwrap_or(0);
                    let mut totals = ComponentTotals::new(index, c.name);
                    totals.parent = c.parent.map(|p| p as u32);
                    totals.self_ticks = c.self_ticks.unwrap_or_else(|| own_of(&c.samples));
                    totals.allocs = c.allocs.unwrap_or_default();
                    totals.seen = c.seen;
                    totals.lost = c.overwritten();
                    let keep = config::slowest();
                    for &s in &c.samples {
                        totals.record(s);
                        let slow = Slow {
                            ticks: s.ticks(),
                            kind: s.kind(),
                            not_before_ms: 0,
                            not_after_ms: 0,
                        };
                        totals.note_slow(slow, keep);
                    }
                    totals
                })
                .collect();
            let thread = ThreadTotals {
                anomalies: t.anomalies,
                unpaired: t.unpaired.iter().map(|f| (f.name, f.counts)).collect(),
                outside: t.outside_allocs.unwrap_or_default(),
                breach: t.alloc_breach.map(|(at, size)| (at as u32, size)),
                components,
                ..ThreadTotals::new(t.name.clone(), t.exited)
            };
            // Serials are unique in a capture taken by latte; a hand-made one may
            // repeat them, so later duplicates get fresh keys past the largest.
            let key = match totals.threads.contains_key(&t.serial) {
                false => t.serial,
                true => totals.threads.keys().last().map_or(0, |k| k + 1),
            };
            totals.threads.insert(key, thread);
        }
        totals
    }

    /// The threads whose name `keep` accepts, with everything they hold.
    pub(crate) fn only_threads(&self, keep: impl Fn(&str) -> bool) -> Totals {
        Totals {
            threads: self
                .threads
                .iter()
                .filter(|(_, t)| keep(&t.name))
                .map(|(serial, t)| (*serial, t.clone()))
                .collect(),
            teardown_drops: self.teardown_drops,
            process_allocs: self.process_allocs,
        }
    }

    /// Merges the entries of exited threads the registry no longer lists into the
    /// `<exited threads>` entry.
    pub(super) fn merge_gone(&mut self, listed: &HashSet<u64>) {
        let gone: Vec<u64> = self
            .threads
            .keys()
            .copied()
            .filter(|s| *s != 0 && !listed.contains(s))
            .collect();
        for serial in gone {
            let t = self.threads.remove(&serial).expect("key just listed");
            if t.is_empty() {
                // Nothing to keep: no `<exited threads>` entry for it (latte's own
                // threads are listed for a moment before they mark themselves
                // internal, and a report then showed an empty merged entry).
                continue;
            }
            let merged = (self.threads.entry(0))
                .or_insert_with(|| ThreadTotals::new(MERGED_NAME.to_owned(), true));
            merged.anomalies = merged.anomalies.plus(&t.anomalies);
            merged.outside = merged.outside.plus(&t.outside);
            // Parts of merged threads are added as one thread's (their frames'
            // lengths and per-id figures stay each frame's own).
            merged.parts.add(&t.parts);
            for (name, counts) in &t.unpaired {
                match merged.unpaired.iter_mut().find(|(n, _)| n == name) {
                    Some((_, mine)) => *mine = mine.plus(counts),
                    None => merged.unpaired.push((name, *counts)),
                }
            }
            let keep = config::slowest();
            merge_by_path(
                &mut merged.components,
                &t.components,
                ComponentTotals::key,
                |c, key| ComponentTotals {
                    parent: key.parent,
                    ..c.clone()
                },
                |f, c| f.add(c, keep),
            );
        }
    }
}
