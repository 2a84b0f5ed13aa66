//! The stack of open scopes: its layout, which the hot path in `local.rs` reads, and
//! every cold path that changes it out of the ordinary (a full stack, a missed Stop, a
//! Stop out of LIFO order, scopes still open at thread exit).
//!
//! # Positions, slots and the floor
//!
//! The thread's `depth` counts open scopes; the scope opened at depth `p` sits at
//! *position* `p`, in slot `p % len` of a stack of `len` slots. The hot path only ever
//! sees positions below `len`, where position and slot are the same: Start writes
//! slot `depth` if `depth < len`, Stop pops slot `depth - 1` if it is below `len` and
//! holds the Stop's id. Everything else comes here.
//!
//! A Start at a position `p >= len` (a full stack) takes over slot `p % len`: the
//! scope at position `p - len` is *abandoned*, counted under its own id, and the
//! `floor` (lowest position whose scope is still held) moves above it. So the newest
//! scopes keep recording however many Stops were missed below them. The valid scopes
//! are always positions `floor .. depth`, at most `len` of them.
//!
//! A Stop that reaches a position below the floor is the Stop of an abandoned scope: it
//! is absorbed (depth, and the floor with it, go down one) and counts nothing more.
//! For the hot path to send such a Stop here, the slot it reads must not hold a
//! matching id: every cold path that removes a scope writes [`TOMBSTONE`] into its
//! slot, and a slot of a position below `len` and below the floor was last written by
//! a position `>= len`, whose removal was a cold path.

use super::local::{Local, push_scope};
use super::word::{Word, signal_fence};
use crate::clock::{Mode, Stamp};
use crate::config;
use crate::diagnostics::UnpairedKind;
use std::sync::atomic::Ordering::Relaxed;

/// Open scopes, structure-of-arrays: a view of the thread's stack words, the tags
/// first, then the start ticks, then (one longer, see below) each scope's call-tree
/// node and the ticks of the scopes closed inside it.
///
/// The scope in slot `s` has its node in `nodes[s + 1]` and its children's ticks in
/// `kids[s + 1]`: `nodes[0]` is the root (0, no node) and `kids[0]` a sink for the
/// ticks of outermost scopes, so the hot path finds a scope's parent at `s` without a
/// branch for depth 0. A node word is the address of the node's ring (see
/// `record/node.rs`), 0 when the memory cap refused it one.
///
/// One boxed slice rather than `arrayvec`: the depth is chosen at run time
/// ([`Builder::stack_depth`](crate::Builder::stack_depth)), and the scopes are
/// [`Word`]s written in place, never pushed or popped as a collection.
#[derive(Clone, Copy)]
pub(super) struct Stack<'a> {
    pub(super) tags: &'a [Word],
    pub(super) ticks: &'a [Word],
    pub(super) nodes: &'a [Word],
    pub(super) kids: &'a [Word],
}

/// The tag of a slot whose scope was removed on a cold path. Id index 0 is never
/// handed out, so it never matches a Stop: the hot path sends that Stop here.
const TOMBSTONE: u64 = 0;

/// The node word of a scope whose Start was counted as re-entrant: its Stop records
/// nothing (0 is a node the memory cap refused; ring addresses are larger).
pub(super) const UNRECORDED: u64 = 1;

/// One open scope, as the stack holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct StackScope {
    /// Id index, CPU and start mode (see `sample.rs`).
    pub(super) tag: u64,
    /// The counter at its Start.
    pub(super) ticks: u64,
    /// Its call-tree node (a ring's address; 0: none).
    pub(super) node: u64,
    /// Ticks of the scopes closed inside it so far.
    pub(super) kids: u64,
}

/// The words of a stack of `len` slots: every tag the tombstone, every other word 0.
pub(super) fn words(len: usize) -> Box<[Word]> {
    const { assert!(TOMBSTONE == 0) };
    (0..word_count(len)).map(|_| Word::new(0)).collect()
}

/// Words of a stack of `len` slots.
pub(super) const fn word_count(len: usize) -> usize {
    4 * len + 2
}

/// The slot of `nodes` and `kids` that holds position `p`'s scope.
fn slot_of(p: usize, len: usize) -> usize {
    p % len + 1
}

/// The slot of `nodes` and `kids` that holds the scope below position `p`: its parent
/// (0, the root, below position 0).
fn parent_slot(p: usize, len: usize) -> usize {
    p.checked_sub(1).map_or(0, |q| slot_of(q, len))
}

