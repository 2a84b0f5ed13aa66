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
#[cfg(feature = "tls")]
mod tls;

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};

/// One agent per process: the tests take turns.
fn agent_turn() -> MutexGuard<'static, ()> {
    static AGENT: Mutex<()> = Mutex::new(());
    AGENT.lock().unwrap_or_else(|e| e.into_inner())
}

/// A sink the test reads back.
#[derive(Clone, Default)]
pub(crate) struct Text(pub(crate) Arc<Mutex<Vec<u8>>>);

impl Write for Text {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Text {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// A quiet agent (no final report, output discarded) exporting to `otlp`.
fn quiet(otlp: latte_otlp::Otlp) -> latte::Guard {
    let quiet = latte::builder().final_report(false).sink(std::io::sink());
    quiet.exporter(otlp).start().unwrap()
}
