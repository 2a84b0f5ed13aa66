//! The words of a report, as lines before wrapping: the title and header lines,
//! ENVIRONMENT and the overhead matrix (the notices are in `notices.rs`).

use crate::report::numbers::{self, count, plain};
use crate::report::{Cleaning, Data, Figures, Unit};
use crate::report::{Environment, Overhead, Report};

/// Continuation indent of wrapped text lines.
pub(super) const INDENT: &str = "  ";

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

/// A duration of the report, in its own unit.
pub(super) fn value(report: &Report, v: f64) -> String {
    numbers::value(v, report.unit)
}

/// The clock line: counter, frequency, accuracy, resolution, teardown drops.
pub(super) fn clock(report: &Report) -> String {
    let mut clock = format!("clock {}", report.clock);
    if report.ticks_per_ns.is_finite() && report.ticks_per_ns > 0.0 {
        clock.push_str(&format!(" @ {:.3} GHz", report.ticks_per_ns));
        if report.frequency_accuracy.is_finite() {
            clock.push_str(&format!(" (±{:.1} ppm)", report.frequency_accuracy * 1e6));
        }
        if report.resolution > 0.0 {
            let ticks = if report.unit == Unit::Cycles {
                " ticks"
            } else {
                ""
            };
            let step = value(report, report.resolution);
            clock.push_str(&format!(", resolution {step}{ticks}"));
        }
    } else {
        clock.push_str(" @ unknown frequency");
    }
    if report.teardown_drops > 0 {
        let drops = count(report.teardown_drops);
        clock.push_str(&format!(", teardown drops: {drops}"));
    }
    clock
}

/// The line naming a clocksource that changed during the run, for brief reports
/// (full ones show it among ENVIRONMENT's warnings).
pub(super) fn clocksource_changed(env: &Environment) -> Option<String> {
    match (&env.clocksource_at_start, &env.clocksource_now) {
        (Some(a), Some(b)) if a != b => Some(format!(
            "warning: the kernel clocksource changed from `{a}` to `{b}` during the run"
        )),
        _ => None,
    }
}

/// The flight recorder's line: its reach and the memory it takes.
fn flight_recorder(f: &crate::diagnostics::Footprint) -> String {
    format!(
        "flight recorder: {} or {} scopes a thread ({} each, {} held by live threads)",
        numbers::time(f.flight_window_ns as f64),
        count(f.flight_entries),
        bytes(f.flight_entries * crate::config::FLIGHT_ENTRY_BYTES as u64),
        bytes(f.flight_bytes)
    )
}

/// The header lines of a full report under the title: clock, notices, memory and
/// the flagging rule.
pub(super) fn header(report: &Report, wide: bool) -> Vec<String> {
    let mut lines = vec![clock(report)];
    lines.extend(super::notices::notices(report, wide));
    if let Some(f) = &report.footprint {
        let memory = if wide {
            format!(
                "memory: {} in {} rings ({} reserved, cap {}) and {} histograms ({})",
                bytes(f.bytes),
                count(f.rings),
                bytes(f.ring_bytes_reserved),
                bytes(f.memory_cap),
                count(f.histograms),
                bytes(f.histogram_bytes)
            )
        } else {
            format!(
                "memory: {} ({} rings, {} histograms; cap {})",
                bytes(f.bytes + f.histogram_bytes),
                count(f.rings),
                count(f.histograms),
                bytes(f.memory_cap)
            )
        };
        let merged = match f.merged_threads {
            0 => String::new(),
            n => format!(", {} merged", count(n)),
        };
        lines.push(format!(
            "{memory}; threads: {} live, {} exited{merged}; drain CPU {}",
            count(f.live_threads),
            count(f.exited_threads),
            numbers::time(f.drain_cpu_ns as f64)
        ));
        if f.flight_entries > 0 {
            lines.push(flight_recorder(f));
        }
        let process = report.process_allocs;
        let what = "allocations by threads without a recorder";
        lines.extend(process.and_then(|a| super::notices::allocs(what, a)));
    }
    lines.push(cleaning(&report.cleaning, report.figures));
    lines
}

/// The ENVIRONMENT block: facts, the clock and why, then one line per warning.
pub(super) fn environment(env: &Environment) -> Vec<String> {
    let known = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let yes_no = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    let os = env.os.as_deref().and_then(naming_no_clocksource);
    let clocksource = match (&env.clocksource_at_start, &env.clocksource_now, os) {
        (Some(a), Some(b), _) if a == b => format!("{a} (unchanged since start)"),
        (Some(a), Some(b), _) => format!("{a} at start, {b} now: CHANGED"),
        (None, None, Some(os)) => format!("none ({os} names none)"),
        (a, b, _) => format!("{} at start, {} now", known(a), known(b)),
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
        format!(
            "clock: {}, because {}; kernel clocksource: {clocksource}",
            env.clock, env.clock_reason
        ),
    ];
    lines.extend(counter(env));
    lines.extend(env.warnings.iter().map(|w| format!("warning: {w}")));
    lines
}

