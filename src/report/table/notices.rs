//! The notices of a report, as the table writes them: what must be seen in every report (periodic reports that
//! failed, exporters that failed, the memory cap, lost samples), what goes under a thread's table (anomalies
//! with the ids of the Stops that found no scope, scopes without their Stop, timers
//! cancelled on purpose, scopes open now) and the corrected tails. Long lists are
//! summarised (wide shows them whole).

use super::text::value;
use crate::allocs::Allocs;
use crate::diagnostics::{Anomalies, Unpaired};
use crate::report::numbers::{self, count};
use crate::report::{
    ExporterFailures, PeriodicFailures, Report, Row, ThreadReport, UnpairedScopes,
};

/// Names a summarised list shows before `and N more` (a wide table shows them all).
pub(super) const LISTED: usize = 6;

/// What must be seen in every report, brief or not: periodic reports that failed,
/// exporters that failed, ids the memory cap kept from recording, lost samples, a clocksource that changed,
/// and what a report read from an older format does not know.
pub(super) fn notices(report: &Report, wide: bool) -> Vec<String> {
    let mut lines: Vec<String> = report
        .periodic_failures
        .iter()
        .map(periodic_failures)
        .collect();
    lines.extend(report.exporter_failures.iter().map(exporter_failures));
    lines.extend(report.dumps.as_ref().map(dumps));
    lines.extend(report.recording_off.as_ref().map(recording_off));
    lines.extend(over_cap(report, wide));
    lines.extend(lost(report, wide));
    lines
}

/// The line naming periodic reports that could not be written.
fn periodic_failures(failures: &PeriodicFailures) -> String {
    let (n, s) = (failures.count, if failures.count == 1 { "" } else { "s" });
    format!(
        "{} periodic report{s} could not be written: {}",
        count(n),
        failures.last_error
    )
}

/// The line naming an exporter's failures over the run.
fn exporter_failures(failures: &ExporterFailures) -> String {
    let (n, s) = (failures.count, if failures.count == 1 { "" } else { "s" });
    format!(
        "exporter {} failed {} time{s} in this run, last: {}",
        failures.exporter,
        count(n),
        failures.last_error
    )
}

/// The flight recorder's line: dumps written, where, the newest; those skipped and
/// those that failed, with the last error.
fn dumps(c: &crate::report::Dumps) -> String {
    let mut line = format!(
        "{} timeline dump{} written to {}",
        count(c.written),
        if c.written == 1 { "" } else { "s" },
        c.dir
    );
    if let Some(last) = &c.last_file {
        line += &format!(" (newest {last})");
    }
    if c.skipped > 0 {
        line += &format!(
            "; {} slow samples not dumped (too soon after one)",
            count(c.skipped)
        );
    }
    if c.failed > 0 {
        line += &format!(
            "; {} could not be written: {}",
            count(c.failed),
            c.last_error.as_deref().unwrap_or("unknown error")
        );
    }
    line
}

/// The runtime switch's line: how long recording was off, in how many pauses.
fn recording_off(off: &crate::report::RecordingOff) -> String {
    let (n, s) = (off.pauses, if off.pauses == 1 { "" } else { "s" });
    format!(
        "recording was off for {} ({} pause{s} with latte::set_recording){}: scopes opened then are not in these figures",
        crate::report::numbers::time(off.seconds * 1e9),
        count(n),
        if off.now { "; it is off now" } else { "" }
    )
}

/// `names` joined, at most [`LISTED`] of them unless `wide`, then `and N more`.
pub(super) fn listed(names: Vec<String>, wide: bool) -> String {
    let total = names.len();
    if wide || total <= LISTED {
        return names.join(", ");
    }
    let shown: Vec<String> = names.into_iter().take(LISTED).collect();
    format!(
        "{} and {} more",
        shown.join(", "),
        count((total - LISTED) as u64)
    )
}

