//! The fold's observers: a feature that keeps its own view of the samples as the fold
//! reads them (the series log, the frames' fold, the flight recorder's triggers) implements
//! [`FoldWatch`], and the agent installs it with [`watch`] or [`watch_once`]. The fold
//! calls every observer under the ledger's lock: at the start of each fold, once per
//! run of samples it hands a tally, once per thread with frames the marks ended; a
//! reset tells them too. It names no feature.

use super::ledger::ledger;
use super::totals::{ComponentTotals, ThreadTotals};
use crate::record::SampleKind;
use crate::record::marks::FrameRecord;
use std::any::Any;
use std::sync::LazyLock;
use std::time::Instant;

/// What the fold tells an observer. Every method runs on the folding thread, under the
/// ledger's lock: it must be short and must not call back into `collect`.
pub(crate) trait FoldWatch: Any + Send {
    /// A fold begins, at `now_ms` on the fold clock ([`clock_ms`]).
    fn begin_fold(&mut self, now_ms: u64);
    /// The run starts again at `now_ms` (a [`reset`](super::reset)): what was kept goes.
    fn reset(&mut self, _now_ms: u64) {}
    /// The tables it holds and their heap bytes, counted with the ledger's.
    fn size(&self) -> (u64, u64) {
        (0, 0)
    }
    /// Whether it wants the calls below at all (checked before each).
    fn armed(&self) -> bool;
    /// Component `k` of thread `serial` is about to be folded; `whole` is its
    /// whole-run totals so far.
    fn component(&mut self, _serial: u64, _k: usize, _whole: &ComponentTotals) {}
    /// A run of `kind` samples (ticks) of that component, id index `idx`.
    fn samples(&mut self, serial: u64, k: usize, idx: u32, kind: SampleKind, ticks: &[u64]);
    /// Frames of thread `serial` the marks ended, oldest first, with the thread's totals
    /// in the open window (`None` for a thread folded away meanwhile).
    fn frames(&mut self, _serial: u64, _frames: &[FrameRecord], _open: Option<&mut ThreadTotals>) {}
}

/// The installed observers, at most one of each type, in order of installation.
#[derive(Default)]
pub(crate) struct Watches {
    list: Vec<Box<dyn FoldWatch>>,
    /// When the last reset began the run again, on the fold clock: an observer
    /// installed later starts from there.
    reset_ms: Option<u64>,
}

impl Watches {
    /// The installed `W`, if any.
    pub(crate) fn get<W: FoldWatch>(&self) -> Option<&W> {
        self.list.iter().find_map(|w| {
            let any: &dyn Any = w.as_ref();
            any.downcast_ref::<W>()
        })
    }

    fn get_mut<W: FoldWatch>(&mut self) -> Option<&mut W> {
        self.list.iter_mut().find_map(|w| {
            let any: &mut dyn Any = w.as_mut();
            any.downcast_mut::<W>()
        })
    }

    /// The observers that want the fold's calls now.
    pub(super) fn armed(&mut self) -> impl Iterator<Item = &mut Box<dyn FoldWatch>> {
        self.list.iter_mut().filter(|w| w.armed())
    }

    /// A fold begins, at `now_ms` on the fold clock.
    pub(super) fn begin_fold(&mut self, now_ms: u64) {
        self.list.iter_mut().for_each(|w| w.begin_fold(now_ms));
    }

    /// The run starts again at `now_ms`.
    pub(super) fn reset(&mut self, now_ms: u64) {
        self.reset_ms = Some(now_ms);
        self.list.iter_mut().for_each(|w| w.reset(now_ms));
    }

    /// Every observer's tables and heap bytes, added up.
    pub(super) fn size(&self) -> (u64, u64) {
        let sizes = self.list.iter().map(|w| w.size());
        sizes.fold((0, 0), |(n, b), (m, c)| (n + m, b + c))
    }

    fn install(&mut self, mut watch: Box<dyn FoldWatch>) {
        if let Some(ms) = self.reset_ms {
            watch.reset(ms);
        }
        self.list.push(watch);
    }
}

/// Installs `watch`, replacing an observer of its type (and what that one kept).
pub(crate) fn watch<W: FoldWatch>(watch: W) {
    let mut ledger = ledger();
    ledger
        .watches
        .list
        .retain(|w| !(w.as_ref() as &dyn Any).is::<W>());
    ledger.watches.install(Box::new(watch));
}

/// Installs the observer `make` makes, unless one of its type is installed: it then
/// sees every fold from now on (and the last reset, if any).
pub(crate) fn watch_once<W: FoldWatch>(make: impl FnOnce() -> W) {
    let mut ledger = ledger();
    if ledger.watches.get::<W>().is_none() {
        ledger.watches.install(Box::new(make()));
    }
}

/// Runs `f` on the installed `W`, if any, under the ledger's lock.
pub(crate) fn with_watch<W: FoldWatch, R>(f: impl FnOnce(Option<&mut W>) -> R) -> R {
    f(ledger().watches.get_mut::<W>())
}

