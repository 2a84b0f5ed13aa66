//! The table renderer: latte's sections and lines, laid out by `comfy-table` to fit a
//! width.
//!
//! ```text
//! ====================================================================================
//! LATTE TELEMETRY [TIME][CAL] final
//! clock TSC @ 2.596 GHz (±1.0 ppm), resolution 10.01 ns
//! cleaning: bypass > max(10x median, median + 2000 ns), fences Q1/Q3 ± 1.5 IQR
//!
//! THREAD main (#1)
//! COMPONENT            SAMPLES  MEDIAN (ns)  P99 (us)  P99.9 (us)  MAX ALL (us)
//! -------------------------------------------------------------------------------
//! Sim_Tick_Total          4997        220.4    0.640       5.310         31.15
//!
//! ALL THREADS
//! ...
//! left out to fit 80 columns: LOST, AVG, P90, ... (wide mode shows every column)
//! ====================================================================================
//! ```
//!
//! Every line fits the width ([`TableOptions`]) in display columns; the tables of all
//! sections share their columns, units and widths (`grid.rs`); numbers have 3-4
//! significant figures, one unit per column (`numbers.rs`); ids are escaped and
//! shortened so distinct ids stay distinct (`ids.rs`); free text (`text.rs`) wraps.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | `write`: the blocks in order, wrapping, the footer |
//! | `options.rs` | [`TableOptions`], [`Column`] and its priority, the width's sources |
//! | `grid.rs` | the columns that fit, their widths, a section's rows via `comfy-table` |
//! | `numbers.rs` | 3-4 significant figures, a unit per column, `< 1 step` |
//! | `ids.rs` | ids escaped onto one line and shortened, always distinct |
//! | `text.rs` | header lines, ENVIRONMENT, overhead matrix, lines under the rows |
//! | `misuse.rs` | lines under a thread's rows that name ids: anomalies, cancelled timers, open now |

mod grid;
mod ids;
mod misuse;
mod numbers;
mod options;
mod text;

pub(super) use numbers::sort_value;
pub use options::{Column, TableOptions};

use super::{Report, Row, ThreadReport};
use grid::Grid;
use std::io::{self, Write};

/// Continuation indent of wrapped text lines.
const INDENT: &str = "  ";

/// One line of output before it is wrapped to the width.
enum Line {
    /// Free text, escaped onto one line and wrapped.
    Text(String),
    /// A table line, already within the width.
    Table(String),
}

/// A section: title, the table of its rows (or a note that there are none), then, for
/// a thread, the anomalies, the scopes that ended without their Stop, the timers
/// cancelled and the scopes open now.
fn section(title: String, rows: &[Row], thread: Option<&ThreadReport>, grid: &Grid) -> Vec<Line> {
    let mut lines = vec![Line::Text(title)];
    if rows.is_empty() {
        lines.push(Line::Text("no samples recorded".to_owned()));
    } else {
        lines.extend(grid.lines(rows).into_iter().map(Line::Table));
    }
    if let Some(t) = thread {
        lines.extend(misuse::anomalies(t).map(Line::Text));
        lines.extend(text::ended_frames(&t.frames).into_iter().map(Line::Text));
        lines.extend(misuse::cancelled(t).map(Line::Text));
        lines.extend(misuse::open_now(t).map(Line::Text));
    }
    lines
}

/// The per-thread sections and ALL THREADS (or a line saying nothing was recorded).
fn sections(report: &Report, grid: &Grid) -> Vec<Vec<Line>> {
    let mut blocks = Vec::new();
    for t in &report.threads {
        let exited = if t.exited { " exited" } else { "" };
        let title = format!("THREAD {} (#{}){exited}", t.name, t.serial);
        blocks.push(section(title, &t.rows, Some(t), grid));
    }
    if report.threads.is_empty() && report.all_threads.is_empty() {
        blocks.push(vec![Line::Text("no samples were recorded".to_owned())]);
    } else {
        let title = "ALL THREADS".to_owned();
        blocks.push(section(title, &report.all_threads, None, grid));
    }
    blocks
}

/// The footer: the columns left out, and the ids numbered to stay distinct.
fn footer(grid: &Grid, width: usize, any_rows: bool) -> Vec<Line> {
    let mut lines = Vec::new();
    if any_rows && !grid.omitted.is_empty() {
        let names: Vec<&str> = grid.omitted.iter().map(|c| c.header()).collect();
        lines.push(Line::Text(format!(
            "left out to fit {width} columns: {} (wide mode shows every column)",
            names.join(", ")
        )));
    }
    for (shown, full) in &grid.names.legend {
        lines.push(Line::Text(format!("{shown} is {full}")));
    }
    lines
}

/// Writes `report` as a table laid out by `options`.
pub(super) fn write(
    report: &Report,
    out: &mut dyn Write,
    options: &TableOptions,
) -> io::Result<()> {
    let width = options.resolved_width();
    let grid = Grid::new(report, options, width);
    let any_rows =
        report.threads.iter().any(|t| !t.rows.is_empty()) || !report.all_threads.is_empty();
    let width = if options.wide && any_rows {
        width.max(grid.width())
    } else {
        width
    };
    let texts = |lines: Vec<String>| lines.into_iter().map(Line::Text).collect::<Vec<_>>();
    let mut blocks: Vec<Vec<Line>> = Vec::new();
    let mut head = vec![Line::Text(text::title(report))];
    if options.compact {
        head.extend(texts(text::notices(report)));
    } else {
        head.extend(texts(text::header(report)));
    }
    blocks.push(head);
    if !options.compact {
        blocks.extend(
            report
                .environment
                .as_ref()
                .map(|e| texts(text::environment(e))),
        );
        let overhead = report.overhead.as_ref();
        let matrix = overhead.map(|o| text::overhead(o, report.unit, report.resolution));
        blocks.extend(matrix.map(|lines| lines.into_iter().map(Line::Table).collect()));
    }
    blocks.extend(sections(report, &grid));
    if !options.compact {
        blocks.push(texts(text::slowest_and_corrected(report)));
    }
    blocks.push(footer(&grid, width, any_rows));
    render(blocks, width, !options.compact, out)
}

/// Prints the blocks, a blank line between two, text wrapped to `width`, between two
/// `=` rules when `ruled`.
fn render(
    blocks: Vec<Vec<Line>>,
    width: usize,
    ruled: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let rule = "=".repeat(width);
    let wrap = textwrap::Options::new(width).subsequent_indent(INDENT);
    let mut text = String::new();
    if ruled {
        text.push_str(&rule);
        text.push('\n');
    }
    for (i, block) in blocks.into_iter().filter(|b| !b.is_empty()).enumerate() {
        if i > 0 {
            text.push('\n');
        }
        for line in block {
            match line {
                Line::Table(line) => text.push_str(&line),
                Line::Text(line) => {
                    let escaped = ids::escape(&line);
                    text.push_str(&textwrap::wrap(&escaped, &wrap).join("\n"));
                }
            }
            text.push('\n');
        }
    }
    if ruled {
        text.push_str(&rule);
        text.push('\n');
    }
    out.write_all(text.as_bytes())
}
