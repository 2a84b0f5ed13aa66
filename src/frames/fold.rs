//! A thread's frames, folded: each frame's length, and per id its time and calls in
//! the frame, as distributions over the window's frames; the longest frames kept
//! whole. They are a part of the thread's totals in each window (`collect::ThreadPart`),
//! written by the fold's observer [`FrameFold`].
//!
//! A frame record (`record/marks.rs`) holds the calls and self time of each node that
//! closed a call in the frame. A node's time in the frame is its self time plus that
//! of every node below it (added up here, deepest first); an id's time in the frame is
//! the time of its outermost nodes (a node below another of the same id, in
//! recursion, is inside it already), its calls those of all its nodes.

use crate::collect::{ComponentTotals, FoldWatch, SampleKind, Tally, ThreadPart, ThreadTotals};
use crate::config;
use crate::record::marks::FrameRecord;
use std::any::Any;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

/// One id's share of one frame: its time (ticks), calls, and allocations (its
/// outermost nodes' and those of the scopes inside them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IdInFrame {
    pub(crate) name: &'static str,
    pub(crate) ticks: u64,
    pub(crate) calls: u64,
    pub(crate) allocs: u64,
}

/// One frame kept whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeptFrame {
    /// 1-based, in the thread's marks.
    pub(crate) number: u64,
    pub(crate) length: u64,
    /// Ticks inside the thread's outermost scopes (the rest of its length ran
    /// outside any).
    pub(crate) timed: u64,
    pub(crate) ids: Vec<IdInFrame>,
}

/// A kept frame, ordered so that a max-heap of them has the shortest on top (among
/// equally long ones, the latest): the one the next longer frame replaces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ByLength(pub(crate) KeptFrame);

impl Ord for ByLength {
    fn cmp(&self, other: &ByLength) -> Ordering {
        other
            .0
            .length
            .cmp(&self.0.length)
            .then(self.0.number.cmp(&other.0.number))
    }
}

impl PartialOrd for ByLength {
    fn partial_cmp(&self, other: &ByLength) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One id's per-frame distributions over the frames in which it had a call.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdUnpaired {
    pub(crate) name: &'static str,
    pub(crate) ticks: Tally,
    pub(crate) calls: Tally,
    /// Allocations per frame: recorded only with the counting allocator installed.
    pub(crate) allocs: Tally,
}

/// A thread's frames in one window.
#[derive(Clone, Debug, Default)]
pub(crate) struct FrameTotals {
    /// Frame lengths, in ticks (its count is the frames).
    pub(crate) length: Tally,
    /// Per id, in order of first appearance.
    pub(crate) ids: Vec<IdUnpaired>,
    /// The longest frames (`config::frames_listed` of them at most), the shortest of
    /// them on top: a frame shorter than all costs one compare.
    pub(crate) worst: BinaryHeap<ByLength>,
}

impl FrameTotals {
    /// Frames folded.
    pub(crate) fn frames(&self) -> u64 {
        self.length.exact.count
    }

    /// Adds one frame of the thread whose nodes are `components`.
    pub(crate) fn add_frame(&mut self, frame: &FrameRecord, components: &[ComponentTotals]) {
        self.add_frame_within(frame, components, config::frames_listed());
    }

    /// [`add_frame`](Self::add_frame), keeping at most `limit` frames whole.
    pub(crate) fn add_frame_within(
        &mut self,
        frame: &FrameRecord,
        components: &[ComponentTotals],
        limit: usize,
    ) {
        let (ids, timed) = per_id(frame, components);
        self.length.record(frame.length);
        let allocs = crate::record::alloc::installed();
        for id in &ids {
            let at = self.at(id.name);
            self.ids[at].ticks.record(id.ticks);
            self.ids[at].calls.record(id.calls);
            if allocs {
                self.ids[at].allocs.record(id.allocs);
            }
        }
        let kept = KeptFrame {
            number: frame.number,
            length: frame.length,
            timed,
            ids,
        };
        self.keep(kept, limit);
    }

    /// Adds another window's frames of the same thread (recorded after these).
    pub(crate) fn add(&mut self, other: &FrameTotals) {
        self.length.add(&other.length);
        for id in &other.ids {
            let at = self.at(id.name);
            self.ids[at].ticks.add(&id.ticks);
            self.ids[at].calls.add(&id.calls);
            self.ids[at].allocs.add(&id.allocs);
        }
        let limit = config::frames_listed();
        other
            .worst
            .iter()
            .for_each(|f| self.keep(f.0.clone(), limit));
    }

    /// The frames kept whole, longest first (the earlier of two as long first).
    pub(crate) fn longest_first(&self) -> Vec<&KeptFrame> {
        // In `ByLength`'s order the longest comes first.
        let mut frames: Vec<&ByLength> = self.worst.iter().collect();
        frames.sort_unstable();
        frames.into_iter().map(|f| &f.0).collect()
    }

