//! Own binary: `latte::alloc::Counting` serves every allocation of the process.
//!
//! Allocations are counted, exactly, in the innermost scope open on the allocating
//! thread's stack, in the thread's *in no scope* bucket, or in the process bucket
//! (threads without a recorder); latte's own allocations are not counted.

use latte::alloc::{Allocs, Counting, ScopeAllocs};
use latte::collect::{ComponentCapture, ThreadCapture};
use latte::report::TreeNode;
use std::alloc::System;
use std::hint::black_box;

#[global_allocator]
static ALLOCATOR: Counting<System> = Counting::new(System);

/// The node `path` (names from the root) of `thread`.
fn node<'a>(thread: &'a ThreadCapture, path: &[&str]) -> &'a ComponentCapture {
    let mut parent = None;
    let mut found = None;
    for name in path {
        let at = thread
            .components
            .iter()
            .position(|c| c.name == *name && c.parent == parent)
            .unwrap_or_else(|| panic!("no node {path:?} on {}", thread.name));
        parent = Some(at);
        found = Some(&thread.components[at]);
    }
    found.expect("a path of at least one name")
}

fn allocs(thread: &ThreadCapture, path: &[&str]) -> Allocs {
    node(thread, path)
        .allocs
        .expect("the allocator is installed")
}

/// The capture of the thread named `name` (which has exited).
fn thread(name: &str) -> ThreadCapture {
    latte::capture()
        .thread(name)
        .unwrap_or_else(|| panic!("no thread {name}"))
        .clone()
}

/// Runs `f` on a new thread named `name`, to its end.
fn on_thread(name: &str, f: impl FnOnce() + Send + 'static) {
    let spawned = std::thread::Builder::new().name(name.to_owned()).spawn(f);
    spawned.unwrap().join().unwrap();
}

/// The section of the thread named `name` in `report`.
fn section<'a>(report: &'a latte::Report, name: &str) -> &'a latte::report::ThreadReport {
    let found = report.threads.iter().find(|t| t.name == name);
    found.unwrap_or_else(|| panic!("no thread {name} in the report"))
}

/// Calls of `work` per thread in [`tree_threads`].
const CALLS: u64 = 1_000;

/// What one call of `work` allocates itself (three 100-byte `Vec`s), and what its
/// child `work_box` does (one 8-byte `Box`), over [`CALLS`] calls.
const VECS: Allocs = Allocs::new(3 * CALLS, 300 * CALLS, 3 * CALLS, 300 * CALLS);
const ONE_BOX: Allocs = Allocs::new(CALLS, 8 * CALLS, CALLS, 8 * CALLS);

/// Three threads, each calling `work` [`CALLS`] times: three 100-byte `Vec`s in
/// `work`, one `Box` in its child `work_box`, none in its sibling `work_none`. Run
/// once, for every test that reads them; their names.
fn tree_threads() -> &'static [String] {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let names: Vec<String> = (0..3).map(|t| format!("alloc-tree-{t}")).collect();
        let spawn = |name: &String| {
            std::thread::Builder::new()
                .name(name.clone())
                .spawn(|| (0..CALLS).for_each(|_| work()))
                .unwrap()
        };
        let handles: Vec<_> = names.iter().map(spawn).collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        names
    })
}

fn work() {
    latte::latte_start!("work");
    let vecs: [Vec<u8>; 3] = std::array::from_fn(|_| Vec::with_capacity(100));
    black_box(&vecs);
    latte::latte_start!("work_box");
    black_box(Box::new(7_u64));
    latte::latte_stop!("work_box");
    latte::latte_start!("work_none");
    black_box(&vecs);
    latte::latte_stop!("work_none");
    drop(vecs);
    latte::latte_stop!("work");
}

/// Each node of a capture counts exactly what ran while it was innermost, on each of
/// several threads.
#[test]
fn each_node_counts_exactly_what_ran_innermost_in_it() {
    for name in tree_threads() {
        let t = thread(name);
        assert_eq!(allocs(&t, &["work"]), VECS, "{name}");
        assert_eq!(allocs(&t, &["work", "work_box"]), ONE_BOX, "{name}");
        let none = allocs(&t, &["work", "work_none"]);
        assert_eq!(none, Allocs::default(), "{name}");
    }
}

