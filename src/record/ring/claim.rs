//! The owner's read-modify-writes of a ring's words, each one instruction that a signal
//! handler on the owning thread cannot split (see `docs/signal-safety.md`).
#![allow(unsafe_code)]

use crate::record::sync::AtomicU64;
#[cfg(any(not(target_arch = "x86_64"), latte_loom))]
use crate::record::sync::Ordering;
use std::sync::atomic::AtomicU64 as OwnU64;

/// Adds 1 to `head` and returns its previous value, as one instruction that a signal
/// handler on this thread cannot split. Only the owning thread writes `head`, so no
/// `lock` prefix is needed (nor wanted: it would cost ~20 cycles per sample).
#[cfg(all(target_arch = "x86_64", not(latte_loom)))]
#[inline(always)]
pub(in crate::record) fn claim_head(head: &AtomicU64) -> u64 {
    let mut value: u64 = 1;
    // SAFETY: `head.as_ptr()` is a valid, aligned pointer to the `AtomicU64` for the
    // duration of the instruction. Only the owning thread (this one) writes `head`; an
    // aligned 8-byte store is atomic for other cores' loads, so readers see the old or
    // the new value, as with a relaxed atomic store. A signal is taken between
    // instructions, so the read-add-write is indivisible for a handler on this thread.
    unsafe {
        core::arch::asm!(
            "xadd qword ptr [{head}], {value}",
            head = in(reg) head.as_ptr(),
            value = inout(reg) value,
            options(nostack),
        );
    }
    value
}

/// Adds `ticks` to an owner-written sum as one instruction a signal handler on this
/// thread cannot split (no `lock`: no other thread writes it), as [`claim_head`] does.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn add_own(sum: &OwnU64, ticks: u64) {
    // SAFETY: `sum.as_ptr()` is a valid, aligned pointer to the atomic for the duration
    // of the instruction; only the owning thread writes it, other cores read the old
    // or the new value of an aligned 8-byte store, as with a relaxed atomic store.
    unsafe {
        core::arch::asm!(
            "add qword ptr [{sum}], {ticks}",
            sum = in(reg) sum.as_ptr(),
            ticks = in(reg) ticks,
            options(nostack),
        );
    }
}

/// Elsewhere, a relaxed read-modify-write: indivisible for a signal handler too.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn add_own(sum: &OwnU64, ticks: u64) {
    sum.fetch_add(ticks, std::sync::atomic::Ordering::Relaxed);
}

/// Elsewhere, a relaxed read-modify-write: indivisible for a signal handler too.
#[cfg(all(not(target_arch = "x86_64"), not(latte_loom)))]
#[inline(always)]
pub(in crate::record) fn claim_head(head: &AtomicU64) -> u64 {
    head.fetch_add(1, Ordering::Relaxed)
}

/// Under loom: the relaxed read-modify-write that the other targets ship. (The owner's
/// load and a relaxed store would not do: only a read-modify-write continues the
/// release sequence of the head's previous store, and loom finds the mislabelled
/// sample without it. On x86_64 the `xadd` is that read-modify-write, and its store,
/// like every x86 store, is not reordered before the thread's earlier stores.)
#[cfg(latte_loom)]
pub(in crate::record) fn claim_head(head: &AtomicU64) -> u64 {
    head.fetch_add(1, Ordering::Relaxed)
}
