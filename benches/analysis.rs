//! Placeholder: the analysis bench lands with the statistics work.
fn main() {}
