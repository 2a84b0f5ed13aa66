//! The change in one quantile between two sets of runs: an interval for the relative
//! change, and a verdict against the noise threshold, with the chance of any false
//! alarm in a whole comparison held at 1%.
//!
//! * **Several runs on a side**: each run gives one value of the quantile; the
//!   interval is Welch's t interval on the difference of the mean logarithms, so it
//!   comes from the variation between runs (which includes each run's own sampling
//!   noise). One run against several borrows the other side's variance.
//! * **One run per side**: each run's blocks of time (50 ms each, carried by reports
//!   of format 4) are resampled by a stationary bootstrap with an automatic block
//!   length ([`blocks`]), so values that are alike because they ran at about the same
//!   time widen the interval as they should. The standard deviation of the log ratio
//!   over the resamples is its standard error, with Student's t on
//!   `blocks / (2 L) - 1` degrees of freedom ([`Blocks::df`]). A run with fewer than
//!   [`MIN_BLOCKS`](blocks::MIN_BLOCKS) blocks, or a report without blocks (format 3 or
//!   older), gives `inconclusive` with the reason.
//!
//! **Error control**, one run per side: a comparison holds `m` intervals that can
//! decide (components and call-tree nodes times quantiles, less those below
//! resolution, open, or repeating their id's row). Each is at confidence `1 - 1%/m`
//! (Bonferroni), so the chance that any of them misses its true change is at most 1%,
//! whatever the dependence between them; a false alarm (`regressed` or `improved` with
//! no real change) needs a miss, and a change beyond the threshold besides. With
//! several runs per side each interval is at 95%: Student's t on the few degrees of
//! freedom of three to five runs at Bonferroni's levels gives intervals of hundreds of
//! percent, so the family-wise rate is not held there.
//!
//! Either way the interval is widened in value space: the new value's interval,
//! `base x exp(log interval)`, is widened by one clock step and by the difference of
//! the two sides' calibrated overheads (a whole-run shift latte knows of), clamped at
//! 0, and divided by the base again, so a relative interval never passes -100%. A
//! base below one step is taken as one step, so a component that went from below the
//! clock's resolution to 70 ns still shows as a change. A quantile below one step on
//! both sides is [`Verdict::BelowResolution`]: no interval, counted apart. An interval
//! the data cannot bound is open: fewer than 1 degree of freedom, or an upper end
//! (before widening) past +[`SHOWN_UP_TO`] at the level the family is counted at
//! ([`Settings::open_at`]), with the run length that would bound it. Neither counts in
//! the Bonferroni family.

use latte::report::Distribution as Dist;
use rand::Rng;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

pub mod blocks;
pub use blocks::Blocks;

/// The family-wise false-alarm rate: the chance that a comparison in which nothing
/// changed calls anything regressed or improved is at most this.
pub const FAMILY_WISE: f64 = 0.01;
/// Confidence of each interval with several runs per side (Welch's t).
pub const RUNS_CONFIDENCE: f64 = 0.95;
/// Resamples of the one-run interval.
pub const RESAMPLES: usize = 1_000;
/// The relative change above which an end of an interval is printed as `> +500%`,
/// and past which the data are taken not to bound it (the interval is open).
pub const SHOWN_UP_TO: f64 = 5.0;
/// Fewest degrees of freedom of an interval: with fewer, it is open.
pub const MIN_DF: f64 = 1.0;
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
    /// Below one clock step on both sides: the clock cannot tell the values apart.
    BelowResolution,
}

impl Verdict {
    /// The word printed in tables.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
            Verdict::BelowResolution => "below resolution",
        }
    }
}

