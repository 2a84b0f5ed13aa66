//! Frame marks: what a thread's frames cost, per call-tree node, at no cost to Start
//! and Stop.
//!
//! Every ring keeps two running sums that Stop writes anyway: its pushes (`head`) and
//! the self time of the scopes it holds (`own_ticks`, see `node.rs`). A mark reads both
//! for each of the thread's nodes, and the differences since the previous mark are the
//! frame: a node's calls, and its self time, exact. A node's time in the frame, its
//! scopes' ticks, is its self time plus that of every node below it (a scope's ticks
//! are its self time plus its children's ticks), which the fold adds up
//! (`frames/fold.rs`). So marks cost Start and Stop nothing: the work is one pass
//! over the thread's nodes per frame, on the thread that marks, with no lock it waits
//! for (a `try_lock` that, if the reader holds it, leaves the frame for the next mark)
//! and no allocation once the first frames' buffers are made (the reader hands them
//! back).
//!
//! A scope counts in the frame in which it closes; `pulse`, `record` and a [`Timer`]
//! count there too (as calls, and as time where they are scopes).
//!
//! [`Timer`]: crate::Timer
#![allow(unsafe_code)]

use super::fork::{self, PerProcess};
use super::local::Local;
use super::registry::ThreadShared;
use crate::diagnostics::bump;
use std::cell::RefCell;
use std::sync::{Arc, Mutex, PoisonError};

/// Frames a thread's queue holds for the reader at most: past it, new frames are
/// dropped and counted (`frames_lost`). At 1,000 frames a second, four seconds.
pub(crate) const QUEUED_FRAMES: usize = 4096;

/// One node's share of a frame: its position in the thread's ring list, its calls,
/// its self time in ticks, and the allocations counted in it (while it was the
/// innermost scope) since its previous frame with a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NodeFrame {
    pub(crate) position: u32,
    pub(crate) calls: u64,
    pub(crate) own: u64,
    pub(crate) allocs: u64,
}

/// One frame of one thread: from one mark to the next.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FrameRecord {
    /// 1 for the frame that the thread's second mark ends, and so on.
    pub(crate) number: u64,
    /// Ticks from the previous mark to this one.
    pub(crate) length: u64,
    /// The tick of this mark: the frame's end.
    pub(crate) end: u64,
    /// The nodes with a call in the frame.
    pub(crate) nodes: Vec<NodeFrame>,
}

/// A thread's frames, waiting for the reader, and buffers the reader gave back.
#[derive(Default)]
struct Queue {
    frames: Vec<FrameRecord>,
    spare: Vec<Vec<NodeFrame>>,
}

/// Where a thread's marks leave its frames: shared by the thread and the reader.
pub(crate) struct FrameQueue {
    /// The thread's serial (see `registry`).
    pub(crate) serial: u64,
    queue: Mutex<Queue>,
}

/// Every thread's frame queue, in the order of their first mark. A queue whose thread
/// has gone is dropped once read empty. Per process: the drain holds the list on every
/// fold, and a child forked meanwhile must not inherit it held.
static QUEUES: PerProcess<Mutex<Vec<Arc<FrameQueue>>>> = PerProcess::new(|| Mutex::new(Vec::new()));

/// Runs `f` while holding the list of frame queues (for the fork test's hook).
#[cfg(feature = "test-hooks")]
pub(crate) fn while_queues_held<T>(f: impl FnOnce() -> T) -> T {
    let _held = QUEUES.get().lock().unwrap_or_else(PoisonError::into_inner);
    f()
}

thread_local! {
    /// What the thread's marks keep between frames: a thread-local of its own, so the
    /// recorder's (`local.rs`), which the hot path reads, keeps its layout.
    static MARKS: RefCell<Marks> = const { RefCell::new(Marks::new()) };
}

