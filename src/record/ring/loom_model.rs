//! The loom models of the ring's read protocol and of its growth.
//!
//! `RUSTFLAGS="--cfg latte_loom" cargo test --release -p latte-telemetry-loom` (loom/)

use super::grow;
use super::*;
use loom::sync::Arc;
use loom::thread;

crate::record::sync::loom_models![
    loom_shipped_protocol_never_mislabels,
    loom_margin_without_fences_mislabels,
    loom_claim_without_read_modify_write_mislabels,
    loom_naive_protocol_mislabels,
    loom_a_ring_growing_under_a_reader_never_mislabels,
    loom_a_ring_refused_growth_under_a_reader_never_mislabels,
    loom_readers_free_retired_slots_only_when_no_reader_is_inside,
    loom_trusting_the_first_state_alone_mislabels,
    loom_no_margin_for_a_push_in_flight_mislabels,
];

const CAP: usize = 2;
const PUSHES: u64 = 5;

/// Slot `i` of the ring's current slots, as the owner sees them.
fn slot(ring: &Ring, i: u64) -> &AtomicU64 {
    let (slots, len) = ring.gens.current();
    // SAFETY: the index is masked to the current slots' length; the ring is alive.
    unsafe { &*slots.add((i & (len as u64 - 1)) as usize) }
}

/// The "obvious" protocol DESIGN.md warns about: no fences, keep `>= h2 - N`.
fn push_naive(ring: &Ring, value: u64) {
    let h = load_own(&ring.head) >> 1;
    slot(ring, h).store(value, Ordering::Relaxed);
    ring.head.store((h + 1) << 1, Ordering::Release);
}

fn read_naive(ring: &Ring, out: &mut Vec<u64>) -> u64 {
    let n = ring.capacity() as u64;
    let h1 = ring.head.load(Ordering::Acquire) >> 1;
    let lo = h1.saturating_sub(n);
    out.extend((lo..h1).map(|i| slot(ring, i).load(Ordering::Relaxed)));
    let h2 = ring.head.load(Ordering::Acquire) >> 1;
    let first = h2.saturating_sub(n).clamp(lo, h1);
    out.drain(..(first - lo) as usize);
    first
}

/// The `+ 1` margin without the fences: interleavings alone cannot break it, but
/// weak memory can (a slot read sees a newer value than the head read after it).
fn read_no_fence(ring: &Ring, out: &mut Vec<u64>) -> u64 {
    let n = ring.capacity() as u64;
    let h1 = ring.head.load(Ordering::Acquire) >> 1;
    let lo = h1.saturating_sub(n);
    out.extend((lo..h1).map(|i| slot(ring, i).load(Ordering::Relaxed)));
    let h2 = ring.head.load(Ordering::Acquire) >> 1;
    let first = (h2 + 1).saturating_sub(n).clamp(lo, h1);
    out.drain(..(first - lo) as usize);
    first
}

/// Runs a writer pushing `value = index` against one concurrent read, and checks
/// every kept sample carries its own index.
fn check(push: fn(&Ring, u64), read: fn(&Ring, &mut Vec<u64>) -> u64) {
    check_ring(|| Ring::new(CAP), push, read);
}

/// [`check`] on the rings `make` makes: after the writer is gone, the ring holds
/// the newest `CAP` samples (every ring here ends with `CAP` slots).
fn check_ring(make: fn() -> Ring, push: fn(&Ring, u64), read: fn(&Ring, &mut Vec<u64>) -> u64) {
    // This model's own count (models run side by side): a plain std atomic, outside
    // loom's view.
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = runs.clone();
    loom::model(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let ring = Arc::new(make());
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
    assert!(runs.load(std::sync::atomic::Ordering::Relaxed) > 100);
}

fn loom_shipped_protocol_never_mislabels() {
    check(
        |ring, v| assert!(ring.push(v)),
        |ring, out| ring.read(false, out).first,
    );
}

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
    assert!(ring.commit(old >> 1, value));
}

fn loom_claim_without_read_modify_write_mislabels() {
    let result = std::panic::catch_unwind(|| {
        check(push_plain_claim, |ring, out| ring.read(false, out).first)
    });
    assert!(
        result.is_err(),
        "loom found no bad execution for a plain-store claim"
    );
}

fn loom_naive_protocol_mislabels() {
    let result = std::panic::catch_unwind(|| check(push_naive, read_naive));
    assert!(
        result.is_err(),
        "loom found no bad interleaving for the naive protocol"
    );
}

