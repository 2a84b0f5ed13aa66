//! A distribution as base-2 exponential buckets: the layout of OpenTelemetry's
//! exponential histogram and of Prometheus's native histogram, which merge across
//! processes without loss (two histograms of one scale add bucket by bucket; of two
//! scales, the finer one is halved to the coarser first).
//!
//! At scale `s` the buckets grow by `base = 2^(2^-s)`: bucket `i` holds the values in
//! `(base^i, base^(i+1)]` (OpenTelemetry's indexing; Prometheus numbers the same
//! bucket `i + 1`). A value read back as its bucket's middle is off by at most
//! `(base - 1) / 2` of itself: 1/2,954 at scale 10, the finest latte uses, as fine as
//! latte's own histograms (3 significant digits, 1/2,048). A scale is chosen per
//! series: the finest at most [`Exponential::MAX_SCALE`] whose buckets from the
//! smallest value to the largest number at most the limit asked for; each scale less
//! doubles the error.

use crate::report::{Distribution, rank};

/// A series' values in exponential buckets, in seconds (see the module's
/// documentation). Made by [`Exponential::of`]; merged with [`Exponential::merge`].
///
/// ```
/// use latte::exporter::Exponential;
/// // 1,000 values of 1 ms and 10 of 8 ms, as two processes might export them.
/// let mut a = Exponential::from_values([(1e-3, 1_000)], Exponential::MAX_SCALE, 2_048);
/// let b = Exponential::from_values([(8e-3, 10)], 8, 2_048);
/// a.merge(&b);
/// assert_eq!((a.scale, a.count()), (8, 1_010));
/// assert!((a.quantile(0.5) / 1e-3 - 1.0).abs() < 0.002);
/// assert!((a.quantile(0.999) / 8e-3 - 1.0).abs() < 0.002);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exponential {
    /// The scale: the buckets grow by `2^(2^-scale)`.
    pub scale: i32,
    /// Values of zero (or below the smallest bucket a positive number has).
    pub zero_count: u64,
    /// The index of `counts[0]`'s bucket.
    pub offset: i32,
    /// The counts of the buckets `offset`, `offset + 1`, ...: dense, zeros between.
    pub counts: Vec<u64>,
}

impl Exponential {
    /// The finest scale latte exports: a bucket's middle is within 1/2,954 of any
    /// value in it, no worse than latte's own 1/2,048.
    pub const MAX_SCALE: i32 = 10;
    /// The coarsest scale: Prometheus's native histograms go down to -4.
    pub const MIN_SCALE: i32 = -4;
    /// Buckets a series may take unless told otherwise: at scale 7 (0.27% at worst)
    /// they cover 16 doubling steps, 1 us to 65 ms, say.
    pub const DEFAULT_MAX_BUCKETS: usize = 2_048;

    /// The index of the bucket holding `value` (> 0) at `scale`.
    ///
    /// ```
    /// use latte::exporter::Exponential;
    /// assert_eq!(Exponential::index(1.0, 0), -1); // (1/2, 1]
    /// assert_eq!(Exponential::index(1.5, 0), 0); // (1, 2]
    /// assert_eq!(Exponential::index(4.0, 1), 3); // (2^1.5, 4]
    /// ```
    pub fn index(value: f64, scale: i32) -> i32 {
        let scaled = value.log2() * f64::from(scale).exp2();
        scaled.ceil() as i32 - 1
    }

    /// The lower bound of bucket `index` at `scale`.
    fn lower(index: i32, scale: i32) -> f64 {
        (f64::from(index) * f64::from(-scale).exp2()).exp2()
    }

    /// `values` ((value in seconds, count) pairs, in increasing order or not) at the
    /// finest scale at most `max_scale` that keeps the buckets within `max_buckets`.
    pub fn from_values(
        values: impl IntoIterator<Item = (f64, u64)> + Clone,
        max_scale: i32,
        max_buckets: usize,
    ) -> Exponential {
        let positive = values
            .clone()
            .into_iter()
            .filter(|&(v, n)| v > 0.0 && n > 0);
        let (lo, hi) = positive.fold((f64::INFINITY, 0.0f64), |(lo, hi), (v, _)| {
            (lo.min(v), hi.max(v))
        });
        let mut scale = max_scale.clamp(Exponential::MIN_SCALE, Exponential::MAX_SCALE);
        if lo <= hi {
            while scale > Exponential::MIN_SCALE {
                let span = Exponential::index(hi, scale) - Exponential::index(lo, scale);
                if (span as usize) < max_buckets.max(1) {
                    break;
                }
                scale -= 1;
            }
        }
        let mut e = Exponential {
            scale,
            ..Exponential::default()
        };
        for (v, n) in values {
            e.add(v, n);
        }
        e
    }

    /// `dist`'s values (a row's histogram, in the report's unit; `per_second` turns
    /// that unit into seconds), each at its bucket's middle, as [`from_values`]
    /// takes them; an empty distribution gives the empty default.
    ///
    /// [`from_values`]: Exponential::from_values
    pub fn of(
        dist: &Distribution,
        per_second: f64,
        max_scale: i32,
        max_buckets: usize,
    ) -> Exponential {
        if dist.is_empty() {
            return Exponential::default();
        }
        let values: Vec<(f64, u64)> = dist
            .buckets()
            .map(|b| (b.value * per_second, b.count))
            .collect();
        Exponential::from_values(values, max_scale, max_buckets)
    }

