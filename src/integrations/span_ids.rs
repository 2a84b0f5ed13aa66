//! The `tracing` bridge's components: a span's by its callsite (made once per
//! callsite), or by its `latte.id` field; an event's by its callsite.

use crate::record::Id;
use std::collections::HashMap;
use std::sync::{LazyLock, PoisonError, RwLock};
use tracing_core::callsite::Identifier;
use tracing_core::field::{Field, Visit};
use tracing_core::{Metadata, span};

/// The ids of one span callsite, made once and kept for the process.
pub(super) struct CallsiteIds {
    pub(super) busy: Id,
    lifetime: Id,
    poll: Id,
    /// The callsite's `latte.id` field, if it declares one.
    named_by: Option<Field>,
}

/// A new span's components: busy, lifetime, per poll.
pub(super) struct SpanIds {
    pub(super) busy: &'static Id,
    pub(super) lifetime: &'static Id,
    pub(super) poll: &'static Id,
}

/// The ids of a callsite: a read-locked lookup by the callsite's address (not its
/// name), made once per span creation or per event.
fn cached<T: Sync + 'static>(
    cache: &'static LazyLock<RwLock<HashMap<Identifier, &'static T>>>,
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

pub(super) fn span_ids(meta: &'static Metadata<'static>) -> &'static CallsiteIds {
    static CACHE: LazyLock<RwLock<HashMap<Identifier, &'static CallsiteIds>>> =
        LazyLock::new(Default::default);
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
    static CACHE: LazyLock<RwLock<HashMap<Identifier, &'static Id>>> =
        LazyLock::new(Default::default);
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
    };
    let Some(field) = &ids.named_by else {
        return callsite;
    };
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
    }
}