/// What a thread's marks keep between frames (cold paths only).
struct Marks {
    /// This thread's queue, and the fork generation it was made in (`fork.rs`): a
    /// forked child's thread (the one that forked) makes its own, since the parent's
    /// is not read there.
    queue: Option<(u64, Arc<FrameQueue>)>,
    /// The thread's shared half, for the count of frames lost at its exit.
    shared: Option<Arc<ThreadShared>>,
    /// Ticks at the previous mark (if any); frames so far.
    last_mark: Option<u64>,
    number: u64,
    /// Each node's pushes, self-time sum and allocations at its previous mark with a
    /// call, by position.
    last: Vec<(u64, u64, u64)>,
    /// Frames the reader could not take yet (its lock was held), oldest first.
    waiting: Vec<FrameRecord>,
    spare: Vec<Vec<NodeFrame>>,
}

/// Ends the calling thread's frame and begins the next: what [`latte_frame!`] calls
/// (the macro is its one public way, with its example).
///
/// [`latte_frame!`]: crate::latte_frame
#[inline]
pub fn frame_mark() {
    #[cfg(feature = "record")]
    {
        let now = crate::clock::ticks();
        super::local::with(|l| {
            let _ = l.cold(|l, shared| l.mark(shared, now));
        });
    }
}

impl Local {
    /// A frame mark at `now` (in a cold path: a signal handler's records meanwhile are
    /// counted, not interleaved).
    fn mark(&self, shared: &ThreadShared, now: u64) {
        // At the thread's exit the marks may be gone: that mark is not made.
        let _ = MARKS.try_with(|marks| self.mark_into(&mut marks.borrow_mut(), shared, now));
    }

    fn mark_into(&self, marks: &mut Marks, shared: &ThreadShared, now: u64) {
        let generation = fork::generation();
        if marks
            .queue
            .as_ref()
            .is_some_and(|(made_in, _)| *made_in != generation)
        {
            // A forked child: the frames waiting belong to the parent's reader.
            *marks = Marks::new();
        }
        let (_, queue) = marks
            .queue
            .get_or_insert_with(|| (generation, register_queue(shared.serial)));
        let queue = queue.clone();
        if marks.shared.is_none() {
            marks.shared = self.shared.get().cloned();
        }
        let mut nodes = marks.spare.pop().unwrap_or_default();
        self.frame_nodes(&mut marks.last, &mut nodes);
        // The first mark only begins the first frame; so does a mark while recording
        // is off (the frame it ends is not recorded).
        match marks.last_mark.replace(now) {
            Some(last) if !super::switch::paused() => {
                marks.number += 1;
                marks.waiting.push(FrameRecord {
                    number: marks.number,
                    length: now.saturating_sub(last),
                    end: now,
                    nodes,
                });
            }
            _ => marks.spare.push(nodes),
        }
        marks.hand_over(&queue, shared);
    }

    /// The nodes with calls since the previous mark, into `nodes` (emptied first), and
    /// each such node's pushes, self-time sum and allocations now, into `last`. A
    /// scope counts in the frame in which it closes, and so do its allocations: a
    /// node's allocations while it has no call in a frame wait for its next frame.
    fn frame_nodes(&self, last: &mut Vec<(u64, u64, u64)>, nodes: &mut Vec<NodeFrame>) {
        nodes.clear();
        let positions = self.positions.borrow();
        // Room for every node at once: a buffer grows when the thread's tree does (a
        // new path, itself a cold path that allocates), not when one frame happens to
        // touch more nodes than the frames before it.
        nodes.reserve(positions.len());
        for (&word, &(position, _)) in positions.iter() {
            // SAFETY: `positions` lists the rings of this thread's list by their words,
            // and this recorder keeps that list alive (`node::ring_at`'s contract).
            let Some(ring) = (unsafe { super::node::ring_at(word) }) else {
                continue;
            };
            let at = position as usize;
            if last.len() <= at {
                last.resize(at + 1, (0, 0, 0));
            }
            let now = (ring.seen(), ring.own_ticks(), ring.allocs().read().count());
            let (pushes, own, allocs) = last[at];
            if now.0 > pushes {
                last[at] = now;
                nodes.push(NodeFrame {
                    position,
                    calls: now.0 - pushes,
                    own: now.1.wrapping_sub(own),
                    allocs: now.2.wrapping_sub(allocs),
                });
            }
        }
    }
}

