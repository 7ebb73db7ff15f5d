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
    from attnbook.book.store import dumps, payload_hash

    payload = {"config": {"a": 1}, "result": {"metric": 0.5}}
    record = {**payload, "sha256": payload_hash(payload),
              "fingerprint": code_fingerprint(["attnbook.errors"])}  # the code here: current
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
        blob = dumps({**record, "fingerprint": {"attnbook.errors": "0" * 12}}).encode()
        info = tarfile.TarInfo("data/results/nb/full/s/new.json")
        info.size = len(blob)
        tar.addfile(info, io.BytesIO(blob))
    assert device.main(["unpack", str(out)]) == 1
    err = capsys.readouterr().err
    assert "1 of the 1 files that came back would not be used here" in err
    assert "data/results/nb/full/s/new.json: stale (changed: attnbook.errors)" in err
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
