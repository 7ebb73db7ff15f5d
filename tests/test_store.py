"""The result cache: resumable sweeps, keyed recomputation, recompute and read-only modes."""

import pandas as pd
import pytest

from attnbook.book.store import ResultStore, config_key
from attnbook.errors import AttnbookError


def test_sweep_resumes_with_only_the_missing_configurations(tmp_path):
    configs = [{"H": h, "T": t} for h in (1, 2) for t in (10, 20)]
    store = ResultStore("nb", "cpu", root=tmp_path)
    assert store.missing("sw", configs) == configs
    for c in configs[:3]:  # "interrupted" after three
        store.put("sw", c, {"acc": c["H"] / c["T"]})
    resumed = ResultStore("nb", "cpu", root=tmp_path)  # a new session
    assert resumed.missing("sw", configs) == configs[3:]
    resumed.put("sw", configs[3], {"acc": 0.1})
    df = resumed.frame("sw", configs)
    assert list(df.columns) == ["H", "T", "acc"] and len(df) == 4
    assert df.loc[0, "acc"] == pytest.approx(0.1)


def test_frame_refuses_unfinished_configurations(tmp_path):
    store = ResultStore("nb", "cpu", root=tmp_path)
    with pytest.raises(AttnbookError, match="has no stored result"):
        store.frame("sw", [{"H": 1}])


def test_cached_recomputes_only_when_params_change(tmp_path):
    calls = []

    def compute(v):
        calls.append(v)
        return pd.DataFrame({"x": [v, v + 1]})

    store = ResultStore("nb", "cpu", root=tmp_path)
    a = store.cached("t", {"v": 1}, lambda: compute(1))
    b = ResultStore("nb", "cpu", root=tmp_path).cached("t", {"v": 1}, lambda: compute(1))
    pd.testing.assert_frame_equal(a, b)
    assert calls == [1]
    ResultStore("nb", "cpu", root=tmp_path).cached("t", {"v": 2}, lambda: compute(2))
    assert calls == [1, 2]
    forced = ResultStore("nb", "cpu", root=tmp_path, recompute=True)
    forced.cached("t", {"v": 1}, lambda: compute(1))
    forced.cached("t", {"v": 1}, lambda: compute(1))  # fresh within the session: not again
    assert calls == [1, 2, 1]
    assert ResultStore("nb", "ci", root=tmp_path).missing("t", [{"v": 1}])  # profiles apart


def test_readonly_writes_nothing_but_serves_its_own_results(tmp_path):
    store = ResultStore("nb", "ci", root=tmp_path, readonly=True, recompute=True)
    store.put("sw", {"a": 1}, {"y": 2})
    assert store.get("sw", {"a": 1}) == {"y": 2}
    df = store.cached("t", {"v": 1}, lambda: pd.DataFrame({"x": [1]}))
    assert df["x"].tolist() == [1]
    assert not any(tmp_path.rglob("*.json")) and not any(tmp_path.rglob("*.csv"))


def test_config_key_is_stable_and_distinguishes_values():
    assert config_key({"a": 1, "b": [1, 2]}) == config_key({"b": [1, 2], "a": 1})
    assert config_key({"a": 1}) != config_key({"a": 2})
    assert config_key({"a": 1}) != config_key({"a": 1.5})


def test_sources_record_where_served_results_were_computed(tmp_path):
    gpu = ResultStore("nb", "full", root=tmp_path, provenance={"device": "cuda: H100",
                                                               "commit": "abc"})
    gpu.cached("t", {"v": 1}, lambda: pd.DataFrame({"x": [1]}))
    gpu.put("sw", {"a": 1}, {"y": 1})
    laptop = ResultStore("nb", "full", root=tmp_path, provenance={"device": "cpu: laptop",
                                                                  "commit": "def"})
    laptop.cached("t", {"v": 1}, lambda: pytest.fail("must re-read, not recompute"))
    laptop.get("sw", {"a": 1})
    assert [s["device"] for s in laptop.sources] == ["cuda: H100"]
    assert laptop.sources[0]["commit"] == "abc"
