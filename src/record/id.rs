//! Call-site ids: `&'static str` names resolved once to a dense index.
//!
//! Every distinct text gets the next index from a global interner (index 0 is never
//! handed out, so 0 in an [`Id`] means "not resolved yet"). The hot path reads the
//! cached index with one relaxed load; only the first use of a call site hashes the
//! text. Two call sites with the same text get the same index, whatever the addresses
//! of their literals. [`Id::intern`] makes an [`Id`] of a text known only at run time,
//! the same component as a static `Id` of that text.

use crate::error::Error;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::Duration;

/// A component name with its resolved index cached.
///
/// The macros make one `static Id` per call site; use `Id` directly with the plain
/// functions ([`start`](crate::start), [`stop`](crate::stop), [`pulse`](crate::pulse),
/// [`scope`](crate::scope)).
///
/// ```
/// use latte::{Id, Mode};
/// static PARSE: Id = Id::new("parse");
/// latte::start(&PARSE, Mode::Fast);
/// latte::stop(&PARSE, Mode::Fast);
/// assert_eq!(PARSE.name(), "parse");
/// assert_eq!(latte::snapshot("parse").len(), 1);
/// ```
pub struct Id {
    name: &'static str,
    index: AtomicU32,
}

impl Id {
    /// The most distinct texts [`Id::intern`] accepts in one process: 65,536.
    ///
    /// Each costs about 100 bytes of the interner's memory (the leaked `Id`, the
    /// interner's map entries and name table) plus the text itself, never given back:
    /// at the limit, with 32-byte texts, about 8 MiB. What the id records costs more
    /// and is bounded elsewhere: a ring per thread that records it (8 bytes per sample
    /// of [`Builder::ring_capacity`](crate::Builder::ring_capacity)), charged to
    /// [`Builder::memory_cap`](crate::Builder::memory_cap). Static ids (`Id::new`, the
    /// macros) do not count.
    pub const MAX_INTERNED: usize = 1 << 16;

    /// An id named `name`. Cheap and `const`: nothing is resolved until first use.
    pub const fn new(name: &'static str) -> Id {
        Id {
            name,
            index: AtomicU32::new(0),
        }
    }

    /// The id of a text known only at run time (a venue, a symbol, a strategy): usable
    /// wherever a static [`Id`] is ([`start`](crate::start), [`stop`](crate::stop),
    /// [`pulse`](crate::pulse), [`record`](crate::record), [`scope`](crate::scope),
    /// [`Timer`](crate::Timer), [`prepare`](super::prepare),
    /// [`Id::expect_period`]).
    ///
    /// The same text always gives the same `&'static Id`, and it is the same component
    /// as a static `Id::new` of that text: their samples share one report row. The id
    /// comes back resolved, so recording through it costs what recording through a warm
    /// static id does.
    ///
    /// # Cost
    ///
    /// One lock of the process-wide interner and one hash of the text (a new text also
    /// copies it, once): about 52 counter ticks (20 ns) for a short text already
    /// interned, on the reference machine (`Id::intern of a known text` in
    /// `cargo bench --bench overhead`; `docs/performance.md`). Intern once, outside the
    /// hot loop, and keep the `&'static Id`: recording through it then costs what
    /// recording through a static id does (measured 1.003x).
    ///
    /// # Errors
    ///
    /// [`Error::InternLimit`] for a new text once [`Id::MAX_INTERNED`] texts have been
    /// interned (texts interned before still resolve). The memory each costs is under
    /// [`Id::MAX_INTERNED`].
    ///
    /// ```
    /// use latte::{Id, Mode, Report, ReportOptions};
    /// static STATIC: Id = Id::new("doc_intern_XNAS");
    /// for venue in ["XNAS", "XLON"] {
    ///     let id = Id::intern(&format!("doc_intern_{venue}")).unwrap();
    ///     latte::start(id, Mode::Fast);
    ///     latte::stop(id, Mode::Fast);
    /// }
    /// let again = Id::intern("doc_intern_XNAS").unwrap();
    /// assert!(std::ptr::eq(again, Id::intern("doc_intern_XNAS").unwrap()));
    /// latte::record(&STATIC, 100); // the same component as the interned text
    /// let report = Report::collect(&ReportOptions::default());
    /// let row = report.all_threads.iter().find(|r| r.component == "doc_intern_XNAS").unwrap();
    /// assert_eq!(row.stats.seen, 2);
    /// ```
    pub fn intern(name: &str) -> Result<&'static Id, Error> {
        // latte's own tables: not counted in the scope around the call.
        super::alloc::uncounted(|| Id::intern_now(name))
    }

    fn intern_now(name: &str) -> Result<&'static Id, Error> {
        let mut interner = interner();
        if let Some(&id) = interner.interned.get(name) {
            return Ok(id);
        }
        if interner.interned.len() >= Id::MAX_INTERNED {
            return Err(Error::InternLimit {
                limit: Id::MAX_INTERNED,
            });
        }
        // A text a static id named already is not copied again.
        let text: &'static str = match interner.by_name.get_key_value(name) {
            Some((&known, _)) => known,
            // One leak per distinct text, bounded by `MAX_INTERNED`.
            None => Box::leak(Box::from(name)),
        };
        let index = interner.index_of(text);
        let id: &'static Id = Box::leak(Box::new(Id {
            name: text,
            index: AtomicU32::new(index),
        }));
        interner.interned.insert(text, id);
        Ok(id)
    }

    /// The component name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Declares that this id marks a loop meant to run every `period` (a pulse id, say,
    /// or one iteration's scope). Its report rows then also carry tails corrected for
    /// coordinated omission ([`Corrected`](crate::report::Corrected)): a value of
    /// several periods also stands for the iterations it held up, which a loop that
    /// stalled never recorded. Applies to every report made afterwards, for every
    /// call site with this name; a zero period removes the declaration.
    ///
    /// ```
    /// use latte::{Id, Report, ReportOptions};
    /// use std::time::Duration;
    /// static TICK: Id = Id::new("doc_expect_period");
    /// TICK.expect_period(Duration::from_micros(100));
    /// latte::record(&TICK, 1_000_000); // one stall of many periods
    /// let report = Report::collect(&ReportOptions::default());
    /// let row = report.all_threads.iter().find(|r| r.component == "doc_expect_period").unwrap();
    /// let corrected = row.corrected.unwrap();
    /// assert!(corrected.count > row.stats.samples);
    /// ```
    pub fn expect_period(&self, period: Duration) {
        let index = self.index() as usize;
        let ns = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX);
        let mut interner = interner();
        if interner.periods.len() <= index {
            interner.periods.resize(index + 1, 0);
        }
        interner.periods[index] = ns;
    }

    /// The dense index of this id's name, resolving it on first use.
    #[inline(always)]
    pub(crate) fn index(&self) -> u32 {
        let i = self.index.load(Relaxed);
        if i != 0 { i } else { self.resolve() }
    }

    #[cold]
    #[inline(never)]
    fn resolve(&self) -> u32 {
        // latte's own allocation (the interner's tables), not the scope's around it.
        let i = super::alloc::uncounted(|| index_of(self.name));
        // Racing resolvers store the same value; Relaxed is enough for a cache.
        self.index.store(i, Relaxed);
        i
    }
}

