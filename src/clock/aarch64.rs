//! aarch64: the virtual generic-timer counter `CNTVCT_EL0`.
//!
//! Its frequency is in `CNTFRQ_EL0`; it has no CPU id, so Mid and Hard report
//! [`super::CPU_UNKNOWN`].
#![allow(unsafe_code)]

use core::arch::asm;

pub(super) const SOURCE: super::Source = super::Source::ArmGenericTimer;

#[inline(always)]
pub(super) fn fast() -> u64 {
    let t: u64;
    // SAFETY: reading CNTVCT_EL0 is permitted at EL0 on Linux, macOS and Windows
    // (CNTKCTL_EL1.EL0VCTEN is set); it reads a system register and nothing else.
    unsafe {
        asm!("mrs {t}, cntvct_el0", t = out(reg) t, options(nomem, nostack, preserves_flags))
    };
    t
}

#[inline(always)]
pub(super) fn mid() -> (u64, u32) {
    let t: u64;
    // SAFETY: as in `fast`; ISB only waits for earlier instructions to complete.
    unsafe {
        asm!("isb", "mrs {t}, cntvct_el0", t = out(reg) t, options(nomem, nostack, preserves_flags))
    };
    (t, super::CPU_UNKNOWN)
}

#[inline(always)]
pub(super) fn hard() -> (u64, u32) {
    let t: u64;
    // SAFETY: as in `mid`; the second ISB keeps later instructions from starting
    // before the read.
    unsafe {
        asm!("isb", "mrs {t}, cntvct_el0", "isb", t = out(reg) t, options(nomem, nostack, preserves_flags))
    };
    (t, super::CPU_UNKNOWN)
}

/// The counter frequency in Hz, from `CNTFRQ_EL0`.
pub(super) fn frequency_hz() -> u64 {
    let f: u64;
    // SAFETY: CNTFRQ_EL0 is readable at EL0; reading it has no side effects.
    unsafe {
        asm!("mrs {f}, cntfrq_el0", f = out(reg) f, options(nomem, nostack, preserves_flags))
    };
    f
}
