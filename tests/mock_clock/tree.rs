//! The call tree on a counter under the test's control: exact calls, inclusive and
//! self times and shares of a known tree; recursion and runaway paths bounded; a Stop
//! out of LIFO order; lost samples.

use crate::common::on_named_thread;
use crate::{at, mock, raw_report, scope};
use latte::report::{ThreadReport, TreeNode};
use latte::{Id, Mode, Report};

/// Applies recorder settings (they stay after the agent stops, for threads and rings
/// made later) and puts the defaults back when dropped.
pub(crate) struct Settings;

impl Settings {
    pub(crate) fn apply(settings: impl FnOnce(latte::Builder) -> latte::Builder) -> Settings {
        let builder = settings(latte::builder().final_report(false));
        builder.start().and_then(|g| g.stop()).unwrap();
        Settings
    }
}

impl Drop for Settings {
    fn drop(&mut self) {
        use latte::collect::Limit;
        let defaults = latte::builder()
            .final_report(false)
            .ring_capacity(Limit::RING_CAPACITY.default)
            .stack_depth(Limit::STACK_DEPTH.default)
            .node_limit(Limit::NODE_LIMIT.default);
        defaults.start().and_then(|g| g.stop()).unwrap();
    }
}

fn thread<'a>(report: &'a Report, name: &str) -> &'a ThreadReport {
    report.threads.iter().find(|t| t.name == name).unwrap()
}

/// (component, parent's component, depth, calls, total, self total, of parent, of root)
type Shape<'a> = (
    &'a str,
    Option<&'a str>,
    u32,
    u64,
    f64,
    f64,
    Option<f64>,
    f64,
);

fn shape(tree: &[TreeNode]) -> Vec<Shape<'_>> {
    tree.iter()
        .map(|n| {
            (
                n.row.component.as_str(),
                n.parent.map(|p| tree[p].row.component.as_str()),
                n.depth,
                n.self_time.map_or(0, |s| s.calls),
                n.row.stats.total,
                n.self_time.map_or(f64::NAN, |s| s.total),
                n.of_parent,
                n.of_root,
            )
        })
        .collect()
}

/// Four frames, each: frame [0, 100] holding a [10, 60], which holds b [20, 30 + 10k],
/// and c [70, 90].
fn record_known_tree() {
    static FRAME: Id = Id::new("tree_frame");
    static A: Id = Id::new("tree_a");
    static B: Id = Id::new("tree_b");
    static C: Id = Id::new("tree_c");
    for k in 0..4u64 {
        let base = 1_000 * k;
        scope(&FRAME, base, base + 100, || {
            scope(&A, base + 10, base + 60, || {
                scope(&B, base + 20, base + 30 + 10 * k, || {});
            });
            scope(&C, base + 70, base + 90, || {});
        });
    }
}

#[test]
fn a_known_tree_gives_exact_calls_times_self_times_and_shares() {
    let _clock = mock();
    on_named_thread("tree-known", record_known_tree);
    let report = raw_report();
    let t = thread(&report, "tree-known");
    assert_eq!(
        shape(&t.tree),
        [
            // frame: 4 x 100; itself 400 - a's 200 - c's 80.
            ("tree_frame", None, 0, 4, 400.0, 120.0, None, 1.0),
            // a: 4 x 50; itself 200 - b's 10 + 20 + 30 + 40.
            (
                "tree_a",
                Some("tree_frame"),
                1,
                4,
                200.0,
                100.0,
                Some(0.5),
                0.5
            ),
            (
                "tree_b",
                Some("tree_a"),
                2,
                4,
                100.0,
                100.0,
                Some(0.5),
                0.25
            ),
            (
                "tree_c",
                Some("tree_frame"),
                1,
                4,
                80.0,
                80.0,
                Some(0.2),
                0.2
            ),
        ]
    );
    let mean = |i: usize| t.tree[i].self_time.unwrap().mean;
    assert_eq!(
        (mean(0), mean(1), mean(2), mean(3)),
        (30.0, 25.0, 25.0, 20.0)
    );
    // The nodes' rows are the ids' flat rows here (each id has one node).
    let b = &t.tree[2].row.stats;
    assert_eq!((b.samples, b.min, b.max, b.median), (4, 10.0, 40.0, 20.0));
    let flat = t.rows.iter().find(|r| r.component == "tree_frame").unwrap();
    assert_eq!(flat.stats.total, 400.0);
    // The all-threads tree has this thread's nodes (no other thread ran them).
    let ours = ["tree_frame", "tree_a", "tree_b", "tree_c"];
    let all: Vec<Shape<'_>> = shape(&report.tree)
        .into_iter()
        .filter(|s| ours.contains(&s.0))
        .collect();
    assert_eq!(all, shape(&t.tree));
}

