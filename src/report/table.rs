//! The table renderer: the C++ original's box layout, extended with tail columns.
//!
//! Length: over 400 lines because it lays out every column, block and wrap by hand;
//! the readable-report work replaces that layout with a table crate, which shortens it.
//!
//! ```text
//! #=====================================================================#
//! | LATTE TELEMETRY [TIME][CAL]                                         |
//! | clock TSC @ 2.595 GHz (±1.2 ppm)                                    |
//! | cleaning: bypass > max(10x median, median + 2000 ns), fences ...    |
//! #=====================================================================#
//! | OVERHEAD H[Start] x W[Stop]                                         |
//! |                        F             M             H                |
//! | F                0.21 ns      10.02 ns      10.02 ns                |
//! | ...                                                                 |
//! | PULSE           10.02 ns                                            |
//! |---------------------------------------------------------------------|
//! | THREAD main (#1)                                                    |
//! | COMPONENT             SAMPLES       AVG    MEDIAN ...               |
//! |---------------------------------------------------------------------|
//! | Sim_Tick_Total           4997 226.79 ns 220.42 ns ...               |
//! |---------------------------------------------------------------------|
//! | ALL THREADS                                                         |
//! | ...                                                                 |
//! #=====================================================================#
//! ```
//!
//! Every line has the same width (in chars). Numeric columns have a minimum width and
//! grow when a value does not fit; the COMPONENT column grows to the longest name up to
//! [`MAX_NAME_WIDTH`] chars, and longer names are cut; free text (header, anomalies)
//! wraps.

use super::{
    Anomalies, EndedFrames, Environment, Overhead, PeriodicFailures, Report, Row, Summary,
};
use crate::config::{Cleaning, Data, Unit};
use std::io::{self, Write};

/// Narrowest COMPONENT column.
const NAME_WIDTH: usize = 20;
/// Widest COMPONENT column; longer names are cut and end in `~`.
const MAX_NAME_WIDTH: usize = 48;

/// The numeric columns after COMPONENT: title and minimum width.
const COLUMNS: [(&str, usize); 17] = [
    ("SAMPLES", 8),
    ("AVG", 9),
    ("MEDIAN", 9),
    ("STD DEV", 9),
    ("SKEW", 7),
    ("MIN", 9),
    ("MAX", 9),
    ("RANGE", 9),
    ("BYPASS", 7),
    ("OUTLIERS", 8),
    ("P90", 9),
    ("P99", 9),
    ("P99.9", 9),
    ("MAX ALL", 9),
    ("SEEN", 9),
    ("LOST", 6),
    ("MIGR", 6),
];

/// Overhead block: width of the row label and of each cell.
const OVERHEAD_LABEL: usize = 10;
const OVERHEAD_CELL: usize = 14;

/// Continuation indent of wrapped text lines.
const INDENT: &str = "  ";

