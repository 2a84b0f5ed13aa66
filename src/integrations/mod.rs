//! Front ends over the recording API for code that is already instrumented another
//! way: today the `tracing` bridge. Each sits beside the macros, on top of `record`.
//!
//! | file | what |
//! |---|---|
//! | `tracing.rs` | `LatteLayer`: spans as scopes, named by their name or a `latte.id` field; `tracing/extensions.rs`, what a span keeps in its registry extensions and the slow enter and exit |
//! | `span_ids.rs` | a span's components: by callsite, or by its `latte.id` field |
//! | `span_cache.rs` | each thread's part of the spans it made or entered (components, summed polls, lifetime), and a close's sum of them; its loom model in `span_cache/` |

#[cfg(feature = "tracing")]
pub(crate) mod span_cache;
#[cfg(feature = "tracing")]
mod span_ids;
#[cfg(feature = "tracing")]
pub mod tracing;
