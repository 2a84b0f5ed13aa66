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
//! * **Busy time**, under the span's name: **one sample per span**, recorded when the
//!   span closes, on the thread that closes it: the sum of the ticks of all its
//!   enter/exit pairs, on every thread that entered it. A future wrapped with
//!   `.instrument(span)` (and an `#[tracing::instrument] async fn`) enters its span on
//!   every poll, so its busy sample is the time it spent running, not waiting, summed
//!   over its polls; `tracing` also enters the span once more when it drops the
//!   finished future, and that pair is in the sum too. Each enter is a Start on the
//!   entering thread's stack, so latte scopes opened inside nest under it and a
//!   report's `open now` lists the span while it is entered; each exit closes it there
//!   and adds its ticks to the span's total instead of recording them.
//! * **Per poll**, under `"<name> (poll)"`, only with
//!   [`per_poll(true)`](LatteLayer::per_poll): each enter/exit pair as one sample, on
//!   the exiting thread (`n + 1` samples for a future polled `n` times). They are the
//!   very ticks the busy total adds up.
//! * **Lifetime**, under `"<name> (lifetime)"`, only with
//!   [`span_lifetimes(true)`](LatteLayer::span_lifetimes): from the span's
//!   creation to its close, once per span, recorded on the closing thread.
//! * **Events as pulses** when [`event_pulses`](LatteLayer::event_pulses) is on: each
//!   event is a pulse of its callsite's name, so you get the time between successive
//!   events of one callsite on a thread.
//!
//! What a busy sample holds, exactly:
//!
//! * Raw counter ticks of each pair (stop read minus start read), added together. It
//!   is recorded as a scope of the layer's (start, stop) modes, so a calibrated report
//!   subtracts **one** scope overhead (the report's OVERHEAD matrix, that cell): a
//!   span entered once reads exactly as a scope does, and a span entered `n` times
//!   keeps `n - 1` overheads in its total. The per-poll samples are each corrected.
//! * A span entered on two threads at once adds both (busy time is time on threads,
//!   and may exceed the lifetime); a span entered again while already entered on the
//!   same thread adds both pairs, the inner one counted twice.
//! * A pair whose delta is implausible (the counter went backwards or jumped) is left
//!   out of the sum and counted, as a Stop counts it; a pair whose frame was given up
//!   on a full stack adds nothing. A span none of whose pairs was measured, and a span
//!   that never closes, record no busy sample.
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
//! a `&str` or a `%`-formatted value): the text goes through [`Id::intern`](crate::Id::intern), so
//! it is the same component as any other id of that text, and it counts against
//! [`Id::MAX_INTERNED`](crate::Id::MAX_INTERNED) (past it the span falls back to its static name). The
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
//! Each thread keeps its part of the spans it made or entered in a small direct-mapped
//! table of its own (one per layer and thread, 64 slots keyed by span id: one
//! multiply, a few loads, no lock): the span's components, the sum of the polls it
//! measured there, and, on the thread that made the span, its lifetime timer. The
//! thread remembers the table it used last, so a callback reaches it with one
//! thread-local load and a compare. A span's
//! component is resolved once, when it is made (a per-thread table of recent
//! callsites, then a read-locked map keyed by the callsite's address, or
//! [`Id::intern`](crate::Id::intern) of its `latte.id`). An enter is a latte Start; an
//! exit closes the scope on the stack and adds its ticks to the thread's part, where a
//! Stop would store a sample. Closing a span takes its parts out of every thread's
//! table (one load per thread that used the layer; just the closing thread's while it
//! is the only one), so a span id the registry hands out again never finds a stale
//! part, and records their sum. A span made, entered and closed on one thread touches
//! no registry data of the span, takes no lock and allocates nothing.
//!
//! Only a span's first enter on a thread that did not make it reads the registry (its
//! metadata, or the components a `latte.id` span keeps in its extensions). A thread
//! whose slot for a span holds another live span (more than a few dozen spans alive on
//! one thread at once) keeps its part in the span's extensions instead, under a lock;
//! each of its enters and exits of that span then reads the registry, and so does
//! every close while such a span is open. No syscall on any of these paths
//! (`tests/record/syscalls.rs`). The exit reads the clock before the lookup, so it
//! stays outside the measured span. `cargo bench --bench overhead` prints the layer's
//! own cost against a Fast Start+Stop, per enter and exit and per span's whole life;
//! figures in `docs/performance.md`.

use super::span_cache::{Found, Tables};
use super::span_ids::{event_id, span_ids};
use crate::clock::{self, Mode};
use crate::record::{self, Timer};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use tracing_core::{Event, Subscriber, span};
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
    per_poll: bool,
    /// Each thread's parts of the spans it made or entered.
    cache: Tables,
    /// Spans with a spilled part (in their extensions) not yet closed: while 0, a close looks at no
    /// span's extensions.
    spilled: AtomicUsize,
}

impl Clone for LatteLayer {
    /// The same settings, with an empty cache of its own.
    fn clone(&self) -> LatteLayer {
        LatteLayer::new()
            .modes(self.start, self.stop)
            .span_lifetimes(self.lifetimes)
            .event_pulses(self.pulses)
            .per_poll(self.per_poll)
    }
}

impl core::fmt::Debug for LatteLayer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LatteLayer")
            .field("start", &self.start)
            .field("stop", &self.stop)
            .field("lifetimes", &self.lifetimes)
            .field("pulses", &self.pulses)
            .field("per_poll", &self.per_poll)
            .finish_non_exhaustive()
    }
}

impl Default for LatteLayer {
    fn default() -> LatteLayer {
        LatteLayer::new()
    }
}

