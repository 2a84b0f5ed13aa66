//! `top` without a terminal: the view's state under keys and answers, and the
//! screen drawn into ratatui's test backend.

use super::app::{Action, App, Key, Link, Pane, Sort};
use super::draw;
use latte::Report;
use latte::exporter::Interval;
use latte::report::{
    Account, PerFrame, RecordingOff, Row, SelfTime, Summary, ThreadReport, TreeNode,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Instant;

fn row(component: &str, calls: u64, total: f64, p99: f64) -> Row {
    Row {
        component: component.into(),
        stats: Summary {
            samples: calls,
            seen: calls,
            total,
            median: p99 / 2.0,
            p99,
            p999: p99 * 2.0,
            max: p99 * 3.0,
            ..Summary::default()
        },
        ..Row::default()
    }
}

fn node(parent: Option<usize>, depth: u32, component: &str) -> TreeNode {
    TreeNode {
        allocs: None,
        parent,
        depth,
        row: row(component, 10, 1_000.0, 150.0),
        self_time: Some(SelfTime {
            calls: 10,
            total: 450.0,
            mean: 45.0,
        }),
        account: Some(Account {
            total: 1_000,
            own: 450,
            children: 500,
            inside: 50,
            not_attributed: 0,
        }),
        of_parent: None,
        of_root: 1.0,
    }
}

/// A thread's section of an interval.
fn thread(name: &str, serial: u64, rows: &[Row], per_frame: Option<PerFrame>) -> ThreadReport {
    ThreadReport {
        name: name.into(),
        serial,
        rows: rows.to_vec(),
        per_frame,
        ..ThreadReport::default()
    }
}

/// An interval of a gateway (on_order > db_write, risk_check) and a render thread, in
/// time at one tick a nanosecond.
fn live(sequence: u64, db_p99: f64) -> Interval {
    let rows = vec![
        row("on_order", 1_000, 50_000_000.0, 300_000.0),
        row("db_write", 1_000, 30_000_000.0, db_p99),
        row("risk_check", 1_000, 5_000_000.0, 7_000.0),
        row("render", 60, 200_000_000.0, 20_000_000.0),
    ];
    let frames = PerFrame {
        frames: 60,
        budget: Some(16_667_000.0),
        over_budget: Some(1),
        ..PerFrame::default()
    };
    Interval {
        version: Interval::VERSION,
        program: "live_service".into(),
        pid: 42,
        sequence,
        seconds: 1.0,
        control: true,
        report: Report {
            unit: latte::Unit::Time,
            threads: vec![
                thread("gateway", 2, &rows[..3], None),
                thread("render", 3, &rows[3..], Some(frames)),
            ],
            all_threads: rows,
            tree: vec![
                node(None, 0, "on_order"),
                node(Some(0), 1, "db_write"),
                node(Some(0), 1, "risk_check"),
                node(None, 0, "render"),
            ],
            ..Report::default()
        },
    }
}

/// `live` with recording off now.
fn off(mut live: Interval) -> Interval {
    live.report.recording_off = Some(RecordingOff {
        now: true,
        ..RecordingOff::default()
    });
    live
}

fn names(app: &App) -> Vec<String> {
    app.rows().iter().map(|s| s.row.component.clone()).collect()
}

fn screen(app: &App) -> String {
    screen_at(app, 130, 20)
}

/// The screen drawn `width` columns wide and `height` high.
fn screen_at(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| draw::draw(f, app)).unwrap();
    let buffer = terminal.backend().buffer();
    let width = buffer.area.width as usize;
    buffer
        .content
        .chunks(width)
        .map(|line| line.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        app.key(Key::Char(c));
    }
}

#[test]
fn rows_sort_by_total_then_by_the_key_s_chooses() {
    let mut app = App::new("127.0.0.1:9465".into());
    app.received(live(1, 150_000.0));
    assert_eq!(
        names(&app),
        ["render", "on_order", "db_write", "risk_check"]
    );
    app.key(Key::Char('s'));
    assert_eq!(app.sort, Sort::Calls);
    for _ in 0..3 {
        app.key(Key::Char('s'));
    }
    assert_eq!(app.sort, Sort::P999);
    app.key(Key::Char('s'));
    assert_eq!(app.sort, Sort::Name);
    assert_eq!(
        names(&app),
        ["db_write", "on_order", "render", "risk_check"]
    );
    // By TOTAL a pulse goes last, whatever its TOTAL (the time between pulses).
    let mut pulsed = live(2, 150_000.0);
    pulsed.report.all_threads[3].kind = latte::report::RowKind::Pulse; // render
    app.received(pulsed);
    app.key(Key::Char('s'));
    assert_eq!(app.sort, Sort::Total);
    assert_eq!(
        names(&app),
        ["on_order", "db_write", "risk_check", "render"]
    );
}