/// Formats a value of `unit` for a table cell.
///
/// * [`Unit::Time`] (nanoseconds) is scaled to `ns`, `us`, `ms` or `s`, whichever keeps
///   the integer part below 1,000 (seconds are never scaled further), with two
///   decimals; from 100,000 s (more than a day) on, seconds are in scientific notation.
/// * [`Unit::Cycles`] (counter ticks) has no unit: one decimal below 10^7, none up to
///   10^9, then scientific notation, so a non-negative value takes at most 9 chars.
/// * Non-finite values (NaN, infinities) are shown as `-`.
///
/// ```text
/// assert_eq!(format_value(226.79, Unit::Time), "226.79 ns");
/// assert_eq!(format_value(31_150.0, Unit::Time), "31.15 us");
/// assert_eq!(format_value(4.5e6, Unit::Time), "4.50 ms");
/// assert_eq!(format_value(38.07e9, Unit::Time), "38.07 s");
/// assert_eq!(format_value(226.8, Unit::Cycles), "226.8");
/// assert_eq!(format_value(123_456_789.0, Unit::Cycles), "123456789");
/// assert_eq!(format_value(1.5e11, Unit::Cycles), "1.500e11");
/// assert_eq!(format_value(f64::NAN, Unit::Time), "-");
/// ```
pub(crate) fn format_value(value: f64, unit: Unit) -> String {
    if !value.is_finite() {
        return "-".to_owned();
    }
    match unit {
        Unit::Time => {
            // Pick the unit on the rounded value, so 999.999 ns reads `1.00 us`.
            const SCALES: [(f64, &str); 4] = [(1.0, "ns"), (1e3, "us"), (1e6, "ms"), (1e9, "s")];
            let (factor, name) = SCALES
                .into_iter()
                .find(|(factor, _)| (value.abs() / factor * 100.0).round() < 100_000.0)
                .unwrap_or(SCALES[3]);
            let scaled = value / factor;
            if (scaled.abs() * 100.0).round() < 1e7 {
                format!("{} {name}", fixed(scaled, 2))
            } else {
                format!("{scaled:.3e} {name}") // over a day: `1.000e5 s`, never 300 digits
            }
        }
        Unit::Cycles => {
            let a = value.abs();
            if (a * 10.0).round() < 1e8 {
                fixed(value, 1)
            } else if a.round() < 1e9 {
                format!("{value:.0}")
            } else {
                format!("{value:.3e}")
            }
        }
    }
}

/// `value` with `decimals` decimals, without a `-` on a value that rounds to zero, and
/// `-` for a non-finite value.
fn fixed(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return "-".to_owned();
    }
    let s = format!("{value:.decimals$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_owned()
    } else {
        s
    }
}

