//! The flight recorder's triggers, the fold's observer ([`FoldWatch`]): each run of
//! scope samples the fold hands its tallies is also compared with the thresholds of
//! its component, and a sample above one is noted as a hit for the agent to dump.
//!
//! Three kinds of threshold, in ticks: an absolute one per id (every thread's scopes of
//! that id), a component's own running tail (its whole-run quantile, such as p99.9,
//! once it holds enough samples), and the frame budget (each frame the marks end). A component's tail is taken from its
//! whole-run tally at most every [`TAIL_EVERY`] folds, so the scan stays a compare per
//! sample. Hits wait in a short list (at most [`MAX_HITS`], the slowest kept) until the
//! agent takes them.

use crate::collect::{self, ComponentTotals, FoldWatch, ThreadTotals};
use crate::record::marks::FrameRecord;
use crate::record::{Id, SampleKind};
use std::collections::HashMap;
use std::time::Duration;

/// What makes the agent dump every thread's timeline
/// ([`Builder::dump_when`](crate::Builder::dump_when)). The flight recorder must be on
/// ([`Builder::flight_recorder`](crate::Builder::flight_recorder)).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum DumpTrigger {
    /// A scope of `id`, on any thread, longer than `threshold`.
    Above {
        /// The component.
        id: &'static Id,
        /// The longest scope that does not trigger.
        threshold: Duration,
    },
    /// A scope longer than its own component's running `quantile` (per thread and
    /// call-tree node, over the whole run so far), once the component holds
    /// `min_count` samples. The quantile is read again about every 64 folds.
    Tail {
        /// The quantile, above 0 and below 1: 0.999 for p99.9.
        quantile: f64,
        /// Samples a component needs before its tail triggers.
        min_count: u64,
    },
    /// A frame (from one `latte_frame!()` mark to the thread's next) longer than
    /// [`Builder::frame_budget`](crate::Builder::frame_budget), which must be set.
    FrameOverBudget,
}

/// Triggers are equal when they are the same case with the same values; ids compare
/// by name.
impl PartialEq for DumpTrigger {
    fn eq(&self, other: &DumpTrigger) -> bool {
        use DumpTrigger::{Above, FrameOverBudget, Tail};
        match (self, other) {
            (
                Above {
                    id: a,
                    threshold: x,
                },
                Above {
                    id: b,
                    threshold: y,
                },
            ) => a.name() == b.name() && x == y,
            (
                Tail {
                    quantile: a,
                    min_count: m,
                },
                Tail {
                    quantile: b,
                    min_count: n,
                },
            ) => a.to_bits() == b.to_bits() && m == n,
            (FrameOverBudget, FrameOverBudget) => true,
            _ => false,
        }
    }
}

impl DumpTrigger {
    /// A scope of `id` longer than `threshold`.
    ///
    /// ```
    /// use latte::Id;
    /// use latte::flight::DumpTrigger;
    /// use std::time::Duration;
    /// static ORDER: Id = Id::new("doc_dump_order");
    /// let trigger = DumpTrigger::above(&ORDER, Duration::from_micros(50));
    /// assert!(matches!(trigger, DumpTrigger::Above { .. }));
    /// ```
    pub fn above(id: &'static Id, threshold: Duration) -> DumpTrigger {
        DumpTrigger::Above { id, threshold }
    }

    /// A scope above its component's running `quantile`, after `min_count` samples.
    ///
    /// ```
    /// // Above its own p99.9, once a component has 10,000 samples.
    /// let trigger = latte::flight::DumpTrigger::tail(0.999, 10_000);
    /// assert!(matches!(trigger, latte::flight::DumpTrigger::Tail { .. }));
    /// ```
    pub fn tail(quantile: f64, min_count: u64) -> DumpTrigger {
        DumpTrigger::Tail {
            quantile,
            min_count,
        }
    }

    /// A frame longer than the frame budget: the dump holds every thread's
    /// timeline around it, the frame drawn as the outermost scope of its thread.
    ///
    /// ```
    /// use latte::flight::DumpTrigger;
    /// use std::time::Duration;
    /// let _latte = latte::builder()
    ///     .frame_budget(Duration::from_micros(16_667))
    ///     .flight_recorder(Duration::from_millis(100))
    ///     .dump_when(DumpTrigger::frame_over_budget())
    ///     .final_report(false)
    ///     .start()?;
    /// // Without the budget, start refuses it.
    /// # drop(_latte);
    /// let refused = latte::builder()
    ///     .flight_recorder(Duration::from_millis(100))
    ///     .dump_when(DumpTrigger::frame_over_budget())
    ///     .start();
    /// assert!(refused.is_err());
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn frame_over_budget() -> DumpTrigger {
        DumpTrigger::FrameOverBudget
    }
}

