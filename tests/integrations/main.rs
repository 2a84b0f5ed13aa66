//! How code reaches latte: the crate root's public API, `#[latte::timed]` and the id
//! macros (what they record, the errors they give), and the `tracing` bridge with
//! scoped subscribers.
//!
//! One binary for the stage; its tests run on several threads of one process, each
//! under ids and on threads of its own. None starts an agent or changes a setting.

#[path = "../common/mod.rs"]
mod common;

mod api_surface;
mod timed;
mod timed_ui;
mod tracing_bridge;
