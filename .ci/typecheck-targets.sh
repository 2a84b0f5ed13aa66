#!/usr/bin/env bash
# The type-check stage: clippy with warnings denied for the targets nothing here can
# run: macOS on Apple silicon and on Intel, and Windows with the MSVC toolchain (the GNU
# one runs under Wine in .ci/windows.sh). Checking needs no linker and no SDK.
#
# Each target's check covers the packages' libraries and binaries, where the code that
# differs by OS and architecture lives (src/platform/gather/, src/agent/placement/,
# src/agent/signals/, src/clock/), with every feature and as the lean core alone. The
# tests, examples and benches are left out to keep the stage short (about a minute a
# target): their code is the same on every Unix and is built for Linux natively and
# under qemu-user, and for Windows in the Wine stage. (`--all-targets` for
# aarch64-apple-darwin passed on 2026-11-27 and took 170 s.)
#
# If `rustup target add` fails (no toolchain download), the stage prints one
# `type-check stage SKIPPED: <reason>` line and ends successfully.
#
# Stage time on the developer machine (2 vCPU Intel Xeon KVM guest, target/xcheck
# empty, crates downloaded), 2026-11-27: see docs/platforms.md.
set -euo pipefail
cd "$(dirname "$0")/.."

# Apple silicon and MSVC check every package (MSVC stands for Windows in the tool's and
# the exporters' case: the Wine stage runs the library's packages only); Intel macOS
# the library alone, where all the code that differs from Apple silicon lives.
TARGETS=(aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-msvc)
export CARGO_TARGET_DIR=target/xcheck

if ! command -v rustup >/dev/null; then
    echo "type-check stage SKIPPED: rustup is not installed, so no standard library for other targets"
    exit 0
fi
for target in "${TARGETS[@]}"; do
    if ! rustup target list --installed | grep -qx "$target" && ! rustup target add "$target"; then
        echo "type-check stage SKIPPED: \`rustup target add $target\` failed (toolchain download unavailable)"
        exit 0
    fi
done

# Several targets per cargo invocation: the build scripts and proc macros are
# compiled for the host once and shared, and the two cores stay busy across targets.
started=$SECONDS
printf '\n=== type-check: aarch64-apple-darwin and x86_64-pc-windows-msvc, libraries and binaries (--workspace)\n'
cargo clippy --target aarch64-apple-darwin --target x86_64-pc-windows-msvc --workspace \
    --exclude latte-telemetry-otlp --all-features -- -D warnings
# The OTLP exporter without its `tls` feature: rustls's ring compiles C, and there is no
# C compiler here for these targets. The feature's own code (exporters/otlp/src/tls.rs)
# holds nothing that differs by OS; it is built and tested on Linux.
cargo clippy --target aarch64-apple-darwin --target x86_64-pc-windows-msvc \
    -p latte-telemetry-otlp --no-default-features -- -D warnings
printf '\n=== type-check: x86_64-apple-darwin, libraries and binaries (-p latte-telemetry)\n'
cargo clippy --target x86_64-apple-darwin -p latte-telemetry --all-features -- -D warnings
printf '\n=== type-check: the lean core (--features record) for all three\n'
cargo clippy --target aarch64-apple-darwin --target x86_64-apple-darwin \
    --target x86_64-pc-windows-msvc --lib --no-default-features --features record -- -D warnings
echo "took $((SECONDS - started)) s"