/// How the interval was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Welch's t interval over the runs' values.
    Runs,
    /// A stationary bootstrap over each run's blocks of time ([`blocks`]).
    Blocks,
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
    /// Lower end of the interval of `change`, at least -1 (-100%).
    pub low: f64,
    /// Upper end of the interval of `change`; infinite (`null` in JSON) when `open`.
    pub high: f64,
    /// Whether the data cannot bound the interval (too few blocks of time for the
    /// confidence asked): `low` is then -1 and `high` infinite.
    pub open: bool,
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
    /// Confidence of each interval: `1 - FAMILY_WISE / m` over the `m` intervals of
    /// the comparison (Bonferroni).
    pub confidence: f64,
    /// A shift of every value of a run that latte knows of, in the report's unit: the
    /// spread of the runs' calibrated overheads (0 for raw data).
    pub shift: f64,
    /// The confidence at which an interval is judged open (at or above `confidence`):
    /// the level over every interval that has one, at which the family was counted,
    /// so that an interval left out of the family as open stays open.
    pub open_at: f64,
}

/// What one side of a comparison holds for one component or node.
pub struct Side {
    /// One distribution per run.
    pub runs: Vec<Dist>,
    /// With one run: its blocks of time, or why they cannot be resampled (the
    /// reason names the file). Unused with several runs.
    pub blocks: Result<Blocks, String>,
}

/// The change in one quantile before its interval's confidence is chosen: the log of
/// the ratio and its standard error.
#[derive(Clone, Debug)]
pub struct Estimate {
    /// The quantile, e.g. 0.99.
    pub quantile: f64,
    /// Base value in the report's unit (the geometric mean over runs).
    pub base: f64,
    /// New value in the report's unit.
    pub new: f64,
    /// The base value floored at one clock step (what the ratio divides by).
    base_at: f64,
    /// `ln(new / base)`, both floored at one clock step.
    log_change: f64,
    /// Standard error of `log_change`.
    se: f64,
    /// Degrees of freedom of Student's t: Welch's (several runs), or the blocks' (the
    /// fewer of the two runs'); `None`: normal.
    df: Option<f64>,
    /// Why no interval can be given: the verdict is `inconclusive`.
    pub note: Option<String>,
    /// Both values are below one clock step.
    below_resolution: bool,
    /// With one run per side: the run with fewer degrees of freedom, what a bound
    /// that is open needs.
    stretch: Option<Stretch>,
}

/// One run's blocks of time, as far as an open interval's note needs them.
#[derive(Clone, Copy, Debug)]
struct Stretch {
    /// Blocks with values.
    has: usize,
    /// The stationary bootstrap's mean block length, in blocks.
    length: f64,
    /// A block's length in ms.
    block_ms: f64,
}

impl Estimate {
    /// Whether the estimate has an interval (not too few values or blocks, not below
    /// resolution); it may still be open.
    pub fn has_interval(&self) -> bool {
        self.note.is_none() && !self.below_resolution
    }

    /// Whether its interval at `confidence` is bounded: at least [`MIN_DF`] degrees of
    /// freedom, and an upper end (before widening) within +[`SHOWN_UP_TO`]. Only
    /// bounded intervals take part in the error control.
    pub fn bounded(&self, confidence: f64) -> bool {
        self.has_interval()
            && self.df.is_none_or(|df| df >= MIN_DF)
            && t(self.df, confidence) * self.se <= (1.0 + SHOWN_UP_TO).ln()
    }
}

/// Estimates the change in each quantile `qs` from the `base` runs to the `new` runs
/// (neither side empty): from the variation between runs with several runs on a
/// side, from each run's blocks with one run per side.
pub fn estimate(
    base: &Side,
    new: &Side,
    qs: &[f64],
    step: f64,
    rng: &mut impl Rng,
) -> Vec<Estimate> {
    let one_each = base.runs.len() == 1 && new.runs.len() == 1;
    let errors = match (one_each, &base.blocks, &new.blocks) {
        (false, _, _) => Ok(None),
        (true, Ok(b), Ok(n)) => Ok(Some((
            block_errors(b, n, qs, step, RESAMPLES, rng),
            b.df().min(n.df()),
        ))),
        (true, Err(why), _) | (true, _, Err(why)) => Err(why.clone()),
    };
    let stretch = match (one_each, &base.blocks, &new.blocks) {
        (true, Ok(b), Ok(n)) => {
            let fewer = if b.df() <= n.df() { b } else { n };
            Some(Stretch {
                has: fewer.len(),
                length: fewer.length(),
                block_ms: fewer.block_ms(),
            })
        }
        _ => None,
    };
    qs.iter()
        .enumerate()
        .map(|(i, &q)| {
            let errors = errors
                .as_ref()
                .map(|e| e.as_ref().map(|(se, df)| (se[i], *df)));
            let mut estimate = one_estimate(base, new, q, step, errors);
            estimate.stretch = stretch;
            estimate
        })
        .collect()
}

