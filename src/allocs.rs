//! Allocation counts as reports hold them: [`Allocs`] for one place, [`ScopeAllocs`]
//! for a scope over its calls. Counted by `record/alloc.rs`'s allocator; a leaf, so the
//! report model holds them without reaching into the recorder. Public as
//! [`latte::alloc`](crate::alloc).

/// Allocations and frees counted in one place (a call-tree node, a thread's *in no
/// scope* bucket, the process bucket), as a report or a capture reads them.
///
/// ```
/// use latte::alloc::Allocs;
/// let a = Allocs::new(3, 300, 1, 100);
/// assert_eq!((a.count(), a.bytes(), a.frees(), a.freed()), (3, 300, 1, 100));
/// assert_eq!(a.plus(&a).since(&a), a);
/// assert_eq!(a.per_call(2), (1.5, 150.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "agent", derive(serde::Serialize, serde::Deserialize))]
pub struct Allocs {
    count: u64,
    bytes: u64,
    frees: u64,
    freed: u64,
}

impl Allocs {
    /// `count` allocations of `bytes` in all, `frees` frees of `freed` bytes.
    pub const fn new(count: u64, bytes: u64, frees: u64, freed: u64) -> Allocs {
        Allocs {
            count,
            bytes,
            frees,
            freed,
        }
    }

    /// Allocations (a reallocation is one, and one free).
    pub const fn count(&self) -> u64 {
        self.count
    }

    /// Bytes allocated, summed.
    pub const fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Frees (deallocations, and the old block of each reallocation).
    pub const fn frees(&self) -> u64 {
        self.frees
    }

    /// Bytes freed, summed.
    pub const fn freed(&self) -> u64 {
        self.freed
    }

    /// Both counted.
    #[must_use]
    pub const fn plus(&self, other: &Allocs) -> Allocs {
        Allocs {
            count: self.count.wrapping_add(other.count),
            bytes: self.bytes.wrapping_add(other.bytes),
            frees: self.frees.wrapping_add(other.frees),
            freed: self.freed.wrapping_add(other.freed),
        }
    }

    /// What was counted after `before` (counts only grow; a count lower than
    /// `before`'s, from another run, gives 0).
    #[must_use]
    pub const fn since(&self, before: &Allocs) -> Allocs {
        Allocs {
            count: self.count.saturating_sub(before.count),
            bytes: self.bytes.saturating_sub(before.bytes),
            frees: self.frees.saturating_sub(before.frees),
            freed: self.freed.saturating_sub(before.freed),
        }
    }

    /// Allocations and bytes per call, over `calls` calls (0 for none).
    pub fn per_call(&self, calls: u64) -> (f64, f64) {
        if calls == 0 {
            return (0.0, 0.0);
        }
        let calls = calls as f64;
        (self.count as f64 / calls, self.bytes as f64 / calls)
    }

    /// Nothing counted.
    pub const fn is_empty(&self) -> bool {
        self.count == 0 && self.frees == 0
    }
}

/// A scope's allocations in a report: over its calls, what it allocated itself (while
/// it was the innermost open scope) and in all (itself and every scope inside it).
///
/// ```
/// use latte::alloc::{Allocs, ScopeAllocs};
/// let parse = ScopeAllocs::new(4, Allocs::new(8, 800, 8, 800), Allocs::new(12, 1_000, 12, 1_000));
/// assert_eq!(parse.per_call(), (3.0, 250.0));
/// assert_eq!(parse.own().per_call(parse.calls()), (2.0, 200.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "agent", derive(serde::Serialize, serde::Deserialize))]
pub struct ScopeAllocs {
    calls: u64,
    own: Allocs,
    inclusive: Allocs,
}

impl ScopeAllocs {
    /// Over `calls` calls: `own` allocated by the scope itself, `inclusive` in all.
    pub const fn new(calls: u64, own: Allocs, inclusive: Allocs) -> ScopeAllocs {
        ScopeAllocs {
            calls,
            own,
            inclusive,
        }
    }

    /// The calls counted: every call recorded, lost samples' included.
    pub const fn calls(&self) -> u64 {
        self.calls
    }

    /// What the scope allocated while it was the innermost open scope (self).
    pub const fn own(&self) -> Allocs {
        self.own
    }

    /// What the scope and every scope inside it allocated (inclusive).
    pub const fn inclusive(&self) -> Allocs {
        self.inclusive
    }

    /// Allocations and bytes per call, inclusive: what one call costs in allocations.
    pub fn per_call(&self) -> (f64, f64) {
        self.inclusive.per_call(self.calls)
    }

    /// Both counted (the same scope on two threads, or two windows).
    #[must_use]
    pub const fn plus(&self, other: &ScopeAllocs) -> ScopeAllocs {
        ScopeAllocs {
            calls: self.calls + other.calls,
            own: self.own.plus(&other.own),
            inclusive: self.inclusive.plus(&other.inclusive),
        }
    }

    /// What was counted after `before`.
    #[must_use]
    pub const fn since(&self, before: &ScopeAllocs) -> ScopeAllocs {
        ScopeAllocs {
            calls: self.calls.saturating_sub(before.calls),
            own: self.own.since(&before.own),
            inclusive: self.inclusive.since(&before.inclusive),
        }
    }
}
