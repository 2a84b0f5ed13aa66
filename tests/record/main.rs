//! The recorder (`src/record/`): scopes, pulses and records on the calling thread, its
//! stack and every counted misuse, threads, ids, timers across threads; the release
//! build's record path, disassembled and interrupted by signals; the recording paths
//! held to no syscall.
//!
//! One binary for the stage; its tests run on several threads of one process. Each
//! records under ids and on threads of its own. A test that starts an agent or changes
//! a recorder setting holds `common::exclusive()`; every other test that records or
//! reads latte's state holds `common::shared()`, so it never runs beside one. Tests
//! that only build and run child processes (`disassembly`, `async_signal_safety`, `syscalls`)
//! hold neither.
//!
//! libtest starts a binary's tests in the order of their names. `async_signal_safety`'s
//! storm keeps one core busy for about 20 s in a child process and holds no turn, so
//! its name sorts first: it starts at once and the rest of the suite runs beside it on
//! the other core (33 s for the binary alone when it started halfway, 2026-11-29,
//! reference guest).

#[path = "../common/mod.rs"]
mod common;
mod objdump;

mod async_signal_safety;
mod cross_thread;
mod disassembly;
mod intern;
mod missed_stop;
mod modes;
mod pulse;
mod stack;
mod state_machine;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod syscalls;
mod teardown;
mod threads;
mod traps;
