//! Another thread's open scopes, read while it records: what a report lists as
//! `open now`.
//!
//! A recorder publishes itself through its thread's [`Link`] once its stack exists
//! (`Stack::of`) and withdraws before it goes (`Local`'s destructor); a reader holds
//! the link's lock while it reads, so it reads live memory, and the lock orders the
//! stack's making before the read. The scopes themselves are the relaxed atomics the
//! hot path writes: reading them is no data race and costs the writer nothing.
#![allow(unsafe_code)]

use super::local::Local;
use super::registry::Link;
use std::sync::atomic::Ordering::Relaxed;

/// The id indices of the scopes a recorder holds open (positions `floor .. depth`),
/// bottom first, read from any thread through the recorder's [`Link`] (set once its
/// stack exists, cleared by its destructor). Only atomics are read, so a thread that
/// keeps recording is neither stopped nor slowed; each scope is read once, at a
/// slightly different moment, so the result may be a scope off while it opens and
/// closes scopes. A scope being written may still show the tombstone, which is
/// skipped. Allocates outside the link's lock only.
pub(crate) fn open_ids(link: &Link<Local>) -> Vec<u32> {
    open_stack(link).into_iter().map(|f| f.idx).collect()
}

/// A scope a recorder holds open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct OpenScope {
    /// Its id's index.
    pub(crate) idx: u32,
    /// The tick its Start read.
    pub(crate) start: u64,
    /// Its position on the stack (0: opened on an empty stack).
    pub(crate) depth: u32,
}

/// The scopes a recorder holds open, bottom first, as [`open_ids`] reads them (with
/// their start ticks and positions).
pub(crate) fn open_stack(link: &Link<Local>) -> Vec<OpenScope> {
    let len = link.read(|p| {
        // SAFETY: `Link::read` runs this under the link's lock while the recorder
        // lives (its destructor clears the link first), so `p` points at a live
        // `Local`; only an atomic field is reached, by place projection, never a
        // reference to the whole `Local` (which is not `Sync`).
        unsafe { (*p).stack_len.load(Relaxed) }
    });
    let Some(len) = len.filter(|&len| len > 0) else {
        return Vec::new();
    };
    let mut scopes = vec![OpenScope::default(); len];
    let n = link.read(|p| {
        // SAFETY: as above, `p` is a live `Local`; its thread set the link, under the
        // lock held now, after making its stack (`Stack::of`): `read_open`'s contract.
        unsafe { read_open(p, &mut scopes) }
    });
    scopes.truncate(n.unwrap_or(0));
    scopes
}

/// Writes the scopes `local` holds open into `out` (at most its length), bottom first;
/// returns how many.
///
/// # Safety
///
/// `local` points at a live `Local`, and its stack, if `stack_len` is not 0, was made
/// before the caller synchronised with its thread (the caller holds the lock under
/// which the thread published `local` after making its stack).
unsafe fn read_open(local: *const Local, out: &mut [OpenScope]) -> usize {
    // SAFETY: `local` is live (the caller's contract); each field reached is an
    // atomic, projected without a reference to the whole `Local`.
    let (depth, floor, len, base) = unsafe {
        (
            (*local).depth.get() as usize,
            (*local).floor.get() as usize,
            (*local).stack_len.load(Relaxed),
            (*local).stack_base.load(Relaxed),
        )
    };
    if len == 0 || base.is_null() {
        return 0;
    }
    // SAFETY: `stack_base` points at the `2 * len` words owned by the recorder's
    // `stack_words` (tags, then start ticks), which live as long as the recorder (see
    // `Local::stack`); both were stored before the caller synchronised with the thread
    // (the contract).
    let (tags, ticks) = unsafe {
        (
            std::slice::from_raw_parts(base, len),
            std::slice::from_raw_parts(base.add(len), len),
        )
    };
    // The held scopes are `floor .. depth`, at most `len` of them; a floor read after
    // a later depth may be above it (then nothing is held at this snapshot).
    let lowest = floor.max(depth.saturating_sub(len));
    let mut n = 0;
    for p in lowest..depth {
        let idx = tags[p % len].get() as u32;
        if idx != 0 && n < out.len() {
            out[n] = OpenScope {
                idx,
                start: ticks[p % len].get(),
                depth: p as u32,
            };
            n += 1;
        }
    }
    n
}
