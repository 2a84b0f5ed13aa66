//! A global allocator for the benches that can count or not, switched at run time:
//! the system's, or `latte::alloc::Counting` around it. Both hand out the system's
//! memory, so a block allocated in one mode is freed in the other safely; only the
//! counting differs. Either mode pays the same relaxed load and branch to choose.
#![allow(unsafe_code)] // a global allocator

use latte::alloc::Counting;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The process's allocator in a bench that installs it.
pub struct Switch;

static COUNTING: AtomicBool = AtomicBool::new(false);
static COUNTER: Counting<System> = Counting::new(System);

/// Counts allocations from now on (`true`), or passes them to the system (`false`).
pub fn count(on: bool) {
    COUNTING.store(on, Relaxed);
}

/// Runs `f` on the allocator of the mode in force: the counting one or the system's.
macro_rules! current {
    ($f:ident($($arg:expr),*)) => {
        if COUNTING.load(Relaxed) {
            COUNTER.$f($($arg),*)
        } else {
            System.$f($($arg),*)
        }
    };
}

// SAFETY: every call goes to `System` (through `Counting`, which passes it on
// unchanged, or directly) with the caller's arguments, and its result is returned
// unchanged; both modes allocate from the same system allocator.
unsafe impl GlobalAlloc for Switch {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { current!(alloc(layout)) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        unsafe { current!(alloc_zeroed(layout)) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above; `ptr` came from `System` either way.
        unsafe { current!(dealloc(ptr, layout)) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        unsafe { current!(realloc(ptr, layout, new_size)) }
    }
}