    /// Empties the frames, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.length.clear();
        for id in &mut self.ids {
            id.ticks.clear();
            id.calls.clear();
            id.allocs.clear();
        }
        self.worst.clear();
    }

    /// The place of `name` in `ids`, added if new.
    fn at(&mut self, name: &'static str) -> usize {
        match self.ids.iter().position(|i| i.name == name) {
            Some(at) => at,
            None => {
                self.ids.push(IdUnpaired {
                    name,
                    ..IdUnpaired::default()
                });
                self.ids.len() - 1
            }
        }
    }

    /// Keeps `frame` if it is among the `limit` longest.
    fn keep(&mut self, frame: KeptFrame, limit: usize) {
        if self.worst.len() < limit {
            self.worst.push(ByLength(frame));
        } else if self.worst.peek().is_some_and(|k| k.0.length < frame.length) {
            self.worst.pop();
            self.worst.push(ByLength(frame));
        }
        while self.worst.len() > limit {
            self.worst.pop();
        }
    }
}

/// The fold's observer that keeps each thread's frames: every frame the marks ended
/// goes into the thread's part of the open window (a thread without one there,
/// folded away meanwhile, loses them).
#[derive(Debug, Default)]
pub(crate) struct FrameFold;

impl FoldWatch for FrameFold {
    fn begin_fold(&mut self, _: u64) {}

    fn armed(&self) -> bool {
        true
    }

    fn samples(&mut self, _: u64, _: usize, _: u32, _: SampleKind, _: &[u64]) {}

    fn frames(&mut self, _: u64, frames: &[FrameRecord], thread: Option<&mut ThreadTotals>) {
        if let Some(ThreadTotals {
            parts, components, ..
        }) = thread
        {
            let mine = parts.get_or_default::<FrameTotals>();
            frames.iter().for_each(|f| mine.add_frame(f, components));
        }
    }
}

/// A thread's frames as a part of its totals, which the windows add, empty and copy.
impl ThreadPart for FrameTotals {
    fn add(&mut self, other: &dyn ThreadPart) {
        if let Some(other) = (other as &dyn Any).downcast_ref::<FrameTotals>() {
            FrameTotals::add(self, other);
        }
    }

    fn clear(&mut self) {
        FrameTotals::clear(self);
    }

    fn is_empty(&self) -> bool {
        self.frames() == 0
    }

    fn copy(&self) -> Box<dyn ThreadPart> {
        Box::new(self.clone())
    }
}

/// Each id's time and calls in `frame`, in order of the id's first node, and the
/// ticks inside the thread's outermost scopes.
fn per_id(frame: &FrameRecord, components: &[ComponentTotals]) -> (Vec<IdInFrame>, u64) {
    // Inclusive ticks per node, children added to their parents deepest first (a
    // node always comes after its parent).
    // (ticks, allocations) per node.
    let mut inclusive: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    let mut calls: HashMap<usize, u64> = HashMap::new();
    for node in &frame.nodes {
        let k = node.position as usize;
        // A node made since the rings were read is in the next fold's frames only.
        if k < components.len() {
            let sum = inclusive.entry(k).or_default();
            *sum = (sum.0 + node.own, sum.1 + node.allocs);
            *calls.entry(k).or_default() += node.calls;
        }
    }
    let mut nodes: Vec<(usize, (u64, u64))> = Vec::with_capacity(inclusive.len());
    let mut timed = 0;
    while let Some((k, (ticks, allocs))) = inclusive.pop_last() {
        match components[k].parent {
            Some(p) => {
                let sum = inclusive.entry(p as usize).or_default();
                *sum = (sum.0 + ticks, sum.1 + allocs);
            }
            None => timed += ticks,
        }
        nodes.push((k, (ticks, allocs)));
    }
    nodes.reverse();
    let mut ids: Vec<IdInFrame> = Vec::new();
    for (k, (ticks, allocs)) in nodes {
        let name = components[k].name;
        let outermost = !ancestors(components, k).any(|a| components[a].name == name);
        let node_calls = calls.get(&k).copied().unwrap_or(0);
        if !outermost && node_calls == 0 {
            continue;
        }
        let id = match ids.iter_mut().find(|i| i.name == name) {
            Some(id) => id,
            None => {
                ids.push(IdInFrame {
                    name,
                    ticks: 0,
                    calls: 0,
                    allocs: 0,
                });
                ids.last_mut().expect("just pushed")
            }
        };
        id.calls += node_calls;
        if outermost {
            id.ticks += ticks;
            id.allocs += allocs;
        }
    }
    ids.retain(|i| i.calls > 0);
    (ids, timed)
}

/// The nodes above `k`, nearest first.
fn ancestors(components: &[ComponentTotals], k: usize) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(components[k].parent.map(|p| p as usize), |&p| {
        components[p].parent.map(|q| q as usize)
    })
}