impl<'a> Stack<'a> {
    /// The stack over `words` (see [`words`]).
    #[inline(always)]
    pub(super) fn over(words: &'a [Word]) -> Stack<'a> {
        let len = (words.len() - 2) / 4;
        let (tags, rest) = words.split_at(len);
        let (ticks, rest) = rest.split_at(len);
        let (nodes, kids) = rest.split_at(len + 1);
        Stack {
            tags,
            ticks,
            nodes,
            kids,
        }
    }

    /// The stack of the calling thread's recorder, made on first use (cold paths only,
    /// so never twice at once).
    pub(super) fn of(l: &'a Local) -> Stack<'a> {
        let words = l.stack_words.get_or_init(|| {
            let words = words(config::stack_depth());
            // Published for the hot path: the base, then the length that says it is
            // there (see `Local::stack`).
            l.stack_base.store(words.as_ptr().cast_mut(), Relaxed);
            signal_fence();
            l.stack_len.store(Stack::over(&words).len(), Relaxed);
            // And for readers on other threads (their open scopes), under a lock that
            // orders the stores above before their reads.
            if let Some(shared) = l.shared.get() {
                shared.recorder.set(l);
                if let Some(flight) = &shared.flight {
                    l.flight
                        .store(std::ptr::from_ref(flight).cast_mut(), Relaxed);
                }
            }
            words
        });
        Stack::over(words)
    }

    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.tags.len()
    }

    /// The id index of the scope at position `p`.
    fn id(&self, p: usize) -> u32 {
        self.tags[p % self.len()].get() as u32
    }

    pub(super) fn scope(&self, p: usize) -> StackScope {
        let (s, n) = (p % self.len(), slot_of(p, self.len()));
        StackScope {
            tag: self.tags[s].get(),
            ticks: self.ticks[s].get(),
            node: self.nodes[n].get(),
            kids: self.kids[n].get(),
        }
    }

    // Only the `tracing` bridge's unordered Stop moves scopes.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    fn set(&self, p: usize, f: StackScope) {
        let (s, n) = (p % self.len(), slot_of(p, self.len()));
        self.tags[s].set(f.tag);
        self.ticks[s].set(f.ticks);
        self.nodes[n].set(f.node);
        self.kids[n].set(f.kids);
    }

    /// The node of the scope below position `p` (0, the root, at position 0).
    pub(super) fn parent_node(&self, p: usize) -> u64 {
        self.nodes[parent_slot(p, self.len())].get()
    }

    /// The children's ticks of the scope below position `p` (the root's sink at
    /// position 0), which a Stop at `p` adds to. Below a scope given up on a full
    /// stack, the slot is a cleared scope's or free: the ticks go nowhere that counts.
    pub(super) fn parent_kids(&self, p: usize) -> &'a Word {
        &self.kids[parent_slot(p, self.len())]
    }

    /// Writes the node of a scope just opened at position `p`, with no children yet.
    pub(super) fn open_node(&self, p: usize, node: u64) {
        let n = slot_of(p, self.len());
        self.nodes[n].set(node);
        self.kids[n].set(0);
    }

    fn clear(&self, p: usize) {
        self.tags[p % self.len()].set(TOMBSTONE);
    }

    /// Removes the scope at position `k` of the positions `k .. depth`; the scopes
    /// above it move down one place. `k` may be one below the valid scopes (a given-up
    /// scope, whose slot the scope at `k + len` now holds): `depth - k <= len + 1`.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    fn remove(&self, k: usize, depth: usize) {
        // With `depth - k == len + 1`, slot `k` is also the top's: keep the top first.
        let top = self.scope(depth - 1);
        self.clear(depth - 1);
        for p in k + 1..depth {
            let scope = if p == depth - 1 { top } else { self.scope(p) };
            self.set(p - 1, scope);
        }
    }

    /// Writes every slot (with its own value), so the OS backs the stack's pages now.
    pub(super) fn touch(&self) {
        let all = [self.tags, self.ticks, self.nodes, self.kids];
        for cell in all.into_iter().flatten() {
            // `black_box`: the optimiser may not drop the store as a no-op.
            cell.set(std::hint::black_box(cell.get()));
        }
    }
}

impl Local {
    #[cold]
    #[inline(never)]
    pub(super) fn start_slow(&self, idx: u32, mode: Mode) {
        let done = self.cold(|l, shared| {
            let stack = Stack::of(l);
            let (d, len) = (l.depth.get() as usize, stack.len());
            if d == u32::MAX as usize {
                // 2^32 - 1 open scopes (a Stop missed billions of times): no position
                // left, so this scope is given up at once.
                shared.count_unpaired(UnpairedKind::Abandoned, [idx]);
                return;
            }
            // The parent is the scope below, unless it was given up on a full stack
            // (its slot may hold another scope now): then the root.
            let held_below = d
                .checked_sub(1)
                .is_some_and(|q| q >= l.floor.get() as usize);
            let parent = if held_below { stack.parent_node(d) } else { 0 };
            let node = l.node_of(shared, parent, idx);
            if d >= len {
                // Full: this Start takes the slot of the scope at position d - len.
                // Give that scope up, unless it already is (the floor is above it).
                let oldest = d - len;
                if oldest >= l.floor.get() as usize {
                    shared.count_unpaired(UnpairedKind::Abandoned, [stack.id(oldest)]);
                    l.floor.set(oldest as u32 + 1);
                }
            }
            // Depth first, as in the hot path (`Local::start`).
            l.depth.set(d as u32 + 1);
            signal_fence();
            stack.open_node(d, node);
            push_scope(stack, d % len, idx, mode);
        });
        if done.is_none() {
            self.start_unrecorded(idx, mode);
        }
    }

