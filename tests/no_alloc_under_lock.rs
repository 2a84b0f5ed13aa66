//! Own binary: its counting global allocator serves every allocation of the process.
//!
//! latte never allocates or frees memory while holding a registry lock (so a thread
//! that stalls in the allocator can never stall a reader, and fork/allocator locks
//! cannot nest inside latte's). A global allocator counts every allocation, free and
//! reallocation made while the calling thread holds one, across a workload that
//! registers, records, retires, compacts, folds, recycles and reports. Debug builds
//! only: the lock marker is compiled out of release builds.
#![allow(unsafe_code)] // a global allocator
#![cfg(debug_assertions)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

static VIOLATIONS: AtomicUsize = AtomicUsize::new(0);
static CHECKED: AtomicUsize = AtomicUsize::new(0);

struct Checking;

impl Checking {
    fn check(&self) {
        CHECKED.fetch_add(1, Ordering::Relaxed);
        if latte::test_hooks::registry_lock_held() {
            VIOLATIONS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

// SAFETY: every method forwards to the system allocator with the caller's arguments
// unchanged; the check only reads a thread-local counter and bumps atomics.
unsafe impl GlobalAlloc for Checking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.check();
        // SAFETY: forwarded as is; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.check();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.check();
        // SAFETY: as above; `ptr` came from this allocator, i.e. from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.check();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Checking = Checking;

#[test]
fn no_allocation_or_free_under_a_registry_lock() {
    let guard = latte::builder()
        .max_exited_threads(4)
        .ring_capacity(64)
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    // Open on this thread through every report: each reads it (`open now`).
    latte::latte_start!("noalloc_open");
    for wave in 0..5 {
        let threads: Vec<_> = (0..10)
            .map(|k| {
                std::thread::Builder::new()
                    .name(format!("noalloc-{wave}-{k}"))
                    .spawn(move || {
                        for v in 0..100 {
                            latte::record(&latte::Id::new("noalloc"), v);
                            latte::latte_start!("noalloc_scope");
                            latte::latte_stop!("noalloc_scope");
                            // Counted per id: a cancel, an empty Stop.
                            static CANCELLED: latte::Id = latte::Id::new("noalloc_cancel");
                            let mut timer = latte::Timer::start(
                                &CANCELLED,
                                latte::Mode::Fast,
                                latte::Mode::Fast,
                            );
                            timer.cancel();
                            latte::latte_stop!("noalloc_empty");
                        }
                    })
                    .unwrap()
            })
            .collect();
        let _ = latte::capture(); // reads while threads record, compacts exited ones
        threads.into_iter().for_each(|t| t.join().unwrap());
        guard.report().unwrap(); // compacts, folds beyond 4, recycles rings, reports
        let _ = latte::snapshot("noalloc");
        let _ = latte::collect::footprint();
    }
    let report = latte::Report::collect(&latte::ReportOptions::default());
    let me = std::thread::current().name().unwrap().to_owned();
    let mine = report.threads.iter().find(|t| t.name == me && !t.exited);
    assert_eq!(mine.unwrap().open[0].component, "noalloc_open");
    latte::latte_stop!("noalloc_open");
    let f = latte::collect::footprint();
    assert!(f.merged_threads > 0, "the workload merged threads: {f:?}");
    guard.stop().unwrap();
    assert!(
        CHECKED.load(Ordering::Relaxed) > 1000,
        "the allocator hook ran"
    );
    assert_eq!(
        VIOLATIONS.load(Ordering::Relaxed),
        0,
        "allocations or frees under a registry lock"
    );
}
