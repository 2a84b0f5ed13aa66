//! The clock (`src/clock/`): what the report says of it, and the calibration of the
//! counter against the OS clock. The decision table of platform facts and this
//! machine's facts are the unit tests of `src/platform/` (`platform::tests`): the facts
//! and `decide` are the crate's own.
//!
//! One binary for the stage; its tests run on several threads of one process. None
//! chooses a clock or changes a setting: the test that forces the hardware clock
//! (`aarch64_counter.rs`) and those on the mock clock (`mock_clock/`) have binaries of
//! their own.

mod calibration;
mod environment;
