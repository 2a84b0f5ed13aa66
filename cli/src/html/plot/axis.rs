//! Axes: a log scale from values to pixels, its ticks on a 1-2-5 decade grid
//! (…, 100 ns, 200 ns, 500 ns, 1 us, …), each labelled in its own unit as latte writes
//! numbers, and the linear share axis of the histogram.

use latte::report::numbers;

/// A log scale: `lo..hi` (both positive) onto the pixels `from..to` (either order).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogScale {
    /// The lowest value on the axis.
    pub lo: f64,
    /// The highest value on the axis.
    pub hi: f64,
    /// The pixel of `lo`.
    pub from: f64,
    /// The pixel of `hi`.
    pub to: f64,
}

impl LogScale {
    /// The pixel of `v`, clamped to the axis (a value of 0 or less at its low end).
    pub fn at(&self, v: f64) -> f64 {
        if v.is_nan() || v <= 0.0 {
            return self.from;
        }
        let t = ((v / self.lo).ln() / (self.hi / self.lo).ln()).clamp(0.0, 1.0);
        self.from + (self.to - self.from) * t
    }
}

/// Ticks on a 1-2-5 decade grid inside `lo..=hi`, for an axis `decade` pixels a
/// decade long whose labels need `gap` pixels between ticks: 1-2-5 when 1 and 2 (the
/// closest pair, 0.3 decade apart) are `gap` apart, else every decade, else every 2nd,
/// 3rd … decade.
pub fn log_ticks(lo: f64, hi: f64, decade: f64, gap: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && decade > 0.0) {
        return Vec::new();
    }
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let inside = |t: &f64| lo * (1.0 - 1e-9) <= *t && *t <= hi * (1.0 + 1e-9);
    let (mantissas, stride): (&[f64], i32) = if 2f64.log10() * decade >= gap {
        (&[1.0, 2.0, 5.0], 1)
    } else {
        (&[1.0], (gap / decade).ceil().max(1.0) as i32)
    };
    (first..=last)
        .filter(|e| e.rem_euclid(stride) == 0)
        .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
        .filter(inside)
        .collect()
}

/// The ticks of a latency axis: (pixel, label) where labels fit `gap` pixels apart,
/// and the pixels of the whole 1-2-5 grid (drawn as grid lines).
pub fn latency_ticks(scale: &LogScale, gap: f64, unit: &str) -> (Vec<(f64, String)>, Vec<f64>) {
    let decade = (scale.to - scale.from).abs() / (scale.hi / scale.lo).log10();
    let labelled = log_ticks(scale.lo, scale.hi, decade, gap)
        .into_iter()
        .map(|t| (scale.at(t), tick_label(t, unit)))
        .collect();
    let grid = log_ticks(scale.lo, scale.hi, decade, 0.0)
        .into_iter()
        .map(|t| scale.at(t))
        .collect();
    (labelled, grid)
}

/// A tick's label in its own unit, as latte writes numbers, without trailing zeros:
/// `500 ns`, `1 us`, `2.5 ms` in time (`unit` `ns`); `500`, `2 k`, `10 M` in cycles.
pub fn tick_label(v: f64, unit: &str) -> String {
    let written = match unit {
        "ns" => numbers::time(v),
        _ => numbers::ticks(v),
    };
    let (number, rest) = written.split_once(' ').unwrap_or((&written, ""));
    let number = if number.contains('.') && !number.contains('e') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    };
    match rest {
        "" => number.to_string(),
        rest => format!("{number} {rest}"),
    }
}

/// The title of a latency axis whose ticks [`tick_label`] wrote: times carry their own
/// units, so the title names none; cycles are bare numbers, so it names them.
pub fn axis_title(unit: &str) -> String {
    match unit {
        "ns" => "latency (log scale)".into(),
        other => format!("latency ({other}, log scale)"),
    }
}

/// Ticks of the share axis (a fraction, 0 up to `top`): 0 and at most 5 steps of a
/// 1-2-5 share, the last one (the axis's end) at or above `top`.
pub fn share_ticks(top: f64) -> Vec<f64> {
    let top = top.max(1e-4);
    let step = log_ticks(1e-5, 10.0, 100.0, 0.0)
        .into_iter()
        .find(|&s| top / s <= 5.0)
        .unwrap_or(1.0);
    let n = (top / step - 1e-9).ceil() as usize;
    (0..=n).map(|k| k as f64 * step).collect()
}

/// A share as a percentage without trailing zeros: `0%`, `2.5%`, `10%`.
pub fn percent(share: f64) -> String {
    let s = format!("{:.3}", share * 100.0);
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_run_1_2_5_over_decades() {
        // 100 px a decade: 1 and 2 are 30 px apart, room for 30 px labels.
        assert_eq!(
            log_ticks(80.0, 12_000.0, 100.0, 30.0),
            [100.0, 200.0, 500.0, 1e3, 2e3, 5e3, 1e4]
        );
        assert_eq!(log_ticks(0.3, 3.0, 100.0, 30.0), [0.5, 1.0, 2.0]);
        // Too close for 1-2-5: one per decade, then every other decade.
        assert_eq!(log_ticks(1.0, 1e3, 60.0, 30.0), [1.0, 10.0, 100.0, 1e3]);
        assert_eq!(log_ticks(1.0, 1e6, 20.0, 30.0), [1.0, 100.0, 1e4, 1e6]);
        assert!(log_ticks(0.0, 10.0, 100.0, 30.0).is_empty());
    }

    #[test]
    fn every_label_is_in_its_own_unit() {
        let labels: Vec<String> = log_ticks(150.0, 25_000.0, 200.0, 60.0)
            .iter()
            .map(|&v| tick_label(v, "ns"))
            .collect();
        assert_eq!(
            labels,
            ["200 ns", "500 ns", "1 us", "2 us", "5 us", "10 us", "20 us"]
        );
        assert_eq!(tick_label(0.5, "ns"), "500 ps");
        assert_eq!(tick_label(2e6, "ns"), "2 ms");
        assert_eq!(tick_label(5e9, "ns"), "5 s");
        assert_eq!(tick_label(500.0, "cycles"), "500");
        assert_eq!(tick_label(2_000.0, "cycles"), "2 k");
        assert_eq!(tick_label(1e7, "cycles"), "10 M");
        assert_eq!(axis_title("ns"), "latency (log scale)");
        assert_eq!(axis_title("cycles"), "latency (cycles, log scale)");
    }

    #[test]
    fn share_ticks_end_at_or_above_the_top() {
        let labels =
            |top: f64| -> Vec<String> { share_ticks(top).into_iter().map(percent).collect() };
        assert_eq!(labels(0.13), ["0%", "5%", "10%", "15%"]);
        assert_eq!(labels(0.9), ["0%", "20%", "40%", "60%", "80%", "100%"]);
        assert_eq!(labels(0.004), ["0%", "0.1%", "0.2%", "0.3%", "0.4%"]);
        assert_eq!(percent(0.025), "2.5%");
    }

    #[test]
    fn the_scale_clamps_to_its_ends() {
        let s = LogScale {
            lo: 10.0,
            hi: 1000.0,
            from: 100.0,
            to: 300.0,
        };
        assert_eq!(s.at(100.0), 200.0);
        assert_eq!(s.at(1.0), 100.0);
        assert_eq!(s.at(0.0), 100.0);
        assert_eq!(s.at(1e6), 300.0);
    }
}