#[test]
fn a_filter_is_a_substring_or_a_glob_and_escape_leaves_it_as_it_was() {
    let mut app = App::new("a".into());
    app.received(live(1, 150_000.0));
    app.key(Key::Char('/'));
    typed(&mut app, "ORDER");
    app.key(Key::Enter);
    assert_eq!(names(&app), ["on_order"]);
    app.key(Key::Char('/'));
    app.key(Key::Backspace);
    typed(&mut app, "x");
    app.key(Key::Esc);
    assert_eq!(app.filter.as_deref(), Some("ORDER"));
    app.key(Key::Char('/'));
    for _ in 0..5 {
        app.key(Key::Backspace);
    }
    typed(&mut app, "r*_*");
    app.key(Key::Enter);
    assert_eq!(names(&app), ["risk_check"]);
    // The tree keeps the parents of what matches.
    app.key(Key::Tab);
    let tree: Vec<usize> = app.tree().iter().map(|l| l.index).collect();
    assert_eq!(tree, [0, 2]);
}

#[test]
fn per_thread_rows_name_their_thread() {
    let mut app = App::new("a".into());
    app.received(live(1, 150_000.0));
    app.key(Key::Char('t'));
    let threads: Vec<Option<String>> = app.rows().iter().map(|s| s.thread.clone()).collect();
    assert_eq!(threads[0].as_deref(), Some("render#3"));
    assert!(threads.iter().all(Option::is_some));
    assert!(screen(&app).contains("gateway#2"));
}

#[test]
fn a_folded_node_hides_its_subtree() {
    let mut app = App::new("a".into());
    app.received(live(1, 150_000.0));
    app.key(Key::Tab);
    assert_eq!(app.pane, Pane::Tree);
    assert_eq!(app.tree().len(), 4);
    app.key(Key::Left); // fold on_order
    let shown: Vec<usize> = app.tree().iter().map(|l| l.index).collect();
    assert_eq!(shown, [0, 3]);
    assert_eq!(app.tree()[0].folded, Some(true));
    assert!(screen(&app).contains("+ on_order"));
    app.key(Key::Enter); // unfold
    assert_eq!(app.tree().len(), 4);
    app.key(Key::Down);
    app.key(Key::Left); // db_write has nothing to fold
    assert_eq!(app.tree().len(), 4);
}

#[test]
fn pausing_keeps_the_view_and_the_history_grows_per_interval() {
    let mut app = App::new("a".into());
    app.received(live(1, 100_000.0));
    app.key(Key::Char('p'));
    app.received(live(2, 200_000.0));
    app.received(live(2, 200_000.0)); // the same interval again: counted once
    assert_eq!(app.view.as_ref().unwrap().sequence, 1);
    assert!(screen(&app).contains("VIEW PAUSED"));
    app.key(Key::Char('p'));
    assert_eq!(app.view.as_ref().unwrap().sequence, 2);
    let history = app.history("db_write");
    assert_eq!(history, [(1.0, 100_000.0), (0.0, 200_000.0)]);
    // A minute later the first has left the window.
    for s in 3..=62 {
        app.received(live(s, 100_000.0));
    }
    assert_eq!(app.history("db_write").len(), 60);
}

#[test]
fn the_switch_is_asked_only_where_the_endpoint_takes_it() {
    let mut app = App::new("a".into());
    assert_eq!(app.key(Key::Char('r')), Action::None);
    app.received(live(1, 1.0));
    assert_eq!(app.key(Key::Char('r')), Action::Record(false));
    app.recording_now(false);
    assert!(screen(&app).contains("RECORDING OFF"));
    // An interval with nothing recorded says why.
    let mut empty = off(live(2, 1.0));
    empty.report.all_threads.clear();
    app.received(empty);
    assert!(screen(&app).contains("components: none, recording is off"));
    assert_eq!(app.key(Key::Char('r')), Action::Record(true));
    let mut read_only = live(3, 1.0);
    read_only.control = false;
    app.received(read_only);
    assert_eq!(app.key(Key::Char('r')), Action::None);
    assert!(app.message().unwrap().contains("read-only"));
    assert_eq!(app.key(Key::Char('q')), Action::Quit);
}

#[test]
fn a_program_that_goes_away_is_said_and_the_view_goes_on_when_it_is_back() {
    let mut app = App::new("127.0.0.1:9465".into());
    app.received(live(1, 1.0));
    app.failed("connection refused".into(), Instant::now());
    assert!(matches!(app.link, Link::Gone { .. }));
    let text = screen(&app);
    assert!(text.contains("no answer from 127.0.0.1:9465"), "{text}");
    assert!(text.contains("connection refused"), "{text}");
    assert!(text.contains("on_order"), "the last figures stay: {text}");
    let mut back = live(1, 1.0);
    back.pid = 43; // a new process on the address
    app.received(back);
    assert_eq!(app.link, Link::Up);
    assert!(
        app.message()
            .unwrap()
            .contains("reconnected to live_service (pid 43)")
    );
    assert_eq!(
        app.history("db_write").len(),
        1,
        "a new process's history starts afresh"
    );
}

