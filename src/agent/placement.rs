//! Keeping the drain thread off the user's cores: CPU affinity and a lower priority,
//! applied by the drain thread to itself; and its own CPU time, for the report.
//!
//! Linux only (`sched_setaffinity`, `setpriority` on the thread id,
//! `CLOCK_THREAD_CPUTIME_ID`); elsewhere asking for a placement is an error and the CPU
//! time reads 0.
#![allow(unsafe_code)]

use crate::diagnostics::DRAIN_CPU_NS;
use std::io;
use std::sync::atomic::Ordering::Relaxed;

/// Where and how the drain thread should run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Placement {
    /// CPUs the drain may run on (empty: wherever the OS puts it).
    pub(super) cpus: Vec<usize>,
    /// Nice value to lower the drain to (0..=19; 0 leaves it as it is).
    pub(super) nice: i32,
}

impl Placement {
    /// Applies the placement to the calling thread.
    pub(super) fn apply(&self) -> io::Result<()> {
        if !self.cpus.is_empty() {
            pin(&self.cpus)?;
        }
        if self.nice != 0 {
            lower_priority(self.nice)?;
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
fn pin(cpus: &[usize]) -> io::Result<()> {
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

#[cfg(target_os = "linux")]
pub(super) fn lower_priority(nice: i32) -> io::Result<()> {
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

/// The calling thread's CPU time in nanoseconds.
#[cfg(target_os = "linux")]
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

#[cfg(not(target_os = "linux"))]
fn pin(_: &[usize]) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "pinning the drain thread needs Linux",
    ))
}

#[cfg(not(target_os = "linux"))]
pub(super) fn lower_priority(_: i32) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "lowering the drain thread's priority needs Linux",
    ))
}

#[cfg(not(target_os = "linux"))]
pub(super) fn thread_cpu_ns() -> u64 {
    0
}

/// Publishes the calling (drain) thread's CPU time.
pub(super) fn publish_cpu_time() {
    DRAIN_CPU_NS.store(thread_cpu_ns(), Relaxed);
}

/// Gives the heap memory a report freed back to the OS (glibc keeps it in the drain
/// thread's arena otherwise: with 10,000 ids and periodic reports, the scale bench's
/// run ends at 153-237 MiB without this, 115-133 MiB with it). Elsewhere a no-op.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(super) fn release_freed_heap() {
    // SAFETY: `malloc_trim` only returns free heap pages to the OS; it takes the
    // allocator's own locks and has no other precondition.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(super) fn release_freed_heap() {}
