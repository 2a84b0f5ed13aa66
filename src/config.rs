//! Recorder settings read on the cold path: ring capacity and stack depth.
//!
//! Both are read when a ring or a thread's stack is first created, so a change
//! applies to rings and threads that start recording afterwards. Set them before the
//! instrumented code runs (the agent's builder does this for you).

use crate::Error;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Samples kept per (thread, id) unless configured: 2^16, as in the C++ original.
pub const DEFAULT_RING_CAPACITY: usize = 1 << 16;
/// Smallest accepted ring capacity.
pub const MIN_RING_CAPACITY: usize = 2;
/// Largest accepted ring capacity (2^28 samples, 2 GiB of address space per ring).
pub const MAX_RING_CAPACITY: usize = 1 << 28;
/// Open scopes per thread unless configured: 64, as in the C++ original.
pub const DEFAULT_STACK_DEPTH: usize = 64;
/// Largest accepted stack depth.
pub const MAX_STACK_DEPTH: usize = 4096;

static RING_CAPACITY: AtomicUsize = AtomicUsize::new(DEFAULT_RING_CAPACITY);
static STACK_DEPTH: AtomicUsize = AtomicUsize::new(DEFAULT_STACK_DEPTH);

/// Sets how many samples each (thread, id) ring keeps; older samples are overwritten.
///
/// Must be a power of two in `MIN_RING_CAPACITY..=MAX_RING_CAPACITY`. Applies to rings
/// created after the call. Memory is reserved lazily: the OS backs a ring's pages only
/// as samples reach them.
///
/// ```
/// latte::set_ring_capacity(1 << 12)?;
/// assert_eq!(latte::ring_capacity(), 4096);
/// assert!(latte::set_ring_capacity(3000).is_err());
/// assert_eq!(latte::ring_capacity(), 4096); // a refused value changes nothing
/// # Ok::<(), latte::Error>(())
/// ```
pub fn set_ring_capacity(samples: usize) -> Result<(), Error> {
    check_ring_capacity(samples)?;
    RING_CAPACITY.store(samples, Relaxed);
    Ok(())
}

pub(crate) fn check_ring_capacity(samples: usize) -> Result<(), Error> {
    if !samples.is_power_of_two() || !(MIN_RING_CAPACITY..=MAX_RING_CAPACITY).contains(&samples) {
        return Err(Error::RingCapacity { requested: samples });
    }
    Ok(())
}

pub(crate) fn check_stack_depth(depth: usize) -> Result<(), Error> {
    if !(1..=MAX_STACK_DEPTH).contains(&depth) {
        return Err(Error::StackDepth { requested: depth });
    }
    Ok(())
}

/// The capacity new rings get.
pub fn ring_capacity() -> usize {
    RING_CAPACITY.load(Relaxed)
}

/// Sets how many scopes may be open at once on a thread (default 64).
///
/// A Start beyond the limit is ignored and counted; its Stop is absorbed, so the
/// scopes below still pair. Applies to threads that start recording after the call.
///
/// ```
/// latte::set_stack_depth(128)?;
/// assert_eq!(latte::stack_depth(), 128);
/// assert!(latte::set_stack_depth(0).is_err());
/// # Ok::<(), latte::Error>(())
/// ```
pub fn set_stack_depth(depth: usize) -> Result<(), Error> {
    check_stack_depth(depth)?;
    STACK_DEPTH.store(depth, Relaxed);
    Ok(())
}

/// The stack depth new threads get.
pub fn stack_depth() -> usize {
    STACK_DEPTH.load(Relaxed)
}