/// The non-zero anomaly counters, those of Stops with their ids, e.g. `anomalies: 2
/// empty stops (parse 2), 1 unmatched stop (commit), 1 orphaned scope`; `None` when
/// every counter is zero. Ids are named as far as the report has them per id (a report
/// written before they were counted per id has none).
pub(super) fn anomalies(thread: &ThreadReport, wide: bool) -> Option<String> {
    let ids = |count: fn(&Unpaired) -> u64| {
        let per_id = thread
            .unpaired
            .iter()
            .map(|f| (f.component.as_str(), count(&f.counts)));
        by_count(per_id)
    };
    let phrases: Vec<String> = Anomalies::LABELS
        .iter()
        .zip(thread.anomalies.iter())
        .filter(|(_, (_, n))| *n > 0)
        .map(|((one, many), (name, n))| {
            let label = if n == 1 { one } else { many };
            let ids = match name {
                "empty_stops" => ids(|c| c.empty_stops),
                "unmatched_stops" => ids(|c| c.unmatched_stops),
                _ => Vec::new(),
            };
            let first = thread
                .alloc_breach
                .as_ref()
                .filter(|_| name == "alloc_breaches");
            match (ids.is_empty(), first) {
                (_, Some(b)) => format!(
                    "{} {label} (first: {}, {})",
                    count(n),
                    b.path.join(" > "),
                    numbers::bytes(b.size as f64)
                ),
                (true, None) => format!("{} {label}", count(n)),
                (false, None) => format!("{} {label} ({})", count(n), named(ids, wide)),
            }
        })
        .collect();
    (!phrases.is_empty()).then(|| format!("anomalies: {}", phrases.join(", ")))
}

/// A bucket of allocations, e.g. `allocations in no scope: 1,204 (88.5 KiB), 1,180
/// frees`; `None` when it counted nothing.
pub(super) fn allocs(what: &str, a: Allocs) -> Option<String> {
    (!a.is_empty()).then(|| {
        format!(
            "{what}: {} ({}), {} frees",
            count(a.count()),
            numbers::bytes(a.bytes() as f64),
            count(a.frees())
        )
    })
}

/// The timers cancelled on the thread, per id (most first), e.g. `cancelled timers
/// (not recorded): fetch 3, quote`; `None` when there were none.
pub(super) fn cancelled(thread: &ThreadReport, wide: bool) -> Option<String> {
    let ids = by_count(
        thread
            .unpaired
            .iter()
            .map(|f| (f.component.as_str(), f.counts.cancelled_timers)),
    );
    (!ids.is_empty()).then(|| format!("cancelled timers (not recorded): {}", named(ids, wide)))
}

/// The scopes open on the thread when the report was taken, per id, outermost first,
/// e.g. `open now: frame 1, physics 1`; `None` when there were none.
pub(super) fn open_now(thread: &ThreadReport, wide: bool) -> Option<String> {
    let parts: Vec<String> = thread
        .open
        .iter()
        .map(|o| format!("{} {}", o.component, count(o.count)))
        .collect();
    (!parts.is_empty()).then(|| format!("open now: {}", listed(parts, wide)))
}

/// The ids with a non-zero count, most first (ties in their order).
fn by_count<'a>(counts: impl Iterator<Item = (&'a str, u64)>) -> Vec<(&'a str, u64)> {
    let mut ids: Vec<(&str, u64)> = counts.filter(|(_, n)| *n > 0).collect();
    ids.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    ids
}

/// `parse 2, commit` (a count of 1 is left out), summarised as [`listed`] does.
fn named(ids: Vec<(&str, u64)>, wide: bool) -> String {
    let parts = ids
        .into_iter()
        .map(|(id, n)| match n {
            1 => id.to_owned(),
            n => format!("{id} {}", count(n)),
        })
        .collect();
    listed(parts, wide)
}

