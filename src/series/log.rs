//! The series log, the fold's observer that keeps the whole run's time structure: per
//! id, its values in consecutive blocks of fixed wall-clock length (`Report::series`),
//! for a block bootstrap that resamples stretches of time.
//!
//! A sample carries no time, but a fold reads only what was recorded since the
//! previous fold began: each fold's samples go to the block in which the fold began
//! (the drain folds at least every 10 ms by default, so a value lands at most one
//! fold late). Blocks are [`BLOCK_MS`] long, counted from the first fold the log sees
//! (or the last reset), on the fold clock (monotonic). The log is per id over all threads
//! (exited ones too), apart from the windows: interval reports neither cut nor read it.
//!
//! The open block keeps a bucket table per (id, sample kind) (`collect/buckets.rs`: the
//! tallies' own buckets, without their sums). When a fold lands in a later block, the
//! open one closes into ascending (bucket, count) lists and its tables are emptied for
//! the next block, their memory kept; a block in which nothing was recorded is an
//! empty block all the same (time passed). Past [`MAX_BLOCKS`], adjacent blocks merge
//! in pairs and the block length doubles, so a run of any length holds between half
//! and all of `MAX_BLOCKS` once it is longer than `MAX_BLOCKS` blocks of `BLOCK_MS`.
//!
//! Memory: the open tables (one per id and kind the run recorded, like a whole-run
//! tally's) plus, per closed block, per (id, kind) that recorded in it, 32 B and its
//! buckets in use packed as varints ([`pack`]: 2 to 4 bytes a bucket): at most
//! `MAX_BLOCKS` times the buckets the run's ids use.

use crate::collect::{Buckets, FoldWatch, SampleKind};
use crate::config::{SERIES_BLOCK_MS as BLOCK_MS, SERIES_MAX_BLOCKS as MAX_BLOCKS};
use crate::packed::{pack, unpack};
use std::sync::Arc;

/// The whole run's values per id in blocks of time.
#[derive(Debug)]
pub(crate) struct SeriesLog {
    /// When block 0 began, on the fold clock; `None` before the first
    /// fold.
    start: Option<u64>,
    /// The length of a block, ms: `BLOCK_MS`, doubled at each merge in pairs.
    block_ms: u64,
    /// The closed blocks, oldest first: as many as the open block's number (shared
    /// with the snapshots reports take, [`Blocks`]).
    closed: Vec<Arc<Block>>,
    /// The open block's tables, by id index.
    open: Vec<OpenId>,
    /// The ids with values in the open block, in order of their first.
    touched: Vec<u32>,
    /// Heap bytes of the closed blocks.
    closed_bytes: u64,
}

/// One id's tables in the open block.
#[derive(Debug, Default)]
struct OpenId {
    /// Whether the id is listed in `touched`.
    touched: bool,
    /// One table per sample kind, in order of first appearance (emptied, not removed,
    /// when a block closes).
    kinds: Vec<(SampleKind, Buckets)>,
}

/// Every block of the run, oldest first, the open one last as it was when taken: a
/// snapshot that a report turns into its series after the ledger's lock is released.
#[derive(Clone, Debug, Default)]
pub(crate) struct Blocks {
    /// The length of a block, ms.
    pub(crate) block_ms: u64,
    pub(crate) blocks: Vec<Arc<Block>>,
}

/// One block's values: per (id, kind) that recorded in it, its buckets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Block {
    /// By id index, ascending; the kinds of one id in no particular order.
    pub(crate) entries: Vec<Entry>,
}

/// The values of one (id, kind) in one block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The id's dense index.
    pub(crate) index: u32,
    pub(crate) kind: SampleKind,
    /// Its buckets, packed ([`pack`]).
    packed: Box<[u8]>,
}

impl Entry {
    /// The values of `kind` of id `index` in these buckets (ascending, none empty).
    pub(crate) fn new(index: u32, kind: SampleKind, buckets: &[(u64, u64)]) -> Entry {
        Entry {
            index,
            kind,
            packed: pack(buckets.iter().copied()),
        }
    }

    /// Ascending: each bucket's lowest value (raw ticks) and its count, none 0.
    pub(crate) fn buckets(&self) -> Vec<(u64, u64)> {
        unpack(&self.packed).collect()
    }
}

