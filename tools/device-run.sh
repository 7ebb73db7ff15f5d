#!/usr/bin/env bash
# Run chapters on the GPU machine from the bundle `make device-bundle` built (tools/device.py):
#
#   tools/device-run.sh [--budget SECONDS] [--profile full] [NOTEBOOK...]
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
# 5. packs what the run computed into $OUT (default build/device-out): results.tar.gz,
#    checkpoints.tar.gz (units stopped mid-way), manifest.jsonl, time-budget.json,
#    executed.tar.gz, status.json, log.txt (7 files).
#
# Exits with the runner's code (0 done, 1 a notebook failed, 75 budget spent, 130 interrupted)
# or 3 when the bundle does not fit the code (2: no chapter named, and the bundle serves its
# chapters at another profile). Environment: PYTHON (default python3),
# ATTNBOOK_BUNDLE (default build/device), OUT; ATTNBOOK_DEVICE=cpu keeps it on the CPU.
set -uo pipefail
cd "$(dirname "$0")/.."

budget=480
profile=full
notebooks=()
while [ $# -gt 0 ]; do
    case "$1" in
        --budget) budget="$2"; shift 2 ;;
        --profile) profile="$2"; shift 2 ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
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
echo "device-run: $(date -u +%FT%TZ) · profile $profile · budget ${budget} s · ${notebooks[*]} · commit $ATTNBOOK_SOURCE" | tee "$OUT/log.txt"
PYTHONUNBUFFERED=1 timeout --signal=INT --kill-after=30 "$((budget + 45))" \
    "$PY" -m attnbook run "${notebooks[@]}" --profile "$profile" --time-budget "$budget" 2>&1 \
    | tee -a "$OUT/log.txt"
rc="${PIPESTATUS[0]}"
"$PY" tools/device.py pack --out "$OUT" --since "$start" --profile "$profile" --rc "$rc"
exit "$rc"
