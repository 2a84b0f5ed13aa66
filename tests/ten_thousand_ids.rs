//! Own binary: it interns 10,000 ids, which stay in the process for good.
//!
//! A trading engine timing per instrument: 10,000 interned symbols on one thread, each
//! recorded 1,000 times, in rounds (every symbol once per round), with an agent folding
//! and writing periodic reports meanwhile. Given the time (the report at the end folds
//! what is left), every symbol is in the report with its exact count and nothing is
//! lost or refused: the rings start small, so the memory cap is nowhere near.

use latte::{Id, Report, ReportOptions};
use std::time::Duration;

const SYMBOLS: usize = 10_000;
const PER_SYMBOL: u64 = 1_000;

#[test]
fn every_id_of_a_ten_thousand_id_run_is_reported_with_its_exact_count() {
    let guard = latte::builder()
        .sink(std::io::sink())
        .periodic(Duration::from_millis(50))
        .periodic_sink(std::io::sink())
        .final_report(false)
        .start()
        .expect("start the agent");
    let symbols: Vec<&'static Id> = (0..SYMBOLS)
        .map(|i| Id::intern(&format!("sym_{i:05}")).expect("below the intern limit"))
        .collect();
    std::thread::Builder::new()
        .name("engine".into())
        .spawn(move || {
            for round in 0..PER_SYMBOL {
                for (i, id) in symbols.iter().enumerate() {
                    latte::record(id, 100 + (round + i as u64) % 50);
                }
            }
        })
        .unwrap()
        .join()
        .unwrap();
    guard.stop().expect("stop the agent");

    let report = Report::collect(&ReportOptions::default());
    let engine = report
        .threads
        .iter()
        .find(|t| t.name == "engine")
        .expect("the engine's section");
    assert_eq!(
        engine.anomalies.over_cap, 0,
        "nothing refused by the memory cap"
    );
    let mut rows: Vec<&latte::report::Row> = engine.rows.iter().collect();
    rows.sort_by(|a, b| a.component.cmp(&b.component));
    assert_eq!(rows.len(), SYMBOLS, "one row per symbol");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.component, format!("sym_{i:05}"));
        let s = &row.stats;
        assert_eq!(
            (s.seen, s.lost, s.samples),
            (PER_SYMBOL, 0, PER_SYMBOL),
            "{}",
            row.component
        );
    }
    let f = report.footprint.expect("a live report has the footprint");
    assert_eq!(f.rings_kept_small, 0, "no ring was kept small by the cap");
}
