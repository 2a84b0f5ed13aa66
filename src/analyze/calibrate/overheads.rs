//! The instrumentation's own overhead, measured on latte's calibration thread through
//! the code users call: what an empty scope records per mode pair, what a pulse
//! records, and what an empty scope costs the scope around it (see the parent module).

use super::super::stats::quantile;
use super::block_signals;
use crate::clock::Mode;
use crate::collect::{mark_internal_thread, own_samples};
use crate::record::{self, Id};

const BATCHES: usize = 7;
const PER_BATCH: usize = 1_000;
/// Empty scopes inside each parent of the inside-a-parent batches.
const NESTED: usize = 8;

/// What the calibration thread measures, in ticks.
#[derive(Default)]
pub(super) struct Overheads {
    pub(super) scope: [[u64; 3]; 3],
    pub(super) pulse: u64,
    pub(super) inside: [[f64; 3]; 3],
}

/// One id per (start mode, stop mode) pair, named `latte/cal <what> <S><T>`.
macro_rules! per_pair {
    ($what:literal) => {
        [
            [
                Id::new(concat!("latte/cal ", $what, "FF")),
                Id::new(concat!("latte/cal ", $what, "FM")),
                Id::new(concat!("latte/cal ", $what, "FH")),
            ],
            [
                Id::new(concat!("latte/cal ", $what, "MF")),
                Id::new(concat!("latte/cal ", $what, "MM")),
                Id::new(concat!("latte/cal ", $what, "MH")),
            ],
            [
                Id::new(concat!("latte/cal ", $what, "HF")),
                Id::new(concat!("latte/cal ", $what, "HM")),
                Id::new(concat!("latte/cal ", $what, "HH")),
            ],
        ]
    };
}

/// Empty scopes of each pair, then empty scopes holding [`NESTED`] of them.
static PAIRS: [[Id; 3]; 3] = per_pair!("");
static PARENTS: [[Id; 3]; 3] = per_pair!("parent ");
static KIDS: [[Id; 3]; 3] = per_pair!("kid ");
static PULSE: Id = Id::new("latte/cal pulse");

/// A batch of [`PER_BATCH`] empty scopes of a pair.
fn scope_batch(start: Mode, stop: Mode) {
    let id = &PAIRS[start as usize][stop as usize];
    for _ in 0..PER_BATCH {
        record::start(id, start);
        record::stop(id, stop);
    }
}

/// A batch of [`PER_BATCH`] empty scopes of a pair, each holding [`NESTED`] empty
/// scopes of the same pair.
fn nested_batch(start: Mode, stop: Mode) {
    let (s, t) = (start as usize, stop as usize);
    let (parent, kid) = (&PARENTS[s][t], &KIDS[s][t]);
    for _ in 0..PER_BATCH {
        record::start(parent, start);
        for _ in 0..NESTED {
            record::start(kid, start);
            record::stop(kid, stop);
        }
        record::stop(parent, stop);
    }
}

fn pulse_batch() {
    for _ in 0..=PER_BATCH {
        record::pulse(&PULSE);
    }
}

/// Runs on latte's internal calibration thread.
pub(super) fn measure() -> Overheads {
    block_signals();
    mark_internal_thread();
    // Warm-up: first-use paths, caches, predictors.
    for (start, stop) in pairs() {
        scope_batch(start, stop);
        nested_batch(start, stop);
    }
    pulse_batch();
    // Round by round, every pair in each: a slow spell of the machine (a preemption,
    // a busy neighbour on the host) lands in one round of every pair, and the other
    // rounds' medians outvote it, where batches taken pair by pair would give one pair
    // all its batches inside the spell.
    let mut scope = [[u64::MAX; 3]; 3];
    let mut nested = [[u64::MAX; 3]; 3];
    let mut pulse = u64::MAX;
    for _ in 0..BATCHES {
        for (start, stop) in pairs() {
            let (s, t) = (start as usize, stop as usize);
            scope_batch(start, stop);
            scope[s][t] = scope[s][t].min(recent_median(&PAIRS[s][t]));
            nested_batch(start, stop);
            nested[s][t] = nested[s][t].min(recent_median(&PARENTS[s][t]));
        }
        pulse_batch();
        pulse = pulse.min(recent_median(&PULSE));
    }
    let inside = std::array::from_fn(|s| {
        std::array::from_fn(|t| {
            let added = nested[s][t].saturating_sub(scope[s][t]) as f64 / NESTED as f64;
            added.max(scope[s][t] as f64)
        })
    });
    Overheads {
        scope,
        pulse,
        inside,
    }
}

/// Every (start mode, stop mode) pair.
fn pairs() -> impl Iterator<Item = (Mode, Mode)> {
    Mode::ALL
        .into_iter()
        .flat_map(|start| Mode::ALL.into_iter().map(move |stop| (start, stop)))
}

/// The median of the last `PER_BATCH` samples recorded under `id` on this thread.
fn recent_median(id: &Id) -> u64 {
    let samples = own_samples(id);
    let recent = samples.len().saturating_sub(PER_BATCH);
    let mut ticks: Vec<u64> = samples[recent..].iter().map(|s| s.ticks()).collect();
    ticks.sort_unstable();
    quantile(&ticks, 0.5)
}
