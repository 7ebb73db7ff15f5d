"""``--cache-only``: a run that draws every result from the cache and computes nothing."""

import pandas as pd
import pytest

from attnbook.book.notebook import Sweep
from attnbook.book.store import CacheMiss, ResultStore


def test_cache_only_store_serves_what_is_stored_and_computes_nothing(tmp_path):
    table = pd.DataFrame({"x": [1, 2]})
    ResultStore("nb", "cpu", root=tmp_path).cached("t", {"n": 2}, lambda: table)
    store = ResultStore("nb", "cpu", root=tmp_path, cache_only=True)
    assert store.cached("t", {"n": 2}, lambda: 1 / 0).equals(table)
    with pytest.raises(CacheMiss, match="table 't'.*--cache-only"):
        store.cached("t", {"n": 3}, lambda: table)
    sweep = Sweep(ResultStore("nb", "cpu", root=tmp_path), "s")
    sweep.run(lambda c: {"y": c["n"] * 2}, [{"n": 1}], progress=False)
    cached = Sweep(store, "s")
    assert cached.run(lambda c: 1 / 0, [{"n": 1}], progress=False)["y"].tolist() == [2]
    with pytest.raises(CacheMiss, match="sweep 's' \\(1 of 2 configurations\\)"):
        cached.run(lambda c: {"y": 0}, [{"n": 1}, {"n": 2}], progress=False)
    assert cached.missing([{"n": 2}]) == [{"n": 2}]  # nothing was written


def test_cache_only_and_recompute_exclude_each_other(capsys):
    from attnbook.book.cli import main

    assert main(["run", "levine2020_lemma1", "--cache-only", "--recompute"]) == 2
    assert "--recompute and --cache-only exclude each other" in capsys.readouterr().err


def test_cache_only_serves_a_stale_result_with_a_warning_instead_of_recomputing(tmp_path):
    import json

    from attnbook.book.store import StaleResultWarning, write_record

    Sweep(ResultStore("nb", "cpu", root=tmp_path), "s").run(
        lambda c: {"y": 7}, [{"n": 1}], progress=False)
    (path,) = (tmp_path / "nb" / "cpu" / "s").glob("*.json")
    record = json.loads(path.read_text())
    record.pop("fingerprint")  # a record from before fingerprints
    write_record(path, record)
    assert Sweep(ResultStore("nb", "cpu", root=tmp_path), "s").missing([{"n": 1}])  # stale
    store = ResultStore("nb", "cpu", root=tmp_path, cache_only=True)
    with pytest.warns(StaleResultWarning, match="--cache-only does not recompute"):
        frame = Sweep(store, "s").run(lambda c: 1 / 0, [{"n": 1}], progress=False)
    assert frame["y"].tolist() == [7] and list(store.served_stale) == [str(path)]


@pytest.mark.parametrize("kind", ["sweep", "table"])
def test_cache_only_names_a_damaged_result_and_says_it_cannot_be_recomputed(tmp_path, kind):
    import warnings

    store = ResultStore("nb", "cpu", root=tmp_path)
    if kind == "sweep":
        Sweep(store, "s").run(lambda c: {"y": 7}, [{"n": 1}], progress=False)
        (path,) = (tmp_path / "nb" / "cpu" / "s").glob("*.json")
        path.write_text(path.read_text().replace("7", "8"))
    else:
        store.cached("t", {"n": 2}, lambda: pd.DataFrame({"x": [1, 2]}))
        (path,) = (tmp_path / "nb" / "cpu").glob("t-*.csv")
        path.write_text("x\n1\n3\n")
    cached = ResultStore("nb", "cpu", root=tmp_path, cache_only=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "recomputing it" on the way
        with pytest.raises(CacheMiss) as err:
            if kind == "sweep":
                Sweep(cached, "s").run(lambda c: 1 / 0, [{"n": 1}], progress=False)
            else:
                cached.cached("t", {"n": 2}, lambda: 1 / 0)
    message = str(err.value)
    assert str(path) in message and "does not match its recorded sha256" in message
    assert "cannot be recomputed under --cache-only" in message and "\n" not in message
