//! Numbers for the table: 3-4 significant figures, one unit per column, `< 1 step`
//! below the clock's step.

use super::options::Column;
use crate::config::Unit;
use crate::report::{Row, Summary};

/// The time units, in nanoseconds.
const SCALES: [(f64, &str); 4] = [(1.0, "ns"), (1e3, "us"), (1e6, "ms"), (1e9, "s")];

/// What a cell shows for a value below the clock's step.
pub(super) const BELOW_STEP: &str = "< 1 step";
/// What a cell shows for a non-zero value that rounds to 0 in its column's unit.
const BELOW_UNIT: &str = "< 0.001";

/// `value` with 4 significant figures and at most 3 decimals; an integer from 1,000
/// up, in scientific notation from `plain_below` up; `-` when not finite.
fn significant(value: f64, plain_below: f64) -> String {
    let a = value.abs();
    if !value.is_finite() {
        "-".to_owned()
    } else if a >= plain_below {
        format!("{value:.3e}")
    } else if a >= 999.95 {
        fixed(value, 0)
    } else if a >= 99.995 {
        fixed(value, 1)
    } else if a >= 9.9995 {
        fixed(value, 2)
    } else {
        fixed(value, 3)
    }
}

/// Formats one value of `unit` on its own (header and text lines), 4 significant
/// figures: time picks ns, us, ms or s so the number stays below 1,000 (seconds from
/// 100,000 on in scientific notation); cycles have no unit (scientific from 10^9).
/// Non-finite values are `-`.
pub(super) fn format_value(value: f64, unit: Unit) -> String {
    if !value.is_finite() {
        return "-".to_owned();
    }
    match unit {
        Unit::Time => {
            let (factor, name) = SCALES
                .into_iter()
                .find(|(factor, _)| value.abs() / factor < 999.95)
                .unwrap_or(SCALES[3]);
            format!("{} {name}", significant(value / factor, 1e5))
        }
        Unit::Cycles => significant(value, 1e9),
    }
}

/// `value` with `decimals` decimals, without a `-` on a value that rounds to zero, and
/// `-` for a non-finite value.
pub(super) fn fixed(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return "-".to_owned();
    }
    let s = format!("{value:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_owned(),
        _ => s,
    }
}

/// A parameter of the cleaning rule: at most three decimals, trailing zeros dropped.
pub(super) fn plain(value: f64) -> String {
    let s = fixed(value, 3);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// The unit of one column: what its values are divided by, and the name its header
/// states (none for cycles and counts).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Scale {
    factor: f64,
    name: Option<&'static str>,
    /// Values below this (the clock's step) show as [`BELOW_STEP`]; 0 for none.
    step: f64,
}

impl Scale {
    /// The scale of a time column whose typical magnitude is `typical`: the largest
    /// unit in which it is at least 1. Cycles are not scaled.
    pub(super) fn for_values(typical: f64, unit: Unit, step: f64) -> Scale {
        let step = if step.is_finite() && step > 0.0 {
            step
        } else {
            0.0
        };
        let (factor, name) = match unit {
            Unit::Cycles => (1.0, None),
            Unit::Time => {
                let (factor, name) = SCALES
                    .into_iter()
                    .rev()
                    .find(|(factor, _)| typical / factor >= 0.99995)
                    .unwrap_or(SCALES[0]);
                (factor, Some(name))
            }
        };
        Scale { factor, name, step }
    }

    /// The header of `column`: its title, plus `(unit)` for a time column.
    pub(super) fn header(&self, column: Column) -> String {
        match (self.name, kind(column)) {
            (Some(name), Kind::Value(..) | Kind::Spread(_)) => {
                format!("{} ({name})", column.header())
            }
            _ => column.header().to_owned(),
        }
    }

    /// `(ns)` for a time unit, empty for cycles: the corner of the overhead matrix.
    pub(super) fn unit_label(&self) -> String {
        self.name.map(|n| format!("({n})")).unwrap_or_default()
    }

    /// A duration in this unit, `< 1 step` below the step.
    pub(super) fn one(&self, value: f64) -> String {
        self.value(value, true)
    }

    /// A value of the column in this unit.
    fn value(&self, value: f64, checked: bool) -> String {
        let plain_below = 1e9;
        if checked && value.is_finite() && value < self.step {
            BELOW_STEP.to_owned()
        } else {
            let text = significant(value / self.factor, plain_below);
            if value != 0.0 && text == "0.000" {
                BELOW_UNIT.to_owned()
            } else {
                text
            }
        }
    }
}