impl core::fmt::Debug for Id {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Id")
            .field("name", &self.name)
            .field("index", &self.index.load(Relaxed))
            .finish()
    }
}

struct Interner {
    by_name: HashMap<&'static str, u32>,
    /// The ids [`Id::intern`] made, by text (at most [`Id::MAX_INTERNED`]).
    interned: HashMap<&'static str, &'static Id>,
    names: Vec<&'static str>,
    /// Declared periods in ns by index (0 or missing: none).
    periods: Vec<u64>,
}

static INTERNER: LazyLock<Mutex<Interner>> = LazyLock::new(|| {
    Mutex::new(Interner {
        by_name: HashMap::new(),
        interned: HashMap::new(),
        names: vec![""],
        periods: Vec::new(),
    })
});

fn interner() -> std::sync::MutexGuard<'static, Interner> {
    // The interner's state stays consistent across a panic (one insert per call).
    INTERNER.lock().unwrap_or_else(PoisonError::into_inner)
}

fn index_of(name: &'static str) -> u32 {
    interner().index_of(name)
}

impl Interner {
    /// The index of `name`, given the next one if it is new.
    fn index_of(&mut self, name: &'static str) -> u32 {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        let i = u32::try_from(self.names.len()).expect("fewer than 2^32 distinct ids");
        self.names.push(name);
        self.by_name.insert(name, i);
        i
    }
}

/// The index of `name` if any call site has used it.
pub(crate) fn lookup(name: &str) -> Option<u32> {
    interner().by_name.get(name).copied()
}

/// Declared periods in ns, indexed by id index (0 or past the end: none).
pub(crate) fn periods() -> Vec<u64> {
    interner().periods.clone()
}

/// The name of id index `idx`, if it has one.
pub(crate) fn name_of(idx: u32) -> Option<&'static str> {
    interner().names.get(idx as usize).copied()
}

/// All names, indexed by id index (index 0 is a placeholder).
pub(crate) fn names() -> Vec<&'static str> {
    interner().names.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_same_index() {
        let a: &'static str = Box::leak(String::from("id_test_same").into_boxed_str());
        let b: &'static str = Box::leak(String::from("id_test_same").into_boxed_str());
        assert_ne!(a.as_ptr(), b.as_ptr());
        let (x, y) = (Id::new(a), Id::new(b));
        assert_eq!(x.index(), y.index());
        assert_ne!(x.index(), 0);
        assert_ne!(Id::new("id_test_other").index(), x.index());
        assert_eq!(lookup("id_test_same"), Some(x.index()));
        assert_eq!(names()[x.index() as usize], "id_test_same");
    }
}
