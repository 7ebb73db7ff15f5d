"""wies2021's vocabulary sweeps (attnbook.engines.depth_sweep): widths, configurations,
crossings."""

from functools import partial

import numpy as np
import pandas as pd
import pytest

from attnbook import ParameterError
from attnbook.book.pilot import at_budgets
from attnbook.engines import depth_sweep as D
from attnbook.engines.lm import LanguageModel, LMConfig, count_parameters


@pytest.mark.parametrize("L,d_x", [(1, 16), (2, 46), (3, 90)])
def test_non_embedding_params_counts_the_model(L, d_x):
    m = LanguageModel(LMConfig(V=40, N=8, L=L, d_x=d_x))
    assert D.non_embedding_params(L, d_x) == count_parameters(m)["non_embedding"]


def test_family_widths_match_sizes():
    shallow, deep = D.family_widths(128, [0.5, 1, 2], L_shallow=1, L_deep=2, H=2)
    assert shallow == [64, 128, 256] and all(w % 2 == 0 for w in deep)
    for s, d in zip(shallow, deep, strict=True):
        ratio = D.non_embedding_params(2, d) / D.non_embedding_params(1, s)
        assert 0.85 < ratio < 1.15
    with pytest.raises(ParameterError, match="L_deep"):
        D.family_widths(64, [1], L_shallow=2, L_deep=2)
    with pytest.raises(ParameterError, match="width_factors"):
        D.family_widths(64, [0], L_shallow=1, L_deep=2)


def test_family_widths_of_a_rank_match_sizes():
    shallow, deep = D.family_widths(32, [0.5, 1, 2], L_shallow=1, L_deep=2, H=2)
    assert shallow == [16, 32, 64]
    with pytest.raises(ParameterError, match="base"):
        D.family_widths(0, [1], L_shallow=1, L_deep=2)


def _kw():
    return dict(corpus="kjv", N=16, steps=2, batch=2, lr=1e-3, warmup=0)


