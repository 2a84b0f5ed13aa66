//! Recording while a thread is being torn down: counted, never a panic. The teardown
//! counter is process-wide: the test holds `common::exclusive()` while it reads it.

use crate::common;
use latte::Id;
use std::cell::Cell;

static LATE: Id = Id::new("teardown_late");
static FIRST: Id = Id::new("teardown_first");

/// A thread-local whose destructor records.
struct RecordsOnDrop(&'static Id);
impl Drop for RecordsOnDrop {
    fn drop(&mut self) {
        latte::record(self.0, 1);
        latte::latte_start!("teardown_scope");
        latte::latte_stop!("teardown_scope");
    }
}

thread_local! {
    static USER: Cell<Option<RecordsOnDrop>> = const { Cell::new(None) };
}

/// Case 1: the user's thread-local is registered before latte's recorder, so its
/// destructor runs after latte's is gone: with native thread-locals (Linux) a thread's
/// destructors run in the reverse order of their registration on that thread.
/// `x86_64-pc-windows-gnu` has no native thread-locals: its std keeps them in OS TLS
/// keys, one per `thread_local!` for the whole process, and at a thread's exit runs
/// the destructors newest key first. latte's key is made by the first record in the
/// binary, normally long before `USER`'s, so there `USER`'s destructor runs first and
/// its calls are recorded (`.ci/windows.sh` excludes this case).
#[test]
fn records_from_thread_local_destructors_never_panic_and_are_accounted_for() {
    let _one = common::exclusive();
    let before = latte::capture().teardown_drops;
    std::thread::Builder::new()
        .name("teardown_after".into())
        .spawn(|| {
            USER.set(Some(RecordsOnDrop(&LATE)));
            latte::record(&LATE, 5); // registers latte's recorder second
        })
        .unwrap()
        .join()
        .expect("no panic in teardown");

    let capture = latte::capture();
    let after = capture.thread("teardown_after").unwrap();
    assert_eq!(after.component("teardown_late").unwrap().seen, 1); // the record before exit
    // The 3 calls made after latte's recorder was destroyed (record, start, stop) are
    // dropped and counted.
    assert_eq!(capture.teardown_drops - before, 3);
}

/// Case 2: the thread's first record happens inside a destructor. latte's recorder is
/// created during teardown, records normally, and its own destructor still runs
/// afterwards: the thread ends up marked as exited.
#[test]
fn a_first_record_inside_a_thread_local_destructor_records_and_retires_the_thread() {
    let _one = common::exclusive();
    std::thread::Builder::new()
        .name("teardown_first".into())
        .spawn(|| USER.set(Some(RecordsOnDrop(&FIRST))))
        .unwrap()
        .join()
        .expect("no panic in teardown");

    let capture = latte::capture();
    let first = capture
        .thread("teardown_first")
        .expect("registered during teardown");
    assert!(first.exited);
    assert_eq!(first.component("teardown_first").unwrap().seen, 1);
    assert_eq!(first.component("teardown_scope").unwrap().seen, 1);
    assert_eq!(first.anomalies.total(), 0);
}
