//! Collection (`src/collect/`): the rings read while threads record (captures,
//! snapshots, CSV), their capacity and wrap-around, the whole run folded from them
//! with every lost sample counted, its time structure (the series), the slowest
//! samples, and `reset()`.
//!
//! One binary for the stage; its tests run on several threads of one process. Each
//! records under ids and on threads of its own. A test that starts an agent, changes a
//! recorder setting (most here need small rings) or resets holds
//! `common::exclusive()`; every other test holds `common::shared()`, so it never runs
//! beside one.

#[path = "../common/mod.rs"]
mod common;

mod csv_export;
mod lost_samples;
mod reset;
mod rings;
mod series;
mod slowest;
mod snapshot_stress;
mod stress_64;
mod whole_run;