/// The report: per node self and inclusive, per flat id inclusive, over the calls.
#[test]
fn the_report_gives_self_and_inclusive_per_node_and_per_id() {
    let names = tree_threads();
    let report = latte::Report::collect(&latte::ReportOptions::default());
    for name in names {
        let t = section(&report, name);
        let node = |path: &[&str]| {
            let at = (0..t.tree.len())
                .find(|&i| TreeNode::path(&t.tree, i) == path)
                .unwrap_or_else(|| panic!("no node {path:?}"));
            t.tree[at].allocs.expect("the allocator is installed")
        };
        let work = node(&["work"]);
        assert_eq!(work, ScopeAllocs::new(CALLS, VECS, VECS.plus(&ONE_BOX)));
        assert_eq!(work.per_call(), (4.0, 308.0));
        let boxed = ScopeAllocs::new(CALLS, ONE_BOX, ONE_BOX);
        assert_eq!(node(&["work", "work_box"]), boxed);
        let none = ScopeAllocs::new(CALLS, Allocs::default(), Allocs::default());
        assert_eq!(node(&["work", "work_none"]), none);
        let row = t.rows.iter().find(|r| r.component == "work").unwrap();
        assert_eq!(row.allocs, Some(work));
    }
    let all = report.all_threads.iter().find(|r| r.component == "work");
    let all = all.unwrap().allocs.unwrap();
    assert_eq!((all.calls(), all.per_call()), (3 * CALLS, (4.0, 308.0)));
}

/// The table shows ALLOCS/CALL and BYTES/CALL on the tree's rows; JSON carries the
/// counts and reads them back.
#[test]
fn the_table_and_json_carry_them() {
    let names = tree_threads();
    let report = latte::Report::collect(&latte::ReportOptions::default());
    let options = latte::report::TableOptions {
        wide: true,
        ..Default::default()
    };
    let mut table = Vec::new();
    let format = latte::Format::Table(options);
    report.write(&mut table, format).unwrap();
    let table = String::from_utf8(table).unwrap();
    let header = table.lines().find(|l| l.starts_with("COMPONENT")).unwrap();
    assert!(header.ends_with("ALLOCS/CALL BYTES/CALL"), "{header}");
    let work = table.lines().find(|l| l.starts_with("work ")).unwrap();
    assert!(work.ends_with(" 4      308 B"), "{work}");
    let json = report.to_json(latte::report::JsonStyle::Compact);
    let back: latte::Report = serde_json::from_str(&json).unwrap();
    let t = section(&back, &names[0]);
    let work = t.tree.iter().find(|n| n.row.component == "work").unwrap();
    assert_eq!(work.allocs.unwrap().inclusive(), VECS.plus(&ONE_BOX));
    assert!(back.process_allocs.is_some() && t.outside_allocs.is_some());
}

/// With no scope open, a registered thread's allocations land in its own bucket; a
/// capture's own allocations are not counted anywhere.
#[test]
fn allocations_outside_scopes_land_in_the_threads_bucket() {
    on_thread("alloc-outside", || {
        latte::latte_pulse!("alloc_outside_registers");
        let me = |c: &latte::Capture| c.thread("alloc-outside").unwrap().outside_allocs;
        let before = me(&latte::capture()).expect("installed");
        for _ in 0..5 {
            black_box(Box::new([0_u8; 40]));
        }
        let after = me(&latte::capture()).expect("installed");
        let counted = after.since(&before);
        assert_eq!((counted.count(), counted.bytes()), (5, 200));
        // Frees count where they happen: the boxes', and the first capture's,
        // dropped by this thread outside any scope.
        assert!(counted.frees() > 5 && counted.freed() > 200, "{counted:?}");
    });
}

/// A `Timer` is not a scope on the stack: what runs while it is open counts in the
/// stack scope around it.
#[test]
fn a_timers_allocations_land_in_the_enclosing_stack_scope() {
    static TIMED: latte::Id = latte::Id::new("alloc_timer");
    on_thread("alloc-timer", || {
        latte::latte_start!("alloc_timer_outer");
        let timer = latte::Timer::start(&TIMED, latte::Mode::Fast, latte::Mode::Fast);
        black_box(vec![1_u32; 16]);
        drop(timer);
        latte::latte_stop!("alloc_timer_outer");
    });
    let t = thread("alloc-timer");
    assert_eq!(
        allocs(&t, &["alloc_timer_outer"]),
        Allocs::new(1, 64, 1, 64)
    );
    assert_eq!(allocs(&t, &["alloc_timer"]), Allocs::default());
}

