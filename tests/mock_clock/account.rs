//! The call tree adds up, on a counter under the test's control and a calibration of
//! known costs: each node's `TOTAL` is its self time, its children's `TOTAL`, latte's
//! work inside it (`LATTE INSIDE`) and what the tree cannot place (`NOT ATTRIBUTED`),
//! exactly in ticks; the self time is the own time the test spent; and each way time
//! escapes the tree (a child past the node limit, a child's lost samples, a scope
//! paused by the switch, a span entered under two parents) is not attributed.

use crate::common::on_named_thread;
use crate::tree::Settings;
use crate::{at, mock};
use latte::analyze::Calibration;
use latte::report::{Account, TableOptions, ThreadReport, TreeNode};
use latte::{Capture, Data, Format, Id, Mode, Report, ReportOptions, Unit};
use std::time::Duration;

/// What an empty scope records: the ticks between its two reads.
pub(crate) const WINDOW: u64 = 20;
/// What a scope costs the scope around it beyond its window: its Start's work before
/// the read, its Stop's after.
pub(crate) const OUTSIDE: u64 = 10;

/// A calibration that knows those costs for every mode pair, a tick a nanosecond
/// (`demo.rs` uses it too).
pub(crate) fn known_costs() -> Calibration {
    Calibration {
        ticks_per_ns: 1.0,
        accuracy: 0.0,
        resolution: 1,
        scope: [[WINDOW; 3]; 3],
        pulse: 0,
        inside: [[(WINDOW + OUTSIDE) as f64; 3]; 3],
        took: Duration::ZERO,
    }
}

/// A scope the test runs: its own time before and after its children.
struct Scope {
    id: &'static Id,
    before: u64,
    after: u64,
    children: Vec<Scope>,
}

/// Runs `scope` with its Start read at `t`, as the instrumented code would spend the
/// time: its own time, and per child half the child's outside work, the child, the
/// other half; its window's overhead last, before its Stop read. Returns the Stop
/// read's time.
fn run(scope: &Scope, t: u64) -> u64 {
    at(t);
    latte::start(scope.id, Mode::Fast);
    let mut now = t + scope.before;
    for child in &scope.children {
        now = run(child, now + OUTSIDE / 2) + OUTSIDE / 2;
    }
    now += scope.after + WINDOW;
    at(now);
    latte::stop(scope.id, Mode::Fast);
    now
}

/// The report of `thread` alone (the binary's other tests record on other threads),
/// calibrated with [`known_costs`], in ticks.
fn report_of(thread: &latte::collect::ThreadCapture) -> Report {
    let capture = Capture {
        process_allocs: None,
        threads: vec![thread.clone()],
        teardown_drops: 0,
    };
    let options = ReportOptions {
        unit: Unit::Cycles,
        data: Data::Calibrated,
        ..ReportOptions::default()
    };
    Report::from_capture(&capture, &known_costs(), &options)
}

fn node<'a>(tree: &'a [TreeNode], id: &str) -> &'a TreeNode {
    tree.iter().find(|n| n.row.component == id).unwrap()
}

/// Every node's account adds up exactly, its children's totals are the children's
/// rows', its self time is its row's, and the shares of its parts add to 1.
fn adds_up(tree: &[TreeNode]) {
    for (i, n) in tree.iter().enumerate() {
        let Some(a) = n.account else { continue };
        let parts = i128::from(a.own) + i128::from(a.children) + i128::from(a.inside);
        assert_eq!(
            i128::from(a.total),
            parts + i128::from(a.not_attributed),
            "{a:?}"
        );
        assert_eq!(a.total as f64, n.row.stats.total, "{}", n.row.component);
        assert_eq!(a.own as f64, n.self_time.unwrap().total);
        let kids: Vec<&TreeNode> = tree.iter().filter(|k| k.parent == Some(i)).collect();
        let children: f64 = kids.iter().map(|k| k.row.stats.total).sum();
        assert_eq!(a.children as f64, children, "{}", n.row.component);
        let shares: f64 = kids.iter().filter_map(|k| k.of_parent).sum::<f64>()
            + a.share(a.own)
            + a.share(a.inside)
            + a.share_of_not_attributed();
        assert!((shares - 1.0).abs() < 1e-9, "{}: {shares}", n.row.component);
    }
}

