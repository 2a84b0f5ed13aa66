//! Allocation-free scopes: the names declared ([`forbid`]), the nodes that inherit
//! the rule, a thread's first breach, and [`check_no_alloc`].

use super::{Cells, uncounted};
use crate::record::id::name_of;
use crate::record::node::RingKey;
use crate::record::registry::ThreadShared;
use crate::record::ring::Ring;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Where a thread first allocated inside an allocation-free scope: the node (the
/// address of its ring's cells; 0 before any) and the size. Written once by the
/// thread.
#[derive(Default)]
pub(crate) struct Breach {
    node: AtomicU64,
    size: AtomicU64,
}

impl ThreadShared {
    /// The thread's first allocation in an allocation-free scope, if any: its node's
    /// position in the thread's ring list, and its size.
    pub(crate) fn first_breach(&self) -> Option<(u32, u64)> {
        let node = self.breach.node.load(Acquire);
        if node == 0 {
            return None;
        }
        let size = self.breach.size.load(Relaxed);
        let rings = self.rings();
        let at = rings
            .iter()
            .position(|(_, r)| std::ptr::from_ref(r.allocs()).expose_provenance() as u64 == node)?;
        Some((at as u32, size))
    }
}

/// Fails, naming the first one, if a scope declared allocation-free ([`forbid`])
/// allocated on any thread so far: for a test, at its end or after each frame. Adds
/// nothing to the recording path: it reads the threads' counters.
///
/// ```
/// // No `Counting` allocator in this doctest, so nothing is counted.
/// latte::alloc::forbid(["doc_check_order_path"]);
/// latte::latte_start!("doc_check_order_path");
/// let id = [0_u8; 8];
/// latte::latte_stop!("doc_check_order_path");
/// latte::alloc::check_no_alloc()?;
/// # let _ = id;
/// # Ok::<(), latte::Error>(())
/// ```
pub fn check_no_alloc() -> Result<(), crate::error::Error> {
    uncounted(|| {
        let view = crate::record::registry::global().view();
        let names = crate::record::id::names();
        let found = view.live.iter().find_map(|t| {
            let count = t.counters.read().alloc_breaches;
            let path = t.first_breach().map(|(at, size)| {
                let rings = t.rings();
                let keys: Vec<RingKey> = rings.iter().map(|(k, _)| *k).collect();
                (path_of(&keys, at, &names), size)
            });
            (count > 0).then(|| (t.name.clone(), count, path))
        });
        let found = found.or_else(|| {
            view.exited.iter().find_map(|c| {
                let path = c.first_breach.map(|(at, size)| {
                    let keys: Vec<RingKey> = c.components.iter().map(|r| r.key).collect();
                    (path_of(&keys, at, &names), size)
                });
                (c.anomalies.alloc_breaches > 0)
                    .then(|| (c.name.clone(), c.anomalies.alloc_breaches, path))
            })
        });
        match found {
            None => Ok(()),
            Some((thread, count, first)) => {
                let (path, size) = first.unwrap_or_default();
                Err(crate::error::Error::Allocated {
                    thread,
                    count,
                    path,
                    size,
                })
            }
        }
    })
}

/// The ids from the root down to the node at `at` of a thread's list `keys`.
fn path_of(keys: &[RingKey], at: u32, names: &[&'static str]) -> Vec<String> {
    let parent = |k: usize| keys.get(k)?.parent.map(|p| p as usize);
    let name = |k: usize| keys.get(k).and_then(|key| names.get(key.idx as usize));
    let path = crate::record::node::path_to(at as usize, parent);
    path.into_iter()
        .map(|k| name(k).copied().unwrap_or("?").to_owned())
        .collect()
}

/// The ids declared allocation-free, by name.
static FORBIDDEN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Set by the first [`forbid`]: until then a new node does not take the lock.
static ANY: AtomicBool = AtomicBool::new(false);

fn forbidden() -> MutexGuard<'static, BTreeSet<String>> {
    FORBIDDEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Marks the nodes of `rings` (just added to `shared`'s list, in order) whose id was
/// declared allocation-free, or whose parent node is: a node inherits the rule.
///
/// Against a [`forbid`] on another thread: the rings are in the thread's list before
/// `ANY` is read. If `forbid` took the list's lock after this thread added them, its
/// walk finds and marks them; if before, its store of `ANY` (made before it took that
/// lock) happens before this thread's read, which sees it, and the names are read here
/// under `FORBIDDEN`, which `forbid` holds until its walk is done. Either way a node of
/// a declared id is marked.
pub(crate) fn inherit(shared: &ThreadShared, rings: &[(RingKey, Arc<Ring>)]) {
    if !ANY.load(Relaxed) {
        return;
    }
    let names = forbidden();
    let list = shared.rings();
    for (key, ring) in rings {
        let named = name_of(key.idx).is_some_and(|n| names.contains(n));
        let parent = key.parent.and_then(|p| list.get(p as usize));
        if named || parent.is_some_and(|(_, r)| r.allocs().forbidden()) {
            ring.allocs().forbid();
        }
    }
}

/// Declares the scopes named `names` allocation-free: an allocation counted while one
/// of them, or a scope opened inside one, is the innermost open scope on its thread is
/// an anomaly (`alloc_breaches`), and the report names the first one's scope and
/// size. Applies to scopes already running and to later ones, on every thread; needs a
/// [`Counting`](super::Counting) allocator installed (without one nothing is counted).
///
/// For a test, [`check_no_alloc`] fails loudly when any such scope allocated.
///
/// ```
/// latte::alloc::forbid(["doc_forbid_risk"]);
/// latte::latte_start!("doc_forbid_risk");
/// let sum: u64 = (1..=10).sum();
/// latte::latte_stop!("doc_forbid_risk");
/// assert_eq!(sum, 55);
/// // No allocator counts here (it is not installed in this doctest): nothing to find.
/// assert!(latte::alloc::check_no_alloc().is_ok());
/// ```
pub fn forbid<S: AsRef<str>>(names: impl IntoIterator<Item = S>) {
    uncounted(|| {
        // Under the lock until every existing node is marked (see `inherit`).
        let mut set = forbidden();
        ANY.store(true, Relaxed);
        set.extend(names.into_iter().map(|n| n.as_ref().to_owned()));
        // Nodes that exist already: every live thread's, parents before children.
        for thread in crate::record::registry::global().view().live.iter() {
            let list = thread.rings();
            let mut flags: Vec<bool> = Vec::with_capacity(list.len());
            for (key, ring) in list.iter() {
                let named = name_of(key.idx).is_some_and(|n| set.contains(n));
                let parent = key.parent.and_then(|p| flags.get(p as usize).copied());
                let forbidden = named || parent == Some(true) || ring.allocs().forbidden();
                if forbidden {
                    ring.allocs().forbid();
                }
                flags.push(forbidden);
            }
        }
    });
}

/// Counts an allocation of `size` bytes in `cells`, a node declared allocation-free,
/// as an anomaly of its thread; the first is kept with its node.
#[cold]
#[inline(never)]
pub(super) fn breach(cells: &Cells, shared: &ThreadShared, size: u64) {
    let count = &shared.counters.alloc_breaches;
    let n = count.load(Relaxed);
    count.store(n.saturating_add(1), Relaxed);
    if n == 0 {
        // The node: the ring whose cells these are.
        let ring = std::ptr::from_ref(cells).expose_provenance() as u64;
        // The size before the node, which says it is there (`first_breach`).
        shared.breach.size.store(size, Relaxed);
        shared.breach.node.store(ring, Release);
    }
}
