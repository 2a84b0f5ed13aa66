//! The atomics of the cross-thread protocols, swapped for `loom`'s under
//! `--cfg latte_loom` so the ring protocol is model-checked with the code that ships.
//!
//! Only the ring and the registry go through here: call-site ids and counters are
//! single-word values with no ordering protocol between them and need no model.

#[cfg(latte_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, fence};
#[cfg(latte_loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(not(latte_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, fence};
#[cfg(not(latte_loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

pub(crate) use std::sync::atomic::Ordering;

#[cfg(latte_loom)]
pub(crate) use loom::thread::yield_now;
#[cfg(not(latte_loom))]
pub(crate) use std::thread::yield_now;

/// The single writer of `a` reading back its own last store.
///
/// A relaxed load: no other thread stores to `a`, so this always returns the writer's
/// latest value and needs no ordering.
#[cfg(not(latte_loom))]
#[inline(always)]
pub(crate) fn load_own(a: &AtomicU64) -> u64 {
    a.load(Ordering::Relaxed)
}

/// Under loom: `unsync_load`, which is what the operation is. A tracked relaxed load
/// here hides the reader's accesses from loom's exploration (measured: a writer that
/// loads before it stores got 1 explored execution instead of 6), so the model would
/// pass without checking anything.
#[cfg(latte_loom)]
pub(crate) fn load_own(a: &AtomicU64) -> u64 {
    // SAFETY: only the ring's owning thread stores to `a` and only it calls this, so
    // there is no concurrent mutation and the value is the writer's own last store.
    #[allow(unsafe_code)]
    unsafe {
        a.unsync_load()
    }
}

/// The loom models of one module, each with its name, for
/// [`loom_models`](crate::__private::loom_models): `loom_models![a, b]` declares
/// `MODELS`, `[("a", a), ("b", b)]`.
#[cfg(latte_loom)]
macro_rules! loom_models {
    ($($model:ident),* $(,)?) => {
        pub(crate) const MODELS: &[(&str, fn())] = &[$((stringify!($model), $model as fn())),*];
    };
}
#[cfg(latte_loom)]
pub(crate) use loom_models;
