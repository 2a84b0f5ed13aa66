//! The words of a thread's recorder, which a signal handler on the same thread may
//! read or write between any two instructions (see `docs/signal-safety.md`).

use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::atomic::{AtomicU32, AtomicU64, compiler_fence};

/// A word of the thread's recorder that a signal handler on the same thread may read
/// or write between any two instructions of the code it interrupts: a relaxed atomic,
/// so the access is never a data race, and a plain `mov` on x86_64 and aarch64. Its
/// order against the thread's other words is kept by `compiler_fence` where it
/// matters (see `docs/signal-safety.md`).
#[repr(transparent)]
pub(crate) struct Word(AtomicU64);

impl Word {
    pub(super) const fn new(v: u64) -> Word {
        Word(AtomicU64::new(v))
    }

    #[inline(always)]
    pub(super) fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }

    #[inline(always)]
    pub(super) fn set(&self, v: u64) {
        self.0.store(v, Relaxed);
    }
}

/// A 32-bit [`Word`]: the stack's depth and floor.
#[repr(transparent)]
pub(crate) struct Word32(AtomicU32);

impl Word32 {
    pub(super) const fn new(v: u32) -> Word32 {
        Word32(AtomicU32::new(v))
    }

    #[inline(always)]
    pub(super) fn get(&self) -> u32 {
        self.0.load(Relaxed)
    }

    #[inline(always)]
    pub(super) fn set(&self, v: u32) {
        self.0.store(v, Relaxed);
    }
}

/// Keeps the compiler from moving the thread's loads and stores across this point, so
/// a signal handler sees them in program order. Emits no instruction.
#[inline(always)]
pub(super) fn signal_fence() {
    compiler_fence(SeqCst);
}
