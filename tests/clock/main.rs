//! The clock and the platform (`src/clock/`, `src/platform/`): the decision table of
//! platform facts, this machine's facts, and the calibration of the counter against
//! the OS clock.
//!
//! One binary for the stage; its tests run on several threads of one process. None
//! chooses a clock or changes a setting: the test that forces the hardware clock
//! (`aarch64_counter.rs`) and those on the mock clock (`mock_clock/`) have binaries of
//! their own.

mod calibration;
mod platform;
