//! What the layer keeps in a span's registry extensions, off the hot path: the
//! components of a span named by its `latte.id` field, and the parts of the threads
//! whose table slot for the span held another live span; and the slow enter and exit
//! that read them.

use super::LatteLayer;
use crate::integrations::span_cache::{Part, SpanCache, merge_into};
use crate::integrations::span_ids::{new_span_ids, span_ids};
use crate::record::{self, Exit, Timer};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, PoisonError};
use tracing_core::{Subscriber, span};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::{LookupSpan, SpanRef};

/// A span named by its `latte.id` field keeps its components in its extensions, for
/// the threads that enter it without having made it.
pub(super) struct Named {
    pub(super) busy: u32,
    pub(super) poll: u32,
}

/// The parts of the threads whose table slot for a span held another live span, summed
/// in the span's extensions (see `span_cache.rs`).
pub(super) struct Spilled {
    pub(super) busy: u32,
    pub(super) poll: u32,
    pub(super) part: Mutex<Part>,
}

impl Spilled {
    fn add(&self, exit: &Exit) {
        self.part
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(exit);
    }
}

impl LatteLayer {
    /// A new span whose callsite declares a `latte.id` field: its components are
    /// that field's text, interned, and kept in its extensions for the threads that
    /// enter it without having made it.
    #[cold]
    #[inline(never)]
    pub(super) fn new_named_span<S>(
        &self,
        attrs: &span::Attributes<'_>,
        id: &span::Id,
        ctx: &Context<'_, S>,
    ) where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let ids = new_span_ids(attrs, self.lifetimes, self.per_poll);
        let (busy, poll) = (
            ids.busy.index(),
            if self.per_poll { ids.poll.index() } else { 0 },
        );
        if ids.named
            && let Some(span) = ctx.span(id)
        {
            span.extensions_mut().insert(Named { busy, poll });
        }
        let lifetime = self
            .lifetimes
            .then(|| Timer::start(ids.lifetime, self.start, self.stop));
        self.keep(id, ctx, (busy, poll), lifetime);
    }

    /// Keeps this thread's part of a span it made: in its table, else (its slot
    /// holds another live span) in the span's extensions.
    #[inline(always)]
    pub(super) fn keep<S>(
        &self,
        id: &span::Id,
        ctx: &Context<'_, S>,
        (busy, poll): (u32, u32),
        lifetime: Option<Timer<'static>>,
    ) where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        // A span is most often entered first on the thread that made it: its first
        // enter then finds it in this thread's table.
        let refused = match self.cache.local() {
            Some(cache) => cache
                .insert_new(id.into_u64(), (busy, poll), lifetime)
                .err(),
            None => Some(Part::new(busy, poll, lifetime)),
        };
        if let Some(part) = refused {
            self.refused(id, ctx, part);
        }
    }

    #[cold]
    #[inline(never)]
    fn refused<S>(&self, id: &span::Id, ctx: &Context<'_, S>, part: Part)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        match ctx.span(id) {
            Some(span) => self.spill(&span, part),
            // Not in the registry: nothing to measure, and no lifetime to record.
            None => core::mem::forget(part),
        }
    }

    /// An enter or exit of a span that is not in this thread's table: its part is in
    /// the span's extensions, or this is the thread's first enter of it (its part is
    /// made here). `measure` gets the span's components and returns the poll to add.
    #[cold]
    #[inline(never)]
    pub(super) fn slow<S>(
        &self,
        id: &span::Id,
        ctx: &Context<'_, S>,
        cache: Option<&SpanCache>,
        measure: impl FnOnce(u32, u32) -> Option<Exit>,
    ) where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let Some(span) = ctx.span(id) else { return };
        let named = {
            let extensions = span.extensions();
            if let Some(spilled) = extensions.get::<Spilled>() {
                if let Some(exit) = measure(spilled.busy, spilled.poll) {
                    spilled.add(&exit);
                }
                return;
            }
            extensions.get::<Named>().map(|n| (n.busy, n.poll))
        };
        let (busy, poll) = named.unwrap_or_else(|| {
            let ids = span_ids(span.metadata());
            let poll = if self.per_poll { ids.poll.index() } else { 0 };
            (ids.busy.index(), poll)
        });
        let mut part = Part::new(busy, poll, None);
        if let Some(exit) = measure(busy, poll) {
            part.add(&exit);
        }
        let refused = match cache {
            Some(cache) => cache.insert(id.into_u64(), part).err(),
            None => Some(part),
        };
        if let Some(part) = refused {
            self.spill(&span, part);
        }
    }

    /// Records a closing span's parts, summed: its busy total, and its lifetime.
    #[inline(always)]
    pub(super) fn record(&self, part: Part) {
        // Every exit of the span happened before its close: the total is complete.
        if let Some(busy) = part.total {
            record::record_span(part.busy, busy, self.start, self.stop);
        }
        // The lifetime timer records when dropped.
        if let Some(lifetime) = part.lifetime {
            drop(lifetime);
        }
    }

    /// A close of a span whose parts may be in other threads' tables, or in its
    /// extensions.
    #[cold]
    #[inline(never)]
    pub(super) fn close_slow<S>(&self, id: &span::Id, ctx: &Context<'_, S>)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let mut parts = self.cache.take(id.into_u64());
        if self.spilled.load(Relaxed) > 0
            && let Some(span) = ctx.span(id)
            && let Some(spilled) = span.extensions_mut().remove::<Spilled>()
        {
            self.spilled.fetch_sub(1, Relaxed);
            let spilled = spilled
                .part
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner);
            let mut all = Some(spilled);
            if let Some(part) = parts {
                merge_into(&mut all, part, record::thread_serial());
            }
            parts = all;
        }
        if let Some(part) = parts {
            self.record(part);
        }
    }

    /// Keeps a thread's part of a span in the span's extensions.
    #[cold]
    #[inline(never)]
    pub(super) fn spill<'a, S: LookupSpan<'a>>(&self, span: &SpanRef<'a, S>, part: Part) {
        let mut extensions = span.extensions_mut();
        if let Some(spilled) = extensions.get_mut::<Spilled>() {
            let earlier = spilled
                .part
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner);
            earlier.merge(part, record::thread_serial());
            return;
        }
        extensions.insert(Spilled {
            busy: part.busy,
            poll: part.poll,
            part: Mutex::new(part),
        });
        // Before the span's close: a closer that reads 0 has no span to look at.
        self.spilled.fetch_add(1, Relaxed);
    }
}
