#!/usr/bin/env bash
# Run chapters on the GPU machine from the bundle `make device-bundle` built (tools/device.py):
#
#   tools/device-run.sh [--budget SECONDS] [--profile full] [--jobs N] [NOTEBOOK...]
#
# No NOTEBOOK: the chapters the bundle serves (its chapters.txt, written at the bundle's
# profile; a chapter whose data do not travel is not among them and runs here).
#
# 1. installs the bundled wheels into a temporary folder (no network: --no-index);
# 2. checks that the code here is the code the bundle was built from, and credits the results
#    to that commit (the copy has no git);
# 3. unpacks the bundled corpora and vocabularies into data/corpora/ (what is there stays);
# 4. runs `python -m attnbook run NOTEBOOK... --profile P --time-budget SECONDS`: results
#    already under data/results/<notebook>/<profile>/ are used, not recomputed; a sweep stops
#    before a unit that would not finish in time (exit code 75: run again to resume); a hard
#    limit 45 s after the budget interrupts whatever is still running;
#    --jobs N (default 1: one run here): the chapters are dealt in turn into N groups, each
#    run at once in its own copy of this tree (without build/, .git, .venv and the other
#    groups' checkpoints; under build/device-jobs.*, removed after) with the same budget and
#    ATTNBOOK_THREADS = cores / N (at least 1; one set in the environment is kept); the log
#    prefixes each line with its group ([group 2/3]); then `tools/device.py gather` brings
#    back what each copy computed (results, ledger entries, figures, checkpoints and executed
#    notebooks, times kept; the manifest lines; one time-budget.json for all);
# 5. packs what the run computed into $OUT (default build/device-out): results.tar.gz,
#    checkpoints.tar.gz (units stopped mid-way), manifest.jsonl, time-budget.json,
#    executed.tar.gz, status.json, log.txt (7 files).
#
# Exits with the runner's code (0 done, 1 a notebook failed, 75 budget spent, 130 interrupted;
# with --jobs, of the groups' codes: 1 if any, else 130, else any other nonzero, else 75)
# or 3 when the bundle does not fit the code (2: no chapter named, and the bundle serves its
# chapters at another profile, or a bad option). Environment: PYTHON (default python3),
# ATTNBOOK_BUNDLE (default build/device), OUT; ATTNBOOK_DEVICE=cpu keeps it on the CPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3

budget=480
profile=full
jobs=1
notebooks=()
while [ $# -gt 0 ]; do
    case "$1" in
        --budget) budget="$2"; shift 2 ;;
        --profile) profile="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
        *) notebooks+=("$1"); shift ;;
    esac
done
PY="${PYTHON:-python3}"
BUNDLE="${ATTNBOOK_BUNDLE:-build/device}"
OUT="${OUT:-build/device-out}"
mkdir -p "$OUT"
case "$budget" in
    ''|*[!0-9]*) echo "device-run: --budget must be a whole number of seconds" >&2; exit 2 ;;
esac
case "$jobs" in
    ''|*[!0-9]*|0*) echo "device-run: --jobs must be a whole number >= 1" >&2; exit 2 ;;
esac
if [ ! -d "$BUNDLE/wheels" ] || [ ! -f "$BUNDLE/source.json" ]; then
    echo "device-run: no bundle at $BUNDLE: run make device-bundle here and carry it" >&2
    exit 3
fi

