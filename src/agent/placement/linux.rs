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

/// The scheduling slice the drain asks for: the shortest the kernel takes.
pub(super) const DRAIN_SLICE_NS: u64 = 100_000;

/// Gives the calling thread (the drain) a short scheduling slice, keeping its policy
/// and nice value. Linux's EEVDF scheduler (6.12 and later) lets a waking thread with
/// a shorter slice preempt the running one at once: without it, a drain woken on time
/// waited up to 4 ms behind another process's thread that had its CPU, and the scale
/// bench's 2,048-scope bursts every 2 ms into rings of 4,096 lost a burst in 3 of 10
/// runs (see `docs/design.md`, "Pacing"). The drain's work per wake is tens of
/// microseconds, so the slice costs it nothing. Older kernels ignore the slice (or
/// refuse the call: the caller goes on without it).
pub(in crate::agent) fn short_slice() -> io::Result<()> {
    // SAFETY: `getpriority` on this thread's id only reads its arguments; -1 with
    // errno set is an error, told apart below.
    let nice = unsafe {
        *libc::__errno_location() = 0;
        libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t)
    };
    if nice == -1 && io::Error::last_os_error().raw_os_error() != Some(0) {
        return Err(io::Error::last_os_error());
    }
    let attr = libc::sched_attr {
        size: std::mem::size_of::<libc::sched_attr>() as u32,
        sched_policy: libc::SCHED_OTHER as u32,
        sched_flags: 0,
        sched_nice: nice,
        sched_priority: 0,
        sched_runtime: DRAIN_SLICE_NS,
        sched_deadline: 0,
        sched_period: 0,
    };
    // SAFETY: `sched_setattr` on this thread (pid 0) with a valid, initialised
    // `sched_attr` whose `size` is its own; the kernel only reads it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            0,
            &attr as *const libc::sched_attr,
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
