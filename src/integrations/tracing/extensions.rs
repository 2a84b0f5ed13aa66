//! What the layer keeps in a span's registry extensions, off the hot path: the
//! components of a span named by its `latte.id` field, and the parts of the threads
//! whose table slot for the span held another live span; and the slow enter and exit
//! that read them.

use super::LatteLayer;
use crate::integrations::span_cache::{Part, SpanCache};
use crate::integrations::span_ids::span_ids;
use crate::record::{self, Exit};
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