/// One quantile's estimate; `errors` is the block bootstrap's standard error and its
/// degrees of freedom with one run per side (`Ok(None)` with several runs), or why
/// there is none.
fn one_estimate(
    base: &Side,
    new: &Side,
    q: f64,
    step: f64,
    errors: Result<Option<(f64, f64)>, &String>,
) -> Estimate {
    let values = |runs: &[Dist]| runs.iter().map(|d| d.quantile(q)).collect::<Vec<f64>>();
    let (b, n) = (values(&base.runs), values(&new.runs));
    let mut estimate = Estimate {
        quantile: q,
        base: geometric_mean(&b),
        new: geometric_mean(&n),
        base_at: f64::NAN,
        log_change: f64::NAN,
        se: f64::NAN,
        df: None,
        note: None,
        // Half a step: a value of one step reads one step, one below it 0.
        below_resolution: b.iter().chain(&n).all(|&v| v < step / 2.0),
        stretch: None,
    };
    if let Some(why) = too_few(base.runs.iter().chain(&new.runs), q) {
        estimate.note = Some(why);
        return estimate;
    }
    // Below one step, values cannot be told apart: compare them as one step.
    let floored = |v: Vec<f64>| v.into_iter().map(|v| v.max(step)).collect::<Vec<f64>>();
    let (b, n) = (floored(b), floored(n));
    if b.iter().chain(&n).any(|&v| v <= 0.0) {
        estimate.note = Some("a value is 0 on a clock of unknown step: no ratio".into());
        return estimate;
    }
    estimate.base_at = geometric_mean(&b);
    estimate.log_change = (geometric_mean(&n) / estimate.base_at).ln();
    match errors {
        Ok(Some((se, df))) => (estimate.se, estimate.df) = (se, Some(df)),
        Ok(None) => (estimate.se, estimate.df) = welch(&b, &n),
        Err(why) => estimate.note = Some(why.clone()),
    }
    estimate
}

/// The change with its interval at `settings.confidence`, widened in value space by
/// one clock step and the runs' calibration shift, and its verdict; below resolution
/// on both sides, or open when the blocks are too few.
pub fn change(estimate: &Estimate, settings: &Settings) -> Change {
    let mut change = Change {
        quantile: estimate.quantile,
        base: estimate.base,
        new: estimate.new,
        change: f64::NAN,
        low: f64::NAN,
        high: f64::NAN,
        open: false,
        verdict: Verdict::Inconclusive,
        note: estimate.note.clone(),
    };
    if estimate.log_change.is_finite() {
        change.change = estimate.log_change.exp() - 1.0;
    }
    if estimate.below_resolution {
        change.change = f64::NAN;
        change.verdict = Verdict::BelowResolution;
        change.note = Some("both below one clock step".into());
        return change;
    }
    if estimate.note.is_some() {
        return change;
    }
    if !estimate.bounded(settings.open_at) {
        (change.low, change.high, change.open) = (-1.0, f64::INFINITY, true);
        change.note = Some(open_note(estimate, settings.open_at));
        return change;
    }
    let (low, high) = interval(
        estimate.log_change,
        estimate.se,
        estimate.df,
        settings.confidence,
    );
    let widen = settings.step + settings.shift;
    // In value space: the new value's interval for this base, widened, at least 0.
    let at = |log: f64, by: f64| (estimate.base_at * log.exp() + by).max(0.0) / estimate.base_at;
    (change.low, change.high) = (at(low, -widen) - 1.0, at(high, widen) - 1.0);
    change.verdict = verdict(change.change, change.low, change.high, settings.threshold);
    if change.verdict == Verdict::Inconclusive {
        change.note = Some(super::render::reason(&change, settings.threshold));
    }
    change
}

