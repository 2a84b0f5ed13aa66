//! The free text of a table: the header lines, ENVIRONMENT, the overhead matrix,
//! the lines under a section's rows and the slowest samples.

use super::numbers::{Scale, format_value, plain};
use crate::config::{Cleaning, Data, Unit};
use crate::report::{EndedFrames, Environment, Overhead, PeriodicFailures, Report};
use comfy_table::{CellAlignment, ContentArrangement, Table};

/// The title line: `LATTE TELEMETRY [TIME][CAL]` and the report's label.
pub(super) fn title(report: &Report) -> String {
    let unit = match report.unit {
        Unit::Cycles => "CYCLES",
        Unit::Time => "TIME",
    };
    let data = match report.data {
        Data::Raw => "RAW",
        Data::Calibrated => "CAL",
    };
    let mut title = format!("LATTE TELEMETRY [{unit}][{data}]");
    if let Some(label) = &report.label {
        title.push_str(&format!(" {label}"));
    }
    title
}

/// The clock line: counter, frequency, accuracy, resolution, teardown drops.
fn clock(report: &Report) -> String {
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
            clock.push_str(&format!(", resolution {value}{ticks}"));
        }
    } else {
        clock.push_str(" @ unknown frequency");
    }
    if report.teardown_drops > 0 {
        clock.push_str(&format!(", teardown drops: {}", report.teardown_drops));
    }
    clock
}

/// What must be seen even in a compact report: periodic reports that failed, ids the
/// memory cap kept from recording.
pub(super) fn notices(report: &Report) -> Vec<String> {
    let failures = report.periodic_failures.as_ref().map(periodic_failures);
    failures.into_iter().chain(over_cap(report)).collect()
}

/// The header lines under the title: clock, notices, memory, cleaning.
pub(super) fn header(report: &Report) -> Vec<String> {
    let mut lines = vec![clock(report)];
    lines.extend(notices(report));
    if let Some(f) = &report.footprint {
        lines.push(format!(
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
        ));
    }
    lines.push(cleaning(&report.cleaning));
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
pub(super) fn environment(env: &Environment) -> Vec<String> {
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
        "ENVIRONMENT".into(),
        format!(
            "cpu: {}; hypervisor: {}; invariant TSC: {}; governor: {}; isolated CPUs: {}",
            known(&env.cpu_model),
            yes_no(env.hypervisor),
            yes_no(env.invariant_tsc),
            known(&env.governor),
            known(&env.isolated_cpus)
        ),
        format!("clock: {}, because {}", env.clock, env.clock_reason),
    ];
    lines.extend(counter(env));
    lines.push(format!("kernel clocksource: {clocksource}"));
    lines.extend(env.warnings.iter().map(|w| format!("warning: {w}")));
    lines
}

/// The counter line, where the hardware states the counter's frequency (aarch64
/// `CNTFRQ_EL0`): that frequency, the measured step of the clock in use, and whether
/// the kernel keeps time with that same counter (`arch_sys_counter`). On x86_64 the
/// title line already gives the step, and the TSC states no frequency: no line.
fn counter(env: &Environment) -> Option<String> {
    let hz = env.counter_hz?;
    let step = match (env.step_ticks, env.step_ns) {
        (Some(1), Some(ns)) => format!("1 tick ({ns:.2} ns)"),
        (Some(ticks), Some(ns)) => format!("{ticks} ticks ({ns:.2} ns)"),
        _ => "unknown".to_owned(),
    };
    let on_it = match env.clocksource_at_start.as_deref() {
        Some("arch_sys_counter") => "yes".to_owned(),
        Some(other) => format!("no (`{other}`)"),
        None => "unknown".to_owned(),
    };
    Some(format!(
        "counter: CNTFRQ_EL0 {hz} Hz; measured step {step}; kernel clocksource is arch_sys_counter: {on_it}"
    ))
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

/// The ids whose scopes ended without their Stop, e.g. `scopes without their Stop:
/// parse 937 abandoned + 63 open at exit`, and those that recorded nothing past the
/// memory cap, e.g. `past the memory cap, not recorded: quote 12`.
pub(super) fn ended_frames(frames: &[EndedFrames]) -> Vec<String> {
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
pub(super) fn slowest_and_corrected(report: &Report) -> Vec<String> {
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
            lines.push(format!("slowest {}: {}", row.component, listed.join(", ")));
        }
        if let Some(c) = &row.corrected {
            let v = |x: f64| format_value(x, report.unit);
            lines.push(format!(
                "corrected for a period of {} {}: {} values, p50 {}, p90 {}, p99 {}, p99.9 {}, max {}",
                v(c.period),
                row.component,
                c.count,
                v(c.p50),
                v(c.p90),
                v(c.p99),
                v(c.p999),
                v(c.max)
            ));
        }
    }
    lines
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

/// The overhead matrix (rows: start mode, columns: stop mode) and the pulse overhead,
/// in one unit picked from their largest value.
pub(super) fn overhead(overhead: &Overhead, unit: Unit, step: f64) -> Vec<String> {
    const LETTERS: [&str; 3] = ["F", "M", "H"];
    let values = overhead.scope.iter().flatten().chain([&overhead.pulse]);
    let max = values
        .map(|v| v.abs())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let scale = Scale::for_values(max, unit, step);
    let mut table = Table::new();
    table
        .load_style(comfy_table::presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(
            [scale.unit_label()]
                .into_iter()
                .chain(LETTERS.map(String::from)),
        );
    for (letter, row) in LETTERS.iter().zip(&overhead.scope) {
        let cells = row.iter().map(|&v| scale.one(v));
        table.add_row([letter.to_string()].into_iter().chain(cells));
    }
    table.add_row(["PULSE".to_owned(), scale.one(overhead.pulse)]);
    for column in table.column_iter_mut().skip(1) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    let mut lines = vec!["OVERHEAD H[Start] x W[Stop]".to_owned()];
    lines.extend(table.lines().map(|line| line.trim_end().to_owned()));
    lines
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
    fn the_overhead_matrix_has_one_unit_and_marks_what_is_below_a_step() {
        let o = Overhead {
            scope: [
                [0.21, 10.02, 10.02],
                [0.21, 10.02, 20.04],
                [0.0, 10.02, 10.02],
            ],
            pulse: 10.02,
        };
        let lines = overhead(&o, Unit::Time, 10.01);
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["(ns)", "F", "M", "H"]
        );
        assert!(
            lines[2].starts_with(" F") && lines[2].contains("< 1 step"),
            "{lines:?}"
        );
        assert!(lines[3].contains("20.04"), "{lines:?}");
        assert!(
            lines[5].contains("PULSE") && lines[5].contains("10.02"),
            "{lines:?}"
        );
    }
}
