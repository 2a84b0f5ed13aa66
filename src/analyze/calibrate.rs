//! Calibration: the counter's frequency, its resolution, and the instrumentation's
//! own overhead.
//!
//! **Frequency.** Each end of a ~50 ms window is bracketed by two `Instant::now()` reads
//! around one ordered counter read; of 32 tries the narrowest bracket is kept, and its
//! midpoint is taken as the counter read's time. The relative uncertainty is the sum of
//! the two half-widths over the window (about 1 ppm on the reference machine). Where the
//! hardware states the frequency (`CNTFRQ_EL0` on aarch64) that value is used when it
//! agrees with the measurement to 1%; otherwise the measurement wins.
//!
//! **Overhead.** On a short-lived internal thread, through the same `start`/`stop`/
//! `pulse` code users call: 7 batches of 1,000 empty scopes per (start mode, stop
//! mode) pair, and 7 batches of 1,000 back-to-back pulses, taken in 7 rounds of one
//! batch each. A batch's median is robust to the few samples an interrupt inflates; the
//! smallest of the 7 batch medians discards a batch that was preempted throughout, and
//! the rounds spread a slow spell of the machine over every pair. They are measured
//! while the frequency window runs, which the calling thread sleeps through: about
//! 60 ms in all, once per process (release build, reference guest).
//!
//! **Inside a parent.** What a scope costs the scope around it is more than the window
//! it records: its Start's work before the counter read and its Stop's work after it
//! land in the parent's time. In the same rounds, per pair, a batch of 1,000 empty
//! scopes each holding 8 empty scopes of that pair: the smallest batch median,
//! less an empty scope's window, divided by 8, is what one scope of the pair
//! costs its parent ([`Calibration::inside`]). The call tree's `LATTE INSIDE` is made
//! of it.

use crate::clock::{self, Mode};
use crate::record::fork::PerProcess;
use overheads::Overheads;
use serde::Serialize;
use std::time::{Duration, Instant};

/// The result of calibration. All overheads are in counter ticks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Calibration {
    /// Counter ticks per nanosecond.
    pub ticks_per_ns: f64,
    /// Relative uncertainty of `ticks_per_ns`.
    pub accuracy: f64,
    /// The counter's granularity in ticks: no delta finer than this is measurable.
    pub resolution: u64,
    /// `scope[start][stop]`: ticks an empty scope records, by `Mode as usize`.
    pub scope: [[u64; 3]; 3],
    /// Ticks a pulse records when nothing happens between two pulses.
    pub pulse: u64,
    /// `inside[start][stop]`: ticks a scope of that pair adds to the scope around it
    /// when it holds nothing (its window and the work of its Start and Stop outside
    /// the window), by `Mode as usize`; at least `scope[start][stop]`.
    pub inside: [[f64; 3]; 3],
    /// Wall time calibration took.
    pub took: Duration,
}

impl Calibration {
    /// The overhead of a Start in `start` mode closed by a Stop in `stop` mode.
    pub fn scope_overhead(&self, start: Mode, stop: Mode) -> u64 {
        self.scope[start as usize][stop as usize]
    }

    /// What a scope of `start` and `stop` modes adds to the scope around it beyond the
    /// window it records itself (the work of its Start before its read and of its
    /// Stop after it), in ticks; never below 0.
    ///
    /// ```
    /// use latte::Mode::Fast;
    /// let cal = latte::analyze::calibration();
    /// let outside = cal.outside_window(Fast, Fast);
    /// assert!(outside >= 0.0);
    /// assert_eq!(cal.inside[0][0], cal.scope_overhead(Fast, Fast) as f64 + outside);
    /// ```
    pub fn outside_window(&self, start: Mode, stop: Mode) -> f64 {
        let (s, t) = (start as usize, stop as usize);
        (self.inside[s][t] - self.scope[s][t] as f64).max(0.0)
    }
}