#[test]
fn the_all_threads_tree_merges_nodes_by_path_and_the_flat_rows_by_id() {
    let _clock = mock();
    static ROOT: Id = Id::new("merge_root");
    static WORK: Id = Id::new("merge_work");
    for (name, work) in [("merge-1", 30), ("merge-2", 50)] {
        on_named_thread(name, move || {
            scope(&ROOT, 0, 100, || scope(&WORK, 10, 10 + work, || {}));
            scope(&WORK, 200, 207, || {}); // the same id at the root: another node
        });
    }
    let report = raw_report();
    let tree: Vec<Shape<'_>> = shape(&report.tree)
        .into_iter()
        .filter(|s| s.0.starts_with("merge_"))
        .collect();
    assert_eq!(
        tree,
        [
            ("merge_root", None, 0, 2, 200.0, 120.0, None, 1.0),
            (
                "merge_work",
                Some("merge_root"),
                1,
                2,
                80.0,
                80.0,
                Some(0.4),
                0.4
            ),
            ("merge_work", None, 0, 2, 14.0, 14.0, None, 1.0),
        ]
    );
    let flat = report
        .all_threads
        .iter()
        .find(|r| r.component == "merge_work")
        .unwrap();
    assert_eq!((flat.stats.samples, flat.stats.total), (4, 94.0));
}

#[test]
fn a_stop_out_of_lifo_order_records_as_before_and_the_tree_stays_whole() {
    let _clock = mock();
    static OUTER: Id = Id::new("lifo_outer");
    static LEAKED: Id = Id::new("lifo_leaked");
    static AFTER: Id = Id::new("lifo_after");
    on_named_thread("tree-lifo", || {
        at(0);
        latte::start(&OUTER, Mode::Fast);
        at(10);
        latte::start(&LEAKED, Mode::Fast); // its Stop never comes
        at(40);
        latte::stop(&OUTER, Mode::Fast); // closes OUTER, orphans LEAKED
        scope(&OUTER, 100, 150, || scope(&AFTER, 110, 120, || {}));
    });
    let report = raw_report();
    let t = thread(&report, "tree-lifo");
    assert_eq!(t.anomalies.orphaned_scopes, 1);
    assert_eq!(
        shape(&t.tree),
        [
            // 40 + 50; the orphan recorded nothing, so only AFTER's 10 is not OUTER's own.
            ("lifo_outer", None, 0, 2, 90.0, 80.0, None, 1.0),
            (
                "lifo_after",
                Some("lifo_outer"),
                1,
                1,
                10.0,
                10.0,
                Some(10.0 / 90.0),
                10.0 / 90.0
            ),
        ]
    );
}

#[test]
fn lost_samples_leave_the_self_time_of_every_call_exact_and_are_not_attributed() {
    let _clock = mock();
    static PARENT: Id = Id::new("lost_parent");
    static CHILD: Id = Id::new("lost_child");
    // Rings of 4 samples, 10 calls each, no agent reading them: 6 of each id lost.
    let _settings = Settings::apply(|b| b.ring_capacity(4));
    on_named_thread("tree-lost", || {
        for k in 0..10u64 {
            let base = 1_000 * k;
            scope(&PARENT, base, base + 100, || {
                scope(&CHILD, base + 10, base + 10 + k, || {})
            });
        }
    });
    let report = raw_report();
    let t = thread(&report, "tree-lost");
    let parent = &t.tree[0];
    assert_eq!(parent.row.component, "lost_parent");
    assert_eq!((parent.row.stats.samples, parent.row.stats.lost), (4, 6));
    // Every call's self time, 10 x 100 minus the child's 0 + 1 + ... + 9, is known
    // exactly; the self time covers the 4 calls TOTAL covers, at that mean.
    let own = parent.self_time.unwrap();
    assert_eq!((own.calls, own.mean), (4, 95.5));
    assert_eq!(own.total, 4.0 * 95.5);
    // The child kept its last 4 samples (6 + 7 + 8 + 9 ticks), the parent its last 4
    // calls (400 ticks): the 12 ticks of child time beyond the parent's kept calls'
    // share (18) are not attributed, negative, and the account still adds up.
    let child = &t.tree[1];
    assert_eq!(child.row.stats.total, 30.0);
    let a = parent.account.unwrap();
    assert_eq!((a.total, a.own, a.children, a.inside), (400, 382, 30, 0));
    assert_eq!(a.not_attributed, -12);
}

