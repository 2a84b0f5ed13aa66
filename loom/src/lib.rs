//! Runs latte-telemetry's loom models: `tests/models.rs` calls each model the library
//! lists in `latte::__private::loom_models` (built only with `--cfg latte_loom`).
//!
//! ```text
//! RUSTFLAGS="--cfg latte_loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release -p latte-telemetry-loom [-- NAME-FILTER]
//! ```
//!
//! The package has no code of its own.
