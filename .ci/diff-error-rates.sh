#!/usr/bin/env bash
# How often `latte-telemetry diff` cries wolf, and how often it finds a real slowdown,
# on the trading demo (examples/trading_loop.rs) run as the README runs it (2.5 M
# ticks, the default threshold, no --filter), one run per side and three.
#
# - Wolf: RUNS runs of one build, and `diff` on each of their RUNS*(RUNS-1)/2 unordered
#   pairs (the earlier run as base). Every pair compares a build with itself, so each
#   exit status 1 (something regressed) is a false alarm.
# - Slowdown: RUNS more runs with `--slower SLOWER` (20), which makes Sim_Tick_Gap's
#   median about SLOWER percent slower by more work between ticks and leaves the other
#   components as they are (see the example's docs), and `diff` on every (base, slowed)
#   pair: how many find Sim_Tick_Gap's p50 `regressed`, and what the p50 said where
#   it did not (open, the interval holds 0, ...).
# - Three runs per side, from the same runs: the 10 splits of the base runs into two
#   sets of three (same build: each exit 1 a false alarm), and 20 comparisons of three
#   base runs with three slowed runs.
#
# The base runs are `--slower 0`: they run the same calibration before the agent starts
# and add nothing, so that the two sides differ in the extra work alone (what runs
# before the agent starts can move latte's estimate of its own overhead, and with it
# every short component's median).
#
# It prints the counts, the run length and its own wall time, and does not gate on the
# counts: it ends successfully whatever they are. It fails when a build or run fails,
# or when `diff` exits with anything but 0 or 1 (2 is bad input). Needs jq. TICKS and
# SLOWER may be set in the environment (to measure other run lengths).
#
# It builds the demo with every feature, as the examples stage of .ci/run does, so
# that it reuses that build. Stage time with the builds done, on a 2 vCPU AMD EPYC KVM
# guest shared with other work (2026-11-28): 22-32 s, of which 12 demo runs of 1.3-1.8
# s and 117 diffs; 47-70 s while other builds ran (docs/cli.md has the counts).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=6                    # runs per side
TICKS=${TICKS:-2500000}   # market ticks per run (the README's); see the end of the output
SLOWER=${SLOWER:-20}      # percent
COMPONENT=Sim_Tick_Gap

began=$SECONDS
step() { printf '\n=== diff error rates: %s\n' "$*"; }

if ! command -v jq >/dev/null; then
    echo "diff-error-rates: jq is needed to read \`diff --json\`" >&2
    exit 1
fi

step "build (the README's demo and the command-line tool, release)"
# Features unified over the workspace, as .ci/run builds the examples: nothing rebuilt there.
cargo build --release --workspace --all-features --example trading_loop --bin latte-telemetry
demo=target/release/examples/trading_loop
tool=target/release/latte-telemetry

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/diff"

lengths=()
# run NAME ARGS...: one demo run, its report in $dir/NAME.json, its stderr (the
# calibration line) in $dir/NAME.err; its wall time in ms appended to `lengths`.
run() {
    local name=$1 start_ms
    shift
    start_ms=$(date +%s%3N)
    "$demo" --json "$dir/$name.json" --ticks "$TICKS" "$@" 2> "$dir/$name.err"
    lengths+=($(($(date +%s%3N) - start_ms)))
}

# A statistic of the component in a report (its last line is the whole run's), in ns.
figure() {
    jq -rs --arg c "$COMPONENT" --arg s "$2" \
        'last | .all_threads[] | select(.component == $c) | .stats[$s] * 10 | round / 10' "$1"
}

# The verdict on the component's p50 in a `diff --json` output.
p50_verdict() {
    jq -r --arg c "$COMPONENT" '.components[] | select(.component == $c)
        | .changes[] | select(.quantile == 0.5) | .verdict' "$1"
}

# The component's median (or another statistic) in each report named, on one line.
figures() {
    local statistic=$1 name
    shift
    for name in "$@"; do figure "$dir/$name.json" "$statistic"; done | paste -sd' '
}