/// Hits kept between two takes; past it the slowest are kept.
pub(crate) const MAX_HITS: usize = 16;
/// Folds between two readings of the components' tails.
const TAIL_EVERY: u32 = 64;

/// A sample above a threshold.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Hit {
    /// The thread's serial.
    pub(crate) serial: u64,
    /// The id's index.
    pub(crate) idx: u32,
    /// The sample's ticks.
    pub(crate) ticks: u64,
    /// The threshold it passed, ticks.
    pub(crate) threshold: u64,
    /// The quantile, when the threshold was the component's tail (else the id's
    /// absolute one).
    pub(crate) tail: Option<f64>,
    /// For a frame over budget (`idx` then 0, `threshold` the budget): its number and
    /// the tick of the mark that ended it.
    pub(crate) frame: Option<(u64, u64)>,
}

/// What the fold compares samples with.
#[derive(Clone, Debug, Default)]
pub(crate) struct Arms {
    /// Per id index, its absolute threshold in ticks.
    pub(crate) above: HashMap<u32, u64>,
    /// The running tail: its quantile and the samples a component needs first.
    pub(crate) tail: Option<(f64, u64)>,
    /// The frame budget, in ticks.
    pub(crate) frame: Option<u64>,
}

/// The armed thresholds and the hits not yet taken.
#[derive(Debug, Default)]
pub(crate) struct Triggers {
    arms: Arms,
    /// Per (thread serial, component position), its tail threshold in ticks.
    tails: HashMap<(u64, usize), u64>,
    folds: u32,
    /// Whether the fold under way refreshes every component's tail.
    due: bool,
    hits: Vec<Hit>,
}

impl Triggers {
    /// Replaces what is armed (the hits and tails so far are dropped).
    pub(crate) fn arm(&mut self, arms: Arms) {
        *self = Triggers {
            arms,
            ..Triggers::default()
        };
    }

    /// Sets the absolute thresholds, per id and of a frame (known once the frequency
    /// is), keeping the rest.
    pub(crate) fn set_absolute(&mut self, above: HashMap<u32, u64>, frame: Option<u64>) {
        self.arms.above = above;
        self.arms.frame = frame;
    }

    /// Whether anything is armed.
    pub(crate) fn armed(&self) -> bool {
        !self.arms.above.is_empty() || self.arms.tail.is_some() || self.arms.frame.is_some()
    }

    /// Compares frame `number` of thread `serial`, `length` ticks long and ended at
    /// tick `end`, with the frame budget.
    pub(crate) fn check_frame(&mut self, serial: u64, number: u64, length: u64, end: u64) {
        if let Some(budget) = self.arms.frame
            && length > budget
        {
            self.note(Hit {
                serial,
                idx: 0,
                ticks: length,
                threshold: budget,
                tail: None,
                frame: Some((number, end)),
            });
        }
    }

    /// At the start of a fold: notes whether it refreshes the components' tails.
    pub(crate) fn begin_fold(&mut self) {
        self.folds = self.folds.wrapping_add(1);
        self.due = self.arms.tail.is_some() && self.folds % TAIL_EVERY == 1;
    }

    /// Takes component `(serial, k)`'s tail threshold from its whole-run totals `c`
    /// when the fold refreshes them, or when it has none yet and has reached the count
    /// it needs.
    pub(crate) fn refresh_tail(&mut self, serial: u64, k: usize, c: &ComponentTotals) {
        let Some((quantile, min_count)) = self.arms.tail else {
            return;
        };
        let first = c.seen >= min_count && !self.tails.contains_key(&(serial, k));
        if !(self.due || first) {
            return;
        }
        if let Some(threshold) = c.scope_quantile(quantile, min_count) {
            self.tails.insert((serial, k), threshold);
        }
    }

    /// Compares a run of `kind` samples of component `(serial, k)`, id `idx`, with its
    /// thresholds (scopes only: the timeline holds scopes).
    #[inline]
    pub(crate) fn check(
        &mut self,
        serial: u64,
        k: usize,
        idx: u32,
        kind: SampleKind,
        ticks: &[u64],
    ) {
        if kind.modes().is_none() || !self.armed() {
            return;
        }
        let Some(&max) = ticks.iter().max() else {
            return;
        };
        let above = self.arms.above.get(&idx).copied().filter(|&t| max > t);
        let tail = self.tails.get(&(serial, k)).copied().filter(|&t| max > t);
        // The absolute threshold first: it is what the user named.
        let (threshold, tail) = match (above, tail) {
            (Some(t), _) => (t, None),
            (None, Some(t)) => (t, self.arms.tail.map(|(q, _)| q)),
            (None, None) => return,
        };
        self.note(Hit {
            serial,
            idx,
            ticks: max,
            threshold,
            tail,
            frame: None,
        });
    }

