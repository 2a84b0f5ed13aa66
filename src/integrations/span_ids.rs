//! The `tracing` bridge's components: a span's by its callsite (made once per
//! callsite), or by its `latte.id` field; an event's by its callsite.

use crate::record::Id;
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{PoisonError, RwLock};
use tracing_core::callsite::Identifier;
use tracing_core::field::{Field, Visit};
use tracing_core::{Metadata, span};

/// The ids of one span callsite, made once and kept for the process.
pub(super) struct CallsiteIds {
    pub(super) busy: Id,
    pub(super) lifetime: Id,
    pub(super) poll: Id,
    /// The callsite's `latte.id` field, if it declares one.
    pub(super) named_by: Option<Field>,
}

/// A new span's components: busy, lifetime, per poll; and whether its `latte.id` field
/// named them (else they are its callsite's).
pub(super) struct SpanIds {
    pub(super) busy: &'static Id,
    pub(super) lifetime: &'static Id,
    pub(super) poll: &'static Id,
    pub(super) named: bool,
}

/// A map from a callsite to what is kept for it, for the process.
type ByCallsite<T> = RwLock<HashMap<Identifier, &'static T, BuildHasherDefault<AddressHasher>>>;

/// The empty map, as a `static`'s value.
const fn by_callsite<T>() -> ByCallsite<T> {
    RwLock::new(HashMap::with_hasher(BuildHasherDefault::new()))
}

/// Hashes a callsite's `Identifier`, which hashes the words of its pointer: an add and
/// a multiply per word and a rotation at the end (as `rustc-hash` 2 does), where the
/// default hasher (SipHash, for keys an attacker may choose) cost a span ~10 ns. A
/// callsite's address is the program's, not its input's.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = self
            .0
            .wrapping_add(word)
            .wrapping_mul(0xf135_7aea_2e62_a9c5);
    }

    /// The product's high bits are its best: rotated down to where the table's index
    /// is taken.
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// The ids of a callsite: a read-locked lookup by the callsite's address (not its
/// name), made once per span creation or per event.
fn cached<T: Sync + 'static>(
    cache: &'static ByCallsite<T>,
    meta: &'static Metadata<'static>,
    make: impl FnOnce() -> T,
) -> &'static T {
    let key = meta.callsite();
    if let Some(&ids) = cache
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return ids;
    }
    let mut map = cache.write().unwrap_or_else(PoisonError::into_inner);
    // One leak per callsite: bounded by the program's code, like the callsites are.
    map.entry(key)
        .or_insert_with(|| Box::leak(Box::new(make())))
}

/// Slots of each thread's table of recent span callsites.
const RECENT_SLOTS: usize = 16;

thread_local! {
    /// This thread's recent span callsites and their ids, direct-mapped by the
    /// metadata's address (one per callsite): a span made again at a callsite where
    /// this thread made one finds its ids without the shared map's lock.
    static RECENT: [Cell<Recent>; RECENT_SLOTS] = const { [const { Cell::new(None) }; RECENT_SLOTS] };
}

type Recent = Option<(&'static Metadata<'static>, &'static CallsiteIds)>;

/// The ids of a span callsite: from this thread's recent callsites, else from the
/// shared map (then kept as recent).
#[inline(always)]
pub(super) fn span_ids(meta: &'static Metadata<'static>) -> &'static CallsiteIds {
    let address = std::ptr::from_ref(meta).addr() as u64;
    let slot = ((address >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 60) as usize % RECENT_SLOTS;
    let recent = RECENT.try_with(|r| r[slot].get()).ok().flatten();
    if let Some((made_at, ids)) = recent
        && std::ptr::eq(made_at, meta)
    {
        return ids;
    }
    span_ids_slow(meta, slot)
}

#[cold]
#[inline(never)]
fn span_ids_slow(meta: &'static Metadata<'static>, slot: usize) -> &'static CallsiteIds {
    let ids = shared_span_ids(meta);
    let _ = RECENT.try_with(|r| r[slot].set(Some((meta, ids))));
    ids
}