/// At the thread's exit, the frames still waiting (the reader held the queue at the
/// last marks) go to the reader: the lock is waited for here, once.
impl Drop for Marks {
    fn drop(&mut self) {
        let (Some((made_in, queue)), Some(shared)) = (self.queue.take(), self.shared.take()) else {
            return;
        };
        // In a forked child the parent's queue may be held for good: never wait on it.
        if made_in != fork::generation() {
            return;
        }
        if !self.waiting.is_empty() {
            let mut q = queue.queue.lock().unwrap_or_else(PoisonError::into_inner);
            self.move_into(&mut q, &shared);
        }
    }
}

impl Marks {
    const fn new() -> Marks {
        Marks {
            queue: None,
            shared: None,
            last_mark: None,
            number: 0,
            last: Vec::new(),
            waiting: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// Moves the waiting frames to the reader's queue, unless the reader holds it now;
    /// takes back the buffers it emptied. Frames past the queue's room are counted.
    fn hand_over(&mut self, queue: &FrameQueue, shared: &ThreadShared) {
        let mut q = match queue.queue.try_lock() {
            Ok(q) => q,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                self.keep_waiting(shared);
                return;
            }
        };
        self.move_into(&mut q, shared);
    }

    /// Past [`QUEUED_FRAMES`] waiting, the oldest are dropped and counted. A dropped
    /// frame's buffer is kept for a later mark, as the reader's are: with no reader
    /// (no agent), marks reuse the buffers of the frames they drop instead of
    /// allocating one each.
    fn keep_waiting(&mut self, shared: &ThreadShared) {
        if self.waiting.len() > QUEUED_FRAMES {
            let dropped = self.waiting.len() - QUEUED_FRAMES;
            let lost = self.waiting.drain(..dropped).map(|frame| frame.nodes);
            self.spare.extend(lost);
            bump(&shared.counters.frames_lost, dropped as u64);
        }
    }

    /// Moves the waiting frames into the reader's queue, as many as it has room for
    /// (the rest counted), and takes back the buffers it emptied.
    fn move_into(&mut self, q: &mut Queue, shared: &ThreadShared) {
        let room = QUEUED_FRAMES.saturating_sub(q.frames.len());
        let dropped = self.waiting.len().saturating_sub(room);
        if dropped > 0 {
            bump(&shared.counters.frames_lost, dropped as u64);
            let lost = self.waiting.drain(room..).map(|frame| frame.nodes);
            self.spare.extend(lost);
        }
        q.frames.append(&mut self.waiting);
        self.spare.append(&mut q.spare);
    }
}

/// Makes the calling thread's queue and lists it for the reader.
fn register_queue(serial: u64) -> Arc<FrameQueue> {
    let queue = Arc::new(FrameQueue {
        serial,
        queue: Mutex::new(Queue::default()),
    });
    QUEUES
        .get()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(queue.clone());
    queue
}

/// Takes every thread's queued frames, as (thread serial, frames), oldest first;
/// `recycle` gets each emptied buffer's chance to go back. Queues whose thread has
/// gone are dropped once empty.
pub(crate) fn take_frames(mut each: impl FnMut(u64, &mut Vec<FrameRecord>)) {
    let mut queues = QUEUES.get().lock().unwrap_or_else(PoisonError::into_inner);
    queues.retain(|queue| {
        let mut q = queue.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let mut frames = std::mem::take(&mut q.frames);
        drop(q);
        each(queue.serial, &mut frames);
        let mut q = queue.queue.lock().unwrap_or_else(PoisonError::into_inner);
        // Buffers back for the thread's next frames, as many as it may need.
        let room = QUEUED_FRAMES.saturating_sub(q.spare.len()).min(64);
        q.spare
            .extend(frames.into_iter().map(|f| f.nodes).take(room));
        let gone = Arc::strong_count(queue) == 1;
        !(gone && q.frames.is_empty())
    });
}
