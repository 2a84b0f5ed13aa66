//! The first step of writing a table: everything a report will print, each cell
//! formatted once (text and width) for every column, before any column is chosen.
//!
//! A [`Doc`] is the title, the lines under it, and blocks: text, fixed-width lines
//! (the overhead matrix), sections (a title, rows of cells, notices) and the tails
//! block (per component: flagged samples and the slowest).

use super::notices::{self, LISTED};
use super::options::{Column, TableOptions};
use super::text;
use super::tree;
use crate::allocs::ScopeAllocs;
use crate::report::Figures;
use crate::report::numbers::{self, count, share};
use crate::report::{Report, Row, RowKind, ThreadReport};

/// Rows a compact table shows before counting the rest.
pub(super) const COMPACT_ROWS: usize = 20;
/// Rows the tails block shows before counting the rest (unless wide).
const TAIL_ROWS: usize = 20;
/// Slowest samples the tails block shows per component (the JSON has them all).
const SLOWEST_SHOWN: usize = 3;

/// A report as lines and cells.
pub(super) struct Doc {
    /// `LATTE TELEMETRY [..][..] label`.
    pub(super) title: String,
    /// Lines under the title (clock, notices, memory, cleaning).
    pub(super) head: Vec<String>,
    /// The rest, in order, a blank line between two.
    pub(super) blocks: Vec<Block>,
    /// One of a series of compact reports.
    pub(super) compact: bool,
    /// Whether a section shows a call tree (then SELF and % PARENT are offered).
    pub(super) tree: bool,
    /// Whether the report counted allocations (then ALLOCS/CALL and BYTES/CALL are).
    pub(super) allocs: bool,
}

/// One block of a report.
pub(super) enum Block {
    /// Free text, wrapped to the width.
    Text(Vec<String>),
    /// Lines already laid out (the overhead matrix).
    Fixed(Vec<String>),
    /// A table of components.
    Section(Section),
    /// Per component: flagged samples and their share of its time, the slowest.
    Tails(Tails),
}

/// A section: its title, one row per component, and the lines under the table.
pub(super) struct Section {
    pub(super) title: String,
    pub(super) rows: Vec<Cells>,
    /// Lines under the rows: rows left out, anomalies, scopes without their Stop.
    pub(super) notices: Vec<String>,
}

/// One component's cells, formatted once, indexed by [`Column::index`].
pub(super) struct Cells {
    pub(super) id: String,
    /// A call-tree node's depth (its id is indented by it); `None` for a flat row.
    pub(super) depth: Option<u32>,
    pub(super) cells: Vec<String>,
}

/// The tails block's rows.
pub(super) struct Tails {
    pub(super) title: String,
    pub(super) rows: Vec<Tail>,
    pub(super) more: Option<String>,
}

/// One component's tails: flagged counts and shares, the slowest samples.
pub(super) struct Tail {
    pub(super) id: String,
    /// BYPASS, its share, OUTLIERS, its share.
    pub(super) flagged: [String; 4],
    /// The slowest values, slowest first, each with its thread unless `on` says it.
    pub(super) slowest: Vec<String>,
    /// The thread of every slowest value, when it is one thread.
    pub(super) on: Option<String>,
}

/// The tails block's headers after COMPONENT.
/// The block names each flag by its rule (the header line states it in full), not by
/// a cause the rule cannot see: FAR is BYPASS, far above the median.
pub(super) const TAIL_HEADERS: [&str; 5] = ["FAR", "OF TIME", "OUTSIDE IQR", "OF TIME", "SLOWEST"];

