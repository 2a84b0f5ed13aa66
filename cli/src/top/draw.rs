//! Drawing `top`'s screen with ratatui: the header (program, interval, recording,
//! frames over budget, a lost connection), the components or the call tree, the
//! selected component's p99 over the last minute, and the keys.

use super::app::{App, HISTORY_SECONDS, Link, Pane, Sort};
use latte::Unit;
use latte::exporter::Interval;
use latte::report::{RowKind, numbers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::symbols::bar;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Sparkline, Table, TableState};
use std::time::Instant;

/// Cells of a row's sparkline, each a slice of [`HISTORY_SECONDS`].
const SPARK_CELLS: usize = 20;

/// The screen: the header and the keys wrapped to its width (nothing cut), the table
/// and the sparkline in the rest.
pub fn draw(frame: &mut Frame, app: &App) {
    let width = usize::from(frame.area().width);
    let head = wrap(header_lines(app), width);
    let keys = wrap(vec![footer_line(app)], width);
    let rows = |lines: &[Line<'_>]| u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let [header, table, detail, footer] = Layout::vertical([
        Constraint::Length(rows(&head)),
        Constraint::Min(4),
        Constraint::Length(4),
        Constraint::Length(rows(&keys)),
    ])
    .areas(frame.area());
    frame.render_widget(Paragraph::new(head), header);
    match app.pane {
        Pane::Components => components(frame, table, app),
        Pane::Tree => tree(frame, table, app),
    }
    frame.render_widget(Paragraph::new(keys), footer);
    sparkline(frame, detail, app);
}

/// `lines` laid out `width` columns wide: a span that does not fit where its line has
/// got to goes on the next line, split at its spaces when it is wider than a line, so
/// nothing is cut (but a word wider than the screen).
fn wrap(lines: Vec<Line<'static>>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut out = Vec::new();
    for line in lines {
        let mut now: Vec<Span<'static>> = Vec::new();
        let mut used = 0;
        for span in line.spans {
            let pieces: Vec<String> = if span.width() <= width {
                vec![span.content.to_string()]
            } else {
                span.content
                    .split_inclusive(' ')
                    .map(str::to_owned)
                    .collect()
            };
            for piece in pieces {
                let core = Span::raw(piece.trim_end()).width();
                let piece = if used > 0 && used + core > width {
                    out.push(Line::from(std::mem::take(&mut now)));
                    used = 0;
                    piece.trim_start().to_owned()
                } else {
                    piece
                };
                let piece = Span::styled(piece, span.style);
                used += piece.width();
                now.push(piece);
            }
        }
        out.push(Line::from(now));
    }
    out
}

/// `v` in the interval's unit; `-` for a figure it does not know (the largest value of
/// calls whose samples were all lost).
fn value(live: &Interval, v: f64) -> String {
    match live.report.unit {
        _ if v.is_nan() => "-".into(),
        Unit::Time => numbers::time(v),
        Unit::Cycles => numbers::ticks(v),
    }
}

fn rate(live: &Interval, calls: u64) -> String {
    if live.seconds > 0.0 {
        numbers::ticks(calls as f64 / live.seconds)
    } else {
        "-".into()
    }
}

fn header_lines(app: &App) -> Vec<Line<'static>> {
    let mut first = vec![Span::styled("latte top", Style::new().bold())];
    let mut lines = Vec::new();
    match &app.view {
        Some(live) => {
            first.push(Span::raw("  "));
            first.push(if live.recording() {
                Span::styled(" RECORDING ", Style::new().black().on_green())
            } else {
                Span::styled(" RECORDING OFF ", Style::new().white().on_red().bold())
            });
            if let Some(off) = live.report.recording_off {
                first.push(Span::raw(format!(
                    " off {} in all",
                    numbers::time(off.seconds * 1e9)
                )));
            }
            if app.paused {
                first.push(Span::raw(" "));
                first.push(Span::styled(
                    " VIEW PAUSED ",
                    Style::new().black().on_yellow(),
                ));
            }
            first.push(Span::raw(format!(
                "  {} (pid {}) at {}  interval #{} of {:.2} s",
                live.program, live.pid, app.addr, live.sequence, live.seconds
            )));
            lines.push(Line::from(first));
            lines.push(frames_line(live));
        }
        None => {
            first.push(Span::raw(format!("  waiting for {} ...", app.addr)));
            lines.push(Line::from(first));
        }
    }
    if let Some(text) = trouble(app) {
        lines.push(Line::from(Span::styled(
            text,
            Style::new().white().on_red(),
        )));
    }
    lines
}

