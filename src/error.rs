//! The crate's one error type.

use core::fmt;

/// Everything latte can refuse. Configuration errors are returned, never panicked.
///
/// ```
/// let err = latte::set_ring_capacity(1000).unwrap_err();
/// assert_eq!(err, latte::Error::RingCapacity { requested: 1000 });
/// assert!(err.to_string().contains("power of two"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A ring capacity that is not a power of two within
    /// [`MIN_RING_CAPACITY`](crate::MIN_RING_CAPACITY)..=[`MAX_RING_CAPACITY`](crate::MAX_RING_CAPACITY).
    RingCapacity {
        /// The value that was asked for.
        requested: usize,
    },
    /// A stack depth outside 1..=[`MAX_STACK_DEPTH`](crate::MAX_STACK_DEPTH).
    StackDepth {
        /// The value that was asked for.
        requested: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::RingCapacity { requested } => write!(
                f,
                "ring capacity {requested} is invalid: it must be a power of two between {} and {} samples \
                 (the ring wraps with a bit mask)",
                crate::MIN_RING_CAPACITY,
                crate::MAX_RING_CAPACITY
            ),
            Error::StackDepth { requested } => write!(
                f,
                "stack depth {requested} is invalid: it must be between 1 and {}",
                crate::MAX_STACK_DEPTH
            ),
        }
    }
}

impl std::error::Error for Error {}