/// The counter line: where the counter's frequency comes from, the measured step of
/// the clock in use, and whether the kernel keeps time with that same counter. Shown
/// where the platform states the frequency (aarch64 `CNTFRQ_EL0`, x86_64 macOS) and
/// on Windows and macOS; on Linux x86_64 the title line already gives the measured
/// frequency and step: no line.
fn counter(env: &Environment) -> Option<String> {
    let os = env.os.as_deref().and_then(naming_no_clocksource);
    let frequency = match (&env.frequency, env.counter_hz) {
        (Some(text), Some(_)) => text.clone(),
        (Some(text), None) if os.is_some() => text.clone(),
        // Reports before the frequency's source was recorded: aarch64 only.
        (None, Some(hz)) => format!("CNTFRQ_EL0 states {hz} Hz"),
        _ => return None,
    };
    let step = match (env.step_ticks, env.step_ns) {
        (Some(1), Some(ns)) => format!("1 tick ({ns:.2} ns)"),
        (Some(ticks), Some(ns)) => format!("{ticks} ticks ({ns:.2} ns)"),
        _ => "unknown".to_owned(),
    };
    // The frequency as a clause: "CNTFRQ_EL0 states ...", "frequency measured against ...".
    let frequency = if frequency.starts_with("measured") {
        format!("frequency {frequency}")
    } else {
        frequency
    };
    // Windows and macOS: the clock line already says no clocksource is named.
    let kernel = match (os, env.clocksource_at_start.as_deref()) {
        (Some(_), _) => String::new(),
        (None, Some("arch_sys_counter")) => "; kernel clocksource is arch_sys_counter: yes".into(),
        (None, Some(other)) => format!("; kernel clocksource is arch_sys_counter: no (`{other}`)"),
        (None, None) => "; kernel clocksource is arch_sys_counter: unknown".into(),
    };
    Some(format!(
        "counter: {frequency}; measured step {step}{kernel}"
    ))
}

/// The OS's name in a sentence, where it names no kernel clocksource (as
/// `platform`'s decision says it).
fn naming_no_clocksource(os: &str) -> Option<&'static str> {
    match os {
        "windows" => Some("Windows"),
        "macos" => Some("macOS"),
        _ => None,
    }
}

/// A byte count in KiB, MiB or GiB (latte's memory is never shown in bytes).
fn bytes(n: u64) -> String {
    match n {
        n if n < 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => crate::report::numbers::bytes(n as f64),
    }
}

/// The flagging rule in a few words, and what it does to the figures.
fn cleaning(cleaning: &Cleaning, figures: Figures) -> String {
    let mut steps = Vec::new();
    if let Some(b) = cleaning.bypass {
        steps.push(format!(
            "far (BYPASS) > max({}x median, median + {} ns)",
            plain(b.factor),
            plain(b.floor_ns)
        ));
    }
    if let Some(f) = cleaning.fences {
        steps.push(format!("outside the IQR fences Q1/Q3 ± {} IQR", plain(f.k)));
    }
    match (steps.is_empty(), figures) {
        (true, _) => "cleaning: off (nothing flagged)".to_owned(),
        (false, Figures::All) => format!("flagged, and kept in every figure: {}", steps.join(", ")),
        (false, Figures::Cleaned) => format!(
            "cleaning (SAMPLES to RANGE without the flagged; tails and TOTAL with them): {}",
            steps.join(", ")
        ),
    }
}

/// The overhead matrix (rows: start mode, columns: stop mode) and the pulse overhead,
/// each cell in its own unit, `< 1 step` below the counter's step.
pub(super) fn overhead(report: &Report, overhead: &Overhead) -> Vec<String> {
    const LETTERS: [&str; 3] = ["F", "M", "H"];
    let cell = |v: f64| below_step(v, report.resolution).unwrap_or_else(|| value(report, v));
    let rows: Vec<(String, Vec<String>)> = LETTERS
        .iter()
        .zip(&overhead.scope)
        .map(|(letter, row)| (format!(" {letter}"), row.iter().map(|&v| cell(v)).collect()))
        .chain([(" PULSE".to_owned(), vec![cell(overhead.pulse)])])
        .collect();
    // What an empty scope costs the scope around it: unknown (0) in older reports.
    let inside: Option<Vec<Vec<String>>> =
        overhead.inside.iter().flatten().any(|&v| v > 0.0).then(|| {
            let row = |r: &[f64; 3]| r.iter().map(|&v| value(report, v)).collect();
            overhead.inside.iter().map(row).collect()
        });
    let width = rows
        .iter()
        .flat_map(|(_, cells)| cells.iter())
        .chain(inside.iter().flatten().flatten())
        .map(String::len)
        .max()
        .unwrap_or(1);
    let head: String = LETTERS.iter().map(|l| format!(" {l:>width$}")).collect();
    let mut lines = match inside {
        Some(_) => vec![
            "OVERHEAD H[Start] x W[Stop]: an empty scope records | costs the scope around it"
                .to_owned(),
            format!("{:6}{head} |{head}", ""),
        ],
        None => vec![
            "OVERHEAD H[Start] x W[Stop]".to_owned(),
            format!("{:6}{head}", ""),
        ],
    };
    for (k, (label, cells)) in rows.into_iter().enumerate() {
        let mut line: String = cells.iter().map(|c| format!(" {c:>width$}")).collect();
        if let Some(around) = inside.as_ref().and_then(|m| m.get(k)) {
            let around: String = around.iter().map(|c| format!(" {c:>width$}")).collect();
            line = format!("{line} |{around}");
        }
        lines.push(format!("{label:6}{line}"));
    }
    lines
}

/// `< 1 step` for a measured value below the counter's step (0 after calibration is
/// one step or less), `None` otherwise.
pub(super) fn below_step(v: f64, step: f64) -> Option<String> {
    (step > 0.0 && v.is_finite() && v < step).then(|| "< 1 step".to_owned())
}
