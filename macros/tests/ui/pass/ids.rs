//! The advice of the id errors (`tests/ui/fail/*_id.rs`, `timed_runtime_name.rs`,
//! `unknown_mode.rs`), taken: every id form the macros and `#[timed]` accept, compiled
//! with warnings and a few allow-by-default lints denied, then run.
#![deny(warnings, missing_docs, unused_qualifications, unreachable_pub, unused_results)]

use latte::{latte_pulse, latte_scope, latte_start, latte_stop};

/// A constant id.
const PARSE: &str = "ids/parse";
/// A static id.
static HANDLE: &str = "ids/handle";

mod names {
    /// An id in another module.
    pub(crate) const POLL: &str = "ids/poll";

    /// A `const fn` that picks an id.
    pub(crate) const fn pick(verbose: bool) -> &'static str {
        if verbose { "ids/verbose" } else { "ids/quiet" }
    }
}

/// `name` as a constant, a path and a macro.
#[latte::timed(name = PARSE)]
fn parse_const() {}

#[latte::timed(name = names::POLL, mode = Mid)]
fn poll_path() {}

#[latte::timed(name = concat!("ids/", "timed"))]
fn timed_concat() {}

/// The parameter-as-name error's advice: a constant instead of the parameter.
#[latte::timed(name = HANDLE)]
fn handle(component: &str) -> usize {
    component.len()
}

fn main() {
    // rustc's help for `let local = ...; latte_start!(local)`, taken as written.
    #[allow(non_upper_case_globals)]
    const local: &str = "ids/local";
    latte_start!(local);
    latte_stop!(local);

    latte_start!(PARSE, Mid); // `mid` was misspelt; the suggestion is `Mid`
    latte_stop!(PARSE, Mid);
    let scope = latte_scope!(HANDLE, Fast, Hard);
    drop(scope);
    latte_pulse!(names::POLL);
    latte_pulse!(names::POLL);
    let scope = latte_scope!(names::pick(true), Hard);
    drop(scope);
    latte_start!(concat!("ids/", "concat"));
    latte_stop!(concat!("ids/", "concat"));

    parse_const();
    poll_path();
    timed_concat();
    let _ = handle("x");

    for (id, samples) in [
        ("ids/local", 1),
        ("ids/parse", 2),
        ("ids/handle", 2),
        ("ids/poll", 2),
        ("ids/verbose", 1),
        ("ids/concat", 1),
        ("ids/timed", 1),
    ] {
        assert_eq!(latte::snapshot(id).len(), samples, "{id}");
    }
}
