#!/usr/bin/env bash
# The aarch64 stage: the library's suites whose code differs by architecture,
# cross-built for aarch64-unknown-linux-gnu in release and run under qemu-user.
#
# Installs what it needs: the target's standard library (rustup) and, with apt-get
# when missing, the cross linker, the aarch64 C library and qemu-user-static. If
# `rustup target add` fails (a toolchain download is not guaranteed here), the stage
# prints one `aarch64 stage SKIPPED: <reason>` line and ends successfully; any other
# failure fails CI.
#
# What runs: the library's unit tests and the suites of the code compiled differently
# for aarch64 (the counter and its frequency in src/clock/, the ring's claim and the
# atomics of the record path, the drain reading rings while threads write):
# aarch64_counter, accuracy, clock, record, churn, collect, and alloc_per_scope (the
# counting allocator's thread-locals and its counts at thread exit). The other suites (the
# agent, reports, integrations, the mock clock, scale tests, doctests) run the same
# portable code as on x86_64, where native CI runs them; under emulation they repeated
# it (about 5 minutes of a CI over 30; the whole suite ran here until 2026-11-27).
#
# Features: the defaults plus `test-hooks` (the integration tests turn `test-hooks` on
# themselves through the dev-dependency on latte). Nothing optional beyond that, so the
# stage does not depend on what later features pull in.
#
# Under qemu-user the generic timer ticks coarsely (CNTFRQ_EL0 62.5 MHz, measured step
# 63 ticks = ~1 us on the CI machine) and a counter read costs far more than on
# hardware: the tests' timing tolerances scale with the measured step, and the tests
# that check the hardware path force the hardware clock. Timings, overhead ratios and
# single-stepping cannot be measured under emulation (docs/platforms.md).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=aarch64-unknown-linux-gnu
step() { printf '\n=== aarch64: %s\n' "$*"; }

# The suites that run (see the top of the file).
SUITES=(--lib --test aarch64_counter --test accuracy --test clock --test record --test churn --test collect --test alloc_per_scope)

# Tests of those suites excluded, each with its reason. Exact names (`--exact`): a
# test is named by its module path inside its binary (`async_signal_safety::...` in tests/record/).
EXCLUDED=(
    # tests/record/async_signal_safety.rs: single-steps the probe with the x86 trap flag; qemu-user
    # does not let ptrace or the trap flag single-step emulated code, and the probe is
    # x86_64-only (it reads RIP from ucontext_t). It would skip itself, passing vacuously.
    async_signal_safety::every_instruction_of_start_stop_and_pulse_interrupted_disturbs_nothing
    # tests/record/async_signal_safety.rs: the same x86_64-only probe (tests/probes/signal_probe);
    # would skip itself.
    async_signal_safety::a_million_timer_signals_lose_and_corrupt_nothing
    # tests/record/disassembly.rs: checks the x86_64 instructions (RDTSC, RDTSCP, LFENCE)
    # of the record path with the host's x86 objdump; would skip itself. Its parser test
    # runs.
    disassembly::record_path_has_no_locks_or_mfence_and_the_right_timer_instructions
    # tests/record/syscalls.rs: puts a seccomp filter on a thread, which qemu-user
    # refuses (it would filter the emulator's own syscalls); the control case, too.
    syscalls::start_stop_pulse_frame_mark_and_a_span_s_life_make_no_syscall
    syscalls::a_syscall_in_a_measured_loop_kills_the_child
)
# Not run here, besides the portable suites: tests/fork.rs. Its tests fork a process
# whose other threads are running, and under qemu-user such a child could hang inside
# the emulator (sleeping, no CPU), though each passed alone there; qemu-user documents
# fork of a threaded guest as best effort. They pass natively in every CI run. (A child
# that inherited the drain's housekeeping lock held also slept forever, natively too,
# until that lock became per process on 2026-11-27: it may have been this.)

if ! command -v rustup >/dev/null; then
    echo "aarch64 stage SKIPPED: rustup is not installed, so the $TARGET standard library cannot be added"
    exit 0
fi
step "rustup target add $TARGET"
if ! rustup target list --installed | grep -qx "$TARGET"; then
    if ! rustup target add "$TARGET"; then
        echo "aarch64 stage SKIPPED: \`rustup target add $TARGET\` failed (toolchain download unavailable)"
        exit 0
    fi
fi

step "cross linker, aarch64 C library, qemu-user (apt-get only when missing)"
missing=()
command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu)
[ -e /usr/aarch64-linux-gnu/lib/crt1.o ] || missing+=(libc6-dev-arm64-cross)
command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
if ((${#missing[@]})); then
    apt-get update
    apt-get install -y "${missing[@]}"
fi

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64-static -L /usr/aarch64-linux-gnu"
export CARGO_TARGET_DIR=target/aarch64

# No clippy for this target: the code that differs by architecture (src/clock/, the
# ring's claim off x86_64) is linted for aarch64 by the Apple silicon check
# (.ci/typecheck-targets.sh), and the test build below compiles every line of the
# library for aarch64 Linux. (Its own clippy pass cost 69 s of a CI over 30 minutes.)

skips=()
for name in "${EXCLUDED[@]}"; do skips+=(--skip "$name"); done
step "tests under qemu-user, release (${SUITES[*]}; excluded: ${EXCLUDED[*]})"
cargo test --release --target "$TARGET" -p latte-telemetry --features test-hooks \
    "${SUITES[@]}" -- --exact "${skips[@]}"