/// The origin of the fold clock.
static ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);

/// The fold clock at `at`, ms: the monotonic clock, or the test hook's value.
pub(super) fn clock_ms(at: Instant) -> u64 {
    #[cfg(feature = "test-hooks")]
    if let Some(ms) = hook::get() {
        return ms;
    }
    at.saturating_duration_since(*ORIGIN).as_millis() as u64
}

/// The fold clock's test hook (feature `test-hooks`).
#[cfg(feature = "test-hooks")]
pub(crate) mod hook {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    /// The set time, `u64::MAX` for none.
    static MOCK: AtomicU64 = AtomicU64::new(u64::MAX);

    /// Sets the fold clock to `ms`, or back to the monotonic clock.
    pub(crate) fn set(ms: Option<u64>) {
        MOCK.store(ms.unwrap_or(u64::MAX), Relaxed);
    }

    pub(super) fn get() -> Option<u64> {
        Some(MOCK.load(Relaxed)).filter(|&ms| ms != u64::MAX)
    }
}

/// Removes the installed `W`, if any.
#[cfg(test)]
fn unwatch<W: FoldWatch>() {
    ledger()
        .watches
        .list
        .retain(|w| !(w.as_ref() as &dyn Any).is::<W>());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Id;

    /// Counts what the fold shows it.
    #[derive(Default)]
    struct Count {
        folds: u32,
        ours: usize,
        reset_at: Option<u64>,
    }

    impl FoldWatch for Count {
        fn begin_fold(&mut self, _: u64) {
            self.folds += 1;
        }
        fn reset(&mut self, now_ms: u64) {
            self.reset_at = Some(now_ms);
        }
        fn armed(&self) -> bool {
            true
        }
        fn samples(&mut self, _: u64, _: usize, idx: u32, _: SampleKind, ticks: &[u64]) {
            if idx == OURS.index() {
                self.ours += ticks.len();
            }
        }
    }

    /// Another observer type: installed beside a `Count`, it sees the same samples.
    #[derive(Default)]
    struct Other(Count);
    impl FoldWatch for Other {
        fn begin_fold(&mut self, now_ms: u64) {
            self.0.begin_fold(now_ms);
        }
        fn armed(&self) -> bool {
            true
        }
        fn samples(&mut self, serial: u64, k: usize, idx: u32, kind: SampleKind, ticks: &[u64]) {
            self.0.samples(serial, k, idx, kind, ticks);
        }
    }

    /// A type never installed.
    struct Never;
    impl FoldWatch for Never {
        fn begin_fold(&mut self, _: u64) {}
        fn armed(&self) -> bool {
            false
        }
        fn samples(&mut self, _: u64, _: usize, _: u32, _: SampleKind, _: &[u64]) {}
    }

    static OURS: Id = Id::new("collect_watch_test");

    fn ours<W: FoldWatch>(count: impl Fn(&W) -> usize) -> Option<usize> {
        with_watch(|w: Option<&mut W>| w.map(|w| count(w)))
    }

    #[test]
    fn every_observer_sees_every_fold_and_sample_and_each_is_found_by_its_type() {
        watch(Count::default());
        watch_once(Other::default);
        std::thread::spawn(|| (1..=5).for_each(|v| crate::record::record(&OURS, v)))
            .join()
            .unwrap();
        crate::collect::fold();
        let folds = with_watch(|c: Option<&mut Count>| c.expect("a Count").folds);
        // Other tests of this binary may fold and record meanwhile: at least ours.
        assert!(folds >= 1, "{folds} folds");
        assert_eq!(ours(|c: &Count| c.ours), Some(5));
        assert_eq!(ours(|o: &Other| o.0.ours), Some(5));
        // `watch_once` keeps the one installed; `watch` replaces it, afresh.
        watch_once(Other::default);
        assert_eq!(ours(|o: &Other| o.0.ours), Some(5));
        watch(Other::default());
        assert_eq!(ours(|o: &Other| o.0.ours), Some(0));
        assert!(with_watch(|n: Option<&mut Never>| n.is_none()));
        unwatch::<Count>();
        unwatch::<Other>();
        assert_eq!(ours(|c: &Count| c.ours), None);
    }

    #[test]
    fn a_reset_is_told_to_the_observers_and_to_one_installed_after_it() {
        watch(Count::default());
        crate::collect::reset();
        let told = with_watch(|c: Option<&mut Count>| c.expect("a Count").reset_at);
        unwatch::<Count>();
        watch_once(Count::default);
        let late = with_watch(|c: Option<&mut Count>| c.expect("a Count").reset_at);
        unwatch::<Count>();
        // Other tests may reset meanwhile: the late one hears the last reset.
        assert!(told.is_some() && late >= told, "{told:?} then {late:?}");
    }
}