/// Why an interval is open: the blocks of time a bound at `confidence` needs (the
/// degrees of freedom that bring its upper end within +[`SHOWN_UP_TO`] at the run's
/// mean block length), and about how long a run that gives them is.
fn open_note(estimate: &Estimate, confidence: f64) -> String {
    let limit = (1.0 + SHOWN_UP_TO).ln();
    let Some(stretch) = estimate.stretch else {
        return "open: the runs differ too much for a bound at this confidence".into();
    };
    if t(None, confidence) * estimate.se > limit {
        return "open: the blocks vary too much for a bound at this confidence".into();
    }
    // The fewest degrees of freedom that bound it: t falls as they grow.
    let (mut low, mut high) = (MIN_DF, 1e6);
    while high - low > 0.5 {
        let mid = (low + high) / 2.0;
        if t(Some(mid), confidence) * estimate.se <= limit {
            high = mid;
        } else {
            low = mid;
        }
    }
    // `Blocks::df`: blocks / (2 L) - 1.
    let needs = (2.0 * stretch.length * (high + 1.0)).ceil() as usize;
    let seconds = needs as f64 * stretch.block_ms / 1000.0;
    format!(
        "open: a bound needs {needs} blocks of time (a run of about {seconds:.1} s), the run has {}",
        stretch.has
    )
}

/// Student's t quantile for a two-sided interval at `confidence` with `df` degrees of
/// freedom (the normal's without; infinite below [`MIN_DF`]).
fn t(df: Option<f64>, confidence: f64) -> f64 {
    let p = 1.0 - (1.0 - confidence) / 2.0;
    match df {
        Some(df) if df < MIN_DF => f64::INFINITY,
        Some(df) => StudentsT::new(0.0, 1.0, df).map_or(f64::INFINITY, |t| t.inverse_cdf(p)),
        None => Normal::standard().inverse_cdf(p),
    }
}

/// The two-sided interval `d ± t se` at `confidence` on the log scale: Student's t
/// with `df` degrees of freedom, the normal without.
pub fn interval(d: f64, se: f64, df: Option<f64>, confidence: f64) -> (f64, f64) {
    let t = t(df, confidence);
    (d - t * se, d + t * se)
}

/// The standard error of `ln(new q / base q)` for each quantile `qs`: its standard
/// deviation over `resamples` pairs of stationary-bootstrap resamples of the two runs'
/// blocks, values floored at `floor`.
pub fn block_errors(
    base: &Blocks,
    new: &Blocks,
    qs: &[f64],
    floor: f64,
    resamples: usize,
    rng: &mut impl Rng,
) -> Vec<f64> {
    let mut scratch = blocks::Scratch::default();
    let (mut b, mut n) = (vec![0.0; qs.len()], vec![0.0; qs.len()]);
    let mut logs = vec![Vec::with_capacity(resamples); qs.len()];
    for _ in 0..resamples {
        base.resample(qs, rng, &mut scratch, &mut b);
        new.resample(qs, rng, &mut scratch, &mut n);
        for (i, log) in logs.iter_mut().enumerate() {
            log.push((n[i].max(floor) / b[i].max(floor)).ln());
        }
    }
    logs.iter()
        .map(|v| moments(v).1.map_or(0.0, f64::sqrt))
        .collect()
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

/// Welch's standard error and degrees of freedom of `mean ln new - mean ln base`; a
/// side with one run borrows the other side's variance.
fn welch(base: &[f64], new: &[f64]) -> (f64, Option<f64>) {
    let logs = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let (x, y) = (logs(base), logs(new));
    let (_, vx, nx) = moments(&x);
    let (_, vy, ny) = moments(&y);
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
    (se, Some(df))
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
