//! Keeping the drain thread off the user's cores: CPU affinity and a lower priority,
//! applied by the drain thread to itself (and to the start-up calibration: the lowest
//! priority, and the idle one on the drain's CPUs when it has some); and the drain's
//! own CPU time, for the report.
//!
//! What differs by OS lives in `placement/`: Linux (`sched_setaffinity`,
//! `setpriority` and `SCHED_IDLE`, `CLOCK_THREAD_CPUTIME_ID`) and Windows (`SetThreadAffinityMask`,
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

#[cfg(not(target_os = "linux"))]
use os::thread_cpu_ns;
use os::{idle_priority, lower_priority, pin, short_slice};
#[cfg(target_os = "linux")]
use posix::thread_cpu_ns;

use crate::diagnostics::DRAIN_CPU_NS;
use std::io;
use std::sync::atomic::Ordering::Relaxed;

/// The nice value of the drain's background work when the drain has no CPUs of its
/// own: the lowest.
const BACKGROUND_NICE: i32 = 19;

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
        // Best effort: a kernel that refuses it leaves the drain a little later to
        // wake, and nothing else changes.
        let _ = short_slice();
        Ok(())
    }

    /// Places the calling thread as the drain's background work (the start-up
    /// calibration), best effort (what the OS refuses is left as it is). With CPUs for
    /// the drain: on those, so latte's work stays off the CPUs the user keeps for their
    /// own threads, and at the idle priority (Linux: `SCHED_IDLE`), so that the drain,
    /// or any other thread, that wakes on its CPU runs at once. Without: wherever the OS
    /// puts it, at nice 19; the idle class there would leave it (and the periodic
    /// reports and exporters that wait for it) only what CPU time every other thread of
    /// the machine leaves over, which on a busy machine is close to none.
    pub(super) fn apply_background(&self) {
        if self.cpus.is_empty() {
            let _ = lower_priority(BACKGROUND_NICE);
            return;
        }
        let _ = pin(&self.cpus);
        let _ = idle_priority();
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::Placement;

    /// Field `n` (1-based, as `proc(5)` numbers them) of this thread's `stat`.
    fn stat_field(n: usize) -> String {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        // The fields after the command name (which ends with ')') start at field 3.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        rest.split(' ').nth(n - 3).unwrap().to_owned()
    }

    #[test]
    fn background_work_with_drain_cpus_keeps_to_them_in_the_idle_class() {
        let placement = Placement {
            cpus: vec![0],
            nice: 5,
        };
        let (policy, cpus) = std::thread::spawn(move || {
            placement.apply_background();
            let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .unwrap()
                .trim()
                .to_owned();
            (stat_field(41), cpus)
        })
        .join()
        .unwrap();
        assert_eq!(policy, libc::SCHED_IDLE.to_string());
        assert_eq!(cpus, "0");
    }

    #[test]
    fn background_work_without_drain_cpus_stays_in_the_normal_class_at_nice_19() {
        let (policy, nice) = std::thread::spawn(|| {
            Placement::default().apply_background();
            (stat_field(41), stat_field(19))
        })
        .join()
        .unwrap();
        assert_eq!((policy.as_str(), nice.as_str()), ("0", "19"));
    }

    /// This thread's scheduling slice in nanoseconds, where the kernel says it.
    fn slice_ns() -> Option<u64> {
        let sched = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
        let line = sched.lines().find(|l| l.starts_with("se.slice"))?;
        line.split(':').nth(1)?.trim().parse().ok()
    }

    #[test]
    fn the_drain_asks_for_a_short_slice_and_keeps_its_nice_value_and_class() {
        let placement = Placement {
            cpus: Vec::new(),
            nice: 7,
        };
        let (applied, slice, policy, nice) = std::thread::spawn(move || {
            let before = slice_ns();
            let applied = placement.apply().map(|()| super::short_slice().is_ok());
            (
                applied,
                (before, slice_ns()),
                stat_field(41),
                stat_field(19),
            )
        })
        .join()
        .unwrap();
        assert!(applied.is_ok(), "{applied:?}");
        assert_eq!((policy.as_str(), nice.as_str()), ("0", "7"));
        // A kernel with custom slices (6.12 on, the reference guest's) shows it; an
        // older one refuses or ignores it, and the drain runs as before.
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        let mut version = release
            .split(['.', '-'])
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let custom_slices = (version.next(), version.next()) >= (Some(6), Some(12));
        if custom_slices && let (Some(before), Some(after)) = slice {
            assert!(matches!(applied, Ok(true)));
            assert_ne!(before, super::os::DRAIN_SLICE_NS);
            assert_eq!(after, super::os::DRAIN_SLICE_NS, "slice before: {before}");
        }
    }
}