/// The ids whose scopes ended without their Stop, e.g. `scopes without their Stop:
/// parse 937 abandoned + 63 open at exit`, and those that recorded nothing past the
/// memory cap, e.g. `past the memory cap, not recorded: quote 12`.
pub(super) fn unpaired_scopes(unpaired: &[UnpairedScopes], wide: bool) -> Vec<String> {
    let ended: Vec<String> = unpaired
        .iter()
        .filter(|f| f.counts.scopes() > 0)
        .map(|f| {
            let c = &f.counts;
            let parts: Vec<String> = [
                (c.abandoned, "abandoned"),
                (c.orphaned, "orphaned"),
                (c.open_at_exit, "open at exit"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{} {what}", count(*n)))
            .collect();
            format!("{} {}", f.component, parts.join(" + "))
        })
        .collect();
    let capped: Vec<String> = unpaired
        .iter()
        .filter(|f| f.counts.over_cap > 0)
        .map(|f| format!("{} {}", f.component, count(f.counts.over_cap)))
        .collect();
    let mut lines = Vec::new();
    if !ended.is_empty() {
        lines.push(format!(
            "scopes without their Stop: {}",
            listed(ended, wide)
        ));
    }
    if !capped.is_empty() {
        let capped = listed(capped, wide);
        lines.push(format!("past the memory cap, not recorded: {capped}"));
    }
    lines
}

/// The ids the memory cap kept from recording on some thread, named once for the
/// whole report, e.g. `memory cap reached: quote, fill recorded nothing on some
/// threads (12 records dropped); raise Builder::memory_cap`.
fn over_cap(report: &Report, wide: bool) -> Option<String> {
    let mut ids: Vec<String> = Vec::new();
    let mut dropped = 0u64;
    for f in report.threads.iter().flat_map(|t| &t.unpaired) {
        if f.counts.over_cap > 0 {
            dropped = dropped.saturating_add(f.counts.over_cap);
            if !ids.contains(&f.component) {
                ids.push(f.component.clone());
            }
        }
    }
    let small = report.footprint.as_ref().map_or(0, |f| f.rings_kept_small);
    let kept_small = (small > 0).then(|| {
        format!(
            "{} ring{} kept below {} capacity (they wrap sooner)",
            count(small),
            if small == 1 { "" } else { "s" },
            if small == 1 { "its" } else { "their" }
        )
    });
    let refused = (dropped > 0).then(|| {
        format!(
            "{} recorded nothing on some threads ({} records dropped)",
            listed(ids, wide),
            count(dropped)
        )
    });
    let what: Vec<String> = refused.into_iter().chain(kept_small).collect();
    (!what.is_empty()).then(|| {
        format!(
            "memory cap reached: {}; raise Builder::memory_cap",
            what.join("; ")
        )
    })
}

/// The components that lost samples (overwritten in their ring before latte read
/// them), e.g. `lost, in no figure: quote 1,204 of 201,000`.
fn lost(report: &Report, wide: bool) -> Option<String> {
    let rows: Vec<&Row> = if report.all_threads.is_empty() {
        report.threads.iter().flat_map(|t| &t.rows).collect()
    } else {
        report.all_threads.iter().collect()
    };
    let named: Vec<String> = rows
        .iter()
        .filter(|r| r.stats.lost > 0)
        .map(|r| {
            let s = &r.stats;
            format!("{} {} of {}", r.component, count(s.lost), count(s.seen))
        })
        .collect();
    (!named.is_empty()).then(|| {
        format!(
            "lost (overwritten in the ring before latte read them, in no figure): {}",
            listed(named, wide)
        )
    })
}

/// Per component with a declared period: its tails corrected for coordinated
/// omission.
pub(super) fn corrected(report: &Report) -> Vec<String> {
    let v = |x: f64| value(report, x);
    report
        .all_threads
        .iter()
        .filter_map(|row| {
            let c = row.corrected.as_ref()?;
            Some(format!(
                "corrected for a period of {} {}: {} values, p50 {}, p90 {}, p99 {}, p99.9 {}, max {}",
                v(c.period),
                row.component,
                count(c.count),
                v(c.p50),
                v(c.p90),
                v(c.p99),
                v(c.p999),
                v(c.max)
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_are_summarised_unless_wide() {
        let names: Vec<String> = (0..9).map(|i| format!("id{i}")).collect();
        assert_eq!(
            listed(names.clone(), false),
            "id0, id1, id2, id3, id4, id5 and 3 more"
        );
        assert_eq!(listed(names, true).matches(", ").count(), 8);
        let ids: Vec<(&str, u64)> = ["a", "b", "c", "d", "e", "f", "g", "h"]
            .into_iter()
            .zip([1, 2, 1, 1, 1, 1, 1, 1])
            .collect();
        let ids = by_count(ids.into_iter());
        assert_eq!(named(ids, false), "b 2, a, c, d, e, f and 2 more");
    }
}
