//! Every Unix (Linux, macOS): the thread's CPU time from `CLOCK_THREAD_CPUTIME_ID`.
#![allow(unsafe_code)]

/// The calling thread's CPU time in nanoseconds.
pub(super) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable `timespec`; the clock id is a constant the
    // kernel always provides.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
