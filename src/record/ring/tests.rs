//! The ring's unit tests, and the loom model of its read protocol.

use super::*;

#[cfg(not(latte_loom))]
mod unit {
    use super::*;

    #[test]
    fn a_ring_header_stays_within_one_cache_line_with_its_arc_counts() {
        // The hot path reads `head`, `mask` and `slots` through an `Arc`: 16 bytes of
        // counts plus the ring must not grow past 64 bytes.
        assert!(16 + size_of::<Ring>() <= 64, "{}", size_of::<Ring>());
    }

    #[test]
    fn a_push_inside_a_push_is_refused_and_the_outer_one_completes() {
        let ring = Ring::new(4);
        assert!(ring.push(1));
        // A push in flight (claimed, not yet committed), as a signal handler finds it.
        let h = ring.claim().unwrap();
        assert_eq!(ring.seen(), 1, "a claim publishes nothing");
        assert!(!ring.push(2), "the handler's push is refused");
        assert_eq!(ring.claim(), None);
        ring.commit(h, 3);
        let mut out = Vec::new();
        assert_eq!(ring.read(true, &mut out).seen, 2);
        assert_eq!(
            out,
            [1, 3],
            "the interrupted push completed with its own value"
        );
        // A cancelled claim stores nothing and leaves the ring usable.
        let h = ring.claim().unwrap();
        ring.cancel(h);
        assert!(ring.push(4));
        out.clear();
        ring.read(true, &mut out);
        assert_eq!(out, [1, 3, 4]);
    }

    #[test]
    fn the_pulse_baseline_lives_in_the_ring() {
        let ring = Ring::new(2);
        assert_eq!(ring.swap_pulse(10), 0);
        assert_eq!(ring.swap_pulse(25), 10);
        ring.reset();
        assert_eq!(ring.swap_pulse(7), 0, "a recycled ring has no baseline");
    }

    #[test]
    fn wrap_keeps_newest_in_order() {
        let ring = Ring::new(8);
        for v in 0..21 {
            ring.push(v);
        }
        let mut out = Vec::new();
        let r = ring.read(true, &mut out);
        assert_eq!(out, (13..21).collect::<Vec<_>>());
        assert_eq!((r.seen, r.first, r.kept), (21, 13, 8));
        // A reader that must allow for a push in flight gives up the oldest one.
        out.clear();
        let r = ring.read(false, &mut out);
        assert_eq!(out, (14..21).collect::<Vec<_>>());
        assert_eq!((r.seen, r.first, r.kept), (21, 14, 7));
    }

    #[test]
    fn partial_ring_is_exact_either_way() {
        let ring = Ring::new(8);
        for v in 0..5 {
            ring.push(v * 10);
        }
        for quiet in [true, false] {
            let mut out = vec![99];
            let r = ring.read(quiet, &mut out);
            assert_eq!(out, [99, 0, 10, 20, 30, 40]);
            assert_eq!((r.seen, r.first, r.kept), (5, 0, 5));
        }
    }

    #[test]
    fn read_from_returns_only_what_is_new() {
        let ring = Ring::new(8);
        for v in 0..5 {
            ring.push(v);
        }
        let mut out = Vec::new();
        let r = ring.read_from(3, false, &mut out);
        assert_eq!(
            (out.as_slice(), r.seen, r.first, r.kept),
            (&[3, 4][..], 5, 3, 2)
        );
        // Lapped since index 3: the read starts at the oldest retained sample.
        for v in 5..20 {
            ring.push(v);
        }
        out.clear();
        let r = ring.read_from(5, true, &mut out);
        assert_eq!((r.seen, r.first, r.kept), (20, 12, 8));
        assert_eq!(out, (12..20).collect::<Vec<_>>());
        // Nothing new.
        out.clear();
        assert_eq!(ring.read_from(20, false, &mut out).kept, 0);
        assert!(out.is_empty());
    }

    #[test]
    fn prefault_keeps_the_samples_and_counts_every_page() {
        let ring = Ring::new(1024);
        ring.prefault();
        assert_eq!(ring.resident_bytes(), 1024 * 8 + 64);
        for v in 1..=3 {
            ring.push(v);
        }
        ring.prefault();
        let mut out = Vec::new();
        assert_eq!(ring.read(true, &mut out).seen, 3);
        assert_eq!(out, [1, 2, 3]);
        assert_eq!(Ring::new(1024).resident_bytes(), 64);
    }

    #[test]
    fn empty_ring() {
        let ring = Ring::new(2);
        let mut out = Vec::new();
        assert_eq!(ring.read(false, &mut out).kept, 0);
        assert!(out.is_empty());
        assert_eq!(ring.capacity(), 2);
    }
}