if [ ${#notebooks[@]} -eq 0 ]; then  # the chapters the bundle serves
    if [ ! -f "$BUNDLE/chapters.txt" ]; then
        echo "device-run: $BUNDLE has no chapters.txt (the chapters it serves): build it again (make device-bundle)" >&2
        exit 3
    fi
    served_at="$(sed -n 's/^# profile \([a-z]*\):.*/\1/p' "$BUNDLE/chapters.txt")"
    if [ "$served_at" != "$profile" ]; then
        echo "device-run: the bundle serves its chapters at profile ${served_at:-?}, not $profile: name the chapters, or build it with DEVICE_PROFILE=$profile" >&2
        exit 2
    fi
    mapfile -t notebooks < <(grep -v -e '^#' -e '^[[:space:]]*$' "$BUNDLE/chapters.txt")
    if [ ${#notebooks[@]} -eq 0 ]; then
        echo "device-run: the bundle serves no chapter ($BUNDLE/chapters.txt)" >&2
        exit 3
    fi
fi

site="$(mktemp -d "${TMPDIR:-/tmp}/attnbook-site.XXXXXX")"
trap 'rm -rf "$site"' EXIT
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --disable-pip-version-check \
    --target "$site" "$BUNDLE"/wheels/*.whl || { echo "device-run: installing the wheels failed" >&2; exit 3; }
export PYTHONPATH="$PWD/src:$site${PYTHONPATH:+:$PYTHONPATH}"
unset ATTNBOOK_ROOT ATTNBOOK_RESULTS ATTNBOOK_FIGURES

ATTNBOOK_SOURCE="$("$PY" tools/device.py check-source "$BUNDLE/source.json")" || exit 3
export ATTNBOOK_SOURCE
if [ -f "$BUNDLE/corpora.tar.gz" ]; then
    tar -xzf "$BUNDLE/corpora.tar.gz" --skip-old-files || exit 3
fi

start="$(date +%s)"
if [ "$jobs" -eq 1 ]; then
    echo "device-run: $(date -u +%FT%TZ) · profile $profile · budget ${budget} s · ${notebooks[*]} · commit $ATTNBOOK_SOURCE" | tee "$OUT/log.txt"
    PYTHONUNBUFFERED=1 timeout --signal=INT --kill-after=30 "$((budget + 45))" \
        "$PY" -m attnbook run "${notebooks[@]}" --profile "$profile" --time-budget "$budget" 2>&1 \
        | tee -a "$OUT/log.txt"
    rc="${PIPESTATUS[0]}"
    "$PY" tools/device.py pack --out "$OUT" --since "$start" --profile "$profile" --rc "$rc"
    exit "$rc"
fi

# --jobs N: N groups at once, each in its own copy of the tree
[ "$jobs" -gt ${#notebooks[@]} ] && jobs=${#notebooks[@]}
case "$PY" in /*) ;; */*) PY="$PWD/$PY" ;; esac  # the groups run elsewhere
cores="$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null || echo 1)"
threads="${ATTNBOOK_THREADS:-$(( cores / jobs > 0 ? cores / jobs : 1 ))}"
mkdir -p build
work="$(mktemp -d "$PWD/build/device-jobs.XXXXXX")" || exit 3
trap 'rm -rf "$site" "$work"' EXIT
groups=()  # group k's chapters, space-separated (chapter names have no spaces)
for i in "${!notebooks[@]}"; do
    k=$(( i % jobs ))
    groups[k]="${groups[k]:+${groups[k]} }${notebooks[i]}"
done
echo "device-run: $(date -u +%FT%TZ) · profile $profile · budget ${budget} s · ${notebooks[*]} · commit $ATTNBOOK_SOURCE · $jobs groups at once, ATTNBOOK_THREADS=$threads each" | tee "$OUT/log.txt"
for k in "${!groups[@]}"; do
    own=()  # of the checkpoints, only the group's own chapters' travel
    for nb in ${groups[k]}; do
        [ -e "data/checkpoints/$nb" ] && own+=("./data/checkpoints/$nb")
    done
    if ! { mkdir "$work/$((k + 1))" &&
           tar -cf - --exclude=./build --exclude=./.git --exclude=./.venv \
               --exclude=./data/checkpoints . | tar -xf - -C "$work/$((k + 1))" &&
           { [ ${#own[@]} -eq 0 ] || tar -cf - "${own[@]}" | tar -xf - -C "$work/$((k + 1))"; }; }
    then
        echo "device-run: copying the tree for group $((k + 1)) failed" >&2
        exit 3
    fi
    echo "device-run: group $((k + 1))/$jobs: ${groups[k]}" | tee -a "$OUT/log.txt"
done

run_group() {  # group number, then its chapters: runs in the group's copy, leaves rc.<k>
    local k="$1"; shift
    (
        trap - INT TERM
        cd "$work/$k" || exit 3
        PYTHONPATH="$work/$k/src:$site${base_path:+:$base_path}" ATTNBOOK_THREADS="$threads" \
            PYTHONUNBUFFERED=1 timeout --signal=INT --kill-after=30 "$((budget + 45))" \
            "$PY" -m attnbook run "$@" --profile "$profile" --time-budget "$budget" &
        echo "$!" > "$work/pid.$k"
        wait "$!"
    ) 2>&1 | sed -u "s|^|[group $k/$jobs] |" | tee -a "$OUT/log.txt"
    echo "${PIPESTATUS[0]}" > "$work/rc.$k"
}
base_path="${PYTHONPATH#"$PWD/src:$site"}"; base_path="${base_path#:}"
pids=()
for k in "${!groups[@]}"; do
    # shellcheck disable=SC2086  # a group's chapters, one word each
    run_group "$((k + 1))" ${groups[k]} &
    pids+=("$!")
done
# shellcheck disable=SC2317  # called by the trap below
interrupt_groups() {  # as the hard limit does: each runner records its interrupted run
    local f
    for f in "$work"/pid.*; do
        [ -f "$f" ] && kill -INT "$(cat "$f")" 2>/dev/null
    done
}
trap interrupt_groups INT TERM
for p in "${pids[@]}"; do
    while kill -0 "$p" 2>/dev/null; do wait "$p"; done
done
trap - INT TERM

rc=0 rcs=()
for k in "${!groups[@]}"; do rcs+=("$(cat "$work/rc.$((k + 1))" 2>/dev/null || echo 1)"); done
for want in 1 130 other 75; do
    for r in "${rcs[@]}"; do
        if [ "$r" = "$want" ] || { [ "$want" = other ] && [ "$r" != 0 ] && [ "$r" != 75 ]; }; then
            rc="$r"; break 2
        fi
    done
done
echo "device-run: the groups exited ${rcs[*]}: exit code $rc" | tee -a "$OUT/log.txt"
gather=()
for k in "${!groups[@]}"; do
    # shellcheck disable=SC2206  # a group's chapters, one word each
    gather+=(--group "$work/$((k + 1))" ${groups[k]})
done
"$PY" tools/device.py gather --since "$start" --profile "$profile" "${gather[@]}" 2>&1 \
    | tee -a "$OUT/log.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || { [ "$rc" -eq 0 ] && rc=1; }
"$PY" tools/device.py pack --out "$OUT" --since "$start" --profile "$profile" --rc "$rc"
exit "$rc"
