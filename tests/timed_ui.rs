//! Compile-time behaviour of `#[latte::timed]`: the forms it accepts (compiled with
//! warnings denied, then run) and the errors it gives, checked against the `.stderr`
//! files next to each case. Regenerate those with `TRYBUILD=overwrite` and review.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