/// What is wrong with the link to the endpoint, as a sentence: no answer, or an
/// answer refused; `None` while it answers.
fn trouble(app: &App) -> Option<String> {
    let last = if app.view.is_some() {
        ", the figures are its last"
    } else {
        ""
    };
    match &app.link {
        Link::Gone { since, error } => {
            let secs = Instant::now().saturating_duration_since(*since).as_secs();
            Some(format!(
                "no answer from {} for {secs} s ({error}): the program is gone or not \
                 serving; retrying every second{last}",
                app.addr
            ))
        }
        Link::Refused { error } => Some(format!(
            "{} answers with what this top does not read ({error}); retrying every \
             second{last}",
            app.addr
        )),
        Link::Connecting | Link::Up => None,
    }
}

/// Frames of the threads that mark them: how many, and how many over the budget.
fn frames_line(live: &Interval) -> Line<'static> {
    let mut spans = Vec::new();
    for thread in &live.report.threads {
        let Some(f) = &thread.per_frame else { continue };
        spans.push(Span::raw(format!(
            "frames {}#{}: {}/s",
            thread.name,
            thread.serial,
            rate(live, f.frames)
        )));
        if let (Some(budget), Some(over)) = (f.budget, f.over_budget) {
            let text = format!(", {over} over the {} budget", value(live, budget));
            spans.push(if over > 0 {
                Span::styled(text, Style::new().red().bold())
            } else {
                Span::raw(text)
            });
        }
        spans.push(Span::raw("   "));
    }
    Line::from(spans)
}

