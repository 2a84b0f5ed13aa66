//! Helpers shared by the integration tests.
#![allow(dead_code)]

use latte::{Capture, ComponentCapture, Sample, ThreadCapture};

/// The calling thread's part of a fresh capture.
pub fn mine() -> ThreadCapture {
    let name = std::thread::current().name().map(str::to_owned);
    let capture = latte::capture();
    let name = name.expect("test threads are named");
    capture
        .threads
        .into_iter()
        .find(|t| t.name == name && !t.exited)
        .expect("this thread has recorded")
}

/// The calling thread's component `id`, or `None` if it never stored a sample of it.
pub fn my_component(id: &str) -> Option<ComponentCapture> {
    mine().component(id).cloned()
}

/// Every thread named `name` in `capture`.
pub fn named<'a>(capture: &'a Capture, name: &'a str) -> impl Iterator<Item = &'a ThreadCapture> {
    capture.threads.iter().filter(move |t| t.name == name)
}

/// The calling thread's retained samples of `id` (panics if it has none).
pub fn my_samples(id: &str) -> Vec<Sample> {
    my_component(id)
        .unwrap_or_else(|| panic!("no samples of {id}"))
        .samples
}

/// A cloneable in-memory sink for agent tests.
#[derive(Clone, Default)]
pub struct SharedSink(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl SharedSink {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    /// Every JSON report written so far (the agent writes one per line).
    pub fn json_reports(&self) -> Vec<serde_json::Value> {
        self.text()
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON report per line"))
            .collect()
    }
}

impl std::io::Write for SharedSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The row of `component` in `thread`'s section of a JSON report, if any.
pub fn json_row<'a>(
    report: &'a serde_json::Value,
    thread: &str,
    component: &str,
) -> Option<&'a serde_json::Value> {
    report["threads"]
        .as_array()?
        .iter()
        .filter(|t| t["name"] == thread)
        .flat_map(|t| t["rows"].as_array().into_iter().flatten())
        .find(|r| r["component"] == component)
        .map(|r| &r["stats"])
}

/// One agent per process: agent tests in the same binary take this first.
pub fn one_agent() -> std::sync::MutexGuard<'static, ()> {
    static ONE_AGENT: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE_AGENT.lock().unwrap_or_else(|e| e.into_inner())
}
