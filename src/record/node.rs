//! The call tree: each thread's scopes record under the scope open below them.
//!
//! A *node* is a path from the root of the thread's tree: (parent node, id). Each node
//! has a ring of its own, and its samples are the id's samples made under that
//! parent; the id's flat row is the exact merge of its nodes (`analyze`). A node is
//! named by its ring's address, which the stack keeps in each scope (`stack.rs`):
//!
//! - **Start** finds the new scope's node from its parent's (the scope below) and the
//!   id, in a two-way memo in the id's table entry (`Entry::memo`): two compares when
//!   the id runs under the same one or two parents as last time, which is how loops
//!   run. A miss goes to [`Local::node_of`] (cold), which looks the path up, makes its
//!   node (a ring) if it is new, and updates the memo.
//! - **Stop** pushes into the scope's node, read from the stack (one load, where a
//!   flat recorder looks the id up in its table), adds its ticks to the parent
//!   scope's children's ticks, and adds its self time (its ticks minus its
//!   children's) to the node's self-time sum (`Ring::add_own`): one instruction on
//!   a line the push writes anyway. So a node's self time is exact in total and
//!   mean over every call, recorded or lost; its quantiles are not kept (a second
//!   push per Stop measured 6% on 8 nested scopes, see `docs/design.md`).
//!
//! The root's nodes are the ids' own rings, which `pulse`, `record` and a [`Timer`]
//! record into (they are not on the stack, so they are roots). Past the node limit
//! (`config::node_limit`) a new path is counted once as `folded_paths` and records
//! into its parent's node when that is a node of the same id (deep recursion), else
//! into the id's node at the root: never into another id's ring, so the flat rows
//! stay exact. A path whose ring the memory cap refuses records nothing, counted as
//! `over_cap`, as any refused id.
//!
//! [`Timer`]: crate::Timer
#![allow(unsafe_code)]

use super::id_table::{Memo, NEVER};
use super::local::Local;
use super::registry::ThreadShared;
use super::ring::Ring;
use crate::config;
use crate::diagnostics::bump;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// What one ring of a thread records: the scopes (and records) of an id at one node
/// of the thread's call tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RingKey {
    /// The id's dense index.
    pub(crate) idx: u32,
    /// The parent node's position in the thread's ring list (where a node always
    /// comes after its parent); `None` at the root.
    pub(crate) parent: Option<u32>,
}

impl RingKey {
    /// The id's own ring: its node at the root.
    pub(crate) const fn root(idx: u32) -> RingKey {
        RingKey { idx, parent: None }
    }
}

/// The node word of a ring: its address.
pub(super) fn word_of(ring: &Arc<Ring>) -> u64 {
    Arc::as_ptr(ring).expose_provenance() as u64
}

/// The ring a node word names, if any (0: refused by the memory cap; 1:
/// [`UNRECORDED`](super::stack::UNRECORDED)).
///
/// # Safety
///
/// `node` is 0 or the word of a ring in the calling thread's ring list (taken from its
/// stack or its table's memo), and the returned reference does not outlive the
/// thread's recorder, which keeps that list alive (see `Local::ring`).
#[inline(always)]
pub(super) unsafe fn ring_at<'a>(node: u64) -> Option<&'a Ring> {
    // SAFETY: the caller's contract: a live ring whose address was exposed by
    // `word_of`.
    (node > 1).then(|| unsafe { &*std::ptr::with_exposed_provenance::<Ring>(node as usize) })
}

impl Local {
    /// The node of a scope of `idx` opened under the node `parent` (0: the root), made
    /// if new: the cold half of a Start's node lookup. Remembers the answer in the
    /// id's memo. 0 when the memory cap refused it a ring.
    pub(super) fn node_of(&self, shared: &ThreadShared, parent: u64, idx: u32) -> u64 {
        let node = if parent == 0 {
            self.root_node(shared, idx)
        } else {
            let known = self.paths.borrow().get(&(parent, idx)).copied();
            known.unwrap_or_else(|| self.new_node(shared, parent, idx))
        };
        self.remember(idx, parent, node);
        node
    }

