//! The flight recorder, after recording: what triggers a dump, the fold's observer
//! that notices it, every thread's timeline read into a [`trace::Trace`], and the
//! dumps the drain writes. Its hot-path part, each thread's buffer of its recent
//! scopes, is `record/flight.rs`.
//!
//! | file | what |
//! |---|---|
//! | `settings.rs` | the recorder's window and entries, as the builder holds and checks them |
//! | `dump.rs` | what triggers a dump ([`DumpTrigger`]), where dumps go and their bounds |
//! | `triggers.rs` | the triggers: the fold's observer, noting the samples over a threshold |
//! | `timeline.rs` | every live thread's buffer read into a [`trace::Trace`] ([`timeline`]) |
//! | `trace.rs`, `trace/` | the `Trace` and its Chrome trace-event JSON, written and read |
//! | `dumper.rs` | the drain's side: after each fold, the slowest hit dumped |
//!
//! The agent wires it: the builder's settings, the triggers installed as the fold's
//! observer ([`collect`](crate::collect) names no feature), the dumper in the drain.

mod dump;
mod dumper;
mod settings;
#[cfg(feature = "json")]
mod timeline;
#[cfg(feature = "json")]
pub mod trace;
mod triggers;

pub(crate) use dump::Settings as DumpSettings;
pub use dump::{DEFAULT_DUMP_BYTES, DEFAULT_DUMP_DIR, DEFAULT_DUMP_FILES, DEFAULT_DUMP_GAP};
pub(crate) use dumper::Dumper;
pub(crate) use settings::Flight;
#[cfg(feature = "json")]
pub use timeline::timeline;
pub use triggers::DumpTrigger;
pub(crate) use triggers::arm;
