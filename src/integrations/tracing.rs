//! The `tracing` bridge: spans become latte scopes (feature `tracing`, on by default).
//!
//! ```
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! let subscriber = tracing_subscriber::registry().with(latte::tracing::LatteLayer::new());
//! tracing::subscriber::with_default(subscriber, || {
//!     for _ in 0..10 {
//!         let _enter = tracing::info_span!("doc_handle").entered();
//!     }
//! });
//! assert_eq!(latte::snapshot("doc_handle").len(), 10);
//! ```
//!
//! # What is measured
//!
//! * **Busy time**, under the span's name: each enter/exit pair is one Start/Stop on
//!   the entering thread. A future wrapped with `.instrument(span)` (and an
//!   `#[tracing::instrument] async fn`) enters its span on every poll, so it records
//!   **one sample per poll**: the time spent running, not the time spent waiting.
//!   `tracing` also enters the span once more when it drops the finished future, so a
//!   future polled `n` times records `n + 1` busy samples.
//! * **Lifetime**, under `"<name> (lifetime)"` when
//!   [`span_lifetimes`](LatteLayer::span_lifetimes) is on (default): from the span's
//!   creation to its close, once per span, recorded on the closing thread.
//! * **Events as pulses** when [`event_pulses`](LatteLayer::event_pulses) is on: each
//!   event is a pulse of its callsite's name, so you get the time between successive
//!   events of one callsite on a thread.
//!
//! # Correctness
//!
//! A span may be entered on several threads at once (each thread has its own stack),
//! entered twice on one thread (two nested scopes), and exited out of LIFO order:
//! then the span's own scope is closed and recorded wherever it is on the stack, the
//! scopes entered after it stay open, and the event is counted as an
//! `unordered_stops` anomaly. Nothing here panics.
//!
//! # Naming a span's component at run time
//!
//! A span is recorded under its static name, or under the value of its `latte.id`
//! field when it has one at creation (`tracing::info_span!("order", latte.id = %venue)`,
//! a `&str` or a `%`-formatted value): the text goes through [`Id::intern`], so
//! it is the same component as any other id of that text, and it counts against
//! [`Id::MAX_INTERNED`] (past it the span falls back to its static name). The
//! lifetime component is then `"<text> (lifetime)"`.
//!
//! ```
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! let subscriber = tracing_subscriber::registry().with(latte::tracing::LatteLayer::new());
//! tracing::subscriber::with_default(subscriber, || {
//!     for venue in ["XNAS", "XLON", "XNAS"] {
//!         let _enter = tracing::info_span!("send", latte.id = %format!("doc_send_{venue}")).entered();
//!     }
//! });
//! assert_eq!(latte::snapshot("doc_send_XNAS").len(), 2);
//! assert_eq!(latte::snapshot("doc_send_XLON").len(), 1);
//! ```
//!
//! # Cost
//!
//! A span's component is resolved once, when the span is made (a read-locked map keyed
//! by the callsite, or [`Id::intern`] of its `latte.id`), and kept in the span's
//! extensions. An enter or exit then looks the span up in this layer's per-thread
//! cache (a `thread_local::ThreadLocal` of a small direct-mapped table from span id to
//! component index: one multiply, two loads, no lock, no hashing of strings, no
//! registry lookup) and does a latte Start or Stop. Only a span's first enter on a
//! thread, or one whose cache slot another span took, reads the span's extensions from
//! the registry. Closing a span clears its slot in every thread's table (one load per
//! thread that used the layer), so a span id the registry hands out again never finds
//! a stale component. The Stop reads the clock before the lookup, so it stays outside
//! the measured span.
//! `cargo bench --bench overhead` prints the layer's own cost against a Fast
//! Start+Stop; figures in `docs/performance.md`.

use super::span_cache::{self, SpanCache};
use crate::clock::{self, Mode};
use crate::record::{self, Id, Timer};
use std::collections::HashMap;
use std::sync::{LazyLock, PoisonError, RwLock};
use thread_local::ThreadLocal;
use tracing_core::callsite::Identifier;
use tracing_core::field::{Field, Visit};
use tracing_core::{Event, Metadata, Subscriber, span};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// A `tracing_subscriber::Layer` that records spans as latte scopes. See the
/// [module docs](self).
pub struct LatteLayer {
    start: Mode,
    stop: Mode,
    lifetimes: bool,
    pulses: bool,
    /// Each thread's table from span id to component index.
    cache: ThreadLocal<SpanCache>,
}

impl Clone for LatteLayer {
    /// The same settings, with an empty cache of its own.
    fn clone(&self) -> LatteLayer {
        LatteLayer::new()
            .modes(self.start, self.stop)
            .span_lifetimes(self.lifetimes)
            .event_pulses(self.pulses)
    }
}

impl core::fmt::Debug for LatteLayer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LatteLayer")
            .field("start", &self.start)
            .field("stop", &self.stop)
            .field("lifetimes", &self.lifetimes)
            .field("pulses", &self.pulses)
            .finish_non_exhaustive()
    }
}

impl Default for LatteLayer {
    fn default() -> LatteLayer {
        LatteLayer::new()
    }
}

impl LatteLayer {
    /// Fast reads at both ends, span lifetimes on, events ignored.
    pub const fn new() -> LatteLayer {
        LatteLayer {
            start: Mode::Fast,
            stop: Mode::Fast,
            lifetimes: true,
            pulses: false,
            cache: ThreadLocal::new(),
        }
    }

