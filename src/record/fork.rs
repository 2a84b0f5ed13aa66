//! Process-wide state a forked child must not inherit half-held.
//!
//! `fork` copies memory but only the forking thread: a lock some other thread held,
//! or a one-time initialisation another thread was running, stays held or running in
//! the child forever. [`PerProcess`] keeps a value per *fork generation*: the first use
//! in a child installs a fresh value instead of touching the parent's copy (which is
//! leaked: at most one per fork, and it may be mid-update).
//!
//! # Noticing a fork without a syscall
//!
//! The recording paths use these values (the `tracing` bridge's pool of busy totals
//! on every span made and closed, a thread's frame queue on every mark), so asking the
//! kernel for the process id on each use would put a `getpid` syscall on them. Instead
//! a `pthread_atfork` child handler bumps a process-wide word, the generation, in
//! every forked child, before `fork` returns there; a value remembers the generation
//! it was made in, and a use compares two loaded words. The handler is registered by
//! the first use of the generation in the process ([`generation`], which every
//! [`PerProcess`] reads before it makes a value), so no value exists before it: a fork
//! after that changes the generation in the child.
//!
//! A fork that runs no `pthread_atfork` handlers (a raw `clone` or `fork` syscall,
//! glibc's `_Fork`) is not noticed: the child keeps the parent's values. `vfork` and
//! `posix_spawn` children only `exec` or exit, and touch none. Without `fork`
//! (Windows), the generation stays 0 and there is no handler.
#![allow(unsafe_code)]

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

/// 0 in the process that first used latte's per-process state; bumped in each
/// forked child by the handler (in the child's memory only).
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Whether the fork handler is registered in this process image (a forked child
/// inherits it, with the registration).
static REGISTERED: AtomicBool = AtomicBool::new(false);

/// This process's fork generation: another value in every forked child. Registers the
/// handler that makes it so on its first call in the process.
#[inline]
pub(crate) fn generation() -> u64 {
    if !REGISTERED.load(Ordering::Acquire) {
        register();
    }
    // Relaxed: the word changes only in the handler, which runs in a forked child
    // before `fork` returns, while the forking thread is the child's only thread; any
    // thread that reads it afterwards was started after it.
    GENERATION.load(Ordering::Relaxed)
}

/// Registers the child handler. No lock or `Once` (a child forked while another
/// thread was inside one would find it held forever): two threads that both find the
/// flag unset both register, and a fork then bumps the generation twice, which is
/// just as well. Each caller returns only once a handler is registered.
#[cold]
#[inline(never)]
fn register() {
    #[cfg(unix)]
    unix::register_child_handler();
    REGISTERED.store(true, Ordering::Release);
}

#[cfg(unix)]
mod unix {
    use super::{GENERATION, Ordering};
    use std::ffi::c_int;

    // `pthread_atfork(3)`, declared here rather than through the `libc` crate, which
    // the lean core (feature `record` alone) does not depend on outside macOS. Every
    // unix C library has it, with this signature.
    unsafe extern "C" {
        fn pthread_atfork(
            prepare: Option<unsafe extern "C" fn()>,
            parent: Option<unsafe extern "C" fn()>,
            child: Option<unsafe extern "C" fn()>,
        ) -> c_int;
    }

    /// Runs in a forked child, in the forking thread, before `fork` returns there:
    /// one atomic add (async-signal-safe, so a `fork` from a signal handler is fine).
    unsafe extern "C" fn child() {
        GENERATION.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn register_child_handler() {
        // SAFETY: `child` is a valid `extern "C"` function for the life of the
        // process (the handler table is never unregistered), does not unwind, and
        // touches only a static atomic; null `prepare` and `parent` are allowed.
        let failed = unsafe { pthread_atfork(None, None, Some(child)) };
        // ENOMEM is its one error: then a forked child would keep the parent's
        // values, as a fork that runs no handlers does.
        debug_assert_eq!(failed, 0, "pthread_atfork failed");
    }
}

/// A lazily made value, made again in a forked child.
pub(crate) struct PerProcess<T> {
    cell: AtomicPtr<Cell<T>>,
    init: fn() -> T,
}

struct Cell<T> {
    generation: u64,
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

    /// This process's value, made on first use: two loads and a compare once made.
    #[inline]
    pub(crate) fn get(&'static self) -> &'static T {
        let generation = generation();
        let cell = self.cell.load(Ordering::Acquire);
        // SAFETY: a non-null `cell` came from `Box::into_raw` in `install` and is
        // never freed.
        match unsafe { cell.as_ref() } {
            Some(cell) if cell.generation == generation => cell.value.get_or_init(self.init),
            _ => self.install(cell, generation),
        }
    }

    /// The first use in this process: installs a cell of this generation in place of
    /// `cell` (none, or the parent's), unless another thread did first.
    #[cold]
    #[inline(never)]
    fn install(&'static self, mut cell: *mut Cell<T>, generation: u64) -> &'static T {
        // SAFETY: a non-null `cell` came from `Box::into_raw` below and is never freed.
        while cell.is_null() || unsafe { (*cell).generation } != generation {
            let fresh = Box::into_raw(Box::new(Cell {
                generation,
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

    /// A fork makes a new generation, and a fresh value, in the child only.
    #[cfg(unix)]
    #[test]
    fn a_forked_child_has_a_generation_and_a_value_of_its_own() {
        static VALUE: PerProcess<AtomicU64> = PerProcess::new(|| AtomicU64::new(0));
        let before = generation();
        VALUE.get().store(7, Ordering::Relaxed);
        // SAFETY: the child runs only the code below (atomics and loads, no lock, no
        // allocation but the fresh cell's) and leaves with `_exit`, never returning
        // into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let fresh = generation() != before && VALUE.get().load(Ordering::Relaxed) == 0;
            // SAFETY: leaves the child at once, without the harness's exit path.
            unsafe { libc::_exit(if fresh { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: `pid` is this process's child; `status` is a valid int to write.
        let waited = unsafe { libc::waitpid(pid, &raw mut status, 0) };
        assert_eq!(waited, pid);
        assert_eq!(status, 0, "the child saw the parent's generation or value");
        assert_eq!(
            (generation(), VALUE.get().load(Ordering::Relaxed)),
            (before, 7)
        );
    }
}
