//! How code reaches latte: the crate root's public API, what `#[latte::timed]`
//! records, and the `tracing` bridge with scoped subscribers. (The errors the macros
//! give are the macros crate's test, `macros/tests/ui.rs`.)
//!
//! One binary for the stage; its tests run on several threads of one process, each
//! under ids and on threads of its own. None starts an agent or changes a setting.

#[path = "../common/mod.rs"]
mod common;

mod api_surface;
mod timed;
mod tracing_bridge;