    /// A Start made inside a cold path (a signal handler's, say: counted as
    /// re-entrant by `cold`): no node can be looked up or made, so the scope is
    /// opened with node [`UNRECORDED`], and its Stop pairs with it and records
    /// nothing, instead of becoming an unmatched Stop. Only below a full stack (the
    /// stack exists: the interrupted cold path is not this thread's first).
    fn start_unrecorded(&self, idx: u32, mode: Mode) {
        let d = self.depth.get() as usize;
        if let Some(stack) = self.stack()
            && d < stack.len()
        {
            self.depth.set(d as u32 + 1);
            signal_fence();
            stack.open_node(d, UNRECORDED);
            push_scope(stack, d, idx, mode);
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn stop_slow(&self, idx: u32, mode: Mode, now: Stamp) {
        let found = self.cold(|l, shared| {
            let d = l.depth.get() as usize;
            let Some(stack) = l.stack().filter(|_| d > 0) else {
                shared.count_unpaired(UnpairedKind::EmptyStop, [idx]);
                return None;
            };
            let (top, floor) = (d - 1, l.floor.get() as usize);
            if top < floor {
                // The Stop of a scope given up on a full stack (counted then).
                stack.clear(top);
                l.depth.set(top as u32);
                l.floor.set(top as u32);
                return None;
            }
            // The top is ours at a position >= len, or another id: a Stop was missed.
            // Search down for ours; the scopes above it will never be closed correctly,
            // so they are dropped and counted rather than mispaired with later Stops.
            let Some(k) = (floor..=top).rev().find(|&p| stack.id(p) == idx) else {
                shared.count_unpaired(UnpairedKind::UnmatchedStop, [idx]);
                return None;
            };
            shared.count_unpaired(UnpairedKind::Orphaned, (k + 1..=top).map(|p| stack.id(p)));
            let scope = stack.scope(k);
            (k..=top).for_each(|p| stack.clear(p));
            l.depth.set(k as u32);
            Some((k, scope))
        });
        if let (Some(Some((k, scope))), Some(stack)) = (found, self.stack()) {
            self.close(idx, scope, stack.parent_kids(k), mode, now);
        }
    }

    /// The cold case of the bridge's exit (`Local::stop_unordered`): closes the
    /// innermost open scope of `idx` wherever it is and returns its position and
    /// scope, or counts why there is none.
    #[cfg(feature = "tracing")]
    #[cold]
    #[inline(never)]
    pub(super) fn take_unordered_slow(&self, idx: u32) -> Option<(usize, StackScope)> {
        let found = self.cold(|l, shared| {
            let (d, floor) = (l.depth.get() as usize, l.floor.get() as usize);
            let Some(stack) = l.stack().filter(|_| d > 0) else {
                shared.count_unpaired(UnpairedKind::EmptyStop, [idx]);
                return None;
            };
            let Some(k) = (floor..d).rev().find(|&p| stack.id(p) == idx) else {
                if floor == 0 {
                    shared.count_unpaired(UnpairedKind::UnmatchedStop, [idx]);
                    return None;
                }
                // Not held: taken as the exit of a span given up on a full stack
                // (counted then). One given-up scope is forgotten; the held scopes
                // move down one place and stay open.
                stack.remove(floor - 1, d);
                l.floor.set(floor as u32 - 1);
                l.depth.set(d as u32 - 1);
                return None;
            };
            // Close scope k; the scopes above it move down one place and stay open.
            let scope = stack.scope(k);
            stack.remove(k, d);
            l.depth.set(d as u32 - 1);
            if k != d - 1 {
                crate::diagnostics::bump(&shared.counters.unordered_stops, 1);
            }
            Some((k, scope))
        });
        found.flatten()
    }

    /// Counts the scopes still held as open at exit, under their ids (thread exit).
    pub(super) fn count_open_at_exit(&self) {
        if let (Some(shared), Some(stack)) = (self.shared.get(), self.stack()) {
            let (floor, d) = (self.floor.get() as usize, self.depth.get() as usize);
            shared.count_unpaired(UnpairedKind::OpenAtExit, (floor..d).map(|p| stack.id(p)));
        }
    }
}

#[cfg(test)]
mod tests;