/// The process's calibration, measured on first use (about 50 ms, on an internal
/// thread) and then reused; the agent measures it at start-up.
///
/// ```
/// use latte::Mode::*;
/// let cal = latte::analyze::calibration();
/// assert!(cal.ticks_per_ns > 0.0 && cal.accuracy < 1e-3);
/// assert!(cal.resolution >= 1);
/// println!(
///     "an empty Fast scope records {} ticks, a Hard one {}",
///     cal.scope_overhead(Fast, Fast),
///     cal.scope_overhead(Hard, Hard)
/// );
/// ```
pub fn calibration() -> &'static Calibration {
    // Per process: a child forked while the parent calibrates calibrates afresh
    // instead of waiting for a thread it does not have.
    static CALIBRATION: PerProcess<Calibration> = PerProcess::new(calibrate);
    CALIBRATION.get()
}

/// Measures a calibration (about 60 ms): the overheads on the calibration thread while
/// this one sleeps through the frequency window.
fn calibrate() -> Calibration {
    let began = Instant::now();
    let resolution = resolution();
    let overheads = std::thread::Builder::new()
        .name("latte-calibrate".into())
        .spawn(overheads::measure);
    let (ticks_per_ns, accuracy) = frequency(Duration::from_millis(50));
    let Overheads {
        scope,
        pulse,
        inside,
    } = overheads
        .ok()
        .and_then(|h| h.join().ok())
        .unwrap_or_default();
    Calibration {
        ticks_per_ns,
        accuracy,
        resolution,
        scope,
        pulse,
        inside,
        took: began.elapsed(),
    }
}

/// One counter read bracketed by two OS-clock reads: (midpoint ns since `base`,
/// ticks, bracket width ns). The narrowest of 32 tries.
fn bracket(base: Instant) -> (f64, u64, f64) {
    (0..32)
        .map(|_| {
            let a = base.elapsed().as_nanos() as f64;
            let t = clock::read(Mode::Hard).ticks;
            let b = base.elapsed().as_nanos() as f64;
            ((a + b) / 2.0, t, b - a)
        })
        .min_by(|x, y| x.2.total_cmp(&y.2))
        .expect("32 tries")
}

fn frequency(window: Duration) -> (f64, f64) {
    let base = Instant::now();
    let (ns0, t0, w0) = bracket(base);
    std::thread::sleep(window);
    let (ns1, t1, w1) = bracket(base);
    let span = ns1 - ns0;
    let measured = t1.wrapping_sub(t0) as f64 / span;
    let accuracy = (w0 + w1) / 2.0 / span;
    match clock::nominal_ticks_per_ns() {
        Some(nominal) if (nominal - measured).abs() / nominal <= 0.01 => (
            nominal,
            ((nominal - measured).abs() / nominal).max(accuracy),
        ),
        _ => (measured, accuracy),
    }
}

/// The counter's granularity in ticks, from readings taken at pseudo-random spacings
/// (the random spacing defeats aliasing with the loop's own period): the larger of
/// [`grid_step`] and [`delta_step`].
fn resolution() -> u64 {
    const READS: usize = 2_000;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let readings: Vec<u64> = (0..READS)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            for i in 0..(state % 64) {
                std::hint::black_box(i);
            }
            clock::ticks()
        })
        .collect();
    grid_step(&readings).max(delta_step(&readings))
}

/// The largest `q <= 1024` such that at least 90% of `readings` leave the same
/// remainder mod `q`: a counter that moves in whole steps of `q` ticks. A counter that
/// moves every tick spreads its readings evenly over every `q`, giving 1. On the
/// reference KVM guest every TSC reading is `14 mod 26` but for rare phase slips, so
/// nothing finer than 26 ticks (10 ns) can be measured there.
fn grid_step(readings: &[u64]) -> u64 {
    let mut counts = vec![0usize; 1025];
    (2..=1024u64)
        .rev()
        .find(|&q| {
            let counts = &mut counts[..q as usize];
            counts.fill(0);
            readings.iter().for_each(|&t| counts[(t % q) as usize] += 1);
            counts
                .iter()
                .max()
                .is_some_and(|&m| m * 10 >= readings.len() * 9)
        })
        .unwrap_or(1)
}

