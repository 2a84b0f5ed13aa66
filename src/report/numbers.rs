//! How latte writes numbers for people, everywhere it writes them (the table, the
//! lines around it, the `latte-telemetry` tool): every value in its own unit, with 4
//! significant figures, as the C++ original prints its cells.
//!
//! * **Time**: nanoseconds scaled to ns, us, ms or s so the number stays below 1,000
//!   (`226.8 ns`, `16.38 us`, `3.167 ms`, `38.07 s`; seconds go on as integers to
//!   99,999 s, then `1.000e5 s`). Below a nanosecond (a mean of values that are
//!   mostly zero after calibration) it is picoseconds: `546.8 ps`.
//! * **Counter ticks** (cycles): the same rule with SI multiples and no unit name
//!   (`588.6`, `16.38 k`, `1.360 G`).
//! * **Counts**: exact, with digit grouping (`106,051`).
//!
//! Zero is `0 ns` (or `0`), a value that is not finite (not known) is `-`.
//!
//! ```
//! use latte::report::numbers::{count, ticks, time};
//! assert_eq!(time(16_384.0), "16.38 us");
//! assert_eq!(time(38.07e9), "38.07 s");
//! assert_eq!(ticks(1.36e9), "1.360 G");
//! assert_eq!(count(106_051), "106,051");
//! ```

use crate::report::Unit;

/// Time units, in nanoseconds (picoseconds for means below a nanosecond).
const TIME: [(f64, &str); 5] = [
    (1e-3, " ps"),
    (1.0, " ns"),
    (1e3, " us"),
    (1e6, " ms"),
    (1e9, " s"),
];
/// SI multiples for counter ticks.
const TICKS: [(f64, &str); 6] = [
    (1.0, ""),
    (1e3, " k"),
    (1e6, " M"),
    (1e9, " G"),
    (1e12, " T"),
    (1e15, " P"),
];

/// `value` (nanoseconds) with 4 significant figures and its unit.
///
/// ```
/// use latte::report::numbers::time;
/// assert_eq!(time(0.21), "210.0 ps");
/// assert_eq!(time(999.96), "1.000 us"); // would round to 1000 ns
/// assert_eq!(time(4.5e6), "4.500 ms");
/// assert_eq!(time(86_400e9), "86400 s");
/// assert_eq!(time(0.0), "0 ns");
/// assert_eq!(time(f64::NAN), "-");
/// ```
pub fn time(ns: f64) -> String {
    scaled(ns, &TIME)
}

/// `value` (counter ticks) with 4 significant figures and an SI multiple.
///
/// ```
/// use latte::report::numbers::ticks;
/// assert_eq!(ticks(588.63), "588.6");
/// assert_eq!(ticks(26.0), "26.00");
/// assert_eq!(ticks(16_384.0), "16.38 k");
/// assert_eq!(ticks(0.0), "0");
/// ```
pub fn ticks(ticks: f64) -> String {
    scaled(ticks, &TICKS)
}

/// A duration of a report in `unit`: [`time`] for [`Unit::Time`], [`ticks`] for
/// [`Unit::Cycles`].
///
/// ```
/// use latte::{Unit, report::numbers::value};
/// assert_eq!(value(2_090.0, Unit::Time), "2.090 us");
/// assert_eq!(value(2_090.0, Unit::Cycles), "2.090 k");
/// ```
pub fn value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Time => time(v),
        Unit::Cycles => ticks(v),
    }
}

/// A count with digit grouping.
///
/// ```
/// use latte::report::numbers::count;
/// assert_eq!(count(0), "0");
/// assert_eq!(count(999), "999");
/// assert_eq!(count(1_000), "1,000");
/// assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
/// ```
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// `part` as a percentage of `whole`, one decimal (`4.1%`); `<0.1%` for a share that
/// rounds to 0 but is not 0; `-` when either is not known or `whole` is 0.
///
/// ```
/// use latte::report::numbers::share;
/// assert_eq!(share(41.0, 1_000.0), "4.1%");
/// assert_eq!(share(0.0, 1_000.0), "0%");
/// assert_eq!(share(0.01, 1_000.0), "<0.1%");
/// assert_eq!(share(1.0, 0.0), "-");
/// ```
pub fn share(part: f64, whole: f64) -> String {
    if !(part.is_finite() && whole.is_finite() && whole > 0.0) {
        return "-".to_owned();
    }
    match part / whole * 100.0 {
        0.0 => "0%".to_owned(),
        p if p < 0.05 => "<0.1%".to_owned(),
        p => format!("{p:.1}%"),
    }
}

