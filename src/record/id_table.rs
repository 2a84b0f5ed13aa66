//! The thread's id table: per id index, its root ring and its call-tree memo (see
//! `node.rs`). Read by the hot path through `Local::entry`; written on cold paths.

use super::ring::Ring;
use super::word::Word;
use std::ptr;
use std::sync::atomic::AtomicPtr;
use std::sync::atomic::Ordering::Relaxed;

/// One id's slot in the thread's table: its ring (its call-tree node at the root), once
/// the thread has used the id, and the memo of its nodes under other parents.
///
/// `ring` is set once, from null, on a cold path of the owning thread, and never
/// changed after: the ring it points at is in the thread's shared ring list
/// (`ThreadShared::rings`), which the recorder's `shared` keeps alive (see
/// `Local::ring`). Entries are written in place, so only a growth of the table copies
/// them (geometrically, so the tables a thread has had cost less than twice the last
/// one).
pub(super) struct Entry {
    pub(super) ring: AtomicPtr<Ring>,
    /// The last two parents this id's scopes opened under, and the node each gave
    /// (see `node.rs`): what a Start compares before the cold lookup. Written by the
    /// owning thread's cold paths only.
    pub(super) memo: [Memo; 2],
}

/// One way of an [`Entry`]'s memo: a parent node word and the child node under it.
pub(super) struct Memo {
    pub(super) parent: Word,
    pub(super) node: Word,
}

/// A memo way's parent that matches no node word: an empty way.
pub(super) const NEVER: u64 = u64::MAX;

impl Entry {
    /// A copy of `from` (a table growing), or an empty entry.
    pub(super) fn copy_of(from: Option<&Entry>) -> Entry {
        let way = |i: usize| Memo {
            parent: Word::new(from.map_or(NEVER, |e| e.memo[i].parent.get())),
            node: Word::new(from.map_or(0, |e| e.memo[i].node.get())),
        };
        Entry {
            ring: AtomicPtr::new(from.map_or(ptr::null_mut(), |e| e.ring.load(Relaxed))),
            memo: [way(0), way(1)],
        }
    }
}

/// Tables a thread has had: one per growth, and growth is geometric, so a handful
/// (a 16-entry table grown to 2^20 ids has had 17). A `Vec`, not a `SmallVec`: inline
/// storage here enlarges the thread-local recorder the hot path reads, and measured
/// ~2% slower on Fast Start+Stop (see docs/design.md, "Dependencies").
pub(super) type Tables = Vec<Box<[Entry]>>;