#[test]
fn a_known_tree_adds_up_with_its_own_time_as_self_and_latte_inside() {
    static FRAME: Id = Id::new("account_frame");
    static A: Id = Id::new("account_a");
    static B: Id = Id::new("account_b");
    static C: Id = Id::new("account_c");
    let _clock = mock();
    // frame (own 30 + 5k) { a (own 7 + 4) { b (own 3 + k) }, c (own 11) }, 5 times.
    let thread = on_named_thread("account-known", || {
        for k in 0..5u64 {
            let leaf = |id, own| Scope {
                id,
                before: own,
                after: 0,
                children: vec![],
            };
            let a = Scope {
                id: &A,
                before: 7,
                after: 4,
                children: vec![leaf(&B, 3 + k)],
            };
            let frame = Scope {
                id: &FRAME,
                before: 30,
                after: 5 * k,
                children: vec![a, leaf(&C, 11)],
            };
            run(&frame, 10_000 * (k + 1));
        }
    });
    let report = report_of(&thread);
    let tree = &report.threads[0].tree;
    adds_up(tree);
    adds_up(&report.tree);
    // SELF is the own time spent, exactly: the mock counter has no step.
    let own = |id: &str| node(tree, id).self_time.unwrap().total;
    assert_eq!(own("account_frame"), (5 * 30 + 5 * (1 + 2 + 3 + 4)) as f64);
    assert_eq!(own("account_a"), 5.0 * 11.0);
    assert_eq!(own("account_b"), (3 + 4 + 5 + 6 + 7) as f64);
    assert_eq!(own("account_c"), 5.0 * 11.0);
    // LATTE INSIDE: per child sample, its window and its outside work; nothing is
    // left unplaced.
    let account = |id: &str| node(tree, id).account.unwrap();
    let frame = account("account_frame");
    assert_eq!(frame.inside, 2 * 5 * (WINDOW + OUTSIDE));
    assert_eq!(account("account_a").inside, 5 * (WINDOW + OUTSIDE));
    assert_eq!(
        (account("account_b").inside, account("account_c").inside),
        (0, 0)
    );
    assert!(tree.iter().all(|n| n.account.unwrap().not_attributed == 0));
    // The all-threads tree has the same accounts (one thread ran these paths).
    let all: Vec<Account> = report.tree.iter().filter_map(|n| n.account).collect();
    let mine: Vec<Account> = tree.iter().filter_map(|n| n.account).collect();
    assert_eq!(all, mine);
    // JSON keeps them, exactly.
    let json = report.to_json(latte::report::JsonStyle::Compact);
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.threads[0].tree, *tree);
    table_adds_up(&report, frame);
}

/// The table shows the frame's parts under its children, each with its TOTAL and its
/// share, the shares and totals adding up.
fn table_adds_up(report: &Report, frame: Account) {
    let options = TableOptions {
        width: Some(200),
        ..TableOptions::default()
    };
    let mut out = Vec::new();
    report.write(&mut out, Format::Table(options)).unwrap();
    let text = String::from_utf8(out).unwrap();
    // The frame's parts come after its whole subtree: the last lines of their kind.
    let line = |id: &str| {
        text.lines()
            .rev()
            .find(|l| l.trim_start().starts_with(id))
            .unwrap_or_else(|| panic!("no {id} line in\n{text}"))
            .to_owned()
    };
    let cells = |l: String| -> Vec<String> { l.split_whitespace().map(str::to_owned).collect() };
    // A part's line: its id (two words for latte inside), its TOTAL, its share.
    let own = cells(line("(self)"));
    assert_eq!(
        own[1],
        latte::report::numbers::ticks(frame.own as f64),
        "{text}"
    );
    let inside = cells(line("(latte inside)"));
    assert_eq!(
        inside[2],
        latte::report::numbers::ticks(frame.inside as f64)
    );
    let share = |part: u64| latte::report::numbers::share(part as f64, frame.total as f64);
    assert_eq!(
        (&own[2], &inside[3]),
        (&share(frame.own), &share(frame.inside))
    );
    let unplaced = text
        .lines()
        .any(|l| l.trim_start().starts_with("(not attributed)"));
    assert!(!unplaced, "{text}");
}

/// Runs `body` on a thread of `name` and reports it.
fn thread_report(name: &str, body: impl FnOnce() + Send + 'static) -> ThreadReport {
    let thread = on_named_thread(name, body);
    let report = report_of(&thread);
    adds_up(&report.threads[0].tree);
    report.threads[0].clone()
}

