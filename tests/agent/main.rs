//! The agent (`src/agent/`): its lifecycle, its settings at and past their limits,
//! periodic and on-request reports, the drain's placement, what it survives, the
//! defaults of `latte::init()`, the exporters it drives, and the final report when the process is ended.
//!
//! One binary for the stage. There is one agent per process and its settings outlive
//! it, so every test that starts one holds `common::exclusive()`: they run one at a
//! time, and the settings are back at their defaults after each. The tests that run
//! their cases in child processes of this binary (`exits`, `init_defaults`) touch no
//! latte state here and hold nothing.

#[path = "../common/mod.rs"]
mod common;

mod exits;
mod exporters;
mod flight;
mod frames;
mod growth;
mod init_defaults;
mod lifecycle;
mod limits;
mod periodic;
mod placement;
mod placement_windows;
mod report_now;
mod settings_prop;
mod survival;