/// A reallocation is a free of the old block and an allocation of the new one.
#[test]
fn a_reallocation_counts_as_a_free_and_an_allocation() {
    on_thread("alloc-realloc", || {
        latte::latte_start!("alloc_grow");
        let mut v: Vec<u8> = Vec::with_capacity(16);
        v.reserve_exact(48);
        black_box(&v);
        drop(v);
        latte::latte_stop!("alloc_grow");
    });
    let t = thread("alloc-realloc");
    assert_eq!(
        allocs(&t, &["alloc_grow"]),
        Allocs::new(2, 16 + 48, 2, 16 + 48)
    );
}

thread_local! {
    /// Dropped at thread exit, after the recorder (registered before it, so its
    /// destructor runs after the recorder's on platforms that run them last-in,
    /// first-out): it allocates there.
    static LATE: Late = const { Late };
}

struct Late;

impl Drop for Late {
    fn drop(&mut self) {
        black_box(Vec::<u8>::with_capacity(LATE_BYTES));
    }
}

const LATE_BYTES: usize = 100 << 20;

/// A thread that allocates during its exit, after its recorder is gone, neither
/// crashes nor loses the count: it lands in the process bucket.
#[test]
fn allocations_after_the_recorder_is_torn_down_land_in_the_process_bucket() {
    let process = || latte::capture().process_allocs.expect("installed");
    let before = process();
    on_thread("alloc-exit", || {
        LATE.with(|_| ());
        latte::latte_start!("alloc_exit");
        latte::latte_stop!("alloc_exit");
    });
    let counted = process().since(&before);
    let t = thread("alloc-exit");
    let outside = t.outside_allocs.expect("installed");
    // Where the destructor ran (after the recorder's, or before it on a platform that
    // runs them in another order), the 100 MiB are counted.
    assert!(
        counted.bytes() >= LATE_BYTES as u64 || outside.bytes() >= LATE_BYTES as u64,
        "{counted:?} {outside:?}"
    );
    if cfg!(target_os = "linux") {
        assert!(counted.bytes() >= LATE_BYTES as u64, "{counted:?}");
        assert!(outside.bytes() < LATE_BYTES as u64, "{outside:?}");
    }
}