/// A count per call: up to two decimals, trailing zeros dropped, `<0.01` for a rate
/// that rounds to 0 but is not 0.
///
/// ```
/// use latte::report::numbers::per_call;
/// assert_eq!(per_call(3.0), "3");
/// assert_eq!(per_call(0.5), "0.5");
/// assert_eq!(per_call(0.001), "<0.01");
/// assert_eq!(per_call(0.0), "0");
/// assert_eq!(per_call(12_345.0), "12.35 k");
/// ```
pub fn per_call(n: f64) -> String {
    match n {
        n if !n.is_finite() => "-".to_owned(),
        0.0 => "0".to_owned(),
        n if n < 0.005 => "<0.01".to_owned(),
        n if n >= 1_000.0 => ticks(n),
        n => {
            let s = format!("{n:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
    }
}

/// A size in bytes: below 1 KiB as [`per_call`] writes a count, else in KiB, MiB or
/// GiB with one decimal.
///
/// ```
/// use latte::report::numbers::bytes;
/// assert_eq!(bytes(308.0), "308 B");
/// assert_eq!(bytes(0.5), "0.5 B");
/// assert_eq!(bytes(4_096.0), "4.0 KiB");
/// assert_eq!(bytes(3.5 * 1024.0 * 1024.0), "3.5 MiB");
/// ```
pub fn bytes(n: f64) -> String {
    const KIB: f64 = 1024.0;
    match n {
        n if n < KIB => format!("{} B", per_call(n)),
        n if n < KIB * KIB => format!("{:.1} KiB", n / KIB),
        n if n < KIB * KIB * KIB => format!("{:.1} MiB", n / (KIB * KIB)),
        n => format!("{:.1} GiB", n / (KIB * KIB * KIB)),
    }
}

/// A parameter of a rule (the cleaning constants): at most three decimals, trailing
/// zeros dropped.
pub(crate) fn plain(value: f64) -> String {
    if !value.is_finite() {
        return "-".to_owned();
    }
    let s = format!("{value:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0" } else { s }.to_owned()
}

/// `value` in the largest of `units` that keeps it below 1,000 (the last unit takes
/// everything above), with 4 significant figures.
fn scaled(value: f64, units: &[(f64, &str)]) -> String {
    if !value.is_finite() {
        return "-".to_owned();
    }
    if value == 0.0 {
        let base = units.iter().find(|(factor, _)| *factor == 1.0);
        return format!("0{}", base.map_or("", |(_, name)| name));
    }
    let a = value.abs();
    let &(factor, name) = units
        .iter()
        .find(|(factor, _)| a / factor < 999.95)
        .unwrap_or(&units[units.len() - 1]);
    format!("{}{name}", significant(value / factor))
}

/// `v` with 4 significant figures: decimals below 1,000, an integer up to 99,999,
/// scientific notation above and below 0.001.
fn significant(v: f64) -> String {
    let a = v.abs();
    if !(1e-3..1e5).contains(&a) {
        return format!("{v:.3e}");
    }
    let exponent = a.log10().floor() as i32;
    let mut decimals = (3 - exponent).max(0) as usize;
    // 9.99996 rounds to 10.000: one decimal fewer keeps 4 figures.
    let rounded: f64 = format!("{a:.decimals$}").parse().unwrap_or(a);
    if decimals > 0 && rounded >= 10f64.powi(exponent + 1) {
        decimals -= 1;
    }
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_significant_figures_in_every_unit() {
        assert_eq!(time(226.79), "226.8 ns");
        assert_eq!(time(999.94), "999.9 ns");
        assert_eq!(time(9.99996), "10.00 ns");
        assert_eq!(time(31_150.0), "31.15 us");
        assert_eq!(time(38.07e9), "38.07 s");
        assert_eq!(time(1e14), "1.000e5 s");
        assert_eq!(time(-5.0), "-5.000 ns");
        assert_eq!(time(0.0004), "0.4000 ps");
        assert_eq!(time(0.9999), "999.9 ps");
        assert_eq!(time(0.99996), "1.000 ns");
        assert_eq!(time(4e-7), "4.000e-4 ps");
        assert_eq!(ticks(1.5e11), "150.0 G");
        assert_eq!(ticks(4.5e15), "4.500 P");
        assert_eq!(ticks(999_960.0), "1.000 M");
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(time(v), "-");
            assert_eq!(ticks(v), "-");
        }
    }

    #[test]
    fn rule_parameters_are_short() {
        assert_eq!(plain(10.0), "10");
        assert_eq!(plain(1.5), "1.5");
        assert_eq!(plain(0.1 + 0.2), "0.3");
        assert_eq!(plain(-0.0001), "0");
        assert_eq!(plain(f64::INFINITY), "-");
    }
}