# diff_pair BASE NEW [OPTIONS...]: `diff --json` into $dir/diff/BASE-NEW$suffix.json,
# its exit status in `status`, its warning (inconclusive verdicts) in
# $dir/diff/BASE-NEW$suffix.err; any status but 0 and 1 fails the stage.
suffix=
diff_pair() {
    local base=$1 new=$2
    shift 2
    status=0
    "$tool" diff --json "$@" "$dir/$base.json" "$dir/$new.json" \
        > "$dir/diff/$base-$new$suffix.json" 2> "$dir/diff/$base-$new$suffix.err" || status=$?
    if ((status > 1)); then
        echo "diff-error-rates: \`diff $base.json $new.json\` exited $status (bad input)" >&2
        exit 1
    fi
}

step "$RUNS runs of the demo (--ticks $TICKS --slower 0), and diff on their pairs"
for i in $(seq "$RUNS"); do run "base$i" --slower 0; done
pairs=0 exit0=0 exit1=0 regressed=0 improved=0
for i in $(seq "$RUNS"); do
    for j in $(seq $((i + 1)) "$RUNS"); do
        pairs=$((pairs + 1))
        diff_pair "base$i" "base$j"
        if ((status == 1)); then exit1=$((exit1 + 1)); else exit0=$((exit0 + 1)); fi
        case $(p50_verdict "$dir/diff/base$i-base$j.json") in
            regressed) regressed=$((regressed + 1)) ;;
            improved) improved=$((improved + 1)) ;;
        esac
    done
done
base_runs=($(for i in $(seq "$RUNS"); do echo "base$i"; done))
echo "$COMPONENT median per run (ns): $(figures median "${base_runs[@]}")"
echo "same build, $pairs pairs: diff exit 1 (something regressed) in $exit1, exit 0 in $exit0"
echo "same build, $pairs pairs: $COMPONENT p50 regressed in $regressed, improved in $improved"
# What the false alarms were: for each component, at each quantile, in how many pairs
# it was `regressed` and in how many `improved` (beyond the threshold either way; the
# call tree's nodes, compared too, mostly repeat their rows).
echo "one pair's warning (inconclusive verdicts do not fail the gate):"
sed 's/^/  /' "$dir/diff/base1-base2.err"
echo "pairs with each component regressed/improved (same build):"
jq -rs '[.[].components[]] | group_by(.component)[]
        | [.[0].component] + ([.[].changes[]] | group_by(.quantile)
          | map("p\(.[0].quantile * 100) \(map(select(.verdict == "regressed")) | length)"
                + "/\(map(select(.verdict == "improved")) | length)"))
        | @tsv' "$dir"/diff/base*-base*.json |
    awk -F'\t' '{ printf "  %-16s %-10s %-10s %s\n", $1, $2, $3, $4 }'

step "$RUNS runs with --slower $SLOWER, and diff of every base run against every slowed one"
for j in $(seq "$RUNS"); do run "slow$j" --slower "$SLOWER"; done
pairs=0 found=0 exit1=0 alone=0
for i in $(seq "$RUNS"); do
    for j in $(seq "$RUNS"); do
        pairs=$((pairs + 1))
        diff_pair "base$i" "slow$j"
        if ((status == 1)); then exit1=$((exit1 + 1)); fi
        if [ "$(p50_verdict "$dir/diff/base$i-slow$j.json")" = regressed ]; then
            found=$((found + 1))
        fi
        # The component alone (--filter): 3 intervals share the 1% instead of 30.
        suffix=-alone diff_pair "base$i" "slow$j" --filter "$COMPONENT"
        if [ "$(p50_verdict "$dir/diff/base$i-slow$j-alone.json")" = regressed ]; then
            alone=$((alone + 1))
        fi
    done
done
# What the one-run p50 said where it did not find the slowdown.
echo "$COMPONENT p50 verdicts, slowed pairs (one run per side), by kind:"
jq -r --arg c "$COMPONENT" '.components[] | select(.component == $c) | .changes[]
        | select(.quantile == 0.5)
        | if .open then "open" else .verdict + (if .note then ": " + (.note | sub("[0-9.]+"; "N"; "g")) else "" end) end' \
    "$dir"/diff/base*-slow?.json | sort | uniq -c | sed 's/^/  /'
