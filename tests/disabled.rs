//! Own binary: it runs in a build without the `record` feature, which no other test can.
//!
//! Built without the `record` feature, every recording entry point compiles to
//! nothing: `cargo test --no-default-features --test disabled` (the lean build: no
//! report either), and with `--features agent` (an application's agent over libraries
//! built without recording: its reports say nothing was recorded).
#![cfg(not(feature = "record"))]

use latte::{Id, Mode};

/// Without `record` the counting allocator passes every call through and counts
/// nothing (`nothing_is_recorded_without_the_record_feature` runs under it).
#[global_allocator]
static ALLOCATOR: latte::alloc::Counting<std::alloc::System> =
    latte::alloc::Counting::new(std::alloc::System);

#[test]
fn nothing_is_recorded_without_the_record_feature() {
    static ID: Id = Id::new("disabled");
    latte::latte_start!("disabled");
    latte::latte_stop!("disabled", Hard);
    latte::latte_pulse!("disabled");
    latte::latte_pulse!("disabled");
    {
        let _scope = latte::latte_scope!("disabled", Mid);
        let _timer = latte::Timer::start(&ID, Mode::Fast, Mode::Fast);
    }
    latte::record(&ID, 5);
    latte::collect::prepare(&[&ID]);
    {
        let _scope = latte::latte_scope!("disabled_alloc");
        std::hint::black_box(vec![0_u8; 64]);
    }
    assert!(latte::snapshot("disabled").is_empty());
    let capture = latte::capture();
    assert!(capture.threads.is_empty());
    assert_eq!(
        capture.process_allocs, None,
        "the allocator counted without `record`"
    );
    assert_eq!(latte::alloc::check_no_alloc(), Ok(()));
    // Reports still work, and say nothing was recorded.
    #[cfg(feature = "agent")]
    {
        let mut out = Vec::new();
        latte::Report::collect(&latte::ReportOptions::default())
            .write(&mut out, latte::Format::default())
            .unwrap();
        assert!(
            String::from_utf8(out)
                .unwrap()
                .contains("no samples were recorded")
        );
    }
}