/// The column header, the sorted one marked.
fn heading(names: &[(&'static str, Option<Sort>)], sort: Sort) -> Row<'static> {
    Row::new(names.iter().map(|&(name, by)| {
        if by == Some(sort) {
            Cell::from(format!("{name} v")).add_modifier(Modifier::UNDERLINED)
        } else {
            Cell::from(name)
        }
    }))
    .style(Style::new().bold().reversed())
}

/// A row's component; a pulse's TOTAL is the time between pulses, not work, and a
/// span's busy time is its polls added up, not its wall time: said beside its name.
fn name_cell(row: &latte::report::Row) -> Cell<'static> {
    let mark = match row.kind {
        RowKind::Pulse => " (pulse)",
        RowKind::Busy => " (busy)",
        _ => return Cell::from(row.component.clone()),
    };
    Cell::from(Line::from(vec![
        Span::raw(row.component.clone()),
        Span::styled(mark, Style::new().dim()),
    ]))
}

fn components(frame: &mut Frame, area: Rect, app: &App) {
    let Some(live) = &app.view else { return };
    let rows = app.rows();
    let mut names = vec![];
    if app.per_thread {
        names.push(("THREAD", None));
    }
    names.extend([
        ("COMPONENT", Some(Sort::Name)),
        ("CALLS/S", Some(Sort::Calls)),
        ("TOTAL", Some(Sort::Total)),
        ("P50", Some(Sort::P50)),
        ("P99", Some(Sort::P99)),
        ("P99.9", Some(Sort::P999)),
    ]);
    // With the counting allocator in the program: allocations per call, inclusive.
    let allocs = live.report.process_allocs.is_some();
    if allocs {
        names.push(("ALLOCS/CALL", None));
    }
    names.push(("P99, LAST 60 S", None));
    let body = rows.iter().map(|shown| {
        let r = shown.row;
        let mut cells: Vec<Cell> = shown.thread.iter().map(|t| Cell::from(t.clone())).collect();
        cells.extend([
            name_cell(r),
            Cell::from(rate(live, r.stats.seen)),
            Cell::from(value(live, r.stats.total)),
            Cell::from(value(live, r.stats.median)),
            Cell::from(value(live, r.stats.p99)),
            Cell::from(value(live, r.stats.p999)),
        ]);
        if allocs {
            cells.push(Cell::from(allocs_per_call(r.allocs)));
        }
        cells.push(Cell::from(spark_text(&app.history(&r.component))).green());
        Row::new(cells)
    });
    let mut widths = vec![];
    if app.per_thread {
        widths.push(Constraint::Length(16));
    }
    widths.extend([
        Constraint::Min(16),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Length(10),
    ]);
    if allocs {
        widths.push(Constraint::Length(12));
    }
    widths.push(Constraint::Length(SPARK_CELLS as u16 + 1));
    let title = components_title(app, live, rows.len());
    let table = Table::new(body, widths)
        .header(heading(&names, app.sort))
        .block(Block::bordered().title(title))
        .row_highlight_style(Style::new().reversed());
    let mut state = TableState::default().with_selected((!rows.is_empty()).then_some(app.selected));
    frame.render_stateful_widget(table, area, &mut state);
}

/// Allocations per call, inclusive: `-` without the counting allocator or calls.
fn allocs_per_call(allocs: Option<latte::alloc::ScopeAllocs>) -> String {
    allocs.filter(|a| a.calls() > 0).map_or("-".into(), |a| {
        latte::report::numbers::per_call(a.per_call().0)
    })
}

/// The components table's title: how many, matching the filter if one is set.
fn components_title(app: &App, live: &Interval, rows: usize) -> String {
    match &app.filter {
        Some(f) => format!(" components matching '{f}' ({rows} of the interval's) "),
        None if rows == 0 && !live.recording() => {
            " components: none, recording is off (r switches it on) ".to_owned()
        }
        None => format!(" components ({rows}) "),
    }
}

/// A node's SELF, LATTE IN and NOT ATTR cells. A node that is not a scope on the
/// stack has no self time and no account (`-`); nothing of latte's or unplaced (a
/// leaf, mostly) is left blank, not `0 ns`.
fn parts(live: &Interval, node: &latte::report::TreeNode) -> (String, String, String) {
    let part = |v: f64| {
        if v == 0.0 {
            String::new()
        } else {
            value(live, v)
        }
    };
    let per_tick = live.report.per_tick();
    match (node.self_time, node.account) {
        (Some(own), account) => (
            value(live, own.total),
            part(account.map_or(0.0, |a| a.inside as f64 * per_tick)),
            part(account.map_or(0.0, |a| a.not_attributed as f64 * per_tick)),
        ),
        (None, _) => ("-".into(), "-".into(), "-".into()),
    }
}

fn tree(frame: &mut Frame, area: Rect, app: &App) {
    let Some(live) = &app.view else { return };
    let lines = app.tree();
    // With the counting allocator in the program: allocations per call, inclusive.
    let allocs = live.report.process_allocs.is_some();
    let body = lines.iter().map(|line| {
        let node = &live.report.tree[line.index];
        let mark = match line.folded {
            Some(true) => "+ ",
            Some(false) => "- ",
            None => "  ",
        };
        let indent = "  ".repeat(line.depth as usize);
        let (own, inside, not_attributed) = parts(live, node);
        let mut cells = vec![
            Cell::from(format!("{indent}{mark}{}", node.row.component)),
            Cell::from(rate(live, node.row.stats.seen)),
            Cell::from(value(live, node.row.stats.total)),
            Cell::from(own),
            Cell::from(inside),
            Cell::from(not_attributed),
            Cell::from(value(live, node.row.stats.p99)),
        ];
        if allocs {
            cells.push(Cell::from(allocs_per_call(node.allocs)));
        }
        Row::new(cells)
    });
    // TOTAL = SELF + the children's TOTAL + LATTE IN (latte inside: its work there) +
    // NOT ATTR (not attributed: children of calls still open, lost, or beyond the tree).
    let names = [
        ("CALL TREE", None),
        ("CALLS/S", None),
        ("TOTAL", None),
        ("SELF", None),
        ("LATTE IN", None),
        ("NOT ATTR", None),
        ("P99", None),
    ];
    let mut names = Vec::from(names);
    let mut widths = vec![Constraint::Min(22)];
    widths.extend([Constraint::Length(9); 6]);
    if allocs {
        names.push(("ALLOCS/CALL", None));
        widths.push(Constraint::Length(12));
    }
    let table = Table::new(body, widths)
        .header(heading(&names, app.sort))
        .block(Block::bordered().title(" call tree, all threads (left/right fold) "))
        .row_highlight_style(Style::new().reversed());
    let mut state =
        TableState::default().with_selected((!lines.is_empty()).then_some(app.selected));
    frame.render_stateful_widget(table, area, &mut state);
}

/// The selected component's p99 over the last minute, one bar per interval.
fn sparkline(frame: &mut Frame, area: Rect, app: &App) {
    let Some(live) = &app.view else { return };
    let component = match app.pane {
        Pane::Components => app
            .rows()
            .get(app.selected)
            .map(|s| s.row.component.clone()),
        Pane::Tree => app
            .tree()
            .get(app.selected)
            .map(|l| live.report.tree[l.index].row.component.clone()),
    };
    let Some(component) = component else { return };
    let points = app.history(&component);
    let (lo, hi) = points
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &(_, v)| {
            (lo.min(v), hi.max(v))
        });
    // Bars in thousandths of the highest, so small values still show.
    let data: Vec<u64> = points
        .iter()
        .map(|&(_, v)| {
            if hi > 0.0 {
                (v / hi * 1000.0).round() as u64
            } else {
                0
            }
        })
        .collect();
    let title = if points.is_empty() {
        format!(" p99 of {component}: no intervals yet ")
    } else {
        format!(
            " p99 of {component}, last {} intervals: {} .. {} ",
            points.len(),
            value(live, lo),
            value(live, hi)
        )
    };
    let start = data
        .len()
        .saturating_sub(area.width.saturating_sub(2) as usize);
    let widget = Sparkline::default()
        .block(Block::bordered().title(title))
        .data(&data[start..])
        .max(1000)
        .style(Style::new().fg(Color::Green));
    frame.render_widget(widget, area);
}

/// A row's p99 history as [`SPARK_CELLS`] bars of ratatui's nine levels: each cell
/// the highest p99 of its slice of the last minute, scaled to the row's highest.
fn spark_text(points: &[(f64, f64)]) -> String {
    let slice = HISTORY_SECONDS / SPARK_CELLS as f64;
    let mut cells = [None::<f64>; SPARK_CELLS];
    for &(ago, v) in points {
        let from_end = (ago / slice) as usize;
        if let Some(cell) = SPARK_CELLS
            .checked_sub(from_end + 1)
            .and_then(|i| cells.get_mut(i))
        {
            *cell = Some(cell.map_or(v, |c: f64| c.max(v)));
        }
    }
    let hi = cells.iter().flatten().fold(0.0f64, |a, &b| a.max(b));
    let levels = [
        bar::ONE_EIGHTH,
        bar::ONE_QUARTER,
        bar::THREE_EIGHTHS,
        bar::HALF,
        bar::FIVE_EIGHTHS,
        bar::THREE_QUARTERS,
        bar::SEVEN_EIGHTHS,
        bar::FULL,
    ];
    cells
        .iter()
        .map(|cell| match cell {
            None => " ",
            Some(_) if hi <= 0.0 => levels[0],
            Some(v) => levels[((v / hi * 8.0).ceil() as usize).clamp(1, 8) - 1],
        })
        .collect()
}

fn footer_line(app: &App) -> Line<'static> {
    if let Some(text) = &app.editing {
        return Line::from(format!(
            "filter: {text}_   (a substring, or a glob with * ? [ ]; Enter applies, Esc cancels)"
        ));
    }
    if let Some(message) = app.message() {
        return Line::from(Span::styled(
            message.to_owned(),
            Style::new().yellow().bold(),
        ));
    }
    Line::from(vec![
        Span::styled("q", Style::new().bold()),
        Span::raw(" quit  "),
        Span::styled("s", Style::new().bold()),
        Span::raw(format!(" sort ({})  ", app.sort.label())),
        Span::styled("/", Style::new().bold()),
        Span::raw(" filter  "),
        Span::styled("p", Style::new().bold()),
        Span::raw(" pause view  "),
        Span::styled("r", Style::new().bold()),
        Span::raw(" recording on/off  "),
        Span::styled("t", Style::new().bold()),
        Span::raw(if app.per_thread {
            " all threads  "
        } else {
            " per thread  "
        }),
        Span::styled("Tab", Style::new().bold()),
        Span::raw(" tree  "),
        Span::styled("up/down", Style::new().bold()),
        Span::raw(" select"),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparkline_puts_each_interval_in_its_slice_of_the_minute() {
        // Newest at the right: 0 s ago is the last cell, 59 s ago the first.
        let text = spark_text(&[(59.0, 1.0), (0.0, 8.0)]);
        let cells: Vec<char> = text.chars().collect();
        assert_eq!(cells.len(), SPARK_CELLS);
        assert_eq!(cells[SPARK_CELLS - 1].to_string(), bar::FULL);
        assert_eq!(cells[0].to_string(), bar::ONE_EIGHTH);
        assert!(cells[1..SPARK_CELLS - 1].iter().all(|&c| c == ' '));
        assert_eq!(spark_text(&[]), " ".repeat(SPARK_CELLS));
    }
}
