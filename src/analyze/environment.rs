//! The ENVIRONMENT block of a report: what the numbers rest on (CPU, clock and why,
//! hypervisor, clocksource, governor), and what to beware of.

use super::Calibration;
use crate::clock::Mode;
use crate::collect::Totals;
use crate::report::Environment;
use std::collections::HashMap;

/// The environment block: the machine's facts and warnings, then the warnings only the
/// data can give.
pub(crate) fn environment(totals: &Totals, calibration: &Calibration) -> Environment {
    let mut warnings = Vec::new();
    if calibration.resolution > 1 {
        warnings.push(format!(
            "the counter advances in steps of {} ticks ({:.2} ns): shorter scopes read 0 or one step",
            calibration.resolution,
            calibration.resolution as f64 / calibration.ticks_per_ns
        ));
    }
    if let Some(pooled) = pooled_fast_mode(totals) {
        warnings.push(pooled);
    }
    Environment {
        step_ticks: Some(calibration.resolution),
        step_ns: Some(calibration.resolution as f64 / calibration.ticks_per_ns),
        ..machine(warnings)
    }
}

/// A warning naming the ids whose Fast-mode samples come from several threads (pooled
/// in ALL THREADS), if any.
fn pooled_fast_mode(totals: &Totals) -> Option<String> {
    // Ids whose Fast-mode samples come from several threads: pooled in ALL THREADS.
    let mut fast_threads: HashMap<&str, usize> = HashMap::new();
    for t in totals.threads.values() {
        for c in t.flat().iter() {
            let fast = c.kinds.iter().any(|(kind, _)| {
                matches!(kind.modes(), Some((start, stop)) if start == Mode::Fast || stop == Mode::Fast)
            });
            if fast {
                *fast_threads.entry(c.name).or_default() += 1;
            }
        }
    }
    let mut pooled: Vec<&str> = fast_threads
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| *id)
        .collect();
    pooled.sort_unstable();
    if pooled.is_empty() {
        return None;
    }
    let shown = pooled
        .iter()
        .take(5)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    let more = if pooled.len() > 5 {
        format!(" and {} more", pooled.len() - 5)
    } else {
        String::new()
    };
    Some(format!(
        "Fast-mode samples are compared across threads in ALL THREADS ({shown}{more}): RDTSC neither waits \
         for earlier work nor reports the CPU, so a scope that moved between cores goes unnoticed; use Mid \
         or Hard where cross-thread comparison matters"
    ))
}

/// The machine's facts and its warnings, followed by `data_warnings`.
fn machine(data_warnings: Vec<String>) -> Environment {
    let facts = crate::clock::facts();
    let decision = crate::clock::decision();
    let now = crate::platform::current_clocksource();
    let mut warnings = Vec::new();
    if !decision.hardware {
        warnings.push(format!(
            "latte reads the OS monotonic clock, not the hardware counter: {}",
            decision.reason
        ));
    }
    if facts.hypervisor == Some(true) {
        warnings.push(
            "running under a hypervisor: the counter and scheduling are virtualised; compare runs on the \
             same host, and expect preemptions the guest cannot see"
                .into(),
        );
    }
    if let Some(g) = facts.governor.as_deref().filter(|g| *g != "performance") {
        warnings.push(format!(
            "CPU frequency governor is `{g}`, not `performance`: the core's speed can change under the \
             measurement (cycle counts of the same work will vary)"
        ));
    }
    if let (Some(a), Some(b)) = (&facts.kernel_clocksource, &now)
        && a != b
    {
        warnings.push(format!(
            "the kernel clocksource changed from `{a}` to `{b}` during the run: the kernel stopped \
             trusting `{a}`; timings from before and after may not compare"
        ));
    }
    warnings.extend(data_warnings);
    Environment {
        cpu_model: facts.cpu_model.clone(),
        clock: crate::clock::source().to_string(),
        clock_reason: decision.reason.clone(),
        invariant_tsc: facts.invariant_tsc,
        hypervisor: facts.hypervisor,
        clocksource_at_start: facts.kernel_clocksource.clone(),
        clocksource_now: now,
        governor: facts.governor.clone(),
        isolated_cpus: facts.isolated_cpus.clone(),
        counter_hz: facts.counter_hz,
        os: Some(facts.os.clone()).filter(|os| !os.is_empty()),
        frequency: decision
            .hardware
            .then(|| crate::platform::frequency(facts).to_string()),
        step_ticks: None,
        step_ns: None,
        warnings,
    }
}