    /// Timer mode for both ends of every span.
    pub const fn mode(self, mode: Mode) -> LatteLayer {
        self.modes(mode, mode)
    }

    /// Timer modes for span enter and span exit.
    pub const fn modes(mut self, start: Mode, stop: Mode) -> LatteLayer {
        self.start = start;
        self.stop = stop;
        self
    }

    /// Whether to record each span's lifetime (creation to close) as a separate
    /// component `"<name> (lifetime)"`. On by default.
    pub const fn span_lifetimes(mut self, enabled: bool) -> LatteLayer {
        self.lifetimes = enabled;
        self
    }

    /// Whether each event is a pulse of its callsite's name. Off by default.
    pub const fn event_pulses(mut self, enabled: bool) -> LatteLayer {
        self.pulses = enabled;
        self
    }
}

/// The ids of one span callsite, made once and kept for the process.
struct CallsiteIds {
    busy: Id,
    lifetime: Id,
    /// The callsite's `latte.id` field, if it declares one.
    named_by: Option<Field>,
}

/// What the layer keeps in each span's extensions.
struct SpanState {
    /// The component's index, under which enter/exit pairs record.
    busy: u32,
    /// Held for its `Drop`, which records the span's lifetime (when lifetimes are on).
    _lifetime: Option<Timer<'static>>,
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

fn span_ids(meta: &'static Metadata<'static>) -> &'static CallsiteIds {
    static CACHE: LazyLock<RwLock<HashMap<Identifier, &'static CallsiteIds>>> =
        LazyLock::new(Default::default);
    cached(&CACHE, meta, || CallsiteIds {
        busy: Id::new(meta.name()),
        lifetime: Id::new(Box::leak(
            format!("{} (lifetime)", meta.name()).into_boxed_str(),
        )),
        named_by: meta.fields().field("latte.id"),
    })
}

fn event_id(meta: &'static Metadata<'static>) -> &'static Id {
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

/// The busy and lifetime ids of a new span: its `latte.id` field's, interned, or
/// its callsite's (also when the interner refuses a new text).
fn new_span_ids(attrs: &span::Attributes<'_>, lifetimes: bool) -> (&'static Id, &'static Id) {
    let ids = span_ids(attrs.metadata());
    let Some(field) = &ids.named_by else {
        return (&ids.busy, &ids.lifetime);
    };
    let mut visitor = NameVisitor { field, text: None };
    attrs.record(&mut visitor);
    let Some(text) = visitor.text else {
        return (&ids.busy, &ids.lifetime);
    };
    let Ok(busy) = Id::intern(&text) else {
        return (&ids.busy, &ids.lifetime);
    };
    if !lifetimes {
        return (busy, &ids.lifetime); // the lifetime id is not used
    }
    match Id::intern(&format!("{text} (lifetime)")) {
        Ok(lifetime) => (busy, lifetime),
        Err(_) => (busy, &ids.lifetime),
    }
}

impl LatteLayer {
    /// The component index of an entered span: from this thread's table, else from
    /// the span's extensions (then cached).
    #[inline(always)]
    fn busy<S>(&self, id: &span::Id, ctx: &Context<'_, S>) -> Option<u32>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let key = id.into_u64();
        let cache = span_cache::local(&self.cache);
        if let Some(index) = cache.and_then(|c| c.get(key)) {
            return Some(index);
        }
        Self::busy_slow(key, id, ctx, cache)
    }

    #[cold]
    #[inline(never)]
    fn busy_slow<S>(
        key: u64,
        id: &span::Id,
        ctx: &Context<'_, S>,
        cache: Option<&SpanCache>,
    ) -> Option<u32>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let span = ctx.span(id)?;
        let index = match span.extensions().get::<SpanState>() {
            Some(state) => state.busy,
            None => span_ids(span.metadata()).busy.index(),
        };
        if let Some(cache) = cache {
            cache.insert(key, index);
        }
        Some(index)
    }
}

impl<S> Layer<S> for LatteLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let (busy, lifetime) = new_span_ids(attrs, self.lifetimes);
        let lifetime = self
            .lifetimes
            .then(|| Timer::start(lifetime, self.start, self.stop));
        span.extensions_mut().insert(SpanState {
            busy: busy.index(),
            _lifetime: lifetime,
        });
    }

    fn on_enter(&self, id: &span::Id, ctx: Context<'_, S>) {
        if let Some(index) = self.busy(id, &ctx) {
            record::start_index(index, self.start);
        }
    }

    fn on_exit(&self, id: &span::Id, ctx: Context<'_, S>) {
        let now = clock::read(self.stop);
        if let Some(index) = self.busy(id, &ctx) {
            record::stop_unordered(index, self.stop, now);
        }
    }

    fn on_close(&self, id: span::Id, ctx: Context<'_, S>) {
        let key = id.into_u64();
        for cache in self.cache.iter() {
            cache.forget(key);
        }
        if let Some(span) = ctx.span(&id) {
            // Dropping the state drops its lifetime timer, which records.
            drop(span.extensions_mut().remove::<SpanState>());
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if self.pulses {
            record::pulse(event_id(event.metadata()));
        }
    }
}