    /// The id's node at the root (its own ring), made if new; 0 past the memory cap.
    fn root_node(&self, shared: &ThreadShared, idx: u32) -> u64 {
        self.ring(idx)
            .map(|r| std::ptr::from_ref(r).expose_provenance() as u64)
            .or_else(|| self.root_ring(shared, idx).map(|r| word_of(&r)))
            .unwrap_or(0)
    }

    /// Makes the node of `idx` under `parent`, or, past the node limit, folds the
    /// path: into `parent` itself when it is a node of the same id (recursion), else
    /// into the id's node at the root. Either way the id's flat row stays exact.
    fn new_node(&self, shared: &ThreadShared, parent: u64, idx: u32) -> u64 {
        let at = self.positions.borrow().get(&parent).copied();
        let limit = config::node_limit();
        let node = if self.below_root.get() >= limit {
            // A limit of 0 asked for a flat profile: nothing to count.
            if limit > 0 {
                bump(&shared.counters.folded_paths, 1);
            }
            match at {
                Some((_, parent_idx)) if parent_idx == idx => parent,
                // Not `node_of`: the memo keeps the ways this thread's loops use.
                _ => self.root_node(shared, idx),
            }
        } else {
            let key = RingKey {
                idx,
                parent: at.map(|(p, _)| p),
            };
            let prepared = self.prepared.borrow().contains(&idx);
            match self.new_ring(shared, idx, prepared) {
                Some(ring) => {
                    self.below_root.set(self.below_root.get() + 1);
                    let ring = self.list(shared, key, ring);
                    if prepared {
                        ring.prefault();
                    }
                    word_of(&ring)
                }
                None => 0,
            }
        };
        self.paths.borrow_mut().insert((parent, idx), node);
        node
    }

    /// Writes (parent, node) into the first way of `idx`'s memo, moving the way there
    /// to the second, growing the table to reach `idx` if needed. A signal handler
    /// that reads the memo meanwhile sees each way as it was or as it will be: a way's
    /// parent is `NEVER` while its node changes.
    fn remember(&self, idx: u32, parent: u64, node: u64) {
        if self.entry(idx).is_none() {
            self.grow_table(self.table_len_for(idx));
        }
        let entry = self.entry(idx).expect("the table reaches idx");
        let [first, second] = &entry.memo;
        let moved = (first.parent.get(), first.node.get());
        if moved.0 == parent {
            return;
        }
        let write = |way: &Memo, (parent, node): (u64, u64)| {
            way.parent.set(NEVER);
            super::word::signal_fence();
            way.node.set(node);
            super::word::signal_fence();
            way.parent.set(parent);
        };
        write(second, moved);
        write(first, (parent, node));
    }

    /// Appends `ring` to the thread's ring list under `key`, and notes its position
    /// (cold paths only).
    pub(super) fn list(&self, shared: &ThreadShared, key: RingKey, ring: Ring) -> Arc<Ring> {
        let ring = self.spares.borrow_mut().house(ring);
        self.list_all(shared, &[(key, ring.clone())]);
        ring
    }

    /// Appends `rings` to the thread's ring list, in order, and notes their positions.
    pub(super) fn list_all(&self, shared: &ThreadShared, rings: &[(RingKey, Arc<Ring>)]) {
        let mut positions = self.positions.borrow_mut();
        for (key, ring) in rings {
            let at = positions.len() as u32;
            positions.insert(word_of(ring), (at, key.idx));
        }
        drop(positions);
        shared.add_rings(rings);
        super::alloc::inherit(shared, rings);
    }

    /// A scope of `idx` closed on no node: one the memory cap refused (counted now),
    /// or one whose Start was re-entrant (counted then). Nothing is stored.
    #[cold]
    #[inline(never)]
    pub(super) fn refused(&self, idx: u32, node: u64) {
        if node != super::stack::UNRECORDED {
            self.cold(|l, shared| l.count_over_cap(shared, idx));
        }
    }
}

