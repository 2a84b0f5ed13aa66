//! The table renderer (placeholder until the renderer lands).

use super::{Report, Unit};
use std::io::{self, Write};

/// Formats a value of `unit` for a table cell.
pub fn format_value(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Cycles => format!("{value:.1}"),
        Unit::Time => format!("{value:.2} ns"),
    }
}

pub(super) fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "LATTE TELEMETRY {:?}", report.unit)
}