impl Default for SeriesLog {
    fn default() -> SeriesLog {
        SeriesLog {
            start: None,
            block_ms: BLOCK_MS,
            closed: Vec::new(),
            open: Vec::new(),
            touched: Vec::new(),
            closed_bytes: 0,
        }
    }
}

impl SeriesLog {
    /// A fold begins at `now_ms` on the fold clock: what it reads goes to the block
    /// `now_ms` falls in. The first fold starts block 0; a later block closes the open
    /// one (and adds an empty block for each block length that passed without a
    /// fold).
    pub(crate) fn begin_fold(&mut self, now_ms: u64) {
        let Some(start) = self.start else {
            self.start = Some(now_ms);
            return;
        };
        self.advance(now_ms.saturating_sub(start));
    }

    /// Folds `ticks`, values of `kind` of id `index`, into the open block.
    #[inline]
    pub(crate) fn record(&mut self, index: u32, kind: SampleKind, ticks: &[u64]) {
        let i = index as usize;
        if self.open.len() <= i {
            self.open.resize_with(i + 1, OpenId::default);
        }
        let id = &mut self.open[i];
        if !id.touched {
            id.touched = true;
            self.touched.push(index);
        }
        let k = match id.kinds.iter().position(|(k, _)| *k == kind) {
            Some(k) => k,
            None => {
                id.kinds.push((kind, Buckets::default()));
                id.kinds.len() - 1
            }
        };
        id.kinds[k].1.record_all(ticks.iter().copied());
    }

    /// Drops everything, and starts block 0 at `now_ms` (a
    /// [`reset`](crate::collect::reset)).
    pub(crate) fn reset(&mut self, now_ms: u64) {
        let _ = self.close();
        self.closed.clear();
        self.closed_bytes = 0;
        self.block_ms = BLOCK_MS;
        self.start = Some(now_ms);
    }

    /// The length of a block, ms.
    #[cfg(test)]
    fn block_ms(&self) -> u64 {
        self.block_ms
    }

    /// Every block, oldest first, the open one last (as it is now); none before the
    /// first fold. The closed blocks are shared, not copied.
    pub(crate) fn blocks(&self) -> Blocks {
        let blocks = match self.start {
            None => Vec::new(),
            Some(_) => (self.closed.iter().cloned())
                .chain(std::iter::once(Arc::new(self.snapshot())))
                .collect(),
        };
        Blocks {
            block_ms: self.block_ms,
            blocks,
        }
    }

    /// Tables in the open block (one per id and kind the run recorded), and the bytes
    /// the log holds on the heap.
    pub(crate) fn size(&self) -> (u64, u64) {
        let tables = self.open.iter().flat_map(|id| &id.kinds);
        let (mut count, mut bytes) = (0, self.closed_bytes);
        for (_, buckets) in tables {
            count += 1;
            bytes += buckets.heap_bytes();
        }
        let lists = self.open.capacity() * size_of::<OpenId>()
            + self.closed.capacity() * size_of::<Block>();
        (count, bytes + lists as u64)
    }

    /// Moves on to the block `elapsed_ms` after block 0 began, if it is a later one:
    /// closes the open block, merges blocks in pairs while that block would be past
    /// `MAX_BLOCKS`, and adds the empty blocks between.
    fn advance(&mut self, elapsed_ms: u64) {
        let mut to = elapsed_ms / self.block_ms;
        if to <= self.closed.len() as u64 {
            return;
        }
        let block = self.close();
        self.closed_bytes += bytes_of(&block);
        self.closed.push(Arc::new(block));
        while to >= MAX_BLOCKS as u64 {
            self.halve(to);
            to = elapsed_ms / self.block_ms;
        }
        if (self.closed.len() as u64) < to {
            let empty = Arc::new(Block::default());
            self.closed.resize(to as usize, empty);
        }
    }

    /// Merges the closed blocks in pairs and doubles the block length. `to` is the
    /// number of the block being opened, at the old length: at least as many blocks
    /// are closed, so an unpaired last block pairs with an empty one, never with the
    /// open block.
    fn halve(&mut self, to: u64) {
        debug_assert!(self.closed.len() as u64 <= to);
        let old = std::mem::take(&mut self.closed);
        let paired = old.len() / 2;
        let mut blocks = old.into_iter();
        for _ in 0..paired {
            let (a, b) = (blocks.next(), blocks.next());
            self.closed.push(Arc::new(merge(
                &a.unwrap_or_default(),
                &b.unwrap_or_default(),
            )));
        }
        self.closed.extend(blocks);
        self.block_ms *= 2;
        self.closed_bytes = self.closed.iter().map(|b| bytes_of(b)).sum();
    }