/// A parameter of the cleaning rule: at most three decimals, trailing zeros dropped.
fn plain(value: f64) -> String {
    let s = fixed(value, 3);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// The cells after COMPONENT for one row. Statistics of an empty sample set are `-`.
fn cells(s: &Summary, unit: Unit) -> [String; 17] {
    let main = |v: f64| {
        if s.samples == 0 {
            "-".to_owned()
        } else {
            format_value(v, unit)
        }
    };
    let tail = |v: f64| {
        if s.folded == 0 {
            "-".to_owned()
        } else {
            format_value(v, unit)
        }
    };
    [
        s.samples.to_string(),
        main(s.avg),
        main(s.median),
        main(s.std_dev),
        if s.samples == 0 {
            "-".to_owned()
        } else {
            fixed(s.skew, 2)
        },
        main(s.min),
        main(s.max),
        main(s.range),
        s.bypass.to_string(),
        s.outliers.to_string(),
        tail(s.p90),
        tail(s.p99),
        tail(s.p999),
        tail(s.max_all),
        s.seen.to_string(),
        // A `!` marks a component that lost samples: its statistics miss some of
        // what was recorded.
        if s.lost > 0 {
            format!("{}!", s.lost)
        } else {
            "0".to_owned()
        },
        s.migrated.to_string(),
    ]
}

/// A component name for a column of `width`: control chars blanked, cut with a
/// trailing `~` when longer.
fn name_cell(name: &str, width: usize) -> String {
    let name = sanitize(name);
    if name.chars().count() <= width {
        name
    } else {
        let mut cut: String = name.chars().take(width - 1).collect();
        cut.push('~');
        cut
    }
}

/// Replaces control chars (newlines, tabs, ...) by spaces so they cannot break a line.
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// One line of the box before it is padded to the box's width.
enum Line {
    /// `#====#`
    Heavy,
    /// `|----|`
    Light,
    /// `| text |`, wrapped if longer than the box.
    Text(String),
}

/// Column widths shared by every section, so all tables of a report line up.
struct Columns {
    name: usize,
    widths: [usize; 17],
    unit: Unit,
}

impl Columns {
    fn new(report: &Report) -> Columns {
        let mut widths = COLUMNS.map(|(title, min)| min.max(title.len()));
        let mut name = NAME_WIDTH;
        let rows = report.threads.iter().flat_map(|t| &t.rows);
        for row in rows.chain(&report.all_threads) {
            name = name.max(sanitize(&row.component).chars().count().min(MAX_NAME_WIDTH));
            for (w, cell) in widths.iter_mut().zip(cells(&row.stats, report.unit)) {
                *w = (*w).max(cell.chars().count());
            }
        }
        Columns {
            name,
            widths,
            unit: report.unit,
        }
    }

    /// Chars of a table line: the name, then a space and a cell per column.
    fn width(&self) -> usize {
        self.name + self.widths.iter().map(|w| w + 1).sum::<usize>()
    }

    fn line<S: AsRef<str>>(&self, name: &str, cells: &[S]) -> String {
        let mut line = format!("{name:<width$}", width = self.name);
        for (cell, w) in cells.iter().zip(self.widths) {
            line.push_str(&format!(" {:>w$}", cell.as_ref()));
        }
        line
    }

    fn header(&self) -> String {
        self.line("COMPONENT", &COLUMNS.map(|(title, _)| title))
    }

    fn row(&self, row: &Row) -> String {
        self.line(
            &name_cell(&row.component, self.name),
            &cells(&row.stats, self.unit),
        )
    }
}

/// The header facts under the title.
fn header(report: &Report) -> Vec<Line> {
    let unit = match report.unit {
        Unit::Cycles => "CYCLES",
        Unit::Time => "TIME",
    };
    let data = match report.data {
        Data::Raw => "RAW",
        Data::Calibrated => "CAL",
    };
    let mut clock = format!("clock {}", report.clock);
    if report.ticks_per_ns.is_finite() && report.ticks_per_ns > 0.0 {
        clock.push_str(&format!(" @ {:.3} GHz", report.ticks_per_ns));
        if report.frequency_accuracy.is_finite() {
            clock.push_str(&format!(" (±{:.1} ppm)", report.frequency_accuracy * 1e6));
        }
        if report.resolution > 0.0 {
            let value = format_value(report.resolution, report.unit);
            let ticks = if report.unit == Unit::Cycles {
                " ticks"
            } else {
                ""
            };
            clock.push_str(&format!(", resolution {}{ticks}", value.trim()));
        }
    } else {
        clock.push_str(" @ unknown frequency");
    }
    if report.teardown_drops > 0 {
        clock.push_str(&format!(", teardown drops: {}", report.teardown_drops));
    }
    let mut title = format!("LATTE TELEMETRY [{unit}][{data}]");
    if let Some(label) = &report.label {
        title.push_str(&format!(" {label}"));
    }
    let mut lines = vec![Line::Heavy, Line::Text(title), Line::Text(clock)];
    if let Some(failures) = &report.periodic_failures {
        lines.push(Line::Text(periodic_failures(failures)));
    }
    if let Some(line) = over_cap(report) {
        lines.push(Line::Text(line));
    }
    if let Some(f) = &report.footprint {
        lines.push(Line::Text(format!(
            "memory: {} in {} rings ({} reserved, cap {}) and {} histograms ({}); threads: {} live, {} exited, {} folded; drain CPU {}",
            bytes(f.bytes),
            f.rings,
            bytes(f.ring_bytes_reserved),
            bytes(f.memory_cap),
            f.histograms,
            bytes(f.histogram_bytes),
            f.live_threads,
            f.exited_threads,
            f.folded_threads,
            format_value(f.drain_cpu_ns as f64, Unit::Time)
        )));
    }
    lines.extend([Line::Text(cleaning(&report.cleaning)), Line::Heavy]);
    lines
}

/// The line naming periodic reports that could not be written.
fn periodic_failures(failures: &PeriodicFailures) -> String {
    let (count, s) = (failures.count, if failures.count == 1 { "" } else { "s" });
    format!(
        "{count} periodic report{s} could not be written: {}",
        failures.last_error
    )
}

/// The ENVIRONMENT block: facts, the clock and why, then one line per warning.
fn environment(env: &Environment) -> Vec<Line> {
    let known = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let yes_no = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    let clocksource = match (&env.clocksource_at_start, &env.clocksource_now) {
        (Some(a), Some(b)) if a == b => format!("{a} (unchanged since start)"),
        (Some(a), Some(b)) => format!("{a} at start, {b} now: CHANGED"),
        (a, b) => format!("{} at start, {} now", known(a), known(b)),
    };
    let mut lines = vec![
        Line::Text("ENVIRONMENT".into()),
        Line::Text(format!(
            "cpu: {}; hypervisor: {}; invariant TSC: {}; governor: {}; isolated CPUs: {}",
            known(&env.cpu_model),
            yes_no(env.hypervisor),
            yes_no(env.invariant_tsc),
            known(&env.governor),
            known(&env.isolated_cpus)
        )),
        Line::Text(format!(
            "clock: {}, because {}",
            env.clock, env.clock_reason
        )),
        Line::Text(format!("kernel clocksource: {clocksource}")),
    ];
    lines.extend(
        env.warnings
            .iter()
            .map(|w| Line::Text(format!("warning: {w}"))),
    );
    lines
}

/// A byte count in KiB, MiB or GiB.
fn bytes(n: u64) -> String {
    match n {
        n if n < 1 << 20 => format!("{:.1} KiB", n as f64 / 1024.0),
        n if n < 1 << 30 => format!("{:.1} MiB", n as f64 / (1 << 20) as f64),
        n => format!("{:.1} GiB", n as f64 / (1 << 30) as f64),
    }
}

/// The cleaning rule in a few words.
fn cleaning(cleaning: &Cleaning) -> String {
    let mut steps = Vec::new();
    if let Some(b) = cleaning.bypass {
        steps.push(format!(
            "bypass > max({}x median, median + {} ns)",
            plain(b.factor),
            plain(b.floor_ns)
        ));
    }
    if let Some(f) = cleaning.fences {
        steps.push(format!("fences Q1/Q3 ± {} IQR", plain(f.k)));
    }
    if steps.is_empty() {
        "cleaning: off".to_owned()
    } else {
        format!("cleaning: {}", steps.join(", "))
    }
}

/// The overhead matrix (rows: start mode, columns: stop mode) and the pulse overhead.
fn overhead(overhead: &Overhead, unit: Unit) -> Vec<Line> {
    const LETTERS: [&str; 3] = ["F", "M", "H"];
    let mut lines = vec![
        Line::Text("OVERHEAD H[Start] x W[Stop]".to_owned()),
        Line::Text(format!(
            "{:OVERHEAD_LABEL$}{}",
            "",
            LETTERS.map(|l| format!("{l:>OVERHEAD_CELL$}")).concat()
        )),
    ];
    for (letter, row) in LETTERS.iter().zip(&overhead.scope) {
        let cells = row.map(|v| format!("{:>OVERHEAD_CELL$}", format_value(v, unit)));
        lines.push(Line::Text(format!(
            "{letter:<OVERHEAD_LABEL$}{}",
            cells.concat()
        )));
    }
    lines.push(Line::Text(format!(
        "{:<OVERHEAD_LABEL$}{:>OVERHEAD_CELL$}",
        "PULSE",
        format_value(overhead.pulse, unit)
    )));
    lines
}

/// The non-zero anomaly counters, e.g. `anomalies: 1 abandoned frame, 2 orphaned frames`,
/// or `None` when every counter is zero.
///
fn anomalies(a: &Anomalies) -> Option<String> {
    let listed = a.phrases();
    (!listed.is_empty()).then(|| format!("anomalies: {}", listed.join(", ")))
}

/// A titled table: title line, column header, rule, rows (or a note that there are
/// none), then the anomalies line when any counter is non-zero.
fn section(
    title: String,
    rows: &[Row],
    (anomalies_, frames): (Option<&Anomalies>, &[EndedFrames]),
    cols: &Columns,
) -> Vec<Line> {
    let mut lines = vec![Line::Text(title)];
    if rows.is_empty() {
        lines.push(Line::Text("no samples recorded".to_owned()));
    } else {
        lines.push(Line::Text(cols.header()));
        lines.push(Line::Light);
        lines.extend(rows.iter().map(|row| Line::Text(cols.row(row))));
    }
    if let Some(line) = anomalies_.and_then(anomalies) {
        lines.push(Line::Text(line));
    }
    lines.extend(ended_frames(frames).into_iter().map(Line::Text));
    lines
}

/// The ids whose scopes ended without their Stop, e.g. `scopes without their Stop:
/// parse 937 abandoned + 63 open at exit`, and those that recorded nothing past the
/// memory cap, e.g. `past the memory cap, not recorded: quote 12`.
fn ended_frames(frames: &[EndedFrames]) -> Vec<String> {
    let listed: Vec<String> = frames
        .iter()
        .filter(|f| f.counts.frames() > 0)
        .map(|f| {
            let c = &f.counts;
            let parts: Vec<String> = [
                (c.abandoned, "abandoned"),
                (c.orphaned, "orphaned"),
                (c.open_at_exit, "open at exit"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
            format!("{} {}", f.component, parts.join(" + "))
        })
        .collect();
    let capped: Vec<String> = frames
        .iter()
        .filter(|f| f.counts.over_cap > 0)
        .map(|f| format!("{} {}", f.component, f.counts.over_cap))
        .collect();
    let mut lines = Vec::new();
    if !listed.is_empty() {
        lines.push(format!("scopes without their Stop: {}", listed.join(", ")));
    }
    if !capped.is_empty() {
        lines.push(format!(
            "past the memory cap, not recorded: {}",
            capped.join(", ")
        ));
    }
    lines
}

/// The ids the memory cap kept from recording on some thread, named once for the
/// whole report, e.g. `memory cap reached: quote, fill recorded nothing on some
/// threads (12 records dropped); raise Builder::memory_cap`.
fn over_cap(report: &Report) -> Option<String> {
    let mut ids: Vec<&str> = Vec::new();
    let mut dropped = 0u64;
    for f in report.threads.iter().flat_map(|t| &t.frames) {
        if f.counts.over_cap > 0 {
            dropped = dropped.saturating_add(f.counts.over_cap);
            if !ids.contains(&f.component.as_str()) {
                ids.push(&f.component);
            }
        }
    }
    (dropped > 0).then(|| {
        format!(
            "memory cap reached: {} recorded nothing on some threads ({dropped} records dropped); \
             raise Builder::memory_cap",
            ids.join(", ")
        )
    })
}

/// Slowest samples the table shows per component (the JSON has all of them).
const SLOWEST_SHOWN: usize = 5;

/// Per component of ALL THREADS: its slowest samples with thread and time, and its
/// tails corrected for coordinated omission when it has a declared period.
fn slowest_and_corrected(report: &Report) -> Option<Vec<Line>> {
    let mut lines = Vec::new();
    for row in &report.all_threads {
        if !row.slowest.is_empty() {
            let listed: Vec<String> = row
                .slowest
                .iter()
                .take(SLOWEST_SHOWN)
                .map(|s| {
                    let when = match s.not_after_ms {
                        0 => String::new(),
                        t => format!(", before {} UTC", clock_time(t)),
                    };
                    format!(
                        "{} ({}{when})",
                        format_value(s.value, report.unit),
                        s.thread
                    )
                })
                .collect();
            lines.push(Line::Text(format!(
                "slowest {}: {}",
                row.component,
                listed.join(", ")
            )));
        }
        if let Some(c) = &row.corrected {
            let v = |x: f64| format_value(x, report.unit);
            lines.push(Line::Text(format!(
                "corrected for a period of {} {}: {} values, p50 {}, p90 {}, p99 {}, p99.9 {}, max {}",
                v(c.period),
                row.component,
                c.count,
                v(c.p50),
                v(c.p90),
                v(c.p99),
                v(c.p999),
                v(c.max)
            )));
        }
    }
    (!lines.is_empty()).then_some(lines)
}

/// `hh:mm:ss.mmm` (UTC) of a time in milliseconds since the Unix epoch.
fn clock_time(unix_ms: u64) -> String {
    let day_ms = unix_ms % 86_400_000;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        day_ms / 3_600_000,
        day_ms / 60_000 % 60,
        day_ms / 1_000 % 60,
        day_ms % 1_000
    )
}

/// Greedy word wrap to `width` chars; continuation lines are indented, and a word too
/// long for a line is split.
fn wrap(text: &str, width: usize) -> Vec<String> {
    if text.chars().count() <= width {
        return vec![text.to_owned()];
    }
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    let mut fresh = true; // no word on `line` yet
    for word in text.split(' ') {
        let wlen = word.chars().count();
        if !fresh && len + 1 + wlen > width {
            lines.push(std::mem::replace(&mut line, INDENT.to_owned()));
            len = INDENT.len();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
            len += 1;
        }
        for c in word.chars() {
            if len >= width {
                lines.push(std::mem::replace(&mut line, INDENT.to_owned()));
                len = INDENT.len();
            }
            line.push(c);
            len += 1;
        }
        fresh = false;
    }
    lines.push(line);
    lines
}

pub(super) fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let cols = Columns::new(report);
    let inner = cols.width().max(OVERHEAD_LABEL + 3 * OVERHEAD_CELL);

    let mut blocks: Vec<Vec<Line>> = Vec::new();
    if let Some(env) = &report.environment {
        blocks.push(environment(env));
    }
    if let Some(o) = &report.overhead {
        blocks.push(overhead(o, report.unit));
    }
    for t in &report.threads {
        let exited = if t.exited { " exited" } else { "" };
        let title = format!("THREAD {} (#{}){exited}", t.name, t.serial);
        let counts = (Some(&t.anomalies), t.frames.as_slice());
        blocks.push(section(title, &t.rows, counts, &cols));
    }
    if report.threads.is_empty() && report.all_threads.is_empty() {
        blocks.push(vec![Line::Text("no samples were recorded".to_owned())]);
    } else {
        blocks.push(section(
            "ALL THREADS".to_owned(),
            &report.all_threads,
            (None, &[]),
            &cols,
        ));
    }

    if let Some(block) = slowest_and_corrected(report) {
        blocks.push(block);
    }

    let mut lines = header(report);
    for (i, block) in blocks.into_iter().enumerate() {
        if i > 0 {
            lines.push(Line::Light);
        }
        lines.extend(block);
    }
    lines.push(Line::Heavy);

    let mut text = String::new();
    for line in lines {
        match line {
            Line::Heavy => text.push_str(&format!("#{}#\n", "=".repeat(inner + 2))),
            Line::Light => text.push_str(&format!("|{}|\n", "-".repeat(inner + 2))),
            Line::Text(s) => {
                for part in wrap(&sanitize(&s), inner) {
                    text.push_str(&format!("| {part:<inner$} |\n"));
                }
            }
        }
    }
    out.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_times_are_utc_time_of_day() {
        assert_eq!(clock_time(0), "00:00:00.000");
        // 2026-11-23 11:48:22.123 UTC
        assert_eq!(clock_time(1_795_434_502_123), "11:48:22.123");
    }

    #[test]
    fn documented_examples() {
        assert_eq!(format_value(226.79, Unit::Time), "226.79 ns");
        assert_eq!(format_value(31_150.0, Unit::Time), "31.15 us");
        assert_eq!(format_value(4.5e6, Unit::Time), "4.50 ms");
        assert_eq!(format_value(38.07e9, Unit::Time), "38.07 s");
        assert_eq!(format_value(226.8, Unit::Cycles), "226.8");
        assert_eq!(format_value(123_456_789.0, Unit::Cycles), "123456789");
        assert_eq!(format_value(1.5e11, Unit::Cycles), "1.500e11");
        assert_eq!(format_value(f64::NAN, Unit::Time), "-");
    }

    #[test]
    fn time_scales_at_each_boundary() {
        let t = |v| format_value(v, Unit::Time);
        assert_eq!(t(0.0), "0.00 ns");
        assert_eq!(t(-0.0), "0.00 ns");
        assert_eq!(t(0.21), "0.21 ns");
        assert_eq!(t(999.99), "999.99 ns");
        assert_eq!(t(999.999), "1.00 us"); // would round to 1000.00 ns
        assert_eq!(t(1_000.0), "1.00 us");
        assert_eq!(t(31_150.0), "31.15 us");
        assert_eq!(t(999_990.0), "999.99 us");
        assert_eq!(t(999_999.0), "1.00 ms");
        assert_eq!(t(1e6), "1.00 ms");
        assert_eq!(t(999_990_000.0), "999.99 ms");
        assert_eq!(t(999_999_999.0), "1.00 s");
        assert_eq!(t(1e9), "1.00 s");
        assert_eq!(t(38.07e9), "38.07 s");
        assert_eq!(t(86_400e9), "86400.00 s"); // seconds are the largest unit
        assert_eq!(t(99_999.99e9), "99999.99 s");
        assert_eq!(t(1e14), "1.000e5 s");
        assert_eq!(t(-4.5e15), "-4.500e6 s");
        assert_eq!(t(f64::MAX), "1.798e299 s");
        assert_eq!(t(-5.0), "-5.00 ns");
        assert_eq!(t(-0.001), "0.00 ns");
    }

    #[test]
    fn cycles_have_one_decimal_and_stay_narrow() {
        let c = |v| format_value(v, Unit::Cycles);
        assert_eq!(c(0.0), "0.0");
        assert_eq!(c(-0.0), "0.0");
        assert_eq!(c(226.8), "226.8");
        assert_eq!(c(226.84), "226.8");
        assert_eq!(c(1_234.0), "1234.0");
        assert_eq!(c(9_999_999.9), "9999999.9");
        assert_eq!(c(9_999_999.99), "10000000"); // would round to 10000000.0
        assert_eq!(c(1e7), "10000000");
        assert_eq!(c(999_999_999.0), "999999999");
        assert_eq!(c(1e9), "1.000e9");
        assert_eq!(c(1.142e11), "1.142e11");
        for v in [0.0, 1.0, 9_999_999.9, 5e8, 4.5e15, f64::MAX] {
            assert!(c(v).len() <= 9, "{v} -> {}", c(v));
        }
    }

    #[test]
    fn non_finite_is_a_dash() {
        for unit in [Unit::Time, Unit::Cycles] {
            for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                assert_eq!(format_value(v, unit), "-");
            }
        }
        assert_eq!(fixed(f64::NAN, 2), "-");
        assert_eq!(plain(f64::INFINITY), "-");
    }

    #[test]
    fn cleaning_parameters_are_short() {
        assert_eq!(plain(10.0), "10");
        assert_eq!(plain(1.5), "1.5");
        assert_eq!(plain(0.1 + 0.2), "0.3");
        assert_eq!(plain(2_000.0), "2000");
    }

    #[test]
    fn names_are_cut_with_a_tilde() {
        assert_eq!(name_cell("Sim_RiskPnL", 20), "Sim_RiskPnL");
        assert_eq!(
            name_cell("exactly_twenty_chars", 20),
            "exactly_twenty_chars"
        );
        assert_eq!(
            name_cell("twenty_one_chars_long", 20),
            "twenty_one_chars_lo~"
        );
        assert_eq!(
            name_cell("twenty_one_chars_long", 21),
            "twenty_one_chars_long"
        );
        assert_eq!(name_cell("a\nb", 20), "a b");
    }

    #[test]
    fn wrap_keeps_every_line_within_width() {
        let text =
            "anomalies: 1 abandoned frame, 22 orphaned frames, a_very_long_word_that_cannot_fit";
        for width in [10, 17, 30, 200] {
            let lines = wrap(text, width);
            assert!(
                lines.iter().all(|l| l.chars().count() <= width),
                "{lines:?}"
            );
            let joined: String = lines.concat().chars().filter(|c| *c != ' ').collect();
            assert_eq!(joined, text.replace(' ', ""));
        }
    }
}