def test_sweep_configs_honour_the_rank_and_match_families():
    cs = D.sweep_configs(vocabs=[256], width_factors=[0.5, 1, 2], L_shallow=1, L_deep=2,
                         seeds=[0, 1], r=32, **_kw())
    assert {c["r"] for c in cs} == {32} and {c["V"] for c in cs} == {256}
    shallow = sorted({c["d_x"] for c in cs if c["L"] == 1})
    deep = sorted({c["d_x"] for c in cs if c["L"] == 2})
    assert shallow == [16, 32, 64]  # factors times r, not times V = 256
    for s, d in zip(shallow, deep, strict=True):  # matched in non-embedding parameters
        ratio = D.non_embedding_params(2, d) / D.non_embedding_params(1, s)
        assert 0.85 < ratio < 1.15
    # the models built from them have rank-r embeddings and the counted non-embedding size
    for c in cs[:: len(cs) // 3]:
        m = LanguageModel(LMConfig(V=c["V"], N=c["N"], L=c["L"], d_x=c["d_x"], r=c["r"]))
        assert m.cfg.embedding_rank == min(32, c["d_x"])
        assert count_parameters(m)["non_embedding"] == D.non_embedding_params(c["L"], c["d_x"])
    full = D.sweep_configs(vocabs=[256, 1024], width_factors=[0.5, 1, 2], L_shallow=1,
                           L_deep=2, seeds=[0], base=32, **_kw())
    assert {c["r"] for c in full} == {None}
    for V in (256, 1024):  # a fixed base: every vocabulary gets the same widths
        assert sorted({c["d_x"] for c in full if c["V"] == V}) == sorted(set(shallow + deep))
    with pytest.raises(ParameterError, match="r"):
        D.sweep_configs(vocabs=[32], width_factors=[1], L_shallow=1, L_deep=2, seeds=[0],
                        r=32, **_kw())
    with pytest.raises(ParameterError, match="common"):
        D.sweep_configs(vocabs=[64], width_factors=[1], L_shallow=1, L_deep=2, seeds=[0],
                        **_kw(), model="ours")


def test_sweep_configs_cover_vocabularies_families_seeds():
    cs = D.sweep_configs(vocabs=[40, 64], width_factors=[0.5, 1], L_shallow=1, L_deep=2,
                         seeds=[0, 1, 2], corpus="kjv", N=16, steps=2, batch=2, lr=1e-3,
                         warmup=0)
    assert len(cs) == 2 * 2 * 2 * 3
    assert {(c["V"], c["L"]) for c in cs} == {(40, 1), (40, 2), (64, 1), (64, 2)}
    assert len({tuple(sorted(c.items())) for c in cs}) == len(cs)
    with pytest.raises(ParameterError, match="seeds"):
        D.sweep_configs(vocabs=[40], width_factors=[1], L_shallow=1, L_deep=2, seeds=[0, 0],
                        corpus="kjv", N=16, steps=2, batch=2, lr=1e-3, warmup=0)


def _results(gap_of_width, V=64, seeds=(0, 1, 2), noise=0.01, r=None, base=None):
    """Synthetic results: shallow loss falls with size; deep = shallow + gap(shallow width)."""
    rng = np.random.default_rng(1)
    shallow, deep = D.family_widths(base or r or V, [0.25, 0.5, 1, 2, 4], L_shallow=1, L_deep=2)
    rows = []
    for ws, wd in zip(shallow, deep, strict=True):
        level = 3.0 - 0.2 * np.log(ws)
        for s in seeds:
            rows.append(dict(V=V, r=r, L=1, d_x=ws, seed=s, params_non_embedding=
                             D.non_embedding_params(1, ws), test_loss=level
                             + noise * rng.standard_normal()))
            rows.append(dict(V=V, r=r, L=2, d_x=wd, seed=s, params_non_embedding=
                             D.non_embedding_params(2, wd), test_loss=level + gap_of_width(ws)
                             + noise * rng.standard_normal()))
    return pd.DataFrame(rows)


def test_crossing_at_width_V_is_found_and_converted():
    res = _results(lambda w: 0.1 * np.log(64 / w))  # deep wins once the shallow width > 64
    t = D.crossings(res, L_shallow=1, L_deep=2, n_boot=200)
    row = t.iloc[0]
    assert row["found"] and row["r"] is None and row["rank"] == 64
    assert 64 / 1.5 <= row["width"] <= 64 * 1.5 and row["ratio"] == row["width"] / 64
    assert row["width_low"] <= row["width"] <= row["width_high"]
    assert row["predicted_params"] == D.non_embedding_params(1, 64)
    table = D.loss_table(res, L_shallow=1, L_deep=2)
    assert list(table["family"][:5]) == ["shallow"] * 5 and (table["seeds"] == 3).all()
    assert (table["std"] < 0.05).all()


def test_no_crossing_has_no_width():
    t = D.crossings(_results(lambda w: 0.1), L_shallow=1, L_deep=2, n_boot=100)
    assert not t.iloc[0]["found"] and t.iloc[0]["ratio"] is None
    assert "never wins" in t.iloc[0]["reason"] and t.iloc[0]["width"] is None


def test_crossing_far_from_V_is_located_where_it_is():
    t = D.crossings(_results(lambda w: 0.1 * np.log(24 / w), noise=0.0), L_shallow=1, L_deep=2,
                    n_boot=0)
    assert t.iloc[0]["found"] and t.iloc[0]["width"] == pytest.approx(24, rel=0.1)
    assert t.iloc[0]["ratio"] < 1 / 1.5


def test_crossings_are_per_vocabulary_and_rank():
    """A rank-limited and a full-rank sweep of the same V are two rows; the rank-limited one is
    compared with r, and each finds the crossing its own curves put there."""
    low = _results(lambda w: 0.1 * np.log(32 / w), V=256, r=32, noise=0.0)
    full = _results(lambda w: 0.1 * np.log(128 / w), V=256, base=32, noise=0.0)
    big = _results(lambda w: 0.1 * np.log(128 / w), V=1024, base=32, noise=0.0)
    res = pd.concat([low, full, big], ignore_index=True)
    t = D.crossings(res, L_shallow=1, L_deep=2, n_boot=0)
    assert [(v, r, k) for v, r, k in zip(t["V"], t["r"], t["rank"], strict=True)] == \
        [(256, None, 256), (256, 32, 32), (1024, None, 1024)]
    assert t.iloc[1]["width"] == pytest.approx(32, rel=0.1)
    assert t.iloc[1]["ratio"] == pytest.approx(t.iloc[1]["width"] / 32)
    assert t.iloc[0]["width"] == pytest.approx(128, rel=0.1)
    assert t.iloc[2]["width"] == pytest.approx(t.iloc[0]["width"])
    assert t.iloc[1]["predicted_params"] == D.non_embedding_params(1, 32)
    table = D.loss_table(res, L_shallow=1, L_deep=2)
    assert len(table) == 3 * 10 and list(table["r"].iloc[:10]) == [32] * 10
    assert table["r"].iloc[10:20].isna().all() and (table["V"].iloc[20:] == 1024).all()


def test_width_at_interpolates_in_logs_without_extrapolating():
    assert D.width_at(100, [100, 400], [10, 40]) == pytest.approx(10)
    with pytest.raises(ParameterError, match="no extrapolation"):
        D.width_at(500, [100, 400], [10, 40])
    with pytest.raises(ParameterError, match="results"):
        D.loss_table(pd.DataFrame({"V": [1]}), L_shallow=1, L_deep=2)


def test_rank_controls_measure_how_the_rank_moves_the_gap():
    """A rank-limited setting whose gap falls across the widths (deep wins from r on) beside a
    control whose gap stays flat, offset or not: the difference in differences is negative
    beyond its noise, and the control's lack of a crossing is reported."""
    lim = _results(lambda w: 0.1 * np.log(32 / w), V=256, r=32)
    ctrl = _results(lambda w: 0.3, V=256, base=32)  # flat: shallow ahead everywhere, offset
    cross = D.crossings(pd.concat([lim, ctrl]), L_shallow=1, L_deep=2, n_boot=200, band=2)
    rc = D.rank_controls(cross)
    assert len(rc) == 1 and rc["r"].iloc[0] == 32
    row = rc.iloc[0]
    assert row["control_width"] is None
    assert row["did"] == pytest.approx(-0.1 * np.log(16), abs=0.05)  # log(4 r / (r / 4))
    assert row["did"] < -2 * row["did_se_value"]
    same = D.rank_controls(D.crossings(pd.concat([lim, _results(lambda w: 0.1 * np.log(32 / w)
                                                                + 0.2, V=256, base=32)]),
                                       L_shallow=1, L_deep=2, n_boot=0, band=2)).iloc[0]
    assert abs(same["did"]) < 2 * same["did_se_value"]  # a constant offset cancels


def test_pilot_gaps_pair_each_width_per_budget_and_skip_missing_partners():
    cs = at_budgets(partial(D.sweep_configs, vocabs=[32], width_factors=[0.5, 2], L_shallow=5,
                            L_deep=10, seeds=[0], corpus="kjv", N=16, batch=2, lr=1e-3,
                            warmup=1), [100, 400])
    assert [c["steps"] for c in cs] == [400] * 4 + [100] * 4  # the longest first
    rows = [{**c, "params_non_embedding": D.non_embedding_params(c["L"], c["d_x"]),
             "test_loss": 3.0 - 0.001 * c["steps"] + (0.1 if c["L"] == 10 else 0.0)
             * (1 if c["d_x"] < 20 else -1)} for c in cs]
    gaps = D.pilot_gaps(pd.DataFrame(rows), L_shallow=5, L_deep=10)
    assert len(gaps) == 4 and set(gaps["tokens"]) == {100 * 2 * 16, 400 * 2 * 16}
    assert gaps.set_index(["steps", "d_shallow"])["gap"].to_dict() == pytest.approx(
        {(100, 16): 0.1, (100, 64): -0.1, (400, 16): 0.1, (400, 64): -0.1})
    unmatched = [r for r in rows if not (r["L"] == 10 and r["d_x"] > 20 and r["steps"] == 100)]
    assert len(D.pilot_gaps(pd.DataFrame(unmatched), L_shallow=5, L_deep=10)) == 3


def test_a_sweep_sits_on_the_pilot_axes_with_its_seed_mean_at_one_vocabulary():
    """A sweep's gap per width pair from its full-rank nets of one V only, the test loss
    averaged over seeds, at its own depths; a sweep without a pair reads nothing."""
    def nets(V, pairs, r=None, seeds=(0, 1), steps=4):
        return [dict(V=V, r=r, L=L, d_x=w, seed=s, steps=steps, batch=2, N=16,
                     test_loss=t + (0.1 if s else -0.1),
                     params_non_embedding=D.non_embedding_params(L, w))
                for L, w, t in pairs for s in seeds]
    cpu = pd.DataFrame(nets(32, [(1, 16, 3.0), (2, 12, 3.4), (1, 64, 2.0), (2, 46, 1.9)])
                       + nets(64, [(1, 32, 9.0), (2, 22, 1.0)])  # the second V: left out
                       + nets(32, [(1, 16, 5.0), (2, 12, 0.0)], r=4))  # a rank control: too
    long = pd.DataFrame(nets(32, [(4, 16, 3.0)], steps=8))  # no deep partner
    got = D.sweep_gaps(cpu, V=32, L_shallow=1, L_deep=2)
    assert got["factor"].tolist() == [0.5, 2.0]
    assert got["gap"].tolist() == pytest.approx([0.4, -0.1])
    assert got["tokens"].tolist() == [128, 128]
    assert got[["L_shallow", "L_deep"]].drop_duplicates().values.tolist() == [[1, 2]]
    assert D.sweep_gaps(long, V=32, L_shallow=4, L_deep=8).empty

