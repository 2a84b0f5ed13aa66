//! Process-wide state a forked child must not inherit half-held.
//!
//! `fork` copies memory but only the forking thread: a lock some other thread held,
//! or a one-time initialisation another thread was running, stays held or running in
//! the child forever. [`PerProcess`] keeps a value per process id: the first use in a
//! child installs a fresh value instead of touching the parent's copy (which is
//! leaked: at most one per fork, and it may be mid-update).
#![allow(unsafe_code)]

use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, Ordering};

/// A lazily made value, made again in a forked child.
pub(crate) struct PerProcess<T> {
    cell: AtomicPtr<Cell<T>>,
    init: fn() -> T,
}

struct Cell<T> {
    pid: u32,
    value: OnceLock<T>,
}

impl<T: Send + Sync> PerProcess<T> {
    /// A value `init` makes on first use in each process.
    pub(crate) const fn new(init: fn() -> T) -> PerProcess<T> {
        PerProcess {
            cell: AtomicPtr::new(std::ptr::null_mut()),
            init,
        }
    }

    /// This process's value, made on first use.
    pub(crate) fn get(&'static self) -> &'static T {
        let pid = std::process::id();
        let mut cell = self.cell.load(Ordering::Acquire);
        // SAFETY: a non-null `cell` came from `Box::into_raw` below and is never freed.
        while cell.is_null() || unsafe { (*cell).pid } != pid {
            let fresh = Box::into_raw(Box::new(Cell {
                pid,
                value: OnceLock::new(),
            }));
            match self
                .cell
                .compare_exchange(cell, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // The replaced cell (none, or the parent's) is leaked on purpose.
                Ok(_) => cell = fresh,
                Err(now) => {
                    // SAFETY: `fresh` was never shared: this thread still owns it.
                    drop(unsafe { Box::from_raw(fresh) });
                    cell = now;
                }
            }
        }
        // SAFETY: as above, `cell` is a live, never-freed allocation.
        let cell: &'static Cell<T> = unsafe { &*cell };
        cell.value.get_or_init(self.init)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_per_process() {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        static VALUE: PerProcess<u32> =
            PerProcess::new(|| COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let a = VALUE.get();
        assert!(std::ptr::eq(a, VALUE.get()));
        assert_eq!(COUNTER.load(std::sync::atomic::Ordering::Relaxed), 1);
    }
}
