//! The OTLP push as a collector sees it: decoded with `opentelemetry-proto` and
//! compared with the report (`decoding`), absent or stalled collectors (`hostile`),
//! 4 processes' histograms merged against the exact quantiles (`fidelity`), HTTPS
//! through a configured CA with a header and gzip (`tls`), busy collectors and
//! retries (`retry`), delta temporality (`delta`) and the OpenTelemetry variables
//! (`env`), against a scripted collector (`collector`).
//!
//! `cargo test -p latte-telemetry-otlp --test push`

mod collector;
mod decoding;
mod delta;
mod env;
mod fidelity;
mod hostile;
mod retry;
mod tls;

use std::sync::{Mutex, MutexGuard};

/// One agent per process: the tests take turns.
fn agent_turn() -> MutexGuard<'static, ()> {
    static AGENT: Mutex<()> = Mutex::new(());
    AGENT.lock().unwrap_or_else(|e| e.into_inner())
}
