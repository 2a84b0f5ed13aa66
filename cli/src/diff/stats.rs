//! The change in one quantile between two sets of runs: a 95% confidence interval for
//! the relative change and a verdict against the noise threshold.
//!
//! * **Several runs on a side**: each run gives one value of the quantile; the
//!   interval is Welch's t interval on the difference of the mean logarithms, so it
//!   comes from the variation between runs (which includes each run's own sampling
//!   noise). One run against several borrows the other side's variance.
//! * **One run per side**: the interval comes from resampling each histogram. The
//!   quantile of a resample of `n` values is the value at the `k`-th smallest of `n`
//!   uniform draws, `k = ceil(q * n)`, and that order statistic follows
//!   `Beta(k, n + 1 - k)`: one Beta draw per side and resample gives the bootstrap
//!   distribution exactly, without drawing `n` values. It treats the samples of a run
//!   as independent, which latencies in one run are not (warm caches, a noisy
//!   neighbour for a while), so the interval is too narrow for what another run would
//!   show; the output says so.
//!
//! Either way the interval is widened by one clock step relative to the base value:
//! values closer than the clock's step cannot be told apart. For the same reason a
//! value below one step (calibrated data can be 0: all of it the instrumentation's
//! own cost) is taken as one step, so a component that went from below the clock's
//! resolution to 70 ns still shows as a change.

use latte::report::Distribution as Dist;
use rand::Rng;
use rand_distr::{Beta, Distribution};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Confidence of the interval.
pub const CONFIDENCE: f64 = 0.95;
/// Resamples for the one-run interval.
pub const RESAMPLES: usize = 2_000;
/// Values a run needs on each side of a quantile for the quantile to be estimated:
/// fewer, and the verdict is `inconclusive`.
pub const MIN_BEYOND: f64 = 10.0;

/// What a change amounts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Faster beyond the threshold, with confidence.
    Improved,
    /// Slower beyond the threshold, with confidence.
    Regressed,
    /// No change beyond the threshold.
    NoChange,
    /// The data cannot tell: too few values, or an interval wider than the threshold
    /// on both sides.
    Inconclusive,
}

impl Verdict {
    /// The word printed in tables.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// How the interval was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Welch's t interval over the runs' values.
    Runs,
    /// Resampling the two histograms.
    Resampling,
}

/// The change in one quantile.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    /// The quantile, e.g. 0.99.
    pub quantile: f64,
    /// Base value in the report's unit (the geometric mean over runs).
    pub base: f64,
    /// New value in the report's unit.
    pub new: f64,
    /// `new / base - 1` (`0.05`: 5% slower).
    pub change: f64,
    /// Lower end of the 95% interval of `change`.
    pub low: f64,
    /// Upper end of the 95% interval of `change`.
    pub high: f64,
    /// The verdict against the threshold.
    pub verdict: Verdict,
    /// Why the verdict is inconclusive, or other caveats.
    pub note: Option<String>,
}

/// What every comparison shares.
pub struct Settings {
    /// Relative change below which a change is noise, e.g. 0.05.
    pub threshold: f64,
    /// The clock's step in the report's unit.
    pub step: f64,
}

/// Compares quantile `q` of the `base` runs with the `new` runs (neither empty).
pub fn compare(
    base: &[Dist],
    new: &[Dist],
    q: f64,
    settings: &Settings,
    rng: &mut impl Rng,
) -> Change {
    let floor = settings.step;
    let values = |runs: &[Dist]| runs.iter().map(|d| d.quantile(q)).collect::<Vec<f64>>();
    let (b, n) = (values(base), values(new));
    let mut change = Change {
        quantile: q,
        base: geometric_mean(&b),
        new: geometric_mean(&n),
        change: f64::NAN,
        low: f64::NAN,
        high: f64::NAN,
        verdict: Verdict::Inconclusive,
        note: None,
    };
    if let Some(why) = too_few(base.iter().chain(new), q) {
        change.note = Some(why);
        return change;
    }
    // Below one step, values cannot be told apart: compare them as one step.
    let floored = |v: Vec<f64>| v.into_iter().map(|v| v.max(floor)).collect::<Vec<f64>>();
    let (b, n) = (floored(b), floored(n));
    if b.iter().chain(&n).any(|&v| v <= 0.0) {
        change.note = Some("a value is 0 on a clock of unknown step: no ratio".into());
        return change;
    }
    let (base_at, new_at) = (geometric_mean(&b), geometric_mean(&n));
    change.change = new_at / base_at - 1.0;
    let (low, high) = if base.len() == 1 && new.len() == 1 {
        resampled(&base[0], &new[0], q, floor, rng)
    } else {
        welch(&b, &n)
    };
    let widen = settings.step / base_at;
    (change.low, change.high) = (low - widen, high + widen);
    change.verdict = verdict(change.change, change.low, change.high, settings.threshold);
    change
}

