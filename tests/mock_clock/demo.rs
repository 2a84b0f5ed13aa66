//! The demo's report on a fixed counter: a workload shaped like `examples/trading_loop`
//! (a frame per tick, nested scopes in two modes, pulses, a second thread, a build
//! scope), every read at a tick the test chooses, calibrated with known costs. Its JSON
//! is `tests/data/demo-mock-report.json` (checked here: the report model's output stays
//! what it was) and its table at 100 columns a snapshot; the Prometheus crate's tests
//! snapshot the `/metrics` text of that same JSON. Together they hold the demo's
//! outputs byte for byte while the code beneath them changes.
//!
//! `LATTE_BLESS=1 cargo test --all-features --test mock_clock demo` writes the JSON
//! again (review its diff); `INSTA_UPDATE=always` the table's snapshot.

use crate::account::{OUTSIDE, WINDOW};
use crate::common::on_named_thread;
use crate::{at, mock};
use latte::analyze::Calibration;
use latte::report::TableOptions;
use latte::{Capture, Format, Id, Mode, Report, ReportOptions};

/// Known costs (`account.rs`'s), and a pulse's: a tick is a nanosecond, an empty scope
/// is `WINDOW`.
fn known_costs() -> Calibration {
    Calibration {
        pulse: WINDOW / 2,
        ..crate::account::known_costs()
    }
}

/// A small deterministic generator of work lengths (an LCG), so the distributions have
/// spread, a skew and a tail without any randomness.
struct Lengths(u64);

impl Lengths {
    fn next(&mut self, base: u64, spread: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = self.0 >> 33;
        // One in 50 is slow: the tail.
        let tail = if r.is_multiple_of(50) { 20 * spread } else { 0 };
        base + r % spread + tail
    }
}

/// The clock as the workload moves it.
struct Clock(u64);

impl Clock {
    /// A thread's clock, set to `start` before its first read.
    fn at(start: u64) -> Clock {
        at(start);
        Clock(start)
    }

    /// Spends `ticks`, then sets the counter there.
    fn spend(&mut self, ticks: u64) {
        self.0 += ticks;
        at(self.0);
    }

    fn scope(&mut self, id: &Id, mode: Mode, inside: impl FnOnce(&mut Clock)) {
        self.spend(OUTSIDE / 2);
        latte::start(id, mode);
        inside(self);
        self.spend(WINDOW);
        latte::stop(id, mode);
        self.spend(OUTSIDE / 2);
    }
}

static TICK: Id = Id::new("Sim_Tick_Total");
static ORDER_FLOW: Id = Id::new("Sim_OrderFlow");
static ASK: Id = Id::new("Sim_AskLoop");
static BID: Id = Id::new("Sim_BidLoop");
static RISK: Id = Id::new("Sim_RiskPnL");
static TICK_GAP: Id = Id::new("Sim_Tick_Gap");
static QUOTE_GAP: Id = Id::new("MD_Quote_Gap");
static BUILD: Id = Id::new("DP_Build_Total");
static STATE: Id = Id::new("DP_StateLoop");

/// The simulation thread: 200 ticks, each a frame.
fn simulation(start: u64) {
    let (mut clock, mut len) = (Clock::at(start), Lengths(7));
    for _ in 0..200 {
        latte::latte_frame!();
        latte::pulse(&TICK_GAP);
        clock.scope(&TICK, Mode::Fast, |c| {
            c.spend(len.next(40, 30));
            c.scope(&ORDER_FLOW, Mode::Fast, |c| c.spend(len.next(300, 200)));
            for _ in 0..3 {
                c.scope(&ASK, Mode::Mid, |c| c.spend(len.next(80, 40)));
                c.scope(&BID, Mode::Mid, |c| c.spend(len.next(90, 40)));
            }
            c.scope(&RISK, Mode::Fast, |c| c.spend(len.next(500, 400)));
        });
        clock.spend(len.next(1_000, 300));
    }
}

/// The market-data thread: quotes as pulses.
fn market_data(start: u64) {
    let (mut clock, mut len) = (Clock::at(start), Lengths(11));
    for _ in 0..300 {
        clock.spend(len.next(700, 500));
        latte::pulse(&QUOTE_GAP);
    }
}

/// The build: one scope around 1,000 steps.
fn build(start: u64) {
    let (mut clock, mut len) = (Clock::at(start), Lengths(13));
    clock.scope(&BUILD, Mode::Fast, |c| {
        for _ in 0..1_000 {
            c.scope(&STATE, Mode::Fast, |c| c.spend(len.next(40, 20)));
        }
    });
}

/// The demo-shaped report: each thread run alone on the counter, calibrated with
/// [`known_costs`], in the report's default unit and data; the machine's description
/// left out (it is this machine's, not the workload's), the threads numbered 1 to 3.
fn demo_report() -> Report {
    let _clock = mock();
    let threads = vec![
        on_named_thread("demo-sim", || simulation(1_000_000)),
        on_named_thread("demo-md", || market_data(5_000_000)),
        on_named_thread("demo-build", || build(9_000_000)),
    ];
    let capture = Capture {
        process_allocs: None,
        threads,
        teardown_drops: 0,
    };
    let mut report = Report::from_capture(&capture, &known_costs(), &ReportOptions::default());
    report.environment = None;
    // Serials count the threads the binary's tests made before: numbered here.
    for (k, thread) in report.threads.iter_mut().enumerate() {
        thread.serial = k as u64 + 1;
    }
    report
}

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/demo-mock-report.json"
);

#[test]
fn the_demo_report_on_a_fixed_counter_is_the_checked_in_one() {
    let report = demo_report();
    let json = serde_json::to_string_pretty(&report).unwrap() + "\n";
    if std::env::var_os("LATTE_BLESS").is_some() {
        std::fs::write(FIXTURE, &json).unwrap();
    }
    let kept = std::fs::read_to_string(FIXTURE).unwrap();
    assert!(
        json == kept,
        "the demo's report differs from {FIXTURE}; LATTE_BLESS=1 writes it again"
    );
    let options = TableOptions {
        width: Some(100),
        ..TableOptions::default()
    };
    let mut table = Vec::new();
    report.write(&mut table, Format::Table(options)).unwrap();
    insta::assert_snapshot!(String::from_utf8(table).unwrap());
}
