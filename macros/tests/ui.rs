//! Compile-time behaviour of latte's macros (`#[latte::timed]` and the `latte_*!` id
//! macros): the forms they accept (compiled with warnings denied, then run) and the
//! errors they give, checked against the `.stderr` files next to each case.
//! Regenerate those with `TRYBUILD=overwrite` and review.
//!
//! A test of the macros crate: trybuild builds the cases against the library with its
//! default features, as a user's crate would, instead of every feature and
//! dev-dependency of the library's own tests.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}

/// No error a user can meet names latte's internals: the hidden module the macros
/// expand to, the items of an expansion, or a file of latte's own `src/` (a note
/// pointing into the macro's definition). Every case's expected output is read, so a
/// case added later is held to this too.
#[test]
fn no_error_names_latte_internals() {
    let mut read = 0;
    for entry in std::fs::read_dir("tests/ui/fail").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "stderr") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for internal in ["__private", "__LATTE", "__Latte", "__latte", "--> src/"] {
            assert!(
                !text.contains(internal),
                "{} names `{internal}`:\n{text}",
                path.display()
            );
        }
        read += 1;
    }
    assert!(read >= 14, "only {read} .stderr files");
}