impl Doc {
    /// Everything `report` prints with `options`.
    pub(super) fn of(report: &Report, options: &TableOptions) -> Doc {
        let wide = options.wide;
        let mut head = Vec::new();
        let mut blocks = Vec::new();
        if options.compact {
            head.push(text::clock(report));
            head.extend(notices::notices(report, wide));
        } else {
            head.extend(text::header(report, wide));
        }
        if options.brief {
            let env = report.environment.as_ref();
            head.extend(env.and_then(text::clocksource_changed));
        } else {
            let env = report.environment.as_ref().map(text::environment);
            blocks.extend(env.map(Block::Text));
            let matrix = report.overhead.as_ref().map(|o| text::overhead(report, o));
            blocks.extend(matrix.map(Block::Fixed));
        }
        blocks.extend(sections(report, options).into_iter().map(Block::Section));
        if !options.compact {
            for t in &report.threads {
                blocks.extend(super::frames::blocks(report, t, options.resolved_width()));
            }
            blocks.extend(tails(report, wide).map(Block::Tails));
            let corrected = notices::corrected(report);
            if !corrected.is_empty() {
                blocks.push(Block::Text(corrected));
            }
        }
        let tree = blocks.iter().any(|b| match b {
            Block::Section(s) => s.rows.iter().any(|r| r.depth.is_some()),
            _ => false,
        });
        Doc {
            title: text::title(report),
            head,
            blocks,
            compact: options.compact,
            tree,
            allocs: report.process_allocs.is_some(),
        }
    }

    /// Every section's rows.
    pub(super) fn rows(&self) -> impl Iterator<Item = &Cells> {
        self.blocks.iter().flat_map(|b| match b {
            Block::Section(s) => s.rows.as_slice(),
            _ => &[],
        })
    }

    /// Every component id the tables show, each once, in order of appearance.
    pub(super) fn ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = Vec::new();
        let tails = self.blocks.iter().flat_map(|b| match b {
            Block::Tails(t) => t.rows.as_slice(),
            _ => &[],
        });
        let names = self.rows().map(|r| r.id.as_str());
        for id in names.chain(tails.map(|t| t.id.as_str())) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    }
}

/// The sections a report prints.
///
/// Full reports: each thread's section; ALL THREADS after them only when a component
/// was recorded on more than one thread (otherwise it would repeat their rows), or
/// when there are no thread sections (a focus left none). Compact reports: ALL
/// THREADS, then each thread's section only with `per_thread`; their notices carry the
/// thread's name.
fn sections(report: &Report, options: &TableOptions) -> Vec<Section> {
    let mut out = Vec::new();
    let threads = &report.threads;
    let per_thread = !options.compact || options.per_thread;
    let shared = report.all_threads.len() < threads.iter().map(|t| t.rows.len()).sum();
    let all = if options.compact {
        true
    } else {
        threads.is_empty() || (threads.len() > 1 && shared)
    };
    if options.compact && all {
        out.push(all_threads(report, options));
    }
    if per_thread {
        out.extend(threads.iter().map(|t| thread(report, t, options)));
    }
    if !options.compact && all {
        out.push(all_threads(report, options));
    }
    if threads.is_empty() && report.all_threads.is_empty() {
        out.clear();
        out.push(Section {
            title: "no samples were recorded".to_owned(),
            rows: Vec::new(),
            notices: Vec::new(),
        });
    }
    out
}

/// The ALL THREADS section; in a compact report it also carries every thread's notices,
/// each naming its thread.
fn all_threads(report: &Report, options: &TableOptions) -> Section {
    let n = report.threads.len();
    let title = match n {
        0 | 1 => "ALL THREADS".to_owned(),
        n => format!("ALL THREADS ({} threads)", count(n as u64)),
    };
    let mut section = Section {
        title,
        rows: Vec::new(),
        notices: Vec::new(),
    };
    if options.flat || report.tree.is_empty() {
        fill(&mut section, report, &report.all_threads, options);
    } else {
        tree::fill_tree(&mut section, report, &report.tree, options);
        tree::left_out(&mut section, report.tree_left_out);
    }
    section.notices.extend(kinds(&report.all_threads));
    if options.compact && !options.per_thread {
        for t in &report.threads {
            let name = format!("{} (#{})", t.name, t.serial);
            let notices = thread_notices(t, options.wide);
            section
                .notices
                .extend(notices.into_iter().map(|n| format!("{name}: {n}")));
        }
    }
    section
}