/// A ring that starts at one slot and grows to `CAP` while it is read.
fn growing() -> Ring {
    Ring::growing(1, CAP)
}

/// A ring whose growth the memory cap refuses: it wraps at its first slots.
fn refused() -> Ring {
    let mut ring = Ring::growing(CAP, 2 * CAP);
    ring.gens.refuse_growth = true;
    ring
}

fn loom_a_ring_growing_under_a_reader_never_mislabels() {
    check_ring(
        growing,
        |ring, v| assert!(ring.push(v)),
        |ring, out| ring.read(false, out).first,
    );
}

fn loom_a_ring_refused_growth_under_a_reader_never_mislabels() {
    check_ring(
        refused,
        |ring, v| assert!(ring.push(v)),
        |ring, out| ring.read(false, out).first,
    );
}

/// Two readers and a growing writer: the reader that frees retired slots never
/// frees the ones another reader is copying. Three threads and a mutex: bounded to
/// 3 preemptions, or the model runs for hours.
fn loom_readers_free_retired_slots_only_when_no_reader_is_inside() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        let ring = Arc::new(growing());
        let writer = {
            let ring = ring.clone();
            thread::spawn(move || {
                for i in 0..2 {
                    assert!(ring.push(i));
                }
            })
        };
        let other = {
            let ring = ring.clone();
            thread::spawn(move || {
                let mut out = Vec::new();
                let first = ring.read(false, &mut out).first;
                assert!(out.iter().zip(first..).all(|(&v, i)| v == i));
            })
        };
        let mut out = Vec::new();
        let first = ring.read(false, &mut out).first;
        assert!(out.iter().zip(first..).all(|(&v, i)| v == i));
        writer.join().unwrap();
        other.join().unwrap();
    });
}

/// The first half of the broken readers below, as the shipped read does it: the
/// published head, the generation's state, and a copy of its last `n` slots into
/// `out`, then an acquire fence. Returns (head, state, n, the first index copied).
fn copy_last(ring: &Ring, out: &mut Vec<u64>) -> (u64, u64, u64, u64) {
    let h1 = ring.head.load(Ordering::Acquire) >> 1;
    let state = ring.gens.state();
    let (slots, n) = ring.gens.slots_of(state);
    let n = n as u64;
    let lo = h1.saturating_sub(n);
    // SAFETY: masked to the loaded generation's length; nothing is freed here.
    out.extend(
        (lo..h1).map(|i| unsafe { &*slots.add((i & (n - 1)) as usize) }.load(Ordering::Relaxed)),
    );
    fence(Ordering::Acquire);
    (h1, state, n, lo)
}

/// A reader that trusts a generation it loaded as not the last, without looking
/// at the state again after its copy: the cap's refusal makes it wrap meanwhile.
fn read_without_second_state(ring: &Ring, out: &mut Vec<u64>) -> u64 {
    let (h1, state, n, lo) = copy_last(ring, out);
    let h2 = ring.head.load(Ordering::Relaxed) >> 1;
    let first = if state & grow::FINAL != 0 {
        (h2 + 1).saturating_sub(n).clamp(lo, h1)
    } else {
        lo
    };
    out.drain(..(first - lo) as usize);
    first
}

fn loom_trusting_the_first_state_alone_mislabels() {
    let result = std::panic::catch_unwind(|| {
        check_ring(
            refused,
            |ring, v| assert!(ring.push(v)),
            read_without_second_state,
        )
    });
    assert!(
        result.is_err(),
        "loom found no bad execution for a reader that ignores the refusal"
    );
}

/// The shipped read, but an odd second head (a push in flight) read as the published
/// count: no margin for the push whose slot store may land before its head store.
fn read_no_margin_in_flight(ring: &Ring, out: &mut Vec<u64>) -> u64 {
    let _turn = ring.gens.reader_turn();
    let (h1, state, n, lo) = copy_last(ring, out);
    let h2 = ring.head.load(Ordering::Relaxed) >> 1;
    let first = if ring.gens.state_relaxed() == state | grow::FINAL {
        h2.saturating_sub(n).clamp(lo, h1)
    } else {
        lo
    };
    out.drain(..(first - lo) as usize);
    first
}

fn loom_no_margin_for_a_push_in_flight_mislabels() {
    let result = std::panic::catch_unwind(|| {
        check(|ring, v| assert!(ring.push(v)), read_no_margin_in_flight)
    });
    assert!(
        result.is_err(),
        "loom found no bad execution without the margin for a push in flight"
    );
}
