//! Front ends over the recording API for code that is already instrumented another
//! way: today the `tracing` bridge. Each sits beside the macros, on top of `record`.

#[cfg(feature = "tracing")]
pub mod tracing;