/// A thread's section.
fn thread(report: &Report, t: &ThreadReport, options: &TableOptions) -> Section {
    let exited = if t.exited { " exited" } else { "" };
    let mut section = Section {
        title: format!("THREAD {} (#{}){exited}", t.name, t.serial),
        rows: Vec::new(),
        notices: Vec::new(),
    };
    if options.flat || t.tree.is_empty() {
        fill(&mut section, report, &t.rows, options);
    } else {
        tree::fill_tree(&mut section, report, &t.tree, options);
        tree::left_out(&mut section, t.tree_left_out);
    }
    section.notices.extend(kinds(&t.rows));
    if t.rows.is_empty() {
        section.notices.insert(0, "no samples recorded".to_owned());
    }
    section.notices.extend(thread_notices(t, options.wide));
    section
}

/// A thread's anomalies, the scopes that ended without their Stop, the timers
/// cancelled and the scopes open now.
fn thread_notices(t: &ThreadReport, wide: bool) -> Vec<String> {
    let mut lines: Vec<String> = notices::anomalies(t, wide).into_iter().collect();
    lines.extend(notices::unpaired_scopes(&t.unpaired, wide));
    lines.extend(notices::cancelled(t, wide));
    lines.extend(notices::open_now(t, wide));
    lines.extend(
        t.outside_allocs
            .and_then(|a| notices::allocs("allocations in no scope", a)),
    );
    lines
}

/// The rows of `rows`, the first [`COMPACT_ROWS`] in a compact report.
fn fill(section: &mut Section, report: &Report, rows: &[Row], options: &TableOptions) {
    let shown = shown(section, rows.len(), options);
    section.rows = rows[..shown].iter().map(|r| cells(report, r)).collect();
}

/// Notes naming the rows whose figures are not a stack scope's wall time: a span's
/// busy time (its polls summed), and scopes timed off the stack (wall time, no SELF).
fn kinds(rows: &[Row]) -> Vec<String> {
    let named = |kind: RowKind| -> Vec<&str> {
        rows.iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.component.as_str())
            .collect()
    };
    let mut notices = Vec::new();
    let busy = named(RowKind::Busy);
    if !busy.is_empty() {
        notices.push(format!(
            "busy time (a span's polls added up, not its wall time): {}",
            busy.join(", ")
        ));
    }
    let timers = named(RowKind::Timer);
    if !timers.is_empty() {
        notices.push(format!(
            "wall time off the stack (a Timer, an async fn, a span's lifetime; no SELF): {}",
            timers.join(", ")
        ));
    }
    notices
}

/// How many of `n` rows a section shows: all, or the first [`COMPACT_ROWS`] in a
/// compact report, with a note counting the rest.
pub(super) fn shown(section: &mut Section, n: usize, options: &TableOptions) -> usize {
    let shown = if options.compact && !options.wide {
        COMPACT_ROWS.min(n)
    } else {
        n
    };
    if shown < n {
        let more = count((n - shown) as u64);
        section
            .notices
            .push(format!("and {more} more (wide shows every row)"));
    }
    shown
}

/// Every column's cell of `row`.
pub(super) fn cells(report: &Report, row: &Row) -> Cells {
    Cells {
        id: row.component.clone(),
        depth: None,
        cells: Column::ALL.iter().map(|&c| cell(report, row, c)).collect(),
    }
}

