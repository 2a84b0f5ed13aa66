//! The OTLP push as a collector sees it: decoded with `opentelemetry-proto` and
//! compared with the report (`decoding`), absent or stalled collectors (`hostile`),
//! and 4 processes' histograms merged against the exact quantiles (`fidelity`).
//!
//! `cargo test -p latte-telemetry-otlp --test push`

mod decoding;
mod fidelity;
mod hostile;

use std::sync::{Mutex, MutexGuard};

/// One agent per process: the tests take turns.
fn agent_turn() -> MutexGuard<'static, ()> {
    static AGENT: Mutex<()> = Mutex::new(());
    AGENT.lock().unwrap_or_else(|e| e.into_inner())
}
