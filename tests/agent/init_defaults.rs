//! `latte::init()`'s defaults as a new user meets them: the
//! final report is in time units on calibrated data, and a guard dropped at once
//! (`let _ = latte::init()`) says so on stderr.
//!
//! Each case runs in a child process (this test binary, re-run on one ignored test),
//! since `init` writes to stdout and the hint to stderr, and "nothing was recorded"
//! is a property of the whole process.

use crate::common;

/// The child's side: what `LATTE_INIT_CASE` asks for. Ignored, so it runs only when
/// the parent asks for it by name.
#[test]
#[ignore = "run by the other tests, in a child process"]
fn child() {
    match std::env::var("LATTE_INIT_CASE").as_deref() {
        Ok("dropped") => {
            let _ = latte::init().unwrap(); // the guard drops here, at once
        }
        Ok("kept") => {
            let _latte = latte::init().unwrap();
            for _ in 0..1_000 {
                let _scope = latte::latte_scope!("init_kept");
                std::hint::black_box(0);
            }
        }
        other => panic!("unknown case {other:?}"),
    }
}

/// Runs the child case `case`; its stdout and stderr.
fn run(case: &str) -> (String, String) {
    let out = common::this_test_binary()
        .args(["--ignored", "--exact", "--nocapture", "--test-threads=1"])
        .arg(common::test_name(module_path!(), "child"))
        .env("LATTE_INIT_CASE", case)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{case}: {stdout}\n{stderr}");
    (stdout, stderr)
}

#[test]
fn init_reports_time_on_calibrated_data() {
    let (stdout, stderr) = run("kept");
    assert!(stdout.contains("LATTE TELEMETRY [TIME][CAL]"), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("init_kept")),
        "no row: {stdout}"
    );
    // Each time cell states its unit (which one depends on the machine).
    let row = stdout
        .lines()
        .find(|l| l.starts_with("init_kept"))
        .unwrap_or_else(|| panic!("no row: {stdout}"));
    assert!(
        [" ps", " ns", " us", " ms"].iter().any(|u| row.contains(u)),
        "{row}"
    );
    assert!(!stderr.contains("before anything was recorded"), "{stderr}");
}

#[test]
fn a_guard_dropped_at_once_prints_a_hint() {
    let (_, stderr) = run("dropped");
    let hints: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("latte: the agent stopped before anything was recorded"))
        .collect();
    assert_eq!(hints.len(), 1, "{stderr}");
    assert!(
        hints[0].contains("let _latte = latte::init()"),
        "{}",
        hints[0]
    );
}

#[test]
fn report_options_default_is_what_init_reports() {
    // The agent's default options are `ReportOptions::default()`: the same report a
    // user gets from `Report::collect(&ReportOptions::default())`.
    let _one = common::exclusive();
    let sink = common::SharedSink::default();
    let guard = latte::builder()
        .format(latte::Format::Json)
        .sink(sink.clone())
        .start()
        .unwrap();
    latte::latte_pulse!("init_defaults_options");
    latte::latte_pulse!("init_defaults_options");
    guard.stop().unwrap();
    let report = sink.json_reports().pop().expect("the final report");
    let options = latte::ReportOptions::default();
    assert_eq!(
        (
            report["unit"].as_str(),
            report["data"].as_str(),
            report["figures"].as_str()
        ),
        (Some("Time"), Some("Calibrated"), Some("All"))
    );
    assert_eq!(
        (options.unit, options.data, options.figures),
        (
            latte::Unit::Time,
            latte::Data::Calibrated,
            latte::report::Figures::All
        )
    );
    assert_eq!(options.cleaning, latte::Cleaning::default());
    // The C++ original's view is one constructor away.
    let seed = latte::ReportOptions::seed();
    assert_eq!(
        (seed.unit, seed.data, seed.figures),
        (
            latte::Unit::Cycles,
            latte::Data::Raw,
            latte::report::Figures::Cleaned
        )
    );
}