slow_runs=($(for j in $(seq "$RUNS"); do echo "slow$j"; done))
rounds=$(for name in "${slow_runs[@]}"; do
    grep -o 'so [0-9]* rounds' "$dir/$name.err" | cut -d' ' -f2
done)
echo "rounds of checksum per slowed run (calibrated): $(paste -sd' ' <<<"$rounds")"
echo "$COMPONENT median per slowed run (ns): $(figures median "${slow_runs[@]}")"
echo "slowed by $SLOWER%, $pairs pairs: $COMPONENT p50 regressed in $found; diff exit 1 in $exit1"
echo "slowed by $SLOWER%, $pairs pairs, diff --filter $COMPONENT: its p50 regressed in $alone"

step "three runs per side (--base A1 A2 A3 --new B1 B2 B3)"
# Every split of the 6 base runs into two sets of 3 (10 splits, base1 always in the
# first): same build, so each exit status 1 is a false alarm. Then each set of 3
# base runs against the slowed set of the same indices, and against the other (20).
splits=()
for a in 2 3 4 5 6; do
    for b in $(seq $((a + 1)) 6); do
        first="1 $a $b"
        second=$(for k in 1 2 3 4 5 6; do
            case " $first " in *" $k "*) ;; *) printf '%s ' "$k" ;; esac
        done)
        splits+=("$first|$second")
    done
done
names() { local prefix=$1 k; shift; for k in "$@"; do printf '%s ' "$dir/$prefix$k.json"; done; }
# diff_runs NAME BASE_PREFIX "BASE_IDS" NEW_PREFIX "NEW_IDS": `diff --json --base ...
# --new ...` into $dir/diff/NAME.json, its exit status in `status`.
diff_runs() {
    local name=$1
    status=0
    # shellcheck disable=SC2046,SC2086
    "$tool" diff --json --base $(names "$2" $3) --new $(names "$4" $5) \
        > "$dir/diff/$name.json" 2> "$dir/diff/$name.err" || status=$?
    if ((status > 1)); then
        echo "diff-error-rates: three-run \`diff\` $name exited $status (bad input)" >&2
        exit 1
    fi
}
pairs=0 exit1=0
for split in "${splits[@]}"; do
    pairs=$((pairs + 1))
    diff_runs "same3-$pairs" base "${split%|*}" base "${split#*|}"
    if ((status == 1)); then exit1=$((exit1 + 1)); fi
done
echo "same build, $pairs splits into 3 + 3 runs: diff exit 1 in $exit1"
pairs=0 found=0 exit1=0
for split in "${splits[@]}"; do
    for side in "${split%|*}" "${split#*|}"; do
        for slowed in "${split%|*}" "${split#*|}"; do
            pairs=$((pairs + 1))
            diff_runs "slow3-$pairs" base "$side" slow "$slowed"
            if ((status == 1)); then exit1=$((exit1 + 1)); fi
            if [ "$(p50_verdict "$dir/diff/slow3-$pairs.json")" = regressed ]; then
                found=$((found + 1))
            fi
        done
    done
    ((pairs >= 20)) && break
done
echo "slowed by $SLOWER%, $pairs comparisons of 3 base runs with 3 slowed runs:" \
    "$COMPONENT p50 regressed in $found; diff exit 1 in $exit1"

step "done"
# min, median and max of a list of numbers, one a line.
spread() {
    sort -n | awk '{ v[NR] = $1 }
        END { printf "min %s, median %s, max %s", v[1], v[int((NR + 1) / 2)], v[NR] }'
}
echo "run length, one demo run of $TICKS ticks (wall, ms):" \
    "$(printf '%s\n' "${lengths[@]}" | spread)"
# The sum of the gaps: the market loop's length, the span the component was recorded over.
loops=$(figures total "${base_runs[@]}" "${slow_runs[@]}" | tr ' ' '\n' |
    awk '{ printf "%.0f\n", $1 / 1e6 }')
echo "market loop, the sum of $COMPONENT (ms): $(spread <<<"$loops")"
echo "stage wall time: $((SECONDS - began)) s"
