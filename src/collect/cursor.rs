//! Interval reads: what was recorded since the previous one, the basis of periodic
//! reports.

use super::{Anomalies, Capture, capture};
use crate::record::registry::FOLDED_NAME;
use std::collections::HashMap;

/// Hands out only what was recorded since the previous call: the basis of periodic
/// reports.
///
/// Each call captures everything and keeps, per (thread, id), only samples whose index
/// in the recording sequence is past the previous call's `seen`; `seen` becomes the
/// number recorded since then, and anomaly counters become increments too. Samples
/// recorded and already overwritten between two calls count in `seen` but are gone.
///
/// ```
/// use latte::Id;
/// use latte::collect::Cursor;
/// static TICK: Id = Id::new("doc_cursor");
/// let mut cursor = Cursor::new();
/// latte::record(&TICK, 1);
/// latte::record(&TICK, 2);
/// let first = cursor.capture();
/// assert_eq!(first.component("doc_cursor").unwrap().samples.len(), 2);
/// latte::record(&TICK, 3);
/// let second = cursor.capture();
/// let c = second.component("doc_cursor").unwrap();
/// assert_eq!((c.seen, c.samples[0].ticks()), (1, 3));
/// assert!(cursor.capture().component("doc_cursor").is_none()); // nothing new
/// ```
#[derive(Debug, Default)]
pub struct Cursor {
    seen: HashMap<(u64, &'static str), u64>,
    anomalies: HashMap<u64, Anomalies>,
    teardown_drops: u64,
}

impl Cursor {
    /// A cursor whose first capture returns everything recorded so far.
    pub fn new() -> Cursor {
        Cursor::default()
    }

    /// Everything recorded since the previous call (or since the start).
    ///
    /// The `<exited threads>` entry (exited threads folded together once more than
    /// [`max_exited_threads`](crate::Builder::max_exited_threads) are kept) is left out:
    /// the agent folds only threads its periodic capture has already seen.
    pub fn capture(&mut self) -> Capture {
        let mut capture = capture();
        capture
            .threads
            .retain(|t| t.name != FOLDED_NAME || t.serial != 0);
        for t in &mut capture.threads {
            t.components.retain_mut(|c| {
                let mark = self.seen.entry((t.serial, c.name)).or_insert(0);
                let since = (*mark).min(c.seen);
                let skip = since.saturating_sub(c.first).min(c.samples.len() as u64) as usize;
                c.samples.drain(..skip);
                c.first += skip as u64;
                c.seen -= since;
                *mark += c.seen;
                c.seen > 0
            });
            let before = self
                .anomalies
                .insert(t.serial, t.anomalies)
                .unwrap_or_default();
            t.anomalies = t.anomalies.since(&before);
        }
        capture
            .threads
            .retain(|t| !t.components.is_empty() || t.anomalies.total() > 0);
        let drops = capture.teardown_drops;
        capture.teardown_drops = drops.saturating_sub(self.teardown_drops);
        self.teardown_drops = drops;
        capture
    }
}
