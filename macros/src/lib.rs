//! Procedural macros for `latte-telemetry`.
//!
//! This crate will carry `#[latte::timed]`; users depend on `latte-telemetry` only,
//! which re-exports what lives here. It is a workspace member from the start so the
//! layout matches the design, and is intentionally empty until the attribute lands.
