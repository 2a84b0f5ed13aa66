#!/usr/bin/env bash
# Cargo's runner for x86_64-pc-windows-gnu (CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER):
# `runner.sh PROGRAM.exe ARGS...` runs a cross-built program under Wine, its exit status
# passed through; `runner.sh --prepare` only readies the prefix and the DLL below.
#
# Rust's std imports ProcessPrng from bcryptprimitives.dll, which Wine 8 lacks, so every
# program fails to start without a stand-in: shim.c, built once into the target dir and
# copied beside the program (and, for a test binary in deps/, beside the binaries and
# examples a test may start). The Wine prefix is <target dir>/wine unless WINEPREFIX is
# set; making it takes a while and happens once, under a lock, whoever comes first.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
wine=${LATTE_WINE:-/usr/lib/wine/wine64}

exe=
dir=
if [ "${1:-}" != --prepare ]; then
    exe=${1:?usage: runner.sh PROGRAM.exe ARGS... | runner.sh --prepare}
    if [ ! -f "$exe" ]; then
        echo "runner.sh: no such program: $exe" >&2
        exit 2
    fi
    dir=$(cd "$(dirname "$exe")" && pwd)
fi
shift

# The prefix: WINEPREFIX, else beside the program's target dir
# (<target dir>/x86_64-pc-windows-gnu/<profile>/...), else in CARGO_TARGET_DIR (rustdoc
# builds a doctest in a temporary directory).
if [ -z "${WINEPREFIX:-}" ]; then
    target_dir=
    case $dir in
    */x86_64-pc-windows-gnu/*) target_dir=${dir%%/x86_64-pc-windows-gnu/*} ;;
    esac
    if [ -z "$target_dir" ] && [ -d "${CARGO_TARGET_DIR:-/nonexistent}" ]; then
        target_dir=$(cd "$CARGO_TARGET_DIR" && pwd)
    fi
    if [ -z "$target_dir" ]; then
        echo "runner.sh: no target dir known for ${exe:-the prefix}: set WINEPREFIX" >&2
        exit 2
    fi
    WINEPREFIX=$target_dir/wine
fi
export WINEPREFIX
export WINEDEBUG=${WINEDEBUG:--all}
# No Mono or Gecko installer when the prefix is made: nothing here needs them.
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}
state=$(dirname "$WINEPREFIX")/wine-shim
mkdir -p "$state"

{
    flock 9
    dll=$state/bcryptprimitives.dll
    if [ ! -e "$dll" ] || [ "$here/shim.c" -nt "$dll" ]; then
        x86_64-w64-mingw32-gcc -O2 -Wall -Werror -shared -o "$dll.tmp" "$here/shim.c" -ladvapi32
        mv "$dll.tmp" "$dll"
    fi
    if [ ! -e "$state/prefix-made" ]; then
        echo "runner.sh: making the Wine prefix $WINEPREFIX (once)" >&2
        "$wine" wineboot --init >/dev/null 2>&1
        touch "$state/prefix-made"
    fi
    if [ -n "$exe" ]; then
        places=("$dir")
        if [ "$(basename "$dir")" = deps ]; then
            places+=("$(dirname "$dir")")
            [ -d "$(dirname "$dir")/examples" ] && places+=("$(dirname "$dir")/examples")
        fi
        for place in "${places[@]}"; do
            if ! cmp -s "$dll" "$place/bcryptprimitives.dll"; then
                cp "$dll" "$place/.bcryptprimitives.dll.$$"
                mv "$place/.bcryptprimitives.dll.$$" "$place/bcryptprimitives.dll"
            fi
        done
    fi
} 9>"$state/lock"

[ -n "$exe" ] || exit 0
# Inside Wine a Windows program starts other Windows programs by itself, as on Windows:
# the tests that start a binary "through cargo's runner" (tests/common's
# this_test_binary, assert_cmd) must not see this script. Wine would start it (a Unix
# program) but could not give the caller a process handle: the spawn fails with
# ERROR_INVALID_HANDLE (os error 6) although the program runs.
exec env -u CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER "$wine" "$exe" "$@"
