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
//! frame at position `p - len` is *abandoned*, counted under its own id, and the
//! `floor` (lowest position whose frame is still held) moves above it. So the newest
//! scopes keep recording however many Stops were missed below them. The valid frames
//! are always positions `floor .. depth`, at most `len` of them.
//!
//! A Stop that reaches a position below the floor is the Stop of an abandoned frame: it
//! is absorbed (depth, and the floor with it, go down one) and counts nothing more.
//! For the hot path to send such a Stop here, the slot it reads must not hold a
//! matching id: every cold path that removes a frame writes [`TOMBSTONE`] into its
//! slot, and a slot of a position below `len` and below the floor was last written by
//! a position `>= len`, whose removal was a cold path.

use super::local::{Local, Word, push_frame, signal_fence};
use crate::clock::{Mode, Stamp};
use crate::config;
use crate::diagnostics::FrameEnd;
use std::sync::atomic::Ordering::Relaxed;

/// Open scopes, structure-of-arrays: a view of the thread's stack words, the tags in
/// the first half and the start ticks in the second.
///
/// One boxed slice rather than `arrayvec`: the depth is chosen at run time
/// ([`Builder::stack_depth`](crate::Builder::stack_depth)), and the frames are
/// [`Word`]s written in place, never pushed or popped as a collection.
#[derive(Clone, Copy)]
pub(super) struct Stack<'a> {
    pub(super) tags: &'a [Word],
    pub(super) ticks: &'a [Word],
}

/// The tag of a slot whose frame was removed on a cold path. Id index 0 is never
/// handed out, so it never matches a Stop: the hot path sends that Stop here.
const TOMBSTONE: u64 = 0;

/// A frame: (tag, start ticks).
type Frame = (u64, u64);

/// The words of a stack of `len` slots: every tag the tombstone, every tick 0.
pub(super) fn words(len: usize) -> Box<[Word]> {
    const { assert!(TOMBSTONE == 0) };
    (0..2 * len).map(|_| Word::new(0)).collect()
}

impl<'a> Stack<'a> {
    /// The stack over `words` (see [`words`]).
    #[inline(always)]
    pub(super) fn over(words: &'a [Word]) -> Stack<'a> {
        let (tags, ticks) = words.split_at(words.len() / 2);
        Stack { tags, ticks }
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
            l.stack_len.store(words.len() / 2, Relaxed);
            // And for readers on other threads (their open scopes), under a lock that
            // orders the stores above before their reads.
            if let Some(shared) = l.shared.get() {
                shared.recorder.set(l);
            }
            words
        });
        Stack::over(words)
    }

    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.tags.len()
    }

    /// The id index of the frame at position `p`.
    fn id(&self, p: usize) -> u32 {
        self.tags[p % self.len()].get() as u32
    }

    fn frame(&self, p: usize) -> Frame {
        let s = p % self.len();
        (self.tags[s].get(), self.ticks[s].get())
    }

    // Only the `tracing` bridge's unordered Stop moves frames.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    fn set(&self, p: usize, (tag, ticks): Frame) {
        let s = p % self.len();
        self.tags[s].set(tag);
        self.ticks[s].set(ticks);
    }

    fn clear(&self, p: usize) {
        self.tags[p % self.len()].set(TOMBSTONE);
    }

    /// Removes the frame at position `k` of the positions `k .. depth`; the frames
    /// above it move down one place. `k` may be one below the valid frames (a given-up
    /// frame, whose slot the frame at `k + len` now holds): `depth - k <= len + 1`.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    fn remove(&self, k: usize, depth: usize) {
        // With `depth - k == len + 1`, slot `k` is also the top's: keep the top first.
        let top = self.frame(depth - 1);
        self.clear(depth - 1);
        for p in k + 1..depth {
            let frame = if p == depth - 1 { top } else { self.frame(p) };
            self.set(p - 1, frame);
        }
    }

    /// Writes every slot (with its own value), so the OS backs the stack's pages now.
    pub(super) fn touch(&self) {
        for cell in self.ticks.iter().chain(self.tags.iter()) {
            // `black_box`: the optimiser may not drop the store as a no-op.
            cell.set(std::hint::black_box(cell.get()));
        }
    }
}

impl Local {
    #[cold]
    #[inline(never)]
    pub(super) fn start_slow(&self, idx: u32, mode: Mode) {
        self.cold(|l, shared| {
            let stack = Stack::of(l);
            let (d, len) = (l.depth.get() as usize, stack.len());
            if d == u32::MAX as usize {
                // 2^32 - 1 open scopes (a Stop missed billions of times): no position
                // left, so this frame is given up at once.
                shared.count_frames(FrameEnd::Abandoned, [idx]);
                return;
            }
            if d >= len {
                // Full: this Start takes the slot of the frame at position d - len.
                // Give that frame up, unless it already is (the floor is above it).
                let oldest = d - len;
                if oldest >= l.floor.get() as usize {
                    shared.count_frames(FrameEnd::Abandoned, [stack.id(oldest)]);
                    l.floor.set(oldest as u32 + 1);
                }
            }
            // Depth first, as in the hot path (`Local::start`).
            l.depth.set(d as u32 + 1);
            signal_fence();
            push_frame(stack, d % len, idx, mode);
        });
    }

