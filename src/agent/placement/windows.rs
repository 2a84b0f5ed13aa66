//! Windows: `SetThreadAffinityMask`, `SetThreadPriority` and `GetThreadTimes` on the
//! calling thread.
#![allow(unsafe_code)]

use std::io;
use windows_sys::Win32::Foundation::FILETIME;
use windows_sys::Win32::System::Threading::{
    GetCurrentThread, GetThreadTimes, SetThreadAffinityMask, SetThreadPriority,
    THREAD_PRIORITY_BELOW_NORMAL, THREAD_PRIORITY_LOWEST,
};

/// Pins the calling thread to `cpus`, all in the first processor group (CPUs 0 to
/// 63): a thread's affinity mask has one bit per CPU of its group.
pub(super) fn pin(cpus: &[usize]) -> io::Result<()> {
    let bits = usize::BITS as usize;
    if let Some(&cpu) = cpus.iter().find(|&&c| c >= bits) {
        return Err(io::Error::other(format!(
            "CPU {cpu} is past the largest CPU number {} of the first processor group",
            bits - 1
        )));
    }
    let mask = cpus.iter().fold(0usize, |m, &cpu| m | 1 << cpu);
    // SAFETY: `GetCurrentThread` returns a pseudo-handle for the calling thread that
    // needs no closing; `SetThreadAffinityMask` only reads its arguments.
    let previous = unsafe { SetThreadAffinityMask(GetCurrentThread(), mask) };
    if previous == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The lowest priority this module sets: as [`lower_priority`] at 19 (`LOWEST`; a
/// thread of higher priority that becomes ready preempts it at once).
pub(in crate::agent) fn idle_priority() -> io::Result<()> {
    lower_priority(19)
}

/// Nothing to ask for on Windows: the drain keeps the OS's quantum.
pub(in crate::agent) fn short_slice() -> io::Result<()> {
    Ok(())
}

/// Lowers the calling thread's priority: nice 1 to 9 is `BELOW_NORMAL`, 10 to 19
/// `LOWEST` (Windows has 2 steps below normal where Linux has 19).
pub(in crate::agent) fn lower_priority(nice: i32) -> io::Result<()> {
    let priority = if nice < 10 {
        THREAD_PRIORITY_BELOW_NORMAL
    } else {
        THREAD_PRIORITY_LOWEST
    };
    // SAFETY: as in `pin`; `SetThreadPriority` only reads its arguments.
    let ok = unsafe { SetThreadPriority(GetCurrentThread(), priority) };
    if ok == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The calling thread's CPU time (user and kernel) in nanoseconds; 0 if Windows
/// cannot say.
pub(super) fn thread_cpu_ns() -> u64 {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: the pseudo-handle as in `pin`; the four pointers are to valid, writable
    // `FILETIME`s that live across the call.
    let ok = unsafe {
        GetThreadTimes(
            GetCurrentThread(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return 0;
    }
    // FILETIME counts 100 ns intervals.
    let hundreds = |t: FILETIME| u64::from(t.dwHighDateTime) << 32 | u64::from(t.dwLowDateTime);
    (hundreds(kernel) + hundreds(user)) * 100
}
