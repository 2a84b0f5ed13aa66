//! Keeping the drain thread off the user's cores: CPU affinity and a lower priority,
//! applied by the drain thread to itself; and its own CPU time, for the report.
//!
//! What differs by OS lives in `placement/`: Linux (`sched_setaffinity`,
//! `setpriority`, `CLOCK_THREAD_CPUTIME_ID`) and Windows (`SetThreadAffinityMask`,
//! `SetThreadPriority`, `GetThreadTimes`) do all three; elsewhere asking for a
//! placement is an error and the CPU time reads 0.
#![allow(unsafe_code)]

#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(any(target_os = "linux", windows)))]
mod other;
#[cfg(unix)]
mod posix;
#[cfg(windows)]
mod windows;

#[cfg(target_os = "linux")]
use linux as os;
#[cfg(not(any(target_os = "linux", windows)))]
use other as os;
#[cfg(windows)]
use windows as os;

pub(super) use os::lower_priority;
use os::pin;
#[cfg(not(target_os = "linux"))]
use os::thread_cpu_ns;
#[cfg(target_os = "linux")]
use posix::thread_cpu_ns;

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
