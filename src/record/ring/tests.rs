//! The ring's unit tests; the loom models of its protocols are in `loom_model.rs`.

use super::*;

#[cfg(not(latte_loom))]
mod unit {
    use super::*;

    #[test]
    fn a_ring_header_stays_within_one_cache_line_with_its_arc_counts() {
        // The hot path reads and writes the words before `gens` through an `Arc`: 16
        // bytes of counts plus those words must not grow past 64 bytes.
        let hot = std::mem::offset_of!(Ring, gens);
        assert!(16 + hot <= 64, "{hot}");
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
        assert!(ring.commit(h, 3));
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
        let mut ring = Ring::new(2);
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
        // A reader that must allow for a push in flight, finding none (the head even),
        // keeps every sample too.
        out.clear();
        let r = ring.read(false, &mut out);
        assert_eq!(out, (13..21).collect::<Vec<_>>());
        assert_eq!((r.seen, r.first, r.kept), (21, 13, 8));
        // With one in flight (claimed, its slot perhaps stored), it gives up the oldest.
        let h = ring.claim().unwrap();
        out.clear();
        let r = ring.read(false, &mut out);
        assert_eq!(out, (14..21).collect::<Vec<_>>());
        assert_eq!((r.seen, r.first, r.kept), (21, 14, 7));
        assert!(ring.commit(h, 21));
    }

    #[test]
    fn a_ring_exactly_full_between_pushes_is_read_whole() {
        // Two bursts of half the ring between two reads: nothing was overwritten.
        let ring = Ring::new(8);
        let mut out = Vec::new();
        for v in 0..4 {
            ring.push(v);
        }
        let r = ring.read_from(0, false, &mut out);
        assert_eq!((r.seen, r.first, r.kept), (4, 0, 4));
        for v in 4..12 {
            ring.push(v);
        }
        out.clear();
        let r = ring.read_from(4, false, &mut out);
        assert_eq!((r.seen, r.first, r.kept), (12, 4, 8));
        assert_eq!(out, (4..12).collect::<Vec<_>>());
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
        let ring = Ring::new(crate::config::RING_START);
        ring.prefault();
        assert_eq!(
            ring.resident_bytes(),
            crate::config::RING_START as u64 * 8 + 64
        );
        for v in 1..=3 {
            ring.push(v);
        }
        ring.prefault();
        let mut out = Vec::new();
        assert_eq!(ring.read(true, &mut out).seen, 3);
        assert_eq!(out, [1, 2, 3]);
        assert_eq!(Ring::new(1024).resident_bytes(), 64);
    }

    /// Every index pushed so far, read back exactly (as the owner reads).
    fn all(ring: &Ring) -> Vec<u64> {
        let mut out = Vec::new();
        ring.read(true, &mut out);
        out
    }

    #[test]
    fn a_ring_grows_on_its_first_overwrite_and_keeps_every_sample_in_place() {
        let ring = Ring::growing(4, 32);
        assert_eq!((ring.capacity(), ring.reserved_bytes()), (32, 4 * 8));
        for v in 0..4 {
            assert_eq!(ring.try_push(v), Pushed::Stored);
        }
        // Index 4 would overwrite index 0: the push claims it and asks for growth.
        let Pushed::Full(h) = ring.try_push(4) else {
            panic!("a full first generation must grow")
        };
        assert_eq!((h, ring.seen()), (4, 4));
        ring.grow();
        assert!(ring.commit(h, 4));
        assert_eq!(all(&ring), [0, 1, 2, 3, 4]);
        for v in 5..40 {
            assert!(ring.push(v));
        }
        // 4 -> 8 -> 16 -> 32 slots, then it wraps at its capacity.
        assert_eq!(all(&ring), (8..40).collect::<Vec<_>>());
        let mut out = Vec::new();
        let r = ring.read_from(3, false, &mut out);
        assert_eq!((r.seen, r.first, r.kept), (40, 8, 32), "between pushes");
        // Once it wraps, a push in flight costs the read its oldest sample.
        let h = ring.claim().unwrap();
        out.clear();
        let r = ring.read_from(3, false, &mut out);
        assert_eq!(
            (r.seen, r.first, r.kept),
            (40, 9, 31),
            "the margin once it wraps"
        );
        assert!(ring.commit(h, 40));
        // A reader has freed every retired generation: only the 32 slots remain.
        assert_eq!(ring.reserved_bytes(), 32 * 8);
        assert_eq!(ring.capacity(), 32);
    }

    #[test]
    fn a_growing_ring_needs_no_margin_for_a_push_in_flight() {
        let ring = Ring::growing(4, 32);
        for v in 0..6 {
            ring.push(v);
        }
        // Not the last generation: nothing read can have been overwritten.
        let mut out = Vec::new();
        let r = ring.read(false, &mut out);
        assert_eq!((out.len(), r.first), (6, 0));
    }

    #[test]
    fn a_refused_growth_keeps_the_slots_and_wraps_there() {
        let mut ring = Ring::growing(4, 32);
        ring.gens.refuse_growth = true;
        for v in 0..10 {
            assert!(ring.push(v));
        }
        assert_eq!(ring.capacity(), 4, "its capacity is now what it kept");
        assert_eq!(all(&ring), [6, 7, 8, 9]);
        let mut out = Vec::new();
        let r = ring.read(false, &mut out);
        assert_eq!((r.first, out.as_slice()), (6, &[6, 7, 8, 9][..]));
        // A push in flight: the margin, as in the last generation of any ring.
        let h = ring.claim().unwrap();
        out.clear();
        let r = ring.read(false, &mut out);
        assert_eq!((r.first, out.as_slice()), (7, &[7, 8, 9][..]));
        ring.cancel(h);
        assert_eq!(ring.reserved_bytes(), 4 * 8);
    }

    #[test]
    fn prefault_grows_to_the_capacity_and_keeps_the_samples() {
        let ring = Ring::growing(4, 64);
        for v in 0..3 {
            ring.push(v);
        }
        ring.prefault();
        assert_eq!(ring.len.load(Ordering::Relaxed), 64);
        assert_eq!(
            ring.resident_bytes(),
            4096 + 64,
            "64 slots, the first 4 freed"
        );
        assert_eq!(ring.reserved_bytes(), 64 * 8);
        for v in 3..70 {
            ring.push(v);
        }
        assert_eq!(all(&ring), (6..70).collect::<Vec<_>>());
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
