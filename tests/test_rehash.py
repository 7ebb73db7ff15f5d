"""tools/rehash_results.py: the one-time conversion of stored results to the record hash that
covers the whole record (hash_version 2)."""

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

from attnbook import paths
from attnbook.book.store import ResultStore, canonical_sha256, check_record, dumps, stored_results

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def rehash(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("rehash_tool",
                                                  REPO / "tools" / "rehash_results.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    monkeypatch.setattr(paths, "COMMITTED_RESULTS", tmp_path / "data" / "results")
    return mod


def _old_format(path: Path) -> None:
    """Rewrite the record at ``path`` as the store wrote it before: its sha256 the hash of its
    payload alone, no hash_version."""
    record = json.loads(path.read_text())
    record.pop("hash_version")
    payload = ({"config": record["config"], "result": record["result"]} if "result" in record
               else path.with_suffix(".csv").read_text())
    record["sha256"] = canonical_sha256(payload)
    path.write_text(dumps(record, indent=1, sort_keys=True))


def test_rehash_converts_intact_old_records_refuses_edited_ones_and_is_idempotent(
        rehash, tmp_path, capsys):
    root = tmp_path / "data" / "results"
    store = ResultStore("nb", "cpu", root=root, provenance={"commit": "abc", "dirty": False})
    for n in (1, 2, 3):
        store.put("sw", {"n": n}, {"y": n / 3})
    store.cached("t", {"v": 1}, lambda: pd.DataFrame({"x": [1, 2]}))
    records = sorted(root.rglob("*.json"))
    for f in records:
        _old_format(f)
    ok, edited, unhashed, table = records
    assert table.name.startswith("t-")
    # a number edited after it was stored, and a record whose hash was deleted
    record = json.loads(edited.read_text())
    record["result"]["y"] = 0.99
    edited.write_text(dumps(record))
    record = json.loads(unhashed.read_text())
    del record["sha256"]
    unhashed.write_text(dumps(record))
    before = {f: f.read_text() for f in records}
    # every record of the old format is damaged until converted, and named
    assert all("earlier format" in (r["problem"] or "") or "sha256" in (r["problem"] or "")
               for r in stored_results(root))

    assert rehash.rehash(check=True) == {"converted": 2, "current": 0, "refused": 2}
    assert {f: f.read_text() for f in records} == before  # --check changes nothing
    capsys.readouterr()
    assert rehash.main([]) == 1  # some were refused
    out, err = capsys.readouterr()
    assert "2 records converted, 0 already converted, 2 refused" in err
    assert f"{edited.relative_to(tmp_path)}: content does not match its recorded sha256 of " \
        "the earlier format" in err
    assert f"{unhashed.relative_to(tmp_path)}: has no sha256" in err
    assert edited.read_text() == before[edited] and unhashed.read_text() == before[unhashed]
    for f in (ok, table):
        record, problem, changed = check_record(f)
        assert problem is None and record["hash_version"] == 2
        old = json.loads(before[f])
        assert {k: v for k, v in record.items() if k not in ("sha256", "hash_version")} == \
            {k: v for k, v in old.items() if k != "sha256"}  # nothing else changed
    assert {r["path"] for r in stored_results(root) if r["problem"]} == {edited, unhashed}

    # a second run verifies the converted ones and changes nothing
    converted = {f: f.read_text() for f in records}
    assert rehash.rehash() == {"converted": 0, "current": 2, "refused": 2}
    assert {f: f.read_text() for f in records} == converted

    # a converted record edited since (its fingerprint emptied) is refused, not re-blessed
    record = json.loads(ok.read_text())
    record["fingerprint"] = {}
    ok.write_text(dumps(record))
    assert rehash.rehash() == {"converted": 0, "current": 1, "refused": 3}
    assert json.loads(ok.read_text())["fingerprint"] == {}
    assert "does not match its recorded sha256" in check_record(ok)[1]


def test_rehash_refuses_an_old_record_whose_table_csv_was_edited(rehash, tmp_path, capsys):
    root = tmp_path / "data" / "results"
    ResultStore("nb", "cpu", root=root).cached("t", {"v": 1}, lambda: pd.DataFrame({"x": [1]}))
    (meta,) = root.rglob("t-*.json")
    _old_format(meta)
    meta.with_suffix(".csv").write_text("x\n2\n")
    before = meta.read_text()
    assert rehash.rehash() == {"converted": 0, "current": 0, "refused": 1}
    assert meta.read_text() == before
    assert "of the earlier format (damaged or edited)" in capsys.readouterr().err