#[test]
fn the_screen_shows_figures_in_the_views_unit_and_frames_over_budget() {
    let mut app = App::new("127.0.0.1:9465".into());
    let mut seven = live(7, 150_000.0);
    seven.report.all_threads[3].kind = latte::report::RowKind::Pulse;
    seven.report.all_threads[2].kind = latte::report::RowKind::Busy;
    app.received(seven);
    let text = screen(&app);
    for expected in [
        "live_service (pid 42) at 127.0.0.1:9465  interval #7",
        "RECORDING",
        "frames render#3: 60.00/s, 1 over the 16.67 ms budget",
        "COMPONENT",
        "P99.9",
        "db_write",
        "150.0 us",
        "1.000 k",
        "p99 of on_order, last 1 intervals",
        "render (pulse)",
        "risk_check (busy)",
    ] {
        assert!(text.contains(expected), "{expected:?} not in\n{text}");
    }
}

/// A program with the counting allocator: ALLOCS/CALL beside the times (inclusive);
/// without it, no such column.
#[test]
fn allocations_per_call_show_only_when_the_program_counts_them() {
    let mut app = App::new("127.0.0.1:9465".into());
    app.received(live(7, 150_000.0));
    assert!(!screen(&app).contains("ALLOCS/CALL"));
    let mut counted = live(8, 150_000.0);
    counted.report.process_allocs = Some(latte::alloc::Allocs::default());
    let own = latte::alloc::Allocs::new(500, 20_000, 500, 20_000);
    let all = latte::alloc::Allocs::new(2_500, 80_000, 2_500, 80_000);
    counted.report.all_threads[0].allocs = Some(latte::alloc::ScopeAllocs::new(1_000, own, all));
    app.received(counted);
    let text = screen(&app);
    assert!(text.contains("ALLOCS/CALL"), "{text}");
    let line = text.lines().find(|l| l.contains("on_order")).unwrap();
    assert!(line.contains(" 2.5 "), "{line}");
}

/// The screen's words, one space between them: a sentence wrapped over lines reads
/// as one.
fn words(screen: &str) -> String {
    screen.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The key line as `top` says it, over all threads, sorted by TOTAL.
const KEYS: &str = "q quit s sort (TOTAL) / filter p pause view r recording on/off \
                    t per thread Tab tree up/down select";

#[test]
fn at_80_and_140_columns_the_state_every_key_and_whole_sentences_show() {
    let mut app = App::new("127.0.0.1:9465".into());
    app.received(live(7, 150_000.0));
    app.key(Key::Char('p'));
    for width in [80, 140] {
        let text = screen_at(&app, width, 24);
        for expected in [" RECORDING ", " VIEW PAUSED "] {
            assert!(text.contains(expected), "{width}: {expected:?} in\n{text}");
        }
        let said = words(&text);
        assert!(said.contains(KEYS), "{width}: the keys in\n{text}");
        assert!(
            said.contains("live_service (pid 42) at 127.0.0.1:9465 interval #7 of 1.00 s"),
            "{width}:\n{text}"
        );
    }
    app.failed("connection refused".into(), Instant::now());
    for width in [80, 140] {
        let text = screen_at(&app, width, 24);
        let said = words(&text);
        for part in [
            "no answer from 127.0.0.1:9465 for ",
            " s (connection refused): the program is gone or not serving; retrying every \
             second, the figures are its last",
            KEYS,
        ] {
            assert!(said.contains(part), "{width}: {part:?} in\n{text}");
        }
        assert!(text.contains(" RECORDING "), "{width}:\n{text}");
    }
}

#[test]
fn an_answer_of_another_version_or_with_a_broken_tree_is_refused() {
    let good = live(1, 1.0);
    let read = |live: &serde_json::Value| super::live_view(&live.to_string());
    let json = serde_json::to_value(&good).unwrap();
    assert_eq!(read(&json).unwrap(), good);
    let mut newer = json.clone();
    newer["version"] = (Interval::VERSION + 1).into();
    let e = read(&newer).unwrap_err();
    assert!(
        e.contains(&format!(
            "a live view of version {}; this top reads version {}",
            Interval::VERSION + 1,
            Interval::VERSION
        )),
        "{e}"
    );
    // A parent past the list, a node its own parent, a level skipped, a root below 0.
    for (i, parent, depth) in [
        (1, Some(999), 1),
        (1, Some(1), 1),
        (2, Some(0), 2),
        (3, None, 1),
    ] {
        let mut broken = good.clone();
        let node = &mut broken.report.tree[i];
        (node.parent, node.depth) = (parent, depth);
        let e = read(&serde_json::to_value(&broken).unwrap()).unwrap_err();
        assert!(
            e.starts_with(&format!("`tree[{i}]` (parent {parent:?}, depth {depth})")),
            "{e}"
        );
    }
    // On screen: said, the last figures kept; a readable answer brings the view back.
    let mut app = App::new("127.0.0.1:9465".into());
    app.received(good.clone());
    app.refused(read(&newer).unwrap_err());
    let text = screen_at(&app, 100, 24);
    assert!(
        words(&text).contains(
            "127.0.0.1:9465 answers with what this top does not read (a live view of version"
        ),
        "{text}"
    );
    assert!(text.contains("on_order"), "the last figures stay: {text}");
    app.received(live(2, 1.0));
    assert_eq!(app.link, Link::Up);
    assert!(!screen_at(&app, 100, 24).contains("does not read"));
}