    /// The open block as a closed one, its tables emptied (their memory kept).
    fn close(&mut self) -> Block {
        self.touched.sort_unstable();
        let mut entries = Vec::with_capacity(self.touched.len());
        for &index in &self.touched {
            let id = &mut self.open[index as usize];
            id.touched = false;
            for (kind, buckets) in &mut id.kinds {
                let ascending = buckets.ascending();
                if !ascending.is_empty() {
                    entries.push(Entry::new(index, *kind, &ascending));
                    buckets.clear();
                }
            }
        }
        self.touched.clear();
        Block { entries }
    }

    /// The open block's tables as a closed block, left as they are.
    fn snapshot(&self) -> Block {
        let mut touched = self.touched.clone();
        touched.sort_unstable();
        let entries = touched
            .into_iter()
            .flat_map(|index| {
                let kinds = &self.open[index as usize].kinds;
                let kinds = kinds
                    .iter()
                    .map(|(kind, buckets)| (kind, buckets.ascending()));
                kinds
                    .filter(|(_, ascending)| !ascending.is_empty())
                    .map(move |(kind, ascending)| Entry::new(index, *kind, &ascending))
            })
            .collect();
        Block { entries }
    }
}

/// Heap bytes of a closed block.
fn bytes_of(block: &Block) -> u64 {
    let packed: usize = block.entries.iter().map(|e| e.packed.len()).sum();
    (block.entries.capacity() * size_of::<Entry>() + packed) as u64
}

/// Both blocks' values together.
fn merge(a: &Block, b: &Block) -> Block {
    let mut entries = Vec::with_capacity(a.entries.len().max(b.entries.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.entries.len() || j < b.entries.len() {
        let index = match (a.entries.get(i), b.entries.get(j)) {
            (Some(x), Some(y)) => x.index.min(y.index),
            (Some(x), None) => x.index,
            (None, Some(y)) => y.index,
            (None, None) => unreachable!("the loop runs while one has entries"),
        };
        let mine = run_of(&a.entries[i..], index);
        let theirs = run_of(&b.entries[j..], index);
        (i, j) = (i + mine.len(), j + theirs.len());
        for x in mine {
            match theirs.iter().find(|y| y.kind == x.kind) {
                Some(y) => {
                    let both = add_buckets(&x.buckets(), &y.buckets());
                    entries.push(Entry::new(x.index, x.kind, &both));
                }
                None => entries.push(x.clone()),
            }
        }
        let new = theirs
            .iter()
            .filter(|y| mine.iter().all(|x| x.kind != y.kind));
        entries.extend(new.cloned());
    }
    Block { entries }
}

/// The leading entries of `entries` of id `index`.
fn run_of(entries: &[Entry], index: u32) -> &[Entry] {
    let n = entries.iter().take_while(|e| e.index == index).count();
    &entries[..n]
}

/// Two ascending bucket lists added up, still ascending.
fn add_buckets(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(&(x, m)), Some(&(y, n))) if x == y => {
                out.push((x, m + n));
                (i, j) = (i + 1, j + 1);
            }
            (Some(&x), Some(&y)) if x.0 < y.0 => {
                out.push(x);
                i += 1;
            }
            (Some(_), Some(&y)) | (None, Some(&y)) => {
                out.push(y);
                j += 1;
            }
            (Some(&x), None) => {
                out.push(x);
                i += 1;
            }
            (None, None) => break,
        }
    }
    out
}

/// The log as the fold's observer: it sees every fold and every sample.
impl FoldWatch for SeriesLog {
    fn begin_fold(&mut self, now_ms: u64) {
        SeriesLog::begin_fold(self, now_ms);
    }

    fn reset(&mut self, now_ms: u64) {
        SeriesLog::reset(self, now_ms);
    }

    fn size(&self) -> (u64, u64) {
        SeriesLog::size(self)
    }

    fn armed(&self) -> bool {
        true
    }

    fn samples(&mut self, _: u64, _: usize, idx: u32, kind: SampleKind, ticks: &[u64]) {
        self.record(idx, kind, ticks);
    }
}

#[cfg(test)]
mod tests;