#[test]
fn a_child_past_the_node_limit_is_not_attributed() {
    static TOP: Id = Id::new("limit_top");
    static MID: Id = Id::new("limit_mid");
    static DEEP: Id = Id::new("limit_deep");
    let _clock = mock();
    // One node below the root: top > mid has one; mid > deep folds into deep's root.
    let _settings = Settings::apply(|b| b.node_limit(1));
    let t = thread_report("account-limit", || {
        let deep = Scope {
            id: &DEEP,
            before: 40,
            after: 0,
            children: vec![],
        };
        let mid = Scope {
            id: &MID,
            before: 5,
            after: 5,
            children: vec![deep],
        };
        let top = Scope {
            id: &TOP,
            before: 1,
            after: 1,
            children: vec![mid],
        };
        run(&top, 100);
    });
    let mid = node(&t.tree, "limit_mid");
    let deep = node(&t.tree, "limit_deep");
    assert_eq!(deep.parent, None, "deep recorded at its root");
    let a = mid.account.unwrap();
    // Its whole window (40 + 20) is in no child of mid; its outside work, not known
    // to mid's tree, stays in mid's self time.
    assert_eq!((a.children, a.inside, a.not_attributed), (0, 0, 60));
    assert_eq!(a.own, 10 + OUTSIDE);
}

#[test]
fn lost_child_samples_are_not_attributed() {
    static PARENT: Id = Id::new("lost_kids_parent");
    static KID: Id = Id::new("lost_kids_kid");
    let _clock = mock();
    // Rings of 8: 2 parents keep theirs, 20 children lose 12.
    let _settings = Settings::apply(|b| b.ring_capacity(8));
    let t = thread_report("account-lost", || {
        for k in 0..2u64 {
            let kids = (0..10)
                .map(|j| Scope {
                    id: &KID,
                    before: 1 + j,
                    after: 0,
                    children: vec![],
                })
                .collect();
            let parent = Scope {
                id: &PARENT,
                before: 2,
                after: 2,
                children: kids,
            };
            run(&parent, 10_000 * (k + 1));
        }
    });
    let parent = node(&t.tree, "lost_kids_parent");
    let kid = node(&t.tree, "lost_kids_kid");
    assert_eq!((kid.row.stats.samples, kid.row.stats.lost), (8, 12));
    let a = parent.account.unwrap();
    // Its own 2 x 4 ticks, and the outside work of the 12 lost kids (the report knows
    // only the kept kids' calls).
    assert_eq!(a.own, 2 * 4 + 12 * OUTSIDE);
    // The lost samples' windows (the first 12 kids: 1..=10 and 1..=2 ticks of work,
    // each with its 20-tick window) are not attributed.
    let lost: u64 = (1..=10).sum::<u64>() + 1 + 2 + 12 * WINDOW;
    assert_eq!(a.not_attributed, lost as i64);
}

#[test]
fn a_scope_paused_by_the_switch_is_not_attributed() {
    static OUTER: Id = Id::new("paused_outer");
    static INNER: Id = Id::new("paused_inner");
    let _clock = mock();
    let t = thread_report("account-paused", || {
        at(1_000);
        latte::start(&OUTER, Mode::Fast);
        latte::set_recording(false);
        at(1_100);
        latte::start(&INNER, Mode::Fast);
        at(1_350);
        latte::stop(&INNER, Mode::Fast);
        latte::set_recording(true);
        at(2_000);
        latte::stop(&OUTER, Mode::Fast);
    });
    let a = node(&t.tree, "paused_outer").account.unwrap();
    assert_eq!(
        (a.total, a.children, a.not_attributed),
        (1_000 - WINDOW, 0, 250)
    );
    assert_eq!(a.own, 1_000 - WINDOW - 250);
}

#[test]
fn a_span_entered_under_two_parents_is_not_attributed_under_the_first() {
    use tracing_subscriber::layer::SubscriberExt;
    static P: Id = Id::new("span_parent_p");
    static Q: Id = Id::new("span_parent_q");
    let _clock = mock();
    let t = thread_report("account-span", || {
        let layer = latte::tracing::LatteLayer::new().span_lifetimes(false);
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("account_span");
            at(0);
            latte::start(&P, Mode::Fast);
            at(100);
            drop(span.enter()); // entered and exited at 100: 0 ticks
            at(100);
            let entered = span.enter();
            at(160);
            drop(entered); // 60 ticks under P
            at(200);
            latte::stop(&P, Mode::Fast);
            at(300);
            latte::start(&Q, Mode::Fast);
            at(310);
            let entered = span.enter();
            at(350);
            drop(entered); // 40 ticks under Q
            at(400);
            latte::stop(&Q, Mode::Fast);
            drop(span); // its busy total, 100 ticks, in its node under Q
        });
    });
    let p = node(&t.tree, "span_parent_p").account.unwrap();
    let q = node(&t.tree, "span_parent_q").account.unwrap();
    // P ran 60 ticks of the span, recorded under Q: not attributed in P, and Q's
    // child holds 60 ticks more than ran under Q.
    assert_eq!((p.children, p.not_attributed), (0, 60));
    assert_eq!(q.not_attributed, -60);
}
