//! Every argument form, in any order, with a trailing comma or none; the expansion
//! contains no `unsafe`.
#![forbid(unsafe_code)]
#![deny(warnings)]

use latte::Mode;
use latte::collect::SampleKind;

#[latte::timed()]
fn empty_parens() {}

#[latte::timed(name = "custom")]
fn named() {}

#[latte::timed(mode = Mid)]
fn mid() {}

#[latte::timed(mode = Hard,)]
fn hard() {}

#[latte::timed(start = Mid)]
fn start_only() {}

#[latte::timed(stop = Hard)]
fn stop_only() {}

#[latte::timed(stop = Fast, name = r"raw literal", start = Hard)]
fn all_three() {}

#[latte::timed(name = "escaped\tname", mode = Fast)]
fn escaped() {}

fn kind(id: &str) -> SampleKind {
    latte::capture().component(id).expect(id).samples[0].kind()
}

fn main() {
    empty_parens();
    named();
    mid();
    hard();
    start_only();
    stop_only();
    all_three();
    escaped();

    use Mode::*;
    let scope = |start, stop| SampleKind::Scope { start, stop };
    assert_eq!(kind("empty_parens"), scope(Fast, Fast));
    assert_eq!(kind("custom"), scope(Fast, Fast));
    assert!(latte::snapshot("named").is_empty());
    assert_eq!(kind("mid"), scope(Mid, Mid));
    assert_eq!(kind("hard"), scope(Hard, Hard));
    assert_eq!(kind("start_only"), scope(Mid, Fast));
    assert_eq!(kind("stop_only"), scope(Fast, Hard));
    assert_eq!(kind("raw literal"), scope(Hard, Fast));
    assert_eq!(kind("escaped\tname"), scope(Fast, Fast));
}