/// `RUSTFLAGS="--cfg latte_loom" cargo test --lib --release loom`
#[cfg(latte_loom)]
mod loom_model {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    const CAP: usize = 2;
    const PUSHES: u64 = 5;

    /// The "obvious" protocol DESIGN.md warns about: no fences, keep `>= h2 - N`.
    fn push_naive(ring: &Ring, value: u64) {
        let h = load_own(&ring.head) >> 1;
        ring.slots[(h & ring.mask) as usize].store(value, Ordering::Relaxed);
        ring.head.store((h + 1) << 1, Ordering::Release);
    }

    fn read_naive(ring: &Ring, out: &mut Vec<u64>) -> u64 {
        let n = ring.slots.len() as u64;
        let h1 = ring.head.load(Ordering::Acquire) >> 1;
        let lo = h1.saturating_sub(n);
        out.extend((lo..h1).map(|i| ring.slots[(i & ring.mask) as usize].load(Ordering::Relaxed)));
        let h2 = ring.head.load(Ordering::Acquire) >> 1;
        let first = h2.saturating_sub(n).clamp(lo, h1);
        out.drain(..(first - lo) as usize);
        first
    }

    /// The `+ 1` margin without the fences: interleavings alone cannot break it, but
    /// weak memory can (a slot read sees a newer value than the head read after it).
    fn read_no_fence(ring: &Ring, out: &mut Vec<u64>) -> u64 {
        let n = ring.slots.len() as u64;
        let h1 = ring.head.load(Ordering::Acquire) >> 1;
        let lo = h1.saturating_sub(n);
        out.extend((lo..h1).map(|i| ring.slots[(i & ring.mask) as usize].load(Ordering::Relaxed)));
        let h2 = ring.head.load(Ordering::Acquire) >> 1;
        let first = (h2 + 1).saturating_sub(n).clamp(lo, h1);
        out.drain(..(first - lo) as usize);
        first
    }

    /// Runs a writer pushing `value = index` against one concurrent read, and checks
    /// every kept sample carries its own index.
    fn check(push: fn(&Ring, u64), read: fn(&Ring, &mut Vec<u64>) -> u64) {
        static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        loom::model(move || {
            RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let ring = Arc::new(Ring::new(CAP));
            let writer = {
                let ring = ring.clone();
                thread::spawn(move || {
                    for i in 0..PUSHES {
                        push(&ring, i);
                    }
                })
            };
            let mut out = Vec::new();
            let first = read(&ring, &mut out);
            for (k, &v) in out.iter().enumerate() {
                assert_eq!(
                    v,
                    first + k as u64,
                    "sample at index {} holds {v}",
                    first + k as u64
                );
            }
            assert!(out.len() <= CAP);
            writer.join().unwrap();
            // Once the writer is gone the read is exact.
            let mut out = Vec::new();
            let r = ring.read(true, &mut out);
            assert_eq!(r.seen, PUSHES);
            assert_eq!(out, (PUSHES - CAP as u64..PUSHES).collect::<Vec<_>>());
        });
        // Guard against a model that silently stops exploring (see `sync::load_own`).
        assert!(RUNS.swap(0, std::sync::atomic::Ordering::Relaxed) > 100);
    }

    #[test]
    fn loom_shipped_protocol_never_mislabels() {
        check(
            |ring, v| assert!(ring.push(v)),
            |ring, out| ring.read(false, out).first,
        );
    }

    #[test]
    fn loom_margin_without_fences_mislabels() {
        let result = std::panic::catch_unwind(|| check(push_naive, read_no_fence));
        assert!(
            result.is_err(),
            "loom found no bad execution without the fences"
        );
    }

    /// A claim made of the owner's load and a relaxed store, not a read-modify-write:
    /// it breaks the release sequence the reader's first head load relies on.
    fn push_plain_claim(ring: &Ring, value: u64) {
        let old = load_own(&ring.head);
        ring.head.store(old + 1, Ordering::Relaxed);
        ring.commit(old >> 1, value);
    }

    #[test]
    fn loom_claim_without_read_modify_write_mislabels() {
        let result = std::panic::catch_unwind(|| {
            check(push_plain_claim, |ring, out| ring.read(false, out).first)
        });
        assert!(
            result.is_err(),
            "loom found no bad execution for a plain-store claim"
        );
    }

    #[test]
    fn loom_naive_protocol_mislabels() {
        let result = std::panic::catch_unwind(|| check(push_naive, read_naive));
        assert!(
            result.is_err(),
            "loom found no bad interleaving for the naive protocol"
        );
    }
}
