//! What a `latte_frame!` mark costs the thread that marks, by the number of call-tree
//! nodes the thread has: a mark reads two sums per node, measures the frame and hands
//! it to the drain, so its cost grows with the nodes, while Start and Stop cost the
//! same with or without marks (`docs/design.md`, "Frames").
//!
//! Per case: a root scope holding `nodes - 1` scopes of distinct ids (one node each),
//! all run once per frame, then a mark; 20,000 frames with an agent draining every few
//! milliseconds. Printed: the median nanoseconds of a mark (over 21 rounds of 1,000
//! marks, each timed around the marks only), per node, and against the frame's own
//! Start+Stop pairs. For information: there is no target.
//!
//! `cargo bench --bench frames`

use latte::{Id, Mode};
use std::time::Instant;

const ROUNDS: usize = 21;
const MARKS_PER_ROUND: usize = 1_000;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median nanoseconds of one mark and of one frame's scopes, with `nodes` nodes.
fn case(nodes: usize) -> (f64, f64) {
    let ids: Vec<&'static Id> = (0..nodes)
        .map(|k| Id::intern(&format!("bench_frames_{nodes}_{k}")).unwrap())
        .collect();
    let frame = || {
        latte::start(ids[0], Mode::Fast);
        for id in &ids[1..] {
            latte::start(id, Mode::Fast);
            latte::stop(id, Mode::Fast);
        }
        latte::stop(ids[0], Mode::Fast);
    };
    // Every node made, and the first mark made, before timing.
    frame();
    latte::latte_frame!();
    let (mut marks, mut scopes) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let (mut in_marks, mut in_scopes) = (0u128, 0u128);
        for _ in 0..MARKS_PER_ROUND {
            let began = Instant::now();
            frame();
            let marked = Instant::now();
            latte::latte_frame!();
            let done = Instant::now();
            in_scopes += (marked - began).as_nanos();
            in_marks += (done - marked).as_nanos();
        }
        marks.push(in_marks as f64 / MARKS_PER_ROUND as f64);
        scopes.push(in_scopes as f64 / MARKS_PER_ROUND as f64);
    }
    (median(marks), median(scopes))
}

fn main() {
    let guard = latte::builder()
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .expect("an agent");
    println!("frame marks: {ROUNDS} rounds of {MARKS_PER_ROUND} frames, medians");
    println!(
        "{:>6} {:>12} {:>14} {:>16}",
        "nodes", "mark (ns)", "per node (ns)", "mark / scopes"
    );
    for nodes in [1, 8, 64, 256] {
        let (mark, scopes) = case(nodes);
        println!(
            "{nodes:>6} {mark:>12.1} {:>14.2} {:>16.3}",
            mark / nodes as f64,
            mark / scopes
        );
    }
    guard.stop().expect("the agent stops");
}
