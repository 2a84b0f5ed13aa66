//! `Report::since` against reports built by hand: counts and totals subtract, the
//! quantiles are the gained values', and what has no calls since is left out.

use crate::report::{Account, Report, Row, SelfTime, ThreadReport, TreeNode};

/// A cycles report with one thread `worker` (#1) holding `rows`, the same rows over
/// all threads, and a tree of `rows[0]` over `rows[1]`.
fn report(rows: Vec<Row>) -> Report {
    let node = |parent: Option<usize>, depth, row: &Row, total: u64| TreeNode {
        allocs: None,
        parent,
        depth,
        row: row.clone(),
        self_time: Some(SelfTime {
            calls: row.stats.samples,
            total: row.stats.total,
            mean: 0.0,
        }),
        account: Some(Account {
            total,
            own: total,
            ..Account::default()
        }),
        of_parent: parent.map(|_| 1.0),
        of_root: 1.0,
    };
    let tree = vec![
        node(None, 0, &rows[0], rows[0].stats.total as u64),
        node(Some(0), 1, &rows[1], rows[1].stats.total as u64),
    ];
    let thread = ThreadReport {
        name: "worker".into(),
        serial: 1,
        rows: rows.clone(),
        tree: tree.clone(),
        ..ThreadReport::default()
    };
    Report {
        threads: vec![thread],
        all_threads: rows,
        tree,
        ..Report::default()
    }
}

#[test]
fn an_interval_holds_what_was_added_and_nothing_else() {
    let earlier = report(vec![
        Row::with_ticks("outer", &[(1_000, 100)]),
        Row::with_ticks("inner", &[(200, 100)]),
    ]);
    let later = report(vec![
        Row::with_ticks("outer", &[(1_000, 100), (5_000, 30)]),
        // No calls since: left out, as its tree node is.
        Row::with_ticks("inner", &[(200, 100)]),
    ]);
    let interval = later.since(&earlier);
    for rows in [&interval.all_threads, &interval.threads[0].rows] {
        assert_eq!(rows.len(), 1);
        let s = &rows[0].stats;
        assert_eq!(
            (s.seen, s.samples, s.total, s.avg),
            (30, 30, 150_000.0, 5_000.0)
        );
        // The bucket 5,000..=5,003 stands for its middle: an interval knows no extremes.
        assert_eq!((s.median, s.p99, s.max), (5_002.0, 5_002.0, 5_002.0));
        assert!(s.min.is_nan() && s.std_dev.is_nan() && s.skew.is_nan());
        assert_eq!(rows[0].distribution.len(), 30);
    }
    assert_eq!(interval.tree.len(), 1);
    let root = &interval.tree[0];
    assert_eq!(root.row.stats.seen, 30);
    assert_eq!(
        root.self_time.map(|s| (s.calls, s.total)),
        Some((30, 150_000.0))
    );
    assert_eq!(root.account.map(|a| a.total), Some(150_000));
    assert!(interval.series.is_none());
}

#[test]
fn a_row_whose_calls_went_down_counts_from_zero_and_a_new_thread_is_whole() {
    let earlier = report(vec![
        Row::with_ticks("outer", &[(1_000, 100)]),
        Row::with_ticks("inner", &[(200, 100)]),
    ]);
    let mut later = report(vec![
        Row::with_ticks("outer", &[(3_000, 7)]),
        Row::with_ticks("inner", &[(200, 150)]),
    ]);
    later.threads[0].serial = 2;
    let interval = later.since(&earlier);
    let outer = &interval.all_threads[0];
    assert_eq!((outer.stats.seen, outer.stats.median), (7, 3_000.0));
    let inner = &interval.all_threads[1];
    assert_eq!((inner.stats.seen, inner.stats.median), (50, 200.0));
    // Thread #2 is not in the earlier report: all of it is new.
    assert_eq!(interval.threads[0].rows, later.threads[0].rows);
    // The tree: the reset root whole, its child's 50 calls.
    let calls: Vec<u64> = interval.tree.iter().map(|n| n.row.stats.seen).collect();
    assert_eq!(calls, [7, 50]);
    assert_eq!(interval.tree[1].parent, Some(0));
}

#[test]
fn anomalies_and_frames_subtract() {
    let mut earlier = report(vec![
        Row::with_ticks("outer", &[(1_000, 1)]),
        Row::with_ticks("inner", &[(200, 1)]),
    ]);
    let mut later = earlier.clone();
    earlier.threads[0].anomalies.orphaned_scopes = 2;
    later.threads[0].anomalies.orphaned_scopes = 5;
    earlier.threads[0].per_frame = Some(crate::report::PerFrame {
        frames: 10,
        budget: Some(16.0),
        over_budget: Some(1),
        ..Default::default()
    });
    later.threads[0].per_frame = Some(crate::report::PerFrame {
        frames: 25,
        budget: Some(16.0),
        over_budget: Some(4),
        ..Default::default()
    });
    let interval = later.since(&earlier);
    // No calls since, but anomalies and frames: the thread stays, without rows.
    let thread = &interval.threads[0];
    assert!(thread.rows.is_empty() && interval.all_threads.is_empty());
    assert_eq!(thread.anomalies.orphaned_scopes, 3);
    let frames = thread.per_frame.as_ref().unwrap();
    assert_eq!((frames.frames, frames.over_budget), (15, Some(3)));
    assert!(later.since(&later).threads.is_empty());
}

#[test]
fn an_interval_reads_back_from_its_json_its_unknown_figures_nan() {
    let earlier = report(vec![
        Row::with_ticks("outer", &[(1_000, 100)]),
        Row::with_ticks("inner", &[(200, 100)]),
    ]);
    let mut later = report(vec![
        Row::with_ticks("outer", &[(1_000, 100), (5_000, 30)]),
        Row::with_ticks("inner", &[(200, 120)]),
    ]);
    later.threads[0].per_frame = Some(crate::report::PerFrame {
        frames: 3,
        ..Default::default()
    });
    let interval = later.since(&earlier);
    let json = interval.to_json(crate::report::JsonStyle::Compact);
    let read: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(read.to_json(crate::report::JsonStyle::Compact), json);
    let row = &read.all_threads[0];
    assert!(row.stats.min.is_nan() && row.stats.cleaned.avg.is_nan());
    let frames = read.threads[0].per_frame.as_ref().unwrap();
    assert!(frames.length.p50.is_nan() && frames.frames == 3);
    assert_eq!(row.distribution.quantile(0.5), 5_002.0);
}
