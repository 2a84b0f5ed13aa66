//! Linux: `sched_setaffinity`, `setpriority` and `sched_setscheduler` on the thread id.
#![allow(unsafe_code)]

use std::io;

pub(super) fn pin(cpus: &[usize]) -> io::Result<()> {
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    if let Some(&cpu) = cpus.iter().find(|&&c| c >= max) {
        return Err(io::Error::other(format!(
            "CPU {cpu} is past the largest CPU number {}",
            max - 1
        )));
    }
    // SAFETY: `cpu_set_t` is a plain bit array for which all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: `cpu` is below the set's capacity in bits (checked above).
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; `set` is a valid, initialised `cpu_set_t`
    // of the size passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

pub(in crate::agent) fn lower_priority(nice: i32) -> io::Result<()> {
    // SAFETY: `gettid` has no preconditions and cannot fail.
    let tid = unsafe { libc::gettid() };
    // SAFETY: `setpriority` on this thread's id; it only reads its arguments.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Puts the calling thread in the idle scheduling class (`SCHED_IDLE`), or lowers it
/// to nice 19 if the kernel refuses that. An idle-class thread runs on what CPU time
/// no other thread wants, and a thread that wakes on its CPU preempts it at once,
/// where a nice 19 thread keeps the CPU until the scheduler's next tick (up to 4 ms
/// on the reference guest; see `docs/design.md`, "Pacing").
pub(in crate::agent) fn idle_priority() -> io::Result<()> {
    // SAFETY: `gettid` has no preconditions and cannot fail.
    let tid = unsafe { libc::gettid() };
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` on this thread's id with a valid `sched_param` that
    // lives across the call; it only reads its arguments.
    let rc = unsafe { libc::sched_setscheduler(tid, libc::SCHED_IDLE, &param) };
    if rc == 0 { Ok(()) } else { lower_priority(19) }
}
