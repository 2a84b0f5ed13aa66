//! x86_64: the time-stamp counter.
#![allow(unsafe_code)]

use core::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};

pub(super) const SOURCE: super::Source = super::Source::Tsc;

#[inline(always)]
pub(super) fn fast() -> u64 {
    // SAFETY: RDTSC has no preconditions on x86_64 (every x86_64 CPU has it, and
    // user mode may execute it unless the OS sets CR4.TSD, which Linux, Windows and
    // macOS do not). It reads a register and touches no memory.
    unsafe { _rdtsc() }
}

#[inline(always)]
pub(super) fn mid() -> (u64, u32) {
    let mut aux = 0u32;
    // SAFETY: `aux` is a valid, writable u32 for the duration of the call. RDTSCP is
    // present on every x86_64 CPU made since 2006 (AMD K8 rev F, Intel Nehalem);
    // platform detection reports CPUs without it.
    let ticks = unsafe { __rdtscp(&mut aux) };
    (ticks, aux)
}

#[inline(always)]
pub(super) fn hard() -> (u64, u32) {
    // SAFETY: LFENCE is part of SSE2, which is in the x86_64 baseline; it only orders
    // instruction execution.
    unsafe { _mm_lfence() };
    mid()
}
