//! What the report says of the clock: the warning that Fast-mode samples of several
//! threads are pooled, and the step of the counter.

#[test]
fn the_report_warns_when_fast_mode_samples_are_pooled_across_threads() {
    let record = || {
        latte::latte_start!("env_pooled");
        latte::latte_stop!("env_pooled");
    };
    record();
    std::thread::spawn(record).join().unwrap();
    let report = latte::Report::collect(&latte::ReportOptions::default());
    let env = report.environment.expect("collect() fills the environment");
    assert!(
        env.warnings.iter().any(
            |w| w.contains("Fast-mode samples are compared across threads")
                && w.contains("env_pooled")
        ),
        "{:#?}",
        env.warnings
    );
    let cal = latte::analyze::calibration();
    assert_eq!(
        env.warnings.iter().any(|w| w.contains("advances in steps")),
        cal.resolution > 1
    );
    assert_eq!(env.clock, latte::clock::source().to_string());
}