#[test]
fn recursion_a_thousand_deep_stays_within_the_node_limit() {
    let _clock = mock();
    static DIVE: Id = Id::new("tree_dive");
    fn dive(depth: u64) {
        at(depth);
        latte::start(&DIVE, Mode::Fast);
        if depth < 999 {
            dive(depth + 1);
        }
        at(10_000 - depth);
        latte::stop(&DIVE, Mode::Fast);
    }
    let _settings = Settings::apply(|b| b.stack_depth(1_024).node_limit(100));
    // A debug build's frames are large: room for 1,000 of them.
    let diver = std::thread::Builder::new()
        .name("tree-dive".into())
        .stack_size(256 << 20);
    diver.spawn(|| dive(0)).unwrap().join().unwrap();
    let capture = latte::capture();
    let me = capture.thread("tree-dive").unwrap();
    let report = raw_report();
    // The root's node and 100 below it; the 899 deeper calls share the deepest node,
    // whose path was counted once as folded. Every call is recorded.
    let nodes = me
        .components
        .iter()
        .filter(|c| c.name == "tree_dive")
        .count();
    assert_eq!(nodes, 101);
    assert_eq!(me.samples("tree_dive").len(), 1_000);
    assert_eq!(me.anomalies.folded_paths, 1);
    let t = thread(&report, "tree-dive");
    assert_eq!(t.tree.len(), 101);
    let deepest = &t.tree[100];
    assert_eq!(
        (deepest.depth, deepest.self_time.unwrap().calls),
        (100, 900)
    );
    // Self times add up to the outermost call: every tick is somebody's own.
    let own: f64 = t.tree.iter().map(|n| n.self_time.unwrap().total).sum();
    assert_eq!(own, t.tree[0].row.stats.total);
    assert_eq!(own, 10_000.0);
}

#[test]
fn a_hundred_thousand_paths_stay_within_the_node_limit_and_a_memory_bound() {
    let _clock = mock();
    const PARENTS: usize = 250;
    const CHILDREN: usize = 400;
    let parents: Vec<&'static Id> = (0..PARENTS)
        .map(|i| Id::intern(&format!("paths_p{i}")).unwrap())
        .collect();
    let children: Vec<&'static Id> = (0..CHILDREN)
        .map(|i| Id::intern(&format!("paths_c{i}")).unwrap())
        .collect();
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static RESERVED: AtomicU64 = AtomicU64::new(0);
    // Calibration's own rings (it runs on the first report) come and go: done first.
    latte::analyze::calibration();
    let me = on_named_thread("tree-paths", move || {
        let before = latte::collect::footprint().ring_bytes_reserved;
        at(0);
        for parent in &parents {
            latte::start(parent, Mode::Fast);
            for child in &children {
                latte::start(child, Mode::Fast);
                latte::stop(child, Mode::Fast);
            }
            latte::stop(parent, Mode::Fast);
        }
        // While the thread lives: its rings are still its own.
        let after = latte::collect::footprint().ring_bytes_reserved;
        RESERVED.store(after.saturating_sub(before), Relaxed);
    });
    let limit = latte::collect::Limit::NODE_LIMIT.default;
    assert_eq!(
        me.anomalies.folded_paths,
        (PARENTS * CHILDREN - limit) as u64
    );
    // 250 roots, 4,096 nodes below them, and the 400 children's own roots that the
    // folded paths record into.
    assert_eq!(me.components.len(), PARENTS + limit + CHILDREN);
    let calls: u64 = me.components.iter().map(|c| c.seen).sum();
    assert_eq!(calls, (PARENTS * (CHILDREN + 1)) as u64);
    // Memory: each ring its first 1,024 slots (8 KiB), but for rings reused from the
    // pool of exited threads' rings (at most 16, each at most the full capacity).
    let bound = me.components.len() as u64 * 8_192 + 16 * 8 * (1 << 16);
    let reserved = RESERVED.load(Relaxed);
    assert!(reserved <= bound, "{reserved} B reserved, bound {bound} B");
}

