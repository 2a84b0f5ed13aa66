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
