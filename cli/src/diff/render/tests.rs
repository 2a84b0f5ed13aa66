//! The error-control line, confidences, reasons.

use super::*;

fn change(change: f64, low: f64, high: f64, note: Option<&str>) -> Change {
    Change {
        quantile: 0.99,
        base: 100.0,
        new: 100.0 * (1.0 + change),
        change,
        low,
        high,
        open: false,
        verdict: Verdict::Inconclusive,
        note: note.map(str::to_string),
    }
}

#[test]
fn a_confidence_shows_the_digits_that_tell_it_from_100() {
    assert_eq!(confidence(0.95), "95");
    assert_eq!(confidence(0.99), "99");
    assert_eq!(confidence(1.0 - 0.01 / 9.0), "99.89");
    assert_eq!(confidence(1.0 - 0.01 / 30.0), "99.967");
    assert_eq!(confidence(1.0 - 0.01 / 3000.0), "99.99967");
}

#[test]
fn the_error_control_names_the_method_the_count_and_the_rate() {
    assert_eq!(
        error_control(30, Some(0.01)),
        "Bonferroni over 30 intervals (each at 99.967%): at most a 1% chance of any \
         false alarm when nothing changed"
    );
    assert_eq!(
        error_control(1, Some(0.01)),
        "one interval, at 99%: at most a 1% chance of a false alarm when nothing changed"
    );
    assert_eq!(error_control(0, Some(0.01)), "no interval compared");
    assert!(
        error_control(12, None)
            .starts_with("none (several runs per side): 12 intervals at 95% each;"),
        "{}",
        error_control(12, None)
    );
}

#[test]
fn an_inconclusive_change_says_why() {
    let few = change(f64::NAN, f64::NAN, f64::NAN, Some("too few samples"));
    assert_eq!(verdict(&few, 0.05), "inconclusive: too few samples");
    assert_eq!(
        reason(&change(0.2, -0.1, 0.5, None), 0.05),
        "the interval holds 0"
    );
    assert_eq!(
        reason(&change(0.01, -0.02, 0.08, None), 0.05),
        "the interval reaches past ±5%"
    );
    assert_eq!(
        reason(&change(f64::NAN, f64::NAN, f64::NAN, None), 0.05),
        "no finite interval"
    );
    let regressed = Change {
        verdict: Verdict::Regressed,
        ..change(0.2, 0.1, 0.3, None)
    };
    assert_eq!(verdict(&regressed, 0.05), "regressed");
}

/// An interval prints in a fixed width whatever its ends: open as `[-100%, open]`, an
/// end past +500% as `> +500%` (the `+2.6e288` of a floored degree of freedom could
/// not show as a number), none as `-`; a change of any size in a few characters.
#[test]
fn an_interval_prints_in_a_fixed_width() {
    assert_eq!(interval(&change(0.1, -0.05, 0.3, None)), "[-5.0%, +30.0%]");
    assert_eq!(
        interval(&change(3.0, 0.2, 2.6e288, None)),
        "[+20.0%, > +500%]"
    );
    assert_eq!(
        interval(&change(9.0, 6.0, 20.0, None)),
        "[> +500%, > +500%]"
    );
    let open = Change {
        open: true,
        ..change(0.0, -1.0, f64::INFINITY, Some("open: ..."))
    };
    assert_eq!(interval(&open), "[-100%, open]");
    assert_eq!(interval(&change(f64::NAN, f64::NAN, f64::NAN, None)), "-");
    assert_eq!(signed(62_671.493_5), "+6.3e6%");
    assert_eq!(signed(27.74), "+2774%");
    assert!(signed(2.6e288).len() <= 10, "{}", signed(2.6e288));
}

/// A row whose every quantile is below resolution is that, not `no change`, in the
/// markdown; one that decides anywhere takes that verdict.
#[test]
fn a_row_below_resolution_everywhere_is_not_no_change() {
    use super::super::markdown::row_verdict;
    let with = |v: Verdict| Change {
        verdict: v,
        ..change(0.0, -0.01, 0.01, None)
    };
    let below = with(Verdict::BelowResolution);
    assert_eq!(
        row_verdict(&[below.clone(), below.clone()]),
        Verdict::BelowResolution
    );
    assert_eq!(
        row_verdict(&[below.clone(), with(Verdict::NoChange)]),
        Verdict::NoChange
    );
    assert_eq!(
        row_verdict(&[below, with(Verdict::Regressed)]),
        Verdict::Regressed
    );
}
