#!/usr/bin/env bash
# The stages for targets other than this machine's, one after another: aarch64 Linux
# under qemu-user, Windows under Wine, then the type-check of macOS and Windows MSVC.
# `.ci/run` starts this alongside its own stages (each of these builds in its own target
# directory, and their test runs leave a core free) and prints its output at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

for stage in aarch64 windows typecheck-targets; do
    started=$SECONDS
    printf '\n=== other targets: .ci/%s.sh\n' "$stage"
    bash ".ci/$stage.sh"
    printf '=== other targets: .ci/%s.sh took %s s\n' "$stage" "$((SECONDS - started))"
done
