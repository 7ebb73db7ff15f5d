#!/usr/bin/env bash
# The GPU measurements, in one command on the GPU machine (each benchmark under its own time
# limit, all within --budget seconds), most wanted first:
#
#   tools/device-bench.sh [--budget SECONDS] [--only NAME,...] [--dry-run]
#
#   1. memorization_gd_gpu.json   the stacked memorization engine against one model at a time
#                                 (bench_memorization_gd.py; goal >= 10x)
#   2. lm_throughput_gpu.json     our language model against GPT2LMHeadModel, tokens/s, bf16
#                                 (bench_lm_throughput.py; goal >= 1.0x)
#   3. lm_mfu_gpu.json            model-FLOP utilization of the largest `full` language model in
#                                 bf16 (wies2021_depth_efficiency, V 2000, L 4, d_x 3000, batch
#                                 64; goal >= 40% of peak)
#   4. ranked_attention_gpu.json  a furthest-neighbour line stacked against its models one by one
#                                 (bench_ranked_attention.py; no gain: drop the stacked path)
#   5. lm_stacked_gpu.json        seed stacks of language models against one at a time
#                                 (bench_lm_stacked.py; goal >= 10x)
#   6. precision_gpu.json         fp32, TF32 and bf16 for the lines and the memorization groups:
#                                 time against the change of the results (bench_precision.py)
#   7. compile_gpu.json           the stacked memorization step eager, under torch.compile and as
#                                 CUDA graphs: launch overhead removed against the change of the
#                                 losses (bench_compile.py)
#
# --only runs the named ones (for example --only precision,compile: what an earlier session
# left), in this order. Writes them and bench.log into $OUT (default build/device-out; 8
# files). Here: copy the JSON files into benchmarks/results/ and commit them with the commit
# they name. Needs only torch, numpy, pandas, transformers and pyyaml (the machine has them):
# no wheels, no corpora.
# Environment: PYTHON (default python3), OUT, ATTNBOOK_DEVICE (default cuda; cpu to try it).
set -uo pipefail
cd "$(dirname "$0")/.."

budget=540
dry=0
only=""
only_given=0
while [ $# -gt 0 ]; do
    case "$1" in
        --budget) budget="$2"; shift 2 ;;
        --dry-run) dry=1; shift ;;
        --only) only="${2:-}"; only_given=1; [ $# -gt 1 ] && shift 2 || shift ;;
        -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
        *) echo "device-bench: unknown argument $1 (allowed: --budget SECONDS, --only NAME,..., --dry-run)" >&2
           exit 2 ;;
    esac
done
case "$budget" in
    ''|*[!0-9]*) echo "device-bench: --budget $budget: allowed a whole number of seconds" >&2
                 exit 2 ;;
esac
PY="${PYTHON:-python3}"
OUT="${OUT:-build/device-out}"
DEV="${ATTNBOOK_DEVICE:-cuda}"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
LOG="$OUT/bench.log"
start=$(date +%s)

bench() {  # bench NAME LIMIT SCRIPT ARGS...: run it if the budget allows, under its limit
    local name="$1" limit="$2"
    shift 2
    if [ "$listing" = 1 ]; then  # only collect the names (for --only)
        NAMES="${NAMES:+$NAMES }$name"
        return
    fi
    if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then
        return
    fi
    if [ "$dry" = 1 ]; then
        echo "$name: $PY $* (limit $limit s)"
        return
    fi
    local left=$((budget - ($(date +%s) - start)))
    if [ "$left" -lt 20 ]; then
        echo "== $name: not run, the budget of $budget s is spent" | tee -a "$LOG"
        return
    fi
    [ "$limit" -gt "$left" ] && limit="$left"
    echo "== $name: $* (limit $limit s)" | tee -a "$LOG"
    timeout "$limit" "$PY" "$@" >> "$LOG" 2>&1
    local rc=$?
    echo "== $name: exit code $rc after $(($(date +%s) - start)) s in all" | tee -a "$LOG"
}

benchmarks() {  # every benchmark, most wanted first: bench NAME LIMIT SCRIPT ARGS...
    bench memorization_gd 120 benchmarks/bench_memorization_gd.py --device "$DEV" \
        --out "$OUT/memorization_gd_gpu.json"
    bench lm_throughput 90 benchmarks/bench_lm_throughput.py --device "$DEV" \
        --out "$OUT/lm_throughput_gpu.json"
    bench lm_mfu 90 benchmarks/bench_lm_throughput.py --device "$DEV" --only attnbook \
        --V 2000 --N 128 --L 4 --d_x 3000 --batch 64 --steps 10 --rounds 2 \
        --out "$OUT/lm_mfu_gpu.json"
    bench ranked_attention 60 benchmarks/bench_ranked_attention.py --device "$DEV" --width 8 \
        --out "$OUT/ranked_attention_gpu.json"
    bench lm_stacked 120 benchmarks/bench_lm_stacked.py --device "$DEV" \
        --out "$OUT/lm_stacked_gpu.json"
    bench precision 120 benchmarks/bench_precision.py --device "$DEV" \
        --out "$OUT/precision_gpu.json"
    bench compile 120 benchmarks/bench_compile.py --device "$DEV" --out "$OUT/compile_gpu.json"
}

listing=1
NAMES=""
benchmarks
listing=0
for name in ${only//,/ }; do
    case " $NAMES " in
        *" $name "*) ;;
        *) echo "device-bench: --only $name: allowed names ${NAMES// /, }" >&2; exit 2 ;;
    esac
done
if [ "$only_given" = 1 ] && [ -z "${only//,/}" ]; then
    echo "device-bench: --only needs at least one name of ${NAMES// /, }" >&2; exit 2
fi
[ "$dry" = 1 ] || mkdir -p "$OUT"
[ "$dry" = 1 ] || echo "device-bench: $(date -u +%FT%TZ) · device $DEV · budget $budget s" | tee "$LOG"
benchmarks
exit 0