/// The largest `q` in 4..=1024 such that at least 90% of the non-zero differences
/// between successive `readings` lie within one tick of a multiple of `q`; failing
/// that, a step that is a fraction of a tick off a whole number ([`fractional_step`]),
/// rounded up; 1 if none. This finds the steps of a clock scaled from a coarse
/// counter, whose readings are on no fixed grid: the OS clock on the reference guest
/// moves in steps of 10.01 ns (the TSC's 26 ticks), so its differences are 20, 21,
/// 30, 31, ... ns while its readings take every remainder. (Below 4, every difference
/// is within one of a multiple.)
fn delta_step(readings: &[u64]) -> u64 {
    let deltas: Vec<u64> = readings
        .windows(2)
        .map(|w| w[1].wrapping_sub(w[0]))
        .filter(|&d| d > 0 && d < 1 << 32)
        .collect();
    if deltas.len() < 10 {
        return 1;
    }
    (4..=1024u64)
        .rev()
        .find(|&q| steps_by(&deltas, q as f64))
        .or_else(|| fractional_step(&deltas).map(|q| q.ceil() as u64))
        .unwrap_or(1)
}

/// Whether at least 90% of `deltas` lie within one tick of a multiple of `q`.
fn steps_by(deltas: &[u64], q: f64) -> bool {
    let near = deltas
        .iter()
        .filter(|&&d| {
            let d = d as f64;
            (d - (d / q).round() * q).abs() <= 1.0
        })
        .count();
    near * 10 >= deltas.len() * 9
}

/// A step of a fraction of a tick off a whole number, which whole-number candidates
/// miss once differences span several steps (their error grows with each step): the
/// emulated counter of qemu-user follows a 1 us host clock at 62.5 MHz, 62.5 ticks a
/// step, so its differences are 62, 63, 125, 187, 188, 250, ... The smallest common
/// difference is a whole number of steps (one when reads are close together, more in
/// a slow build); the candidates are it divided by 1 to 8, give or take a tick, in
/// 1/64-tick steps, and the largest that [`steps_by`] accepts wins.
fn fractional_step(deltas: &[u64]) -> Option<f64> {
    let mut counts = std::collections::BTreeMap::new();
    for &d in deltas.iter().filter(|&&d| (4..=8 * 1024).contains(&d)) {
        *counts.entry(d).or_insert(0usize) += 1;
    }
    // The smallest difference that is common (a twentieth of them).
    let smallest = counts
        .iter()
        .find(|&(_, &n)| n * 20 >= deltas.len())
        .map(|(&d, _)| d as f64)?;
    (1..=8)
        .flat_map(|k| {
            (0..=128)
                .rev()
                .map(move |i| smallest / k as f64 - 1.0 + i as f64 / 64.0)
        })
        .find(|&q| (4.0..=1024.0).contains(&q) && steps_by(deltas, q))
}

/// Blocks every signal on the calling thread (one of latte's own): a process-directed
/// signal is then delivered to one of the program's threads, never to a calibration
/// thread, whose records would be hidden with it. Calibration at the lowest priority
/// can live long on a busy machine (seen: a storm of `SIGALRM`s, some of which ran
/// their handler on it).
#[cfg(unix)]
#[allow(unsafe_code)]
pub(crate) fn block_signals() {
    // SAFETY: `sigfillset` writes the set it is given, a valid `sigset_t`;
    // `pthread_sigmask` only changes the calling thread's mask and reads the set.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
    }
}

#[cfg(not(unix))]
pub(crate) fn block_signals() {}

mod overheads;
#[cfg(test)]
mod tests;