/// What a column holds, and how it is read from a [`Summary`].
enum Kind {
    /// The component's name (not a number).
    Name,
    /// A count.
    Count(fn(&Summary) -> u64),
    /// A duration of one sample (`< 1 step` below the step); `true`: of the cleaned
    /// values, `false`: of all folded samples (`-` when there are none).
    Value(fn(&Summary) -> f64, bool),
    /// A spread of cleaned values (no step check: a spread below a step is real).
    Spread(fn(&Summary) -> f64),
    /// Skewness: a ratio, two decimals.
    Skew,
    /// Lost samples, marked `!` when not 0.
    Lost,
}

fn kind(column: Column) -> Kind {
    match column {
        Column::Component => Kind::Name,
        Column::Samples => Kind::Count(|s| s.samples),
        Column::Avg => Kind::Value(|s| s.avg, true),
        Column::Median => Kind::Value(|s| s.median, true),
        Column::StdDev => Kind::Spread(|s| s.std_dev),
        Column::Skew => Kind::Skew,
        Column::Min => Kind::Value(|s| s.min, true),
        Column::Max => Kind::Value(|s| s.max, true),
        Column::Range => Kind::Spread(|s| s.range),
        Column::Bypass => Kind::Count(|s| s.bypass),
        Column::Outliers => Kind::Count(|s| s.outliers),
        Column::P90 => Kind::Value(|s| s.p90, false),
        Column::P99 => Kind::Value(|s| s.p99, false),
        Column::P999 => Kind::Value(|s| s.p999, false),
        Column::MaxAll => Kind::Value(|s| s.max_all, false),
        Column::Seen => Kind::Count(|s| s.seen),
        Column::Lost => Kind::Lost,
        Column::Migrated => Kind::Count(|s| s.migrated),
    }
}

/// The number `column` shows for `stats`, to sort rows by (`None` for the component
/// name, which sorts by text).
pub(in crate::report) fn sort_value(column: Column, stats: &Summary) -> Option<f64> {
    match kind(column) {
        Kind::Name => None,
        Kind::Count(read) => Some(read(stats) as f64),
        Kind::Value(read, _) | Kind::Spread(read) => Some(read(stats)),
        Kind::Skew => Some(stats.skew),
        Kind::Lost => Some(stats.lost as f64),
    }
}

/// The scale of `column` over `rows`: the unit of its smallest magnitude, leaving out
/// zeros and values below the step (which show as `< 1 step` whatever the unit), so
/// no value loses a significant figure; larger values show more digits (scientific
/// from 10^9).
pub(super) fn scale(column: Column, rows: &[&Row], unit: Unit, step: f64) -> Scale {
    let read = match kind(column) {
        Kind::Value(read, _) | Kind::Spread(read) => read,
        _ => return Scale::for_values(0.0, Unit::Cycles, 0.0),
    };
    let magnitudes = rows
        .iter()
        .map(|row| read(&row.stats).abs())
        .filter(|v| v.is_finite() && *v > 0.0 && *v >= step);
    let smallest = magnitudes.into_iter().reduce(f64::min);
    Scale::for_values(smallest.unwrap_or(0.0), unit, step)
}

