//! The memory cap on rings ([`Builder::memory_cap`](crate::Builder::memory_cap)): the
//! bytes every ring made for a user's thread holds, charged when the ring is made (its
//! first slots) and each time it doubles, and given back when slots are freed.
//!
//! Ids are not known when the agent starts, so the cap is enforced where memory is
//! taken: an id's first use on a thread, and a ring's growth. A ring the cap cannot
//! afford is not made; the id then records nothing on that thread, and each record is
//! counted under it (`over_cap`). A growth the cap cannot afford is not made either: the
//! ring keeps its slots and wraps there, and the refusal is counted
//! (`Footprint::rings_kept_small`). latte's own threads (calibration) are not charged
//! and never refused. Pooled rings stay charged: they are memory latte holds.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Bytes charged against a cap.
pub(crate) struct Budget(AtomicU64);

/// The process's budget: bytes charged by every ring that exists (live, pooled, or not
/// yet freed).
pub(crate) static RINGS: Budget = Budget(AtomicU64::new(0));

impl Budget {
    /// Charges `bytes` if the total stays within `cap`; `false` (nothing charged) if
    /// not. Exact under concurrency: two threads cannot both take the last bytes.
    pub(crate) fn try_charge(&self, bytes: u64, cap: u64) -> bool {
        self.0
            .fetch_update(Relaxed, Relaxed, |now| {
                now.checked_add(bytes).filter(|&after| after <= cap)
            })
            .is_ok()
    }

    /// Gives back `bytes` charged earlier.
    pub(crate) fn release(&self, bytes: u64) {
        self.0.fetch_sub(bytes, Relaxed);
    }

    /// Bytes charged now.
    pub(crate) fn charged(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_up_to_the_cap_and_no_further() {
        let budget = Budget(AtomicU64::new(0));
        assert!(budget.try_charge(60, 100));
        assert!(budget.try_charge(40, 100), "exactly at the cap is allowed");
        assert!(
            !budget.try_charge(1, 100),
            "one byte past the cap is refused"
        );
        assert!(!budget.try_charge(u64::MAX, u64::MAX), "no overflow");
        assert_eq!(budget.charged(), 100);
        budget.release(100);
        assert!(budget.try_charge(100, 100));
        assert_eq!(budget.charged(), 100);
    }

    #[test]
    fn racing_threads_never_exceed_the_cap() {
        let budget = Budget(AtomicU64::new(0));
        let won: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..1000).filter(|_| budget.try_charge(7, 700)).count()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap() as u64).sum()
        });
        assert_eq!(won, 100, "exactly cap / bytes charges succeed");
        assert_eq!(budget.charged(), 700);
    }
}