    /// Adds `n` values of `value` seconds.
    fn add(&mut self, value: f64, n: u64) {
        if n == 0 {
            return;
        }
        if value.is_nan() || value <= 0.0 {
            self.zero_count += n;
            return;
        }
        let i = Exponential::index(value, self.scale);
        self.add_at(i, n);
    }

    /// Adds `n` to bucket `i`, growing the dense range to reach it.
    fn add_at(&mut self, i: i32, n: u64) {
        if self.counts.is_empty() {
            self.offset = i;
            self.counts.push(0);
        }
        if i < self.offset {
            let grow = (self.offset - i) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.offset = i;
        }
        let at = (i - self.offset) as usize;
        if at >= self.counts.len() {
            self.counts.resize(at + 1, 0);
        }
        self.counts[at] += n;
    }

    /// Halves the resolution `by` times: each bucket goes into the one of the coarser
    /// scale that holds it.
    pub fn downscale(&mut self, by: u32) {
        if by == 0 {
            return;
        }
        let (offset, counts) = (self.offset, std::mem::take(&mut self.counts));
        self.scale -= by as i32;
        for (k, n) in counts.into_iter().enumerate() {
            if n > 0 {
                self.add_at((offset + k as i32) >> by, n);
            }
        }
    }

    /// Adds `other`'s values: both at the coarser of the two scales.
    pub fn merge(&mut self, other: &Exponential) {
        let scale = self.scale.min(other.scale);
        self.downscale((self.scale - scale) as u32);
        let mut other = other.clone();
        other.downscale((other.scale - scale) as u32);
        self.zero_count += other.zero_count;
        for (k, &n) in other.counts.iter().enumerate() {
            if n > 0 {
                self.add_at(other.offset + k as i32, n);
            }
        }
    }

    /// How many values.
    pub fn count(&self) -> u64 {
        self.zero_count + self.counts.iter().sum::<u64>()
    }

    /// The `q`-quantile in seconds: the middle of the bucket holding the value of rank
    /// [`rank`]`(q, n)`, as a report ranks (0 for no values, or in the zero bucket).
    pub fn quantile(&self, q: f64) -> f64 {
        let n = self.count();
        if n == 0 {
            return 0.0;
        }
        let mut left = rank(q, n);
        if left <= self.zero_count {
            return 0.0;
        }
        left -= self.zero_count;
        for (k, &c) in self.counts.iter().enumerate() {
            if left <= c {
                let i = self.offset + k as i32;
                let (low, high) = (
                    Exponential::lower(i, self.scale),
                    Exponential::lower(i + 1, self.scale),
                );
                return (low + high) / 2.0;
            }
            left -= c;
        }
        Exponential::lower(self.offset + self.counts.len() as i32, self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_falls_in_the_bucket_whose_bounds_hold_it() {
        for scale in [-4, 0, 3, 8, 10] {
            for v in [1e-9, 3.7e-7, 1e-3, 0.5, 1.0, 2.0, 12.0] {
                let i = Exponential::index(v, scale);
                let (low, high) = (
                    Exponential::lower(i, scale),
                    Exponential::lower(i + 1, scale),
                );
                assert!(
                    low < v * (1.0 + 1e-12) && v <= high * (1.0 + 1e-12),
                    "{v} at {scale}: ({low}, {high}]"
                );
            }
        }
    }

    #[test]
    fn the_scale_is_the_finest_that_fits_and_its_error_is_half_a_bucket() {
        let one = Exponential::from_values([(1e-6, 5)], Exponential::MAX_SCALE, 2_048);
        assert_eq!((one.scale, one.counts.len()), (10, 1));
        assert!((one.quantile(0.5) / 1e-6 - 1.0).abs() < 1.0 / 2_900.0);
        // 1 us to 1 s: 20 doublings; 2,048 buckets hold 102 a doubling: scale 6.
        let wide = Exponential::from_values([(1e-6, 1), (1.0, 1)], 10, 2_048);
        assert_eq!(wide.scale, 6);
        assert!(wide.counts.len() <= 2_048);
        let few = Exponential::from_values([(1e-6, 1), (1.0, 1)], 10, 4);
        assert!(few.counts.len() <= 4, "{few:?}");
        let zero = Exponential::from_values([(0.0, 3), (2e-6, 1)], 10, 2_048);
        assert_eq!(
            (zero.zero_count, zero.count(), zero.quantile(0.5)),
            (3, 4, 0.0)
        );
    }

    #[test]
    fn merging_at_two_scales_keeps_every_value_in_the_bucket_that_holds_it() {
        let values = [(1.1e-6, 7), (3.3e-5, 2), (4.0e-3, 9)];
        let fine = Exponential::from_values(values, 9, 2_048);
        let mut coarse = Exponential::from_values([(5e-4, 1)], 4, 2_048);
        coarse.merge(&fine);
        let direct = Exponential::from_values(values.into_iter().chain([(5e-4, 1)]), 4, 2_048);
        assert_eq!(coarse, direct);
        assert_eq!(coarse.count(), 19);
    }
}
