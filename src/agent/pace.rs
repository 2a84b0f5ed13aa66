//! The drain's pace: how long it waits between two folds.
//!
//! The wait is the time the fastest-filling ring takes to fill [`TARGET_FILL`] of its
//! capacity at its *peak* rate: the fastest fill rate any fold saw, remembered and
//! forgotten slowly (halved every [`HALF_LIFE`]). A fold that lands between two bursts
//! sees nothing new, but the peak of the last bursts still sets the wait, so the next
//! bursts find the drain awake. Before the first burst the drain knows nothing; it
//! starts at its shortest wait and lengthens it as the peak decays.

use std::time::Duration;

/// Share of the fastest-filling ring's capacity the drain lets fill between two folds.
pub(super) const TARGET_FILL: f64 = 0.25;

/// How fast a remembered peak fill rate is forgotten: it halves in this time.
pub(super) const HALF_LIFE: Duration = Duration::from_secs(5);

/// The pace of one drain thread.
#[derive(Debug)]
pub(super) struct Pace {
    /// Shortest and longest wait.
    bounds: (Duration, Duration),
    /// The peak fill rate remembered, as a share of a ring's capacity per second.
    peak: f64,
}

impl Pace {
    /// A pace within `bounds`, starting at the shortest wait.
    pub(super) fn new(bounds: (Duration, Duration)) -> Pace {
        let shortest = bounds.0.as_secs_f64();
        Pace {
            bounds,
            peak: if shortest > 0.0 {
                TARGET_FILL / shortest
            } else {
                f64::INFINITY
            },
        }
    }

    /// The wait before the first fold: the shortest.
    pub(super) fn first_wait(&self) -> Duration {
        self.bounds.0
    }

    /// The wait after a fold that saw rings fill at most at `fill_rate` (share of a
    /// capacity per second), `elapsed` after the previous fold.
    pub(super) fn next_wait(&mut self, fill_rate: f64, elapsed: Duration) -> Duration {
        let (min, max) = self.bounds;
        let kept = 0.5f64.powf(elapsed.as_secs_f64() / HALF_LIFE.as_secs_f64());
        // NaN from a rate of 0/0 leaves the peak as it was.
        self.peak = (self.peak * kept).max(fill_rate);
        if self.peak <= 0.0 {
            return max;
        }
        Duration::try_from_secs_f64(TARGET_FILL / self.peak).map_or(max, |d| d.clamp(min, max))
    }
}

#[cfg(test)]
mod tests;