/// Three rounds of paths new on every level (see the test below).
fn record_lazy_paths() {
    static ROOT: Id = Id::new("lazy_root");
    static MID: Id = Id::new("lazy_mid");
    static LEAF: Id = Id::new("lazy_leaf");
    static PARENTS: [Id; 3] = [Id::new("lazy_p1"), Id::new("lazy_p2"), Id::new("lazy_p3")];
    static LOST: Id = Id::new("lazy_lost");
    let mid = |from: u64, to: u64, inside: &dyn Fn()| {
        at(from);
        latte::start(&MID, Mode::Mid);
        inside();
        at(to);
        latte::stop(&MID, Mode::Mid);
    };
    for k in 0..3u64 {
        let base = 1_000 * k;
        scope(&ROOT, base, base + 500, || {
            mid(base + 10, base + 60, &|| {
                scope(&LEAF, base + 20, base + 30, || {});
            });
            for (i, parent) in (0..).zip(&PARENTS) {
                let from = base + 100 + 100 * i;
                scope(parent, from, from + 50, || {
                    scope(&LEAF, from + 10, from + 10 + i + 1, || {});
                });
            }
            // A scope whose Stop never comes, closed as an orphan by its parent's.
            let from = base + 400;
            at(from);
            latte::start(&PARENTS[0], Mode::Fast);
            at(from + 5);
            latte::start(&LOST, Mode::Fast);
            at(from + 20);
            latte::stop(&PARENTS[0], Mode::Fast);
        });
    }
}

/// Paths new on every level, a Mid scope under a Fast parent, an id under three
/// parents in turn (one more than the memo's two ways, see `record/node.rs`), a missed
/// Stop and the parent's Stop that closes past it: every sample lands on the node its
/// path names.
#[test]
fn every_sample_lands_on_its_path_across_modes_parents_and_an_orphan() {
    let _clock = mock();
    on_named_thread("tree-lazy", record_lazy_paths);
    let report = raw_report();
    let t = thread(&report, "tree-lazy");
    assert_eq!(t.anomalies.orphaned_scopes, 3);
    let paths: Vec<(&str, Option<&str>, u64, f64)> = t
        .tree
        .iter()
        .map(|n| {
            (
                n.row.component.as_str(),
                n.parent.map(|p| t.tree[p].row.component.as_str()),
                n.row.stats.samples,
                n.row.stats.total,
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            // Children by TOTAL, largest first.
            ("lazy_root", None, 3, 1_500.0),
            // p1: 3 x 50 with its leaf of 1, and 3 x 20 closing the orphan.
            ("lazy_p1", Some("lazy_root"), 6, 210.0),
            ("lazy_leaf", Some("lazy_p1"), 3, 3.0),
            ("lazy_mid", Some("lazy_root"), 3, 150.0),
            ("lazy_leaf", Some("lazy_mid"), 3, 30.0),
            ("lazy_p2", Some("lazy_root"), 3, 150.0),
            ("lazy_leaf", Some("lazy_p2"), 3, 6.0),
            ("lazy_p3", Some("lazy_root"), 3, 150.0),
            ("lazy_leaf", Some("lazy_p3"), 3, 9.0),
        ]
    );
    // Every account adds up, so every child is under the parent that held it.
    for node in &t.tree {
        let a = node.account.expect("a stack scope's node has an account");
        assert_eq!(
            a.total as i64,
            (a.own + a.children + a.inside) as i64 + a.not_attributed,
            "{}",
            node.row.component
        );
    }
}
