//! The fold's observer: a feature that wants to see the samples as the fold reads
//! them (the flight recorder's triggers) implements [`FoldWatch`], and the agent
//! installs it with [`watch_folds`]. The fold calls it under the ledger's lock, once
//! per run of samples it hands a tally, once per frame the marks ended, and once at the
//! start of each fold; it names no feature.

use super::ledger::ledger;
use super::totals::ComponentTotals;
use crate::record::SampleKind;
use std::any::Any;

/// What the fold tells an observer. Every method runs on the folding thread, under the
/// ledger's lock: it must be short and must not call back into `collect`.
pub(crate) trait FoldWatch: Any + Send {
    /// A fold begins.
    fn begin_fold(&mut self);
    /// Whether it wants the calls below at all (checked before each).
    fn armed(&self) -> bool;
    /// Component `k` of thread `serial` is about to be folded; `whole` is its
    /// whole-run totals so far.
    fn component(&mut self, serial: u64, k: usize, whole: &ComponentTotals);
    /// A run of `kind` samples (ticks) of that component, id index `idx`.
    fn samples(&mut self, serial: u64, k: usize, idx: u32, kind: SampleKind, ticks: &[u64]);
    /// Frame `number` of thread `serial` ended at tick `end`, `length` ticks long.
    fn frame(&mut self, serial: u64, number: u64, length: u64, end: u64);
}

/// Installs `watch` as the fold's observer (replacing any), or removes it.
pub(crate) fn watch_folds(watch: Option<Box<dyn FoldWatch>>) {
    ledger().watch = watch;
}

/// Runs `f` on the installed observer if it is a `W`, under the ledger's lock.
pub(crate) fn with_watch<W: FoldWatch, R>(f: impl FnOnce(Option<&mut W>) -> R) -> R {
    let mut ledger = ledger();
    let watch = ledger.watch.as_mut().and_then(|w| {
        let any: &mut dyn Any = w.as_mut();
        any.downcast_mut::<W>()
    });
    f(watch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Id;

    /// Counts what the fold shows it.
    #[derive(Default)]
    struct Count {
        folds: u32,
        samples: usize,
        ours: usize,
    }

    impl FoldWatch for Count {
        fn begin_fold(&mut self) {
            self.folds += 1;
        }
        fn armed(&self) -> bool {
            true
        }
        fn component(&mut self, _: u64, _: usize, _: &ComponentTotals) {}
        fn samples(&mut self, _: u64, _: usize, idx: u32, _: SampleKind, ticks: &[u64]) {
            self.samples += ticks.len();
            if idx == OURS.index() {
                self.ours += ticks.len();
            }
        }
        fn frame(&mut self, _: u64, _: u64, _: u64, _: u64) {}
    }

    /// Another observer type, which the installed one is not.
    struct Other;
    impl FoldWatch for Other {
        fn begin_fold(&mut self) {}
        fn armed(&self) -> bool {
            false
        }
        fn component(&mut self, _: u64, _: usize, _: &ComponentTotals) {}
        fn samples(&mut self, _: u64, _: usize, _: u32, _: SampleKind, _: &[u64]) {}
        fn frame(&mut self, _: u64, _: u64, _: u64, _: u64) {}
    }

    static OURS: Id = Id::new("collect_watch_test");

    #[test]
    fn the_fold_shows_its_observer_every_fold_and_sample_and_only_its_own_type_reaches_it() {
        watch_folds(Some(Box::new(Count::default())));
        std::thread::spawn(|| (1..=5).for_each(|v| crate::record::record(&OURS, v)))
            .join()
            .unwrap();
        crate::collect::fold();
        let (folds, ours) = with_watch(|c: Option<&mut Count>| {
            let c = c.expect("the installed observer is a Count");
            (c.folds, c.ours)
        });
        // Other tests of this binary may fold and record meanwhile: at least ours.
        assert!(folds >= 1, "{folds} folds");
        assert_eq!(ours, 5);
        assert!(with_watch(|o: Option<&mut Other>| o.is_none()));
        watch_folds(None);
        assert!(with_watch(|c: Option<&mut Count>| c.is_none()));
    }
}
