//! The `tracing` bridge's exit: a Stop that may close a scope out of LIFO order (a
//! span exited while spans entered after it are still entered), and hands the
//! scope's ticks back, so the bridge can add a span's polls together.
//!
//! The stack is the same as the macros': a span's enter is a plain Start. Only the
//! exit differs from a Stop, and only here and in `stack.rs`'s cold path; the macros'
//! hot Stop (`Local::stop`) is untouched.

use super::local::Local;
use super::sample::{BUSY, CPU_MASK, CPU_SHIFT, DELTA_MASK, START_MASK, START_SHIFT};
use super::stack::StackScope;
use super::word::{Word, signal_fence};
use crate::clock::{Mode, Stamp};

/// What the bridge's exit measured: the scope's ticks, its self time (its ticks less
/// those of the scopes closed inside it), and where it sat: its call-tree node and the
/// serial of the thread whose stack held it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Exit {
    pub(crate) ticks: u64,
    pub(crate) own: u64,
    pub(crate) node: u64,
    pub(crate) serial: u64,
}

impl Local {
    /// Closes the innermost open scope of `idx` wherever it is on the stack (the
    /// scopes above it stay open) and returns what it measured, when plausible (an
    /// implausible delta is counted, as a Stop counts it). With `record_as`, the ticks
    /// are also recorded as a sample of that id, as a Stop would record them (into the
    /// scope's node when it is `idx` itself).
    #[inline(always)]
    pub(crate) fn stop_unordered(
        &self,
        idx: u32,
        mode: Mode,
        now: Stamp,
        record_as: Option<u32>,
    ) -> Option<Exit> {
        let (scope, up) = match self.take_top(idx) {
            Some(top) => top,
            None => {
                let (k, scope) = self.take_unordered_slow(idx)?;
                (scope, self.stack()?.parent_kids(k))
            }
        };
        let ticks = now.ticks.wrapping_sub(scope.ticks);
        match record_as {
            // Recorded as the span's own scope: into its node, as a Stop.
            Some(id) if id == idx => self.close(idx, scope, up, mode, now),
            Some(id) => {
                self.finish(id, (scope.tag, scope.ticks), BUSY, mode, now);
                if ticks <= DELTA_MASK {
                    up.set(up.get().wrapping_add(ticks));
                }
            }
            None if ticks <= DELTA_MASK => up.set(up.get().wrapping_add(ticks)),
            None => {}
        }
        if ticks > DELTA_MASK {
            if record_as.is_none() {
                self.implausible(two_cpus(scope.tag, mode, now));
            }
            return None;
        }
        Some(Exit {
            ticks,
            own: ticks.saturating_sub(scope.kids),
            node: scope.node,
            serial: self.serial(),
        })
    }

    /// This thread's serial, 0 before it has its shared half.
    #[inline(always)]
    pub(crate) fn serial(&self) -> u64 {
        self.shared.get().map_or(0, |s| s.serial)
    }

    /// The hot case of [`stop_unordered`](Self::stop_unordered), as `Local::pop_top`
    /// does it for a Stop: the innermost open scope is `idx`'s. Closes it and returns
    /// its scope and its parent's children's ticks; `None` (nothing changed)
    /// otherwise.
    ///
    /// The same steps as `pop_top`, kept apart on purpose: `pop_top` written on top of
    /// this (one function for both) measured Hard Start+Stop / model 1.026 against 1.020
    /// (five alternating runs each, spreads 1.025-1.027 and 1.019-1.022; 2 vCPU AMD EPYC
    /// KVM guest, 2026-11-24), so the macros' Stop keeps its own code.
    #[inline(always)]
    fn take_top(&self, idx: u32) -> Option<(StackScope, &Word)> {
        let stack = self.stack()?;
        // Empty, past a full stack, or another id on top: the cold path.
        let top = self.depth.get().wrapping_sub(1) as usize;
        if top >= stack.len() {
            return None;
        }
        let tag = stack.tags[top].get();
        if tag as u32 != idx {
            return None;
        }
        // Below a full stack, position and slot are the same (see `Stack`).
        let scope = StackScope {
            tag,
            ticks: stack.ticks[top].get(),
            node: stack.nodes[top + 1].get(),
            kids: stack.kids[top + 1].get(),
        };
        // The scope is read before the depth goes down (see `Local::pop_top`).
        signal_fence();
        self.depth.set(top as u32);
        Some((scope, &stack.kids[top]))
    }
}

/// Whether a scope's two reads named two CPUs (both Mid or Hard), as `Local::finish`
/// decides it: an implausible delta is then a cross-core one.
#[inline(always)]
fn two_cpus(tag: u64, mode: Mode, now: Stamp) -> bool {
    mode != Mode::Fast
        && tag & START_MASK != (Mode::Fast as u64) << START_SHIFT
        && (tag >> CPU_SHIFT) & CPU_MASK != u64::from(now.cpu) & CPU_MASK
}
