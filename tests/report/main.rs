//! From collected data to what a reader sees (`src/analyze/`, `src/report/`): the
//! statistics against plain oracles, the headline, focus, the table (snapshots,
//! hostile ids, the demo's layout), JSON, every anomaly in every renderer.
//!
//! One binary for the stage; its tests run on several threads of one process. Most
//! build their reports by hand or record under ids and on threads of their own. The
//! two that start an agent (with the default settings) hold `common::exclusive()`:
//! one agent at a time. Nothing here changes a recorder setting.

#[path = "../common/mod.rs"]
mod common;

mod anomalies;
mod focus;
mod headline;
mod json;
mod layout;
mod seed_preset;
mod statistics;
mod table;
mod table_ids;
mod trace;
