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
//! # Cost
//!
//! A span's callsite is resolved to its ids once per thread (a process-wide map keyed
//! by the callsite, then the layer's per-thread map, in a `thread_local::ThreadLocal`,
//! keyed by the metadata's address: no string hashing, no lock on the way in and out). An enter or exit then costs the registry's
//! own span lookup (to find the metadata), that per-thread lookup, and a latte Start
//! or Stop. The Stop reads the clock before the lookups, so they stay outside the
//! measured span.
//! `cargo bench --bench overhead` prints the cost next to the raw macros.

use crate::clock::{self, Mode};
use crate::record::{self, Id, Timer};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{LazyLock, PoisonError, RwLock};
use thread_local::ThreadLocal;
use tracing_core::callsite::Identifier;
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
    /// Each thread's map from a callsite's metadata address to its ids.
    cache: ThreadLocal<RefCell<AddressMap>>,
}

/// A callsite's metadata address -> its ids.
type AddressMap = HashMap<usize, &'static CallsiteIds, BuildHasherDefault<AddressHasher>>;

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
}

/// What the layer keeps in each span's extensions (only when lifetimes are on).
struct SpanState {
    /// Held for its `Drop`, which records the span's lifetime.
    _lifetime: Timer<'static>,
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
    })
}

/// Hashes an address: one multiply, enough to spread aligned pointers.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = bytes.iter().fold(self.0, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

fn event_id(meta: &'static Metadata<'static>) -> &'static Id {
    static CACHE: LazyLock<RwLock<HashMap<Identifier, &'static Id>>> =
        LazyLock::new(Default::default);
    cached(&CACHE, meta, || Id::new(meta.name()))
}

impl LatteLayer {
    /// [`span_ids`] through this layer's per-thread cache keyed by the metadata's
    /// address: no lock on enter and exit. A callsite's metadata is `'static` and
    /// unique, so an entry never goes stale.
    ///
    /// During thread teardown it falls back to the shared map: `ThreadLocal` identifies
    /// threads through a thread-local guard of its own, which panics if touched after
    /// its destructor ran. `ALIVE` is first touched right after this thread's first use
    /// of a cache, so its destructor is registered after that guard's and runs before
    /// it (thread-local destructors run in reverse order of registration): while
    /// `ALIVE` is alive, the cache is safe. (Not covered: a thread whose very first
    /// span callback comes from a late thread-local destructor.)
    fn local_span_ids(&self, meta: &'static Metadata<'static>) -> &'static CallsiteIds {
        struct Alive;
        impl Drop for Alive {
            fn drop(&mut self) {}
        }
        thread_local! {
            /// Whether this thread has used a cache (no destructor: always readable).
            static STARTED: Cell<bool> = const { Cell::new(false) };
            static ALIVE: Alive = const { Alive };
        }
        let started = STARTED.with(Cell::get);
        if started && ALIVE.try_with(|_| ()).is_err() {
            return span_ids(meta); // thread teardown
        }
        let cache = self.cache.get_or_default();
        if !started {
            let _ = ALIVE.try_with(|_| ());
            STARTED.with(|s| s.set(true));
        }
        let key = std::ptr::from_ref(meta) as usize;
        if let Some(&ids) = cache.borrow().get(&key) {
            return ids;
        }
        let ids = span_ids(meta);
        cache.borrow_mut().insert(key, ids);
        ids
    }
}

impl<S> Layer<S> for LatteLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        if !self.lifetimes {
            return;
        }
        let Some(span) = ctx.span(id) else { return };
        let ids = self.local_span_ids(attrs.metadata());
        let lifetime = Timer::start(&ids.lifetime, self.start, self.stop);
        span.extensions_mut().insert(SpanState {
            _lifetime: lifetime,
        });
    }

    fn on_enter(&self, id: &span::Id, ctx: Context<'_, S>) {
        if let Some(meta) = ctx.metadata(id) {
            record::start(&self.local_span_ids(meta).busy, self.start);
        }
    }

    fn on_exit(&self, id: &span::Id, ctx: Context<'_, S>) {
        let now = clock::read(self.stop);
        if let Some(meta) = ctx.metadata(id) {
            record::stop_unordered(&self.local_span_ids(meta).busy, self.stop, now);
        }
    }

    fn on_close(&self, id: span::Id, ctx: Context<'_, S>) {
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