/// The verdict from the point estimate and interval of a relative change: a change
/// beyond the threshold whose interval excludes 0 is a regression or an improvement;
/// "no change" needs the whole interval inside `±threshold` (an interval that reaches
/// past it allows a change that matters, so it is inconclusive); anything not finite is
/// inconclusive.
pub fn verdict(change: f64, low: f64, high: f64, threshold: f64) -> Verdict {
    if ![change, low, high].iter().all(|v| v.is_finite()) {
        Verdict::Inconclusive
    } else if low > 0.0 && change > threshold {
        Verdict::Regressed
    } else if high < 0.0 && change < -threshold {
        Verdict::Improved
    } else if -threshold <= low && high <= threshold {
        Verdict::NoChange
    } else {
        Verdict::Inconclusive
    }
}

/// Why `q` cannot be estimated from these runs, if it cannot.
fn too_few<'a>(runs: impl Iterator<Item = &'a Dist>, q: f64) -> Option<String> {
    let needed = (MIN_BEYOND / q.min(1.0 - q)).ceil() as u64;
    let fewest = runs.map(Dist::len).min()?;
    (fewest < needed).then(|| format!("too few samples ({fewest} of the {needed} needed)"))
}

/// The geometric mean; one value is itself (exactly: a single run's quantile is the
/// report's); any value not above 0 gives the arithmetic mean instead.
fn geometric_mean(values: &[f64]) -> f64 {
    if let [one] = values {
        return *one;
    }
    if values.iter().any(|&v| v <= 0.0) {
        return values.iter().sum::<f64>() / values.len() as f64;
    }
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

/// The interval of `new / base - 1` from resampling both histograms.
fn resampled(base: &Dist, new: &Dist, q: f64, floor: f64, rng: &mut impl Rng) -> (f64, f64) {
    let draw = |dist: &Dist| {
        let n = dist.len() as f64;
        let k = latte::report::rank(q, dist.len()) as f64;
        Beta::new(k, n + 1.0 - k).expect("k and n + 1 - k are at least 1")
    };
    let (b, n) = (draw(base), draw(new));
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let vb = base.quantile(b.sample(rng)).max(floor);
            let vn = new.quantile(n.sample(rng)).max(floor);
            vn / vb - 1.0
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let at = |p: f64| ratios[((p * RESAMPLES as f64) as usize).min(RESAMPLES - 1)];
    (at(tail), at(1.0 - tail))
}

/// Welch's interval of `exp(mean ln new - mean ln base) - 1`; a side with one run
/// borrows the other side's variance.
fn welch(base: &[f64], new: &[f64]) -> (f64, f64) {
    let logs = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let (x, y) = (logs(base), logs(new));
    let (mx, vx, nx) = moments(&x);
    let (my, vy, ny) = moments(&y);
    let (se, df) = match (vx, vy) {
        (Some(vx), Some(vy)) => {
            let (a, b) = (vx / nx, vy / ny);
            let se2 = a + b;
            let df = se2 * se2 / (a * a / (nx - 1.0) + b * b / (ny - 1.0));
            (se2.sqrt(), if df.is_finite() { df } else { nx + ny - 2.0 })
        }
        (Some(v), None) => ((v * (1.0 / nx + 1.0 / ny)).sqrt(), nx - 1.0),
        (None, Some(v)) => ((v * (1.0 / nx + 1.0 / ny)).sqrt(), ny - 1.0),
        (None, None) => unreachable!("welch is for several runs on a side"),
    };
    let t = StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0))
        .unwrap_or(f64::INFINITY);
    let d = my - mx;
    ((d - t * se).exp() - 1.0, (d + t * se).exp() - 1.0)
}

/// Mean, sample variance (`None` for one value) and count.
fn moments(v: &[f64]) -> (f64, Option<f64>, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = (v.len() > 1).then(|| v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0));
    (mean, var, n)
}

#[cfg(test)]
mod tests;
