use super::draw::{offset, ticks};
use super::*;
use latte::flight::trace::{Lane, Trigger};

fn span(name: &str, start: u64, end: Option<u64>, depth: u32) -> Span {
    Span {
        name: name.into(),
        start,
        end,
        depth,
    }
}

/// One thread's request > parse, request > risk > db over ticks 0..1,000 (1 tick = 1
/// ns), a second thread's scopes, the db scope the trigger.
fn nest() -> Trace {
    Trace {
        origin: 0,
        ticks_per_ns: 1.0,
        covers: (0, 1_000),
        lanes: vec![
            Lane {
                thread: "gateway".into(),
                tid: 1,
                spans: vec![
                    span("request", 0, Some(1_000), 0),
                    span("parse", 100, Some(200), 1),
                    span("risk", 300, Some(900), 1),
                    span("db", 400, Some(800), 2),
                ],
            },
            Lane {
                thread: "md <feed>".into(),
                tid: 2,
                spans: vec![span("tick", 450, Some(550), 0)],
            },
        ],
        trigger: Some(Trigger {
            component: "db".into(),
            tid: 1,
            at: 800,
            reason: "400 ns, over its p99.9".into(),
        }),
    }
}

/// Thread 9, "io", holding `spans` over ticks 0..100,000 (1 tick = 1 ns).
fn io_thread(spans: Vec<Span>, trigger: Option<Trigger>) -> Trace {
    Trace {
        origin: 0,
        ticks_per_ns: 1.0,
        covers: (0, 100_000),
        lanes: vec![Lane {
            thread: "io".into(),
            tid: 9,
            spans,
        }],
        trigger,
    }
}

fn scope_bars(bars: &[Bar]) -> Vec<(usize, u32, f64, f64)> {
    bars.iter()
        .map(|b| (b.lane, b.depth, b.x, b.width))
        .collect()
}

#[test]
fn scopes_lie_at_their_times_and_depths_children_inside_parents() {
    let trace = nest();
    let bars = layout(&trace, whole(&trace), 1_000.0);
    let mut got = scope_bars(&bars);
    got.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(
        got,
        [
            (0, 0, 0.0, 1_000.0),
            (0, 1, 100.0, 100.0),
            (0, 1, 300.0, 600.0),
            (0, 2, 400.0, 400.0),
            (1, 0, 450.0, 100.0),
        ]
    );
    let db = bars.iter().find(|b| b.depth == 2).unwrap();
    assert!(db.trigger && db.mark == Mark::Scope(3));
    assert_eq!(bars.iter().filter(|b| b.trigger).count(), 1);
}

#[test]
fn scopes_narrower_than_a_pixel_merge_and_say_how_many() {
    // 500 scopes of 1 tick, 2 ticks apart, over 100,000 ticks: 0.01 px each.
    let mut spans: Vec<Span> = (0..500)
        .map(|k| span("poll", 2 * k, Some(2 * k + 1), 0))
        .collect();
    spans.push(span("send", 50_000, Some(50_001), 0));
    spans.push(span("wide", 60_000, Some(70_000), 0));
    let trace = io_thread(spans, None);
    let bars = layout(&trace, whole(&trace), 1_000.0);
    assert_eq!(bars.len(), 3, "{bars:?}");
    assert_eq!(
        bars[0].mark,
        Mark::Merged {
            count: 500,
            busy: 500,
            names: vec![("poll".into(), 500)]
        }
    );
    // Ticks 0 to 999 of 100,000 on 1,000 px.
    assert_eq!((bars[0].x, bars[0].width), (0.0, 9.99));
    // A lone narrow scope is drawn as itself, a pixel wide.
    assert_eq!(
        (bars[1].mark.clone(), bars[1].x, bars[1].width),
        (Mark::Scope(500), 500.0, FINE)
    );
    assert_eq!((bars[2].x, bars[2].width), (600.0, 100.0));
}