    fn note(&mut self, hit: Hit) {
        if self.hits.len() == MAX_HITS {
            let (i, least) = self
                .hits
                .iter()
                .enumerate()
                .min_by_key(|(_, h)| h.ticks)
                .expect("MAX_HITS > 0");
            if least.ticks >= hit.ticks {
                return;
            }
            self.hits.swap_remove(i);
        }
        self.hits.push(hit);
    }

    /// The hits since the last take, slowest first.
    pub(crate) fn take(&mut self) -> Vec<Hit> {
        let mut hits = std::mem::take(&mut self.hits);
        hits.sort_by_key(|h| std::cmp::Reverse(h.ticks));
        hits
    }
}

impl FoldWatch for Triggers {
    fn begin_fold(&mut self, _: u64) {
        Triggers::begin_fold(self);
    }

    fn armed(&self) -> bool {
        Triggers::armed(self)
    }

    fn component(&mut self, serial: u64, k: usize, whole: &ComponentTotals) {
        self.refresh_tail(serial, k, whole);
    }

    fn samples(&mut self, serial: u64, k: usize, idx: u32, kind: SampleKind, ticks: &[u64]) {
        self.check(serial, k, idx, kind, ticks);
    }

    fn frames(&mut self, serial: u64, frames: &[FrameRecord], _: Option<&mut ThreadTotals>) {
        for f in frames {
            self.check_frame(serial, f.number, f.length, f.end);
        }
    }
}

/// Arms the triggers (replacing what was armed, its hits and tails dropped): installs
/// them as the fold's observer.
pub(crate) fn arm(arms: Arms) {
    let mut triggers = Triggers::default();
    triggers.arm(arms);
    collect::watch(triggers);
}

/// Sets the armed triggers' absolute thresholds, in ticks: per id index, and the frame
/// budget.
pub(crate) fn set_absolute(above: HashMap<u32, u64>, frame: Option<u64>) {
    collect::with_watch(|t: Option<&mut Triggers>| {
        if let Some(t) = t {
            t.set_absolute(above, frame);
        }
    });
}

/// The samples above a trigger's threshold since the last take, slowest first.
pub(crate) fn take_hits() -> Vec<Hit> {
    collect::with_watch(|t: Option<&mut Triggers>| t.map(Triggers::take).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Mode;

    const SCOPE: SampleKind = SampleKind::Scope {
        start: Mode::Fast,
        stop: Mode::Fast,
    };

    #[test]
    fn a_scope_above_its_ids_threshold_is_a_hit_and_others_are_not() {
        let mut t = Triggers::default();
        t.check(1, 0, 7, SCOPE, &[1_000_000]);
        assert!(t.take().is_empty(), "nothing armed");
        t.arm(Arms {
            above: HashMap::from([(7, 500)]),
            tail: None,
            frame: None,
        });
        t.check(1, 0, 7, SCOPE, &[10, 500, 20]);
        t.check(1, 1, 8, SCOPE, &[10_000]);
        t.check(1, 0, 7, SampleKind::Pulse, &[10_000]);
        assert!(t.take().is_empty(), "at the threshold, another id, a pulse");
        t.check(2, 0, 7, SCOPE, &[10, 501, 900, 20]);
        let hits = t.take();
        assert_eq!(
            hits,
            vec![Hit {
                serial: 2,
                idx: 7,
                ticks: 900,
                threshold: 500,
                tail: None,
                frame: None,
            }]
        );
        assert!(t.take().is_empty(), "taken");
    }

    #[test]
    fn past_the_limit_the_slowest_hits_are_kept() {
        let mut t = Triggers::default();
        t.arm(Arms {
            above: HashMap::from([(1, 0)]),
            tail: None,
            frame: None,
        });
        for ticks in 1..=(MAX_HITS as u64 * 2) {
            t.check(1, 0, 1, SCOPE, &[ticks]);
        }
        let hits: Vec<u64> = t.take().iter().map(|h| h.ticks).collect();
        let want: Vec<u64> = (MAX_HITS as u64 + 1..=MAX_HITS as u64 * 2).rev().collect();
        assert_eq!(hits, want);
    }

    #[test]
    fn a_frame_over_the_budget_is_a_hit_with_its_number_and_end() {
        let mut t = Triggers::default();
        t.check_frame(3, 1, 1_000_000, 5_000_000);
        assert!(t.take().is_empty(), "nothing armed");
        t.set_absolute(HashMap::new(), Some(16_000));
        assert!(t.armed());
        t.check_frame(3, 2, 16_000, 5_016_000);
        assert!(t.take().is_empty(), "at the budget");
        t.check_frame(3, 3, 40_000, 5_056_000);
        assert_eq!(
            t.take(),
            vec![Hit {
                serial: 3,
                idx: 0,
                ticks: 40_000,
                threshold: 16_000,
                tail: None,
                frame: Some((3, 5_056_000)),
            }]
        );
    }
}