/// The cell of `column` for `row`: durations in their own unit, counts grouped, `-`
/// for a figure of no samples (or not known), `< 1 step` for a single measured value
/// below the counter's step (a mean, a spread and a sum are always numbers).
fn cell(report: &Report, row: &Row, column: Column) -> String {
    let s = &row.stats;
    let c = &s.cleaned;
    let cleaned = report.figures == Figures::Cleaned;
    // The main figures: the headline, or the cleaned set under the seed's preset.
    let (n, avg, median, std_dev, skew, min, max, range) = if cleaned {
        let c = *c;
        (
            c.samples, c.avg, c.median, c.std_dev, c.skew, c.min, c.max, c.range,
        )
    } else {
        (
            s.samples, s.avg, s.median, s.std_dev, s.skew, s.min, s.max, s.range,
        )
    };
    let none = |n: u64| n == 0;
    let number = |n: u64, v: f64| {
        if none(n) {
            "-".to_owned()
        } else {
            text::value(report, v)
        }
    };
    let single = |n: u64, v: f64| {
        if none(n) {
            "-".to_owned()
        } else {
            text::below_step(v, report.resolution).unwrap_or_else(|| text::value(report, v))
        }
    };
    match column {
        Column::Component => String::new(),
        Column::Samples => count(n),
        Column::Avg => number(n, avg),
        Column::Median => single(n, median),
        Column::StdDev => number(n, std_dev),
        Column::Skew if none(n) || !skew.is_finite() => "-".to_owned(),
        // A skew that rounds to zero from below is written as zero.
        Column::Skew => format!("{skew:.2}").replace("-0.00", "0.00"),
        Column::Min => single(n, min),
        Column::Max => single(n, max),
        Column::Range => number(n, range),
        Column::Bypass => count(s.bypass),
        Column::Outliers => count(s.outliers),
        Column::P90 => single(s.samples, s.p90),
        Column::P99 => single(s.samples, s.p99),
        Column::P999 => single(s.samples, s.p999),
        Column::Total => number(s.samples, s.total),
        Column::Seen => count(s.seen),
        Column::Lost => count(s.lost),
        Column::Migrated => count(s.migrated),
        // A call-tree node's (`fill_tree`); a flat row has none.
        Column::SelfTime | Column::OfParent => "-".to_owned(),
        Column::AllocsPerCall | Column::BytesPerCall => per_call(row.allocs, column),
    }
}

/// A scope's allocations per call in `column` (ALLOCS/CALL or BYTES/CALL): `-`
/// without them.
pub(super) fn per_call(allocs: Option<ScopeAllocs>, column: Column) -> String {
    let Some(a) = allocs.filter(|a| a.calls() > 0) else {
        return "-".to_owned();
    };
    let (allocs, bytes) = a.per_call();
    match column {
        Column::AllocsPerCall => numbers::per_call(allocs),
        _ => numbers::bytes(bytes),
    }
}

/// The tails block: per component of ALL THREADS (in its order), the flagged samples
/// with their share of its time and the slowest samples with their threads; `None`
/// when no component has any.
fn tails(report: &Report, wide: bool) -> Option<Tails> {
    let rows: Vec<&Row> = report
        .all_threads
        .iter()
        .filter(|r| r.stats.bypass > 0 || r.stats.outliers > 0 || !r.slowest.is_empty())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let shown = if wide {
        rows.len()
    } else {
        TAIL_ROWS.min(rows.len())
    };
    let more = (shown < rows.len()).then(|| {
        let more = count((rows.len() - shown) as u64);
        format!("and {more} more (wide shows every row)")
    });
    let title = match report.figures {
        Figures::All => "FLAGGED (in every figure above) AND SLOWEST",
        Figures::Cleaned => "FLAGGED (left out of SAMPLES to RANGE) AND SLOWEST",
    };
    Some(Tails {
        title: title.to_owned(),
        rows: rows[..shown]
            .iter()
            .map(|r| tail(report, r, wide))
            .collect(),
        more,
    })
}

/// One component's tails line.
fn tail(report: &Report, row: &Row, wide: bool) -> Tail {
    let s = &row.stats;
    let flagged = [
        count(s.bypass),
        share(s.bypass_total, s.total),
        count(s.outliers),
        share(s.outliers_total, s.total),
    ];
    let shown = if wide { LISTED } else { SLOWEST_SHOWN };
    let slowest: Vec<_> = row.slowest.iter().take(shown).collect();
    let one = slowest
        .first()
        .filter(|first| slowest.iter().all(|s| s.thread == first.thread))
        .map(|first| first.thread.clone());
    let slowest = slowest
        .iter()
        .map(|s| {
            let v = text::value(report, s.value);
            if one.is_some() {
                v
            } else {
                format!("{v} ({})", s.thread)
            }
        })
        .collect();
    Tail {
        id: row.component.clone(),
        flagged,
        slowest,
        on: one,
    }
}