    #[cold]
    #[inline(never)]
    pub(super) fn stop_slow(&self, idx: u32, mode: Mode, now: Stamp) {
        let found = self.cold(|l, shared| {
            let d = l.depth.get() as usize;
            let Some(stack) = l.stack().filter(|_| d > 0) else {
                shared.count_frames(FrameEnd::EmptyStop, [idx]);
                return None;
            };
            let (top, floor) = (d - 1, l.floor.get() as usize);
            if top < floor {
                // The Stop of a frame given up on a full stack (counted then).
                stack.clear(top);
                l.depth.set(top as u32);
                l.floor.set(top as u32);
                return None;
            }
            // The top is ours at a position >= len, or another id: a Stop was missed.
            // Search down for ours; the frames above it will never be closed correctly,
            // so they are dropped and counted rather than mispaired with later Stops.
            let Some(k) = (floor..=top).rev().find(|&p| stack.id(p) == idx) else {
                shared.count_frames(FrameEnd::UnmatchedStop, [idx]);
                return None;
            };
            shared.count_frames(FrameEnd::Orphaned, (k + 1..=top).map(|p| stack.id(p)));
            let frame = stack.frame(k);
            (k..=top).for_each(|p| stack.clear(p));
            l.depth.set(k as u32);
            Some(frame)
        });
        if let Some(Some((tag, start_ticks))) = found {
            self.finish(idx, tag, start_ticks, mode, now);
        }
    }

    /// The cold case of the bridge's exit (`Local::stop_unordered`): closes the
    /// innermost open scope of `idx` wherever it is and returns its frame (tag, start
    /// ticks), or counts why there is none.
    #[cfg(feature = "tracing")]
    #[cold]
    #[inline(never)]
    pub(super) fn take_unordered_slow(&self, idx: u32) -> Option<(u64, u64)> {
        let found = self.cold(|l, shared| {
            let (d, floor) = (l.depth.get() as usize, l.floor.get() as usize);
            let Some(stack) = l.stack().filter(|_| d > 0) else {
                shared.count_frames(FrameEnd::EmptyStop, [idx]);
                return None;
            };
            let Some(k) = (floor..d).rev().find(|&p| stack.id(p) == idx) else {
                if floor == 0 {
                    shared.count_frames(FrameEnd::UnmatchedStop, [idx]);
                    return None;
                }
                // Not held: taken as the exit of a span given up on a full stack
                // (counted then). One given-up frame is forgotten; the held frames
                // move down one place and stay open.
                stack.remove(floor - 1, d);
                l.floor.set(floor as u32 - 1);
                l.depth.set(d as u32 - 1);
                return None;
            };
            // Close frame k; the frames above it move down one place and stay open.
            let frame = stack.frame(k);
            stack.remove(k, d);
            l.depth.set(d as u32 - 1);
            if k != d - 1 {
                crate::diagnostics::bump(&shared.counters.unordered_stops, 1);
            }
            Some(frame)
        });
        found.flatten()
    }

    /// Counts the frames still held as open at exit, under their ids (thread exit).
    pub(super) fn count_open_at_exit(&self) {
        if let (Some(shared), Some(stack)) = (self.shared.get(), self.stack()) {
            let (floor, d) = (self.floor.get() as usize, self.depth.get() as usize);
            shared.count_frames(FrameEnd::OpenAtExit, (floor..d).map(|p| stack.id(p)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack_of<'a>(words: &'a [Word], frames: &[u64]) -> Stack<'a> {
        let s = Stack::over(words);
        for (p, &f) in frames.iter().enumerate() {
            s.set(p, (f, f * 10));
        }
        s
    }

    #[test]
    fn positions_wrap_onto_slots() {
        let w = words(4);
        let s = stack_of(&w, &[1, 2, 3, 4]);
        s.set(5, (6, 60)); // position 5 is slot 1
        assert_eq!((s.id(1), s.id(5), s.frame(9)), (6, 6, (6, 60)));
        s.clear(9);
        assert_eq!(s.id(1), 0);
    }

    #[test]
    fn remove_shifts_the_frames_above_down() {
        let w = words(4);
        let s = stack_of(&w, &[1, 2, 3, 4]);
        s.remove(1, 4); // close position 1 of 0..4
        assert_eq!((0..4).map(|p| s.id(p)).collect::<Vec<_>>(), [1, 3, 4, 0]);
    }

    #[test]
    fn remove_below_a_full_window_keeps_every_held_frame() {
        // len 4, positions 4..8 held (floor 4), position 3 given up: forget it.
        let w = words(4);
        let s = Stack::over(&w);
        for p in 4..8 {
            s.set(p, (p as u64, 0));
        }
        s.remove(3, 8);
        // Now positions 3..7 hold what 4..8 held.
        assert_eq!((3..7).map(|p| s.id(p)).collect::<Vec<_>>(), [4, 5, 6, 7]);
    }
}
