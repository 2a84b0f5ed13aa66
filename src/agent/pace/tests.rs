//! The pace replayed against bursts recorded by `examples/bursts.rs` on the reference
//! machine (`tests/data/bursts.txt`: 400 bursts of 1,000 scopes every 2 ms and 400 of
//! 2,048 into 4,096-slot rings, 100 of 32,768 every 4 ms into a 65,536-slot ring), with the drain waking exactly when its pace says.

use super::{Pace, TARGET_FILL};
use std::time::Duration;

/// One burst of a recorded trace: its samples arrive evenly over `[start, end]` (ns).
#[derive(Clone, Copy, Debug)]
struct Burst {
    start: f64,
    end: f64,
    samples: f64,
}

/// The loads of the recorded trace: each ring's capacity and its bursts.
fn recorded() -> Vec<(f64, Vec<Burst>)> {
    let mut loads: Vec<(f64, Vec<Burst>)> = Vec::new();
    for line in include_str!("../../../tests/data/bursts.txt").lines() {
        if let Some(ring) = line.strip_prefix("# ring ") {
            loads.push((ring.parse().unwrap(), Vec::new()));
            continue;
        }
        let v: Vec<f64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        let burst = Burst {
            start: v[0],
            end: v[1],
            samples: v[2],
        };
        loads.last_mut().expect("a # ring line first").1.push(burst);
    }
    loads
}

/// Samples of `bursts` that arrive in `(from, to]` (ns).
fn arriving(bursts: &[Burst], from: f64, to: f64) -> f64 {
    bursts
        .iter()
        .map(|b| {
            let overlap = (to.min(b.end) - from.max(b.start)).max(0.0);
            b.samples * overlap / (b.end - b.start).max(1.0)
        })
        .sum()
}

/// Replays `bursts` into a ring of `capacity` with the drain's wait chosen by `wait`
/// (from the share of the ring filled since the previous fold, and the time since);
/// returns the largest share of the ring that filled between two folds.
fn replay(
    bursts: &[Burst],
    capacity: f64,
    first_wait: Duration,
    mut wait: impl FnMut(f64, Duration) -> Duration,
) -> f64 {
    let end = bursts.last().map_or(0.0, |b| b.end);
    let (mut at, mut next) = (0.0, first_wait.as_nanos() as f64);
    let mut fullest: f64 = 0.0;
    while at <= end {
        let filled = arriving(bursts, at, next) / capacity;
        fullest = fullest.max(filled);
        let elapsed = Duration::from_nanos((next - at) as u64);
        at = next;
        next = at + wait(filled, elapsed).as_nanos() as f64;
    }
    fullest
}

#[test]
fn the_wait_never_lets_the_busiest_ring_lap_on_recorded_bursts() {
    let loads = recorded();
    assert_eq!(loads.len(), 3);
    let bounds = (Duration::from_millis(1), Duration::from_millis(10));
    for (capacity, bursts) in &loads {
        let mut pace = Pace::new(bounds);
        let fullest = replay(bursts, *capacity, bounds.0, |filled, elapsed| {
            pace.next_wait(filled / elapsed.as_secs_f64(), elapsed)
        });
        // Never a lap: the ring never holds more than its capacity between two folds.
        assert!(fullest <= 1.0, "ring {capacity}: filled {fullest:.2}x");
    }
}

#[test]
fn pacing_by_the_last_folds_rate_alone_laps_on_the_same_bursts() {
    // The rule the pace replaces: the rate the last fold saw, the longest wait when it
    // saw nothing. A fold between two bursts then sleeps while the next ones lap.
    let (min, max) = (Duration::from_millis(1), Duration::from_millis(10));
    let last_rate = |filled: f64, elapsed: Duration| {
        if filled <= 0.0 {
            return max;
        }
        Duration::from_secs_f64(elapsed.as_secs_f64() * TARGET_FILL / filled).clamp(min, max)
    };
    let lapped = recorded()
        .iter()
        .filter(|(capacity, bursts)| replay(bursts, *capacity, min, last_rate) > 1.0)
        .count();
    assert_eq!(lapped, 3, "every recorded load laps under the old rule");
}

#[test]
fn a_quiet_drain_lengthens_its_wait_to_the_longest_and_a_burst_shortens_it() {
    let bounds = (Duration::from_millis(1), Duration::from_millis(10));
    let mut pace = Pace::new(bounds);
    let step = Duration::from_millis(10);
    // Nothing recorded: the wait starts at the shortest and reaches the longest.
    let waits: Vec<Duration> = (0..2_000).map(|_| pace.next_wait(0.0, step)).collect();
    assert!(waits[0] > bounds.0 && waits[0] < Duration::from_micros(1_010));
    assert!(waits.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(*waits.last().unwrap(), bounds.1);
    // A ring filled at 50 capacities per second: a quarter of it takes 5 ms.
    let busy = pace.next_wait(50.0, step);
    assert!(busy.abs_diff(Duration::from_millis(5)) < Duration::from_nanos(10));
    // A fold that sees nothing keeps nearly that wait (the peak halves in 5 s).
    let quiet = pace.next_wait(0.0, Duration::from_millis(5));
    assert!(quiet > Duration::from_millis(5) && quiet < Duration::from_micros(5_010));
}

#[test]
fn rates_past_the_bounds_and_odd_numbers_keep_the_wait_within_bounds() {
    let bounds = (Duration::from_millis(2), Duration::from_millis(7));
    let mut pace = Pace::new(bounds);
    for (rate, elapsed) in [
        (f64::INFINITY, Duration::ZERO),
        (f64::NAN, Duration::from_millis(3)),
        (1e-300, Duration::MAX),
        (1e12, Duration::from_nanos(1)),
        (0.0, Duration::from_secs(1_000_000)),
    ] {
        let wait = pace.next_wait(rate, elapsed);
        assert!(
            wait >= bounds.0 && wait <= bounds.1,
            "{rate} {elapsed:?}: {wait:?}"
        );
    }
}