/// On tokio's multi-thread runtime, what a task allocates while a scope is open on the
/// worker polling it counts in that scope, on that worker.
#[test]
fn an_awaited_futures_allocations_count_in_the_scope_open_on_its_polling_thread() {
    const TASKS: u64 = 64;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("alloc-tokio")
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|_| {
                tokio::spawn(async {
                    tokio::task::yield_now().await;
                    let _scope = latte::latte_scope!("alloc_poll");
                    black_box(Box::new([0_u8; 24]));
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    drop(rt);
    let capture = latte::capture();
    let total = capture
        .threads
        .iter()
        .filter(|t| t.name == "alloc-tokio")
        .flat_map(|t| &t.components)
        .filter(|c| c.name == "alloc_poll")
        .fold(Allocs::default(), |sum, c| sum.plus(&c.allocs.unwrap()));
    assert_eq!(total, Allocs::new(TASKS, 24 * TASKS, TASKS, 24 * TASKS));
}

/// An allocation-free scope stays silent over a million clean calls, its rings growing
/// on the way (latte's own allocations are not the scope's).
#[test]
fn the_allocation_free_check_is_silent_on_a_clean_loop() {
    latte::alloc::forbid(["free_loop"]);
    on_thread("alloc-free-clean", || {
        for i in 0..1_000_000_u64 {
            latte::latte_start!("free_loop");
            latte::latte_start!("free_loop_step");
            black_box(i.wrapping_mul(31));
            latte::latte_stop!("free_loop_step");
            latte::latte_stop!("free_loop");
        }
    });
    let clean = thread("alloc-free-clean");
    assert_eq!(clean.anomalies.alloc_breaches, 0);
    assert_eq!(clean.alloc_breach, None);
    assert_eq!(node(&clean, &["free_loop"]).seen, 1_000_000);
}

/// A scope declared allocation-free (`free_order`) and one inside it: the first
/// allocation of `free_encode` breaks the rule; one in an undeclared scope does not.
fn breach() {
    latte::latte_start!("free_setup");
    black_box(Box::new(1_u8));
    latte::latte_stop!("free_setup");
    latte::latte_start!("free_order");
    latte::latte_start!("free_parse");
    black_box(1 + 1);
    latte::latte_stop!("free_parse");
    latte::latte_start!("free_encode");
    black_box(Vec::<u8>::with_capacity(48));
    black_box(Box::new(7_u64));
    latte::latte_stop!("free_encode");
    latte::latte_stop!("free_order");
}

/// The check fails on exactly the offending scope, with the first size; the report
/// names it in the thread's anomaly line and JSON.
#[test]
fn the_allocation_free_check_names_exactly_the_offending_scope() {
    latte::alloc::forbid(["free_order"]);
    on_thread("alloc-free-breach", breach);
    let err = latte::alloc::check_no_alloc().unwrap_err();
    let expected = latte::Error::Allocated {
        thread: "alloc-free-breach".into(),
        count: 2,
        path: vec!["free_order".into(), "free_encode".into()],
        size: 48,
    };
    assert_eq!(err, expected);
    assert!(
        err.to_string().contains("free_order > free_encode"),
        "{err}"
    );
    let report = latte::Report::collect(&latte::ReportOptions::default());
    let t = section(&report, "alloc-free-breach");
    assert_eq!(t.anomalies.alloc_breaches, 2);
    let breach = t.alloc_breach.as_ref().expect("the first breach");
    let first = (breach.path.join(" > "), breach.size);
    assert_eq!(first, ("free_order > free_encode".into(), 48));
    let mut table = Vec::new();
    report.write(&mut table, latte::Format::default()).unwrap();
    let table = String::from_utf8(table).unwrap();
    let line = "2 allocations in allocation-free scopes (first: free_order > free_encode, 48 B)";
    assert!(table.contains(line), "{table}");
    // After that check (which names the first thread it finds): a rule declared while
    // its scope runs applies at once.
    let late = late_rule_thread();
    assert_eq!(late.anomalies.alloc_breaches, 1);
    let (at, size) = late.alloc_breach.expect("the breach");
    assert_eq!((late.components[at].name, size), ("late_rule_inner", 24));
}

/// With `latte_frame!` marks: each component's allocations per frame, as a
/// distribution over the frames (its outermost calls' and those inside them).
#[test]
fn allocations_per_frame_are_a_distribution_over_the_frames() {
    on_thread("alloc-frames", || {
        latte::latte_frame!();
        for frame in 0..100 {
            latte::latte_start!("frame_work");
            // 60 frames of 2 allocations, 40 of 4: the child's one and these.
            let own = if frame % 5 < 3 { 1 } else { 3 };
            (0..own).for_each(|_| drop(black_box(Box::new(frame))));
            latte::latte_start!("frame_child");
            black_box(Box::new(1_u8));
            latte::latte_stop!("frame_child");
            latte::latte_stop!("frame_work");
            latte::latte_frame!();
        }
    });
    let report = latte::Report::collect(&latte::ReportOptions::default());
    let t = section(&report, "alloc-frames");
    let frames = t.per_frame.as_ref().expect("frames marked");
    assert_eq!(frames.frames, 100);
    let work = frames
        .components
        .iter()
        .find(|c| c.component == "frame_work");
    let allocs = work.unwrap().allocs.expect("the allocator is installed");
    assert_eq!((allocs.p50, allocs.max), (2.0, 4.0));
    assert!((allocs.mean - 2.8).abs() < 1e-9, "{allocs:?}");
    let child = frames
        .components
        .iter()
        .find(|c| c.component == "frame_child");
    let child = child.unwrap().allocs.unwrap();
    assert_eq!((child.p50, child.max), (1.0, 1.0));
    let mut table = Vec::new();
    report.write(&mut table, latte::Format::default()).unwrap();
    let table = String::from_utf8(table).unwrap();
    let header = table.lines().find(|l| l.starts_with("PER FRAME")).unwrap();
    assert!(header.contains("ALLOCS P50"), "{header}");
}

/// A rule declared while its scope already runs on another thread: the scope's next
/// allocation (in a scope opened inside it later) breaks it, the one before does not.
/// The thread's capture.
fn late_rule_thread() -> ThreadCapture {
    let (opened, wait) = std::sync::mpsc::channel();
    let (declared, go) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::Builder::new()
        .name("alloc-late-rule".into())
        .spawn(move || {
            latte::latte_start!("late_rule");
            black_box(Box::new(1_u8)); // before the rule: no breach
            opened.send(()).unwrap();
            go.recv().unwrap();
            latte::latte_start!("late_rule_inner");
            black_box(Vec::<u8>::with_capacity(24));
            latte::latte_stop!("late_rule_inner");
            latte::latte_stop!("late_rule");
        })
        .unwrap();
    wait.recv().unwrap();
    latte::alloc::forbid(["late_rule"]);
    declared.send(()).unwrap();
    worker.join().unwrap();
    thread("alloc-late-rule")
}