/// Allocations for a thread's ring headers, made in batches so that the headers lie
/// together: a Stop reads its node's header, and headers allocated one at a time,
/// each after its ring's first slots (8 KiB), lay a page apart, so a program rotating
/// over many ids paid a TLB miss per Stop on top of its slot's (`docs/design.md`,
/// "The 1,000-id case"). Batches double from 1 to 32, so the spares never outnumber
/// the rings made (at most 31 unused, 128 bytes each).
pub(super) struct Spares {
    arcs: Vec<Arc<MaybeUninit<Ring>>>,
    made: usize,
}

impl Spares {
    pub(super) const fn new() -> Spares {
        Spares {
            arcs: Vec::new(),
            made: 0,
        }
    }

    /// `ring` in the next spare allocation (cold paths only).
    pub(super) fn house(&mut self, ring: Ring) -> Arc<Ring> {
        if self.arcs.is_empty() {
            let batch = (self.made + 1).min(32);
            self.made += batch;
            self.arcs.extend((0..batch).map(|_| Arc::new_uninit()));
            // Handed out in the order they were allocated (`pop` takes the last).
            self.arcs.reverse();
        }
        // A spare is never shared before it is housed, so `get_mut` finds it; the
        // fallback, a fresh allocation, only keeps a panic out of the program.
        if let Some(mut spare) = self.arcs.pop()
            && let Some(slot) = Arc::get_mut(&mut spare)
        {
            slot.write(ring);
            // SAFETY: the value was written just above, through the only reference.
            return unsafe { spare.assume_init() };
        }
        Arc::new(ring)
    }
}

/// The positions from the root down to node `at` of a thread's list, where `parent`
/// gives a node's parent's position (a node always comes after its parent: a parent
/// that does not is not followed). How a node is named by its path.
pub(crate) fn path_to(at: usize, parent: impl Fn(usize) -> Option<usize>) -> Vec<usize> {
    let mut path = vec![at];
    while let Some(p) = path.last().and_then(|&k| parent(k).filter(|&p| p < k)) {
        path.push(p);
    }
    path.reverse();
    path
}

/// Adds every ring-like item of `from` (one thread's list, in order) into `into` (a
/// list of the same kind, say merged threads'), matching items by path: an item of
/// `from` joins the item of `into` with the same id whose parent is where `from`'s
/// parent went. `key` reads an item's key, `adopt` makes an item of `into` from one of
/// `from` under a key of `into`'s positions, `add` adds one into another.
pub(crate) fn merge_by_path<T>(
    into: &mut Vec<T>,
    from: &[T],
    key: impl Fn(&T) -> RingKey,
    adopt: impl Fn(&T, RingKey) -> T,
    mut add: impl FnMut(&mut T, &T),
) {
    let mut at: std::collections::HashMap<RingKey, usize> = into
        .iter()
        .enumerate()
        .map(|(i, item)| (key(item), i))
        .collect();
    let mut went: Vec<u32> = Vec::with_capacity(from.len());
    for item in from {
        let k = key(item);
        let k = RingKey {
            idx: k.idx,
            parent: k.parent.map(|p| went.get(p as usize).copied().unwrap_or(p)),
        };
        let to = match at.get(&k) {
            Some(&to) => {
                add(&mut into[to], item);
                to
            }
            None => {
                into.push(adopt(item, k));
                at.insert(k, into.len() - 1);
                into.len() - 1
            }
        };
        went.push(to as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spares_come_in_doubling_batches_and_never_outnumber_the_rings_housed() {
        let mut spares = Spares::new();
        for housed in 1..=200usize {
            let ring = spares.house(Ring::new(4));
            assert_eq!(ring.try_push(7), crate::record::ring::Pushed::Stored);
            assert_eq!(Arc::strong_count(&ring), 1);
            // Batches of 1, 2, 4, 8, 16, then 32: never more spares than rings housed.
            let spare = spares.arcs.len();
            assert!(spare < housed.min(32), "{housed} housed, {spare} spare");
            assert_eq!(spares.made, housed + spares.arcs.len());
        }
        assert_eq!(spares.made, 1 + 2 + 4 + 8 + 16 + 32 * 6);
    }
}