#[test]
fn the_trigger_is_drawn_by_itself_among_narrow_neighbours() {
    let mut spans: Vec<Span> = (0..100)
        .map(|k| span("poll", 2 * k, Some(2 * k + 1), 0))
        .collect();
    spans[50].name = "slow".into();
    let trace = io_thread(
        spans,
        Some(Trigger {
            component: "slow".into(),
            tid: 9,
            at: 101,
            reason: "r".into(),
        }),
    );
    let bars = layout(&trace, whole(&trace), 1_000.0);
    let hit: Vec<&Bar> = bars.iter().filter(|b| b.trigger).collect();
    assert_eq!(hit.len(), 1);
    assert_eq!((hit[0].mark.clone(), hit[0].width), (Mark::Scope(50), 2.0));
    let merged: usize = bars
        .iter()
        .map(|b| match &b.mark {
            Mark::Merged { count, .. } => *count,
            Mark::Scope(_) => 1,
        })
        .sum();
    assert_eq!(merged, 100, "every scope in exactly one bar");
}

#[test]
fn an_open_scope_reaches_the_dump_end_and_says_so() {
    let mut trace = nest();
    trace.lanes[1].spans.push(span("wait", 700, None, 0));
    let bars = layout(&trace, whole(&trace), 1_000.0);
    let wait = bars
        .iter()
        .find(|b| b.mark == Mark::Scope(1) && b.lane == 1)
        .unwrap();
    assert_eq!((wait.x, wait.width), (700.0, 300.0));
    let svg = svg(&trace, whole(&trace));
    assert!(svg.contains("class=\"scope open\""));
    assert!(svg.contains("still open when the dump was taken"));
}

#[test]
fn the_view_around_the_trigger_gives_it_half_the_width() {
    let mut trace = nest();
    trace.covers = (0, 10_000);
    let view = around_trigger(&trace).unwrap();
    assert_eq!(
        view,
        View {
            from: 200,
            to: 1_000,
            zero: 400
        }
    );
    let bars = layout(&trace, view, 1_000.0);
    let db = bars.iter().find(|b| b.trigger).unwrap();
    assert_eq!((db.x, db.width), (250.0, 500.0));
    // A trigger that is most of the dump has no second view.
    assert_eq!(around_trigger(&nest()), None);
    trace.trigger = None;
    assert_eq!(around_trigger(&trace), None);
}

#[test]
fn axis_ticks_are_1_2_5_steps_from_the_trigger_start() {
    let trace = nest();
    let view = whole(&trace);
    assert_eq!(view.zero, 400);
    let ticks = ticks(&trace, view);
    assert_eq!(ticks, (0..=10).map(|k| k * 100).collect::<Vec<u64>>());
    let labels: Vec<String> = ticks.iter().map(|&t| offset(&trace, view, t)).collect();
    assert_eq!(
        labels[..5],
        ["-400 ns", "-300 ns", "-200 ns", "-100 ns", "0"]
    );
    assert_eq!(labels[10], "+600 ns");
    // 45 ms from 18 ms before the trigger: 5 ms steps, 0 among them.
    let long = View {
        from: 0,
        to: 45_000_000,
        zero: 18_000_000,
    };
    let ticks = super::draw::ticks(&trace, long);
    assert_eq!(ticks.first(), Some(&3_000_000));
    assert!(ticks.windows(2).all(|w| w[1] - w[0] == 5_000_000));
    assert!(ticks.contains(&18_000_000));
}

#[test]
fn the_svg_has_a_named_lane_per_thread_and_a_titled_rectangle_per_bar() {
    let trace = nest();
    let svg = svg(&trace, whole(&trace));
    assert_eq!(svg.matches("<g class=\"lane\"").count(), 2);
    assert!(svg.contains("data-thread=\"md &lt;feed&gt;\""));
    assert_eq!(svg.matches("<rect class=\"scope").count(), 5);
    assert!(svg.contains("the trigger: 400 ns, over its p99.9"));
    assert_eq!(svg.matches("class=\"trigger-band\"").count(), 1);
}
