//! Front ends over the recording API for code that is already instrumented another
//! way: today the `tracing` bridge. Each sits beside the macros, on top of `record`.
//!
//! | file | what |
//! |---|---|
//! | `tracing.rs` | `LatteLayer`: spans as scopes, named by their name or a `latte.id` field |
//! | `span_ids.rs` | a span's components: by callsite, or by its `latte.id` field |
//! | `span_cache.rs` | the layer's per-thread table from span id to component index and busy total; the busy totals |

#[cfg(feature = "tracing")]
mod span_cache;
#[cfg(feature = "tracing")]
mod span_ids;
#[cfg(feature = "tracing")]
pub mod tracing;