impl LatteLayer {
    /// Fast reads at both ends, one busy sample per span (no lifetimes, no per-poll
    /// samples), events ignored: a span costs about what a latte scope costs.
    pub const fn new() -> LatteLayer {
        LatteLayer {
            start: Mode::Fast,
            stop: Mode::Fast,
            lifetimes: false,
            pulses: false,
            per_poll: false,
            cache: Tables::new(),
            spilled: AtomicUsize::new(0),
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
    /// component `"<name> (lifetime)"`. Off by default: a lifetime is a second
    /// measurement per span, two more counter reads, so a span costs about twice as
    /// much with it (`cargo bench --bench overhead`, the span life rows). For an
    /// `async` span it is the answer to "how long did the request take, waiting
    /// included", where the busy time answers "how long did it run".
    ///
    /// ```
    /// use tracing_subscriber::layer::SubscriberExt;
    ///
    /// let layer = latte::tracing::LatteLayer::new().span_lifetimes(true);
    /// let subscriber = tracing_subscriber::registry().with(layer);
    /// tracing::subscriber::with_default(subscriber, || {
    ///     let span = tracing::info_span!("doc_lifetime");
    ///     std::thread::sleep(std::time::Duration::from_millis(2)); // made, not entered
    ///     span.in_scope(|| ());
    /// });
    /// let busy = latte::snapshot("doc_lifetime");
    /// let lifetime = latte::snapshot("doc_lifetime (lifetime)");
    /// assert_eq!((busy.len(), lifetime.len()), (1, 1));
    /// assert!(lifetime[0] > busy[0]); // the wait is in the lifetime only
    /// ```
    pub const fn span_lifetimes(mut self, enabled: bool) -> LatteLayer {
        self.lifetimes = enabled;
        self
    }

    /// Whether each event is a pulse of its callsite's name. Off by default.
    pub const fn event_pulses(mut self, enabled: bool) -> LatteLayer {
        self.pulses = enabled;
        self
    }

    /// Whether each enter/exit pair (each poll of an instrumented future) is also
    /// recorded, as one sample of its own, under `"<name> (poll)"`. Off by default:
    /// the span's busy time is then one sample per span, under its name, the sum of
    /// its polls (see the [module docs](self)). The per-poll samples are the very
    /// ticks the busy total adds up.
    ///
    /// ```
    /// use tracing::Instrument;
    /// use tracing_subscriber::layer::SubscriberExt;
    ///
    /// let layer = latte::tracing::LatteLayer::new().per_poll(true);
    /// let subscriber = tracing_subscriber::registry().with(layer);
    /// tracing::subscriber::with_default(subscriber, || {
    ///     let task = async {
    ///         for _ in 0..2 {
    ///             tokio::task::yield_now().await; // Pending once: one more poll
    ///         }
    ///     };
    ///     let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    ///     runtime.block_on(task.instrument(tracing::info_span!("doc_per_poll")));
    /// });
    /// // 3 polls, and the enter tracing makes to drop the finished future.
    /// assert_eq!(latte::snapshot("doc_per_poll (poll)").len(), 4);
    /// let busy = latte::snapshot("doc_per_poll");
    /// let polls = latte::snapshot("doc_per_poll (poll)");
    /// assert_eq!(busy, [polls.iter().sum::<u64>()]); // one sample: their sum
    /// ```
    pub const fn per_poll(mut self, enabled: bool) -> LatteLayer {
        self.per_poll = enabled;
        self
    }
}

mod extensions;

impl<S> Layer<S> for LatteLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        let callsite = span_ids(attrs.metadata());
        if callsite.named_by.is_some() {
            return self.new_named_span(attrs, id, &ctx);
        }
        let busy = callsite.busy.index();
        let poll = if self.per_poll {
            callsite.poll.index()
        } else {
            0
        };
        let lifetime = self
            .lifetimes
            .then(|| Timer::start(&callsite.lifetime, self.start, self.stop));
        self.keep(id, &ctx, (busy, poll), lifetime);
    }

    fn on_enter(&self, id: &span::Id, ctx: Context<'_, S>) {
        let cache = self.cache.local();
        match cache.map(|c| c.find(id.into_u64())) {
            Some(Found::Here(_, busy, _)) => record::start_index(busy, self.start),
            _ => self.slow(id, &ctx, cache, |busy, _| {
                record::start_index(busy, self.start);
                None
            }),
        }
    }

    fn on_exit(&self, id: &span::Id, ctx: Context<'_, S>) {
        let now = clock::read(self.stop);
        let cache = self.cache.local();
        match cache.map(|c| c.find(id.into_u64())) {
            Some(Found::Here(slot, busy, poll)) => {
                let record_as = self.per_poll.then_some(poll);
                if let Some(exit) = record::stop_unordered(busy, self.stop, now, record_as) {
                    slot.add(&exit);
                }
            }
            _ => self.slow(id, &ctx, cache, |busy, poll| {
                let record_as = self.per_poll.then_some(poll);
                record::stop_unordered(busy, self.stop, now, record_as)
            }),
        }
    }

    fn on_close(&self, id: span::Id, ctx: Context<'_, S>) {
        // Most spans live on one thread: their whole part is in its table.
        match self.cache.only_mine() {
            Some(mine) if self.spilled.load(Relaxed) == 0 => {
                if let Some(part) = mine.take(id.into_u64()) {
                    self.record(part);
                }
            }
            _ => self.close_slow(&id, &ctx),
        }
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if self.pulses {
            record::pulse(event_id(event.metadata()));
        }
    }
}
