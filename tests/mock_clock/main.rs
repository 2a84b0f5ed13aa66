//! Own binary: the mock counter replaces the process's clock for good, so every test
//! here runs on it, one at a time (`mock`): exact deltas, wraps, backwards steps and
//! jumps, cores whose counters disagree, cleaning on a counter that moves in steps,
//! the call tree, its accounts and frames.

#[path = "../common/mod.rs"]
mod common;

mod account;
mod cleaning_steps;
mod cross_core;
mod deltas;
mod demo;
mod flight;
mod frames;
mod switch;
mod tree;

/// The mock counter is process-wide: tests take turns. Installs it on first use
/// (nothing may read the clock before).
fn mock() -> std::sync::MutexGuard<'static, ()> {
    static CLOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = CLOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert!(
        latte::test_hooks::install_mock_clock(),
        "nothing read the clock before the mock"
    );
    // Calibration (once per process) measures the counter standing still, before any
    // test moves it: an agent's start-up calibration, run in the background, could
    // otherwise read a frequency from a test's jumps (flight.rs once saw one).
    latte::analyze::calibration();
    guard
}

/// A report in raw ticks: every figure is the counter's, nothing subtracted.
fn raw_report() -> latte::Report {
    let options = latte::ReportOptions {
        unit: latte::Unit::Cycles,
        data: latte::Data::Raw,
        ..latte::ReportOptions::default()
    };
    latte::Report::collect(&options)
}

/// Sets the mock counter to `ticks`.
fn at(ticks: u64) {
    latte::test_hooks::set_mock_ticks(ticks);
}

/// A Fast scope of `id` from `from` to `to` ticks, with `inside` run within it.
fn scope(id: &latte::Id, from: u64, to: u64, inside: impl FnOnce()) {
    at(from);
    latte::start(id, latte::Mode::Fast);
    inside();
    at(to);
    latte::stop(id, latte::Mode::Fast);
}