fn shared_span_ids(meta: &'static Metadata<'static>) -> &'static CallsiteIds {
    static CACHE: ByCallsite<CallsiteIds> = by_callsite();
    let leaked = |suffix: &str| -> &'static str {
        Box::leak(format!("{} ({suffix})", meta.name()).into_boxed_str())
    };
    cached(&CACHE, meta, || CallsiteIds {
        busy: Id::new(meta.name()),
        lifetime: Id::new(leaked("lifetime")),
        poll: Id::new(leaked("poll")),
        named_by: meta.fields().field("latte.id"),
    })
}

pub(super) fn event_id(meta: &'static Metadata<'static>) -> &'static Id {
    static CACHE: ByCallsite<Id> = by_callsite();
    cached(&CACHE, meta, || Id::new(meta.name()))
}

/// Reads the text of a span's `latte.id` field.
struct NameVisitor<'f> {
    field: &'f Field,
    text: Option<String>,
}

impl Visit for NameVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field == self.field {
            self.text = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn core::fmt::Debug) {
        if field == self.field {
            self.text = Some(format!("{value:?}"));
        }
    }
}

/// The ids of a new span: its `latte.id` field's, interned, or its callsite's (also
/// when the interner refuses a new text). Lifetime and per-poll ids are interned only
/// when the layer records them.
#[inline(always)]
pub(super) fn new_span_ids(
    attrs: &span::Attributes<'_>,
    lifetimes: bool,
    per_poll: bool,
) -> SpanIds {
    let ids = span_ids(attrs.metadata());
    let callsite = SpanIds {
        busy: &ids.busy,
        lifetime: &ids.lifetime,
        poll: &ids.poll,
        named: false,
    };
    match &ids.named_by {
        None => callsite,
        Some(field) => named_span_ids(attrs, field, callsite, lifetimes, per_poll),
    }
}

/// The ids of a new span whose callsite declares a `latte.id` field.
#[cold]
#[inline(never)]
fn named_span_ids(
    attrs: &span::Attributes<'_>,
    field: &Field,
    callsite: SpanIds,
    lifetimes: bool,
    per_poll: bool,
) -> SpanIds {
    let mut visitor = NameVisitor { field, text: None };
    attrs.record(&mut visitor);
    let Some(text) = visitor.text else {
        return callsite;
    };
    let Ok(busy) = Id::intern(&text) else {
        return callsite;
    };
    let named = |on: bool, suffix: &str, fallback| match on {
        true => Id::intern(&format!("{text} ({suffix})")).unwrap_or(fallback),
        false => fallback, // not recorded
    };
    SpanIds {
        busy,
        lifetime: named(lifetimes, "lifetime", callsite.lifetime),
        poll: named(per_poll, "poll", callsite.poll),
        named: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More callsites than a thread's table has slots, so some share one: each still
    /// finds its own ids, first from the shared map, then again (evicting each other).
    #[test]
    fn callsites_sharing_a_recent_slot_each_find_their_own_ids() {
        macro_rules! metas {
            ($($name:literal),*) => {
                [$(tracing::info_span!($name).metadata().expect("enabled")),*]
            };
        }
        let metas = tracing::subscriber::with_default(tracing_subscriber::registry(), || {
            metas!(
                "recent_0",
                "recent_1",
                "recent_2",
                "recent_3",
                "recent_4",
                "recent_5",
                "recent_6",
                "recent_7",
                "recent_8",
                "recent_9",
                "recent_10",
                "recent_11",
                "recent_12",
                "recent_13",
                "recent_14",
                "recent_15",
                "recent_16",
                "recent_17",
                "recent_18",
                "recent_19",
                "recent_20",
                "recent_21",
                "recent_22",
                "recent_23"
            )
        });
        for _ in 0..3 {
            for meta in metas {
                let ids = span_ids(meta);
                assert_eq!(ids.busy.name(), meta.name());
                assert_eq!(ids.lifetime.name(), format!("{} (lifetime)", meta.name()));
            }
        }
    }
}