/// The cell of `column` for `stats` (empty for [`Column::Component`]). Statistics of
/// an empty sample set are `-`.
pub(super) fn cell(column: Column, stats: &Summary, scale: &Scale) -> String {
    let none = |cleaned: bool| {
        if cleaned {
            stats.samples == 0
        } else {
            stats.folded == 0
        }
    };
    match kind(column) {
        Kind::Name => String::new(),
        Kind::Count(read) => read(stats).to_string(),
        Kind::Lost if stats.lost > 0 => format!("{}!", stats.lost),
        Kind::Lost => "0".to_owned(),
        Kind::Value(_, cleaned) if none(cleaned) => "-".to_owned(),
        Kind::Skew | Kind::Spread(_) if none(true) => "-".to_owned(),
        Kind::Skew => fixed(stats.skew, 2),
        Kind::Value(read, _) => scale.value(read(stats), true),
        Kind::Spread(read) => scale.value(read(stats), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_on_their_own_have_four_significant_figures() {
        let t = |v| format_value(v, Unit::Time);
        assert_eq!(t(226.79), "226.8 ns");
        assert_eq!(t(0.21), "0.210 ns");
        assert_eq!(t(0.0), "0.000 ns");
        assert_eq!(t(-0.0001), "0.000 ns");
        assert_eq!(t(999.94), "999.9 ns");
        assert_eq!(t(999.96), "1.000 us"); // would round to 1000 ns
        assert_eq!(t(31_150.0), "31.15 us");
        assert_eq!(t(4.5e6), "4.500 ms");
        assert_eq!(t(38.07e9), "38.07 s");
        assert_eq!(t(86_400e9), "86400 s"); // seconds are the largest unit
        assert_eq!(t(1e14), "1.000e5 s");
        assert_eq!(t(f64::MAX), "1.798e299 s");
        assert_eq!(t(-5.0), "-5.000 ns");
        let c = |v| format_value(v, Unit::Cycles);
        assert_eq!(c(226.84), "226.8");
        assert_eq!(c(97.354), "97.35");
        assert_eq!(c(2.1144), "2.114");
        assert_eq!(c(123_456_789.0), "123456789");
        assert_eq!(c(1.5e11), "1.500e11");
        for unit in [Unit::Time, Unit::Cycles] {
            for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                assert_eq!(format_value(v, unit), "-");
            }
        }
    }

    #[test]
    fn a_column_picks_one_unit_from_its_largest_value() {
        let s = Scale::for_values(12.2e6, Unit::Time, 10.0);
        assert_eq!(s.header(Column::P99), "P99 (ms)");
        assert_eq!(s.value(12.2e6, true), "12.20");
        assert_eq!(s.value(1.25e6, true), "1.250");
        assert_eq!(s.value(31_150.0, true), "0.031");
        assert_eq!(s.value(220.0, true), "< 0.001");
        assert_eq!(s.value(9.99, true), BELOW_STEP);
        assert_eq!(s.value(0.0, true), BELOW_STEP);
        assert_eq!(s.value(0.0, false), "0.000", "a spread is not checked");
        let ns = Scale::for_values(0.5, Unit::Time, 0.0);
        assert_eq!(ns.header(Column::Avg), "AVG (ns)");
        assert_eq!(ns.value(0.04, true), "0.040", "no step known");
        assert_eq!(
            Scale::for_values(999.96, Unit::Time, 0.0).header(Column::Max),
            "MAX (us)"
        );
        assert_eq!(
            Scale::for_values(999.9, Unit::Time, 0.0).header(Column::Max),
            "MAX (ns)"
        );
        let s = Scale::for_values(1e15, Unit::Time, 0.0);
        assert_eq!(s.header(Column::Min), "MIN (s)");
        assert_eq!(
            (s.value(1e15, true), s.value(1e18, true)),
            ("1000000".into(), "1.000e9".into())
        );
        let cycles = Scale::for_values(1.36e10, Unit::Cycles, 26.0);
        assert_eq!(cycles.header(Column::Median), "MEDIAN");
        assert_eq!(cycles.value(1.36e10, true), "1.360e10");
        assert_eq!(cycles.value(588.6, true), "588.6");
        assert_eq!(cycles.value(25.0, true), BELOW_STEP);
        assert_eq!(
            Scale::for_values(1.0, Unit::Time, f64::NAN).value(0.0, true),
            "0.000"
        );
    }

    #[test]
    fn empty_statistics_are_dashes_and_counts_are_exact() {
        let scale = Scale::for_values(100.0, Unit::Time, 1.0);
        let none = Summary {
            seen: 3,
            lost: 3,
            ..Summary::default()
        };
        assert_eq!(cell(Column::Median, &none, &scale), "-");
        assert_eq!(cell(Column::P99, &none, &scale), "-");
        assert_eq!(cell(Column::Skew, &none, &scale), "-");
        assert_eq!(cell(Column::Lost, &none, &scale), "3!");
        assert_eq!(cell(Column::Seen, &none, &scale), "3");
        let cleaned_away = Summary {
            folded: 2,
            p99: 50.0,
            ..Summary::default()
        };
        assert_eq!(cell(Column::Median, &cleaned_away, &scale), "-");
        assert_eq!(cell(Column::P99, &cleaned_away, &scale), "50.00");
        assert_eq!(cell(Column::Lost, &cleaned_away, &scale), "0");
    }

    #[test]
    fn cleaning_parameters_are_short() {
        assert_eq!(plain(10.0), "10");
        assert_eq!(plain(1.5), "1.5");
        assert_eq!(plain(0.1 + 0.2), "0.3");
        assert_eq!(plain(f64::INFINITY), "-");
    }
}
