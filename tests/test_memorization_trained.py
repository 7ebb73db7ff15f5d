"""Tests of the batched memorization engine (mahdavi2024 section 5.2, appendices A, H, I.1)."""

import math
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import attnbook as ab
from attnbook.book.store import ResultStore
from attnbook.mahdavi2024.statistics import linear_fit_r2, saturation_stats
from attnbook.mahdavi2024.trained import (
    MemorizationConfig,
    StackedAttention,
    _batch_indices,
    _init_weights,
    attention_maps,
    lr_factor,
    make_data,
    train_group,
    train_sweep,
)

SMALL = dict(d=8, n=4, d_h=8, steps=30, batch=16, eval_every=10)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # tiny models: one intra-op thread is fastest, and much faster on a busy machine
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# -- a plain single-model reference: one model, unpadded, explicit per-head loop ------------
def _reference_losses(cfg: MemorizationConfig, steps: int) -> list[float]:
    """Train one model with per-head Python code and torch.optim.Adam; return its losses."""
    w = {k: v.clone().requires_grad_(True) for k, v in _init_weights(cfg).items()}
    D = make_data(cfg)
    pos = StackedAttention([cfg]).pos  # (n+1, d) sinusoidal codes, query at 0
    opt = torch.optim.Adam(list(w.values()), lr=cfg.lr, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, cfg.steps))
    stream = torch.tensor([cfg.init_seed()])
    losses = []
    for step in range(steps):
        idx = _batch_indices(stream, step, cfg.batch, torch.tensor([cfg.T]))[0]  # (B,)
        x_q = D.query[idx]  # (B, d)
        x_c = D.context if cfg.context == "shared" else D.context[idx]
        e = x_q @ w["W_E"] + w["b_E"] + pos[0]  # (B, d)
        E = x_c @ w["W_E"] + w["b_E"] + pos[1: cfg.n + 1]  # (n, d) or (B, n, d)
        o = 0
        for h in range(cfg.H):
            q = e @ w["W_Q"][h]  # (B, d_h)
            k = E @ w["W_K"][h]  # (n, d_h) or (B, n, d_h)
            s = (q @ k.T if E.dim() == 2 else torch.einsum("bk,bnk->bn", q, k)) / math.sqrt(cfg.d)
            theta = torch.softmax(s, -1)  # (B, n)
            v = E @ w["W_V"][h]  # (n,) or (B, n)
            z = (theta * v).sum(-1)  # (B,)
            o = o + z[:, None] * w["W_O"][h]  # (B, d)
        out = o @ w["W_D"] + w["b_D"]
        y = D.y[idx]
        loss = F.cross_entropy(out, y) if cfg.task == "classification" else \
            ((out[:, 0] - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    return losses


@pytest.mark.parametrize("context,task", [("shared", "classification"),
                                          ("per_example", "classification"),
                                          ("shared", "regression")])
def test_batched_equals_single_model_loop(context, task):
    # a group that mixes H, d_h, n and T, so padding of every kind is exercised
    cfgs = [MemorizationConfig(H=H, T=T, **{**SMALL, "n": n, "d_h": d_h}, context=context,
                               task=task)
            for H, T, n, d_h in [(1, 20, 4, 8), (3, 40, 2, 3), (2, 13, 3, 8), (20, 30, 4, 1)]]
    r = train_group(cfgs, trace_every=1)
    for m, c in enumerate(cfgs):
        ref = _reference_losses(c, 30)
        np.testing.assert_allclose(r["trace"][:, m], ref, rtol=2e-4, atol=1e-5)


def test_padded_heads_and_columns_stay_zero():
    cfgs = [MemorizationConfig(H=1, T=20, **{**SMALL, "d_h": 2}),
            MemorizationConfig(H=4, T=20, **SMALL)]
    r = train_group(cfgs, keep_models=True)
    net = r["model"]
    assert net.W_Q.shape == (2, 4, 8, 8)  # (M, H_max, d, d_h max)
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        assert torch.all(getattr(net, name)[0, 1:] == 0), name  # heads 2..4 of the H=1 model
    assert torch.all(net.W_Q[0, :, :, 2:] == 0) and torch.all(net.W_K[0, :, :, 2:] == 0)
    assert torch.any(net.W_Q[1, 3] != 0)


def test_deterministic_and_group_independent():
    a = MemorizationConfig(H=2, T=24, **SMALL)
    b = MemorizationConfig(H=5, T=50, **{**SMALL, "n": 2})
    r1, r2 = train_group([a, b], trace_every=1), train_group([a, b], trace_every=1)
    np.testing.assert_array_equal(r1["trace"], r2["trace"])
    alone = train_group([a], trace_every=1)
    np.testing.assert_allclose(alone["trace"][:, 0], r1["trace"][:, 0], rtol=2e-4, atol=1e-5)


def test_memorizes_a_small_set_exactly():
    # T = 10 <= H(n-1)+1 = 13 (Theorem 1): gradient descent finds a memorizing solution
    cfg = MemorizationConfig(H=4, T=10, d=8, n=4, d_h=8, steps=600, batch=10, lr=1e-2,
                             eval_every=50)
    r = train_group([cfg])
    assert r["metric"][0] == 1.0 and r["steps_run"] <= 600


def test_data_shapes_and_distribution():
    D = make_data(MemorizationConfig(H=1, T=7, n=3, d=5, context="per_example",
                                     task="regression"))
    assert D.context.shape == (7, 3, 5) and D.query.shape == (7, 5) and D.y.shape == (7,)
    assert 0 <= float(D.context.min()) and float(D.context.max()) <= 1
    assert D.y.dtype == torch.float32 and 0 <= float(D.y.min()) <= float(D.y.max()) <= 1
    c = make_data(MemorizationConfig(H=1, T=500, n=3, d=5))
    assert c.y.min() >= 0 and c.y.max() <= 99 and len(set(c.y.tolist())) > 90
    # the data set depends on the data settings only, not on the model
    a, b = MemorizationConfig(H=1, T=9, n=3, d=5), MemorizationConfig(H=7, T=9, n=3, d=5, d_h=2)
    assert torch.equal(make_data(a).query, make_data(b).query)


@settings(max_examples=30, deadline=None)
@given(T=st.lists(st.integers(1, 10_000), min_size=1, max_size=5), step=st.integers(0, 10**6))
def test_batch_indices_in_range_and_per_model(T, step):
    streams = torch.arange(len(T), dtype=torch.int64) * 7919 + 11
    idx = _batch_indices(streams, step, 64, torch.tensor(T))
    assert idx.shape == (len(T), 64)
    assert bool((idx >= 0).all()) and bool((idx < torch.tensor(T)[:, None]).all())
    alone = _batch_indices(streams[-1:], step, 64, torch.tensor(T[-1:]))
    assert torch.equal(alone[0], idx[-1])


def test_batch_indices_roughly_uniform():
    idx = _batch_indices(torch.tensor([123]), 0, 60_000, torch.tensor([6]))
    counts = torch.bincount(idx[0], minlength=6).float() / 60_000
    assert float((counts - 1 / 6).abs().max()) < 0.01


def test_lr_schedule():
    assert lr_factor(0, 1000) == pytest.approx(0.01)
    assert lr_factor(50, 1000) == pytest.approx(1.0)
    assert lr_factor(999, 1000) < 1e-3


def test_saturation_stats_on_hand_built_maps():
    theta = torch.zeros(3, 2, 4)  # (T, H, n)
    theta[0, 0, 1] = 1.0  # one-hot: saturated
    theta[0, 1] = 0.25  # uniform: not saturated
    theta[1, :, 0], theta[1, :, 2] = 0.991, 0.009  # both heads just above 0.99
    theta[2, :, 0], theta[2, :, 1] = 0.99, 0.01  # exactly 0.99 is not > 0.99
    s = saturation_stats(theta)
    assert s["saturated"].tolist() == [[True, False], [True, True], [False, False]]
    assert s["n_saturated"].tolist() == [1, 2, 0]
    assert s["frac_saturated"] == pytest.approx(3 / 6)
    assert s["frac_with_unsaturated"] == pytest.approx(2 / 3)
    np.testing.assert_allclose(s["max_coef"], [[1, 0.25], [0.991, 0.991], [0.99, 0.99]])


def test_attention_maps_are_softmax_rows():
    cfgs = [MemorizationConfig(H=3, T=9, **SMALL), MemorizationConfig(H=1, T=5, **{**SMALL,
                                                                                    "n": 2})]
    r = train_group(cfgs, keep_models=True)
    th = attention_maps(r, 1)
    assert th.shape == (5, 1, 2)  # (T, H, n): padding removed
    torch.testing.assert_close(th.sum(-1), torch.ones(5, 1))


def test_linear_fit_r2():
    assert linear_fit_r2([1, 2, 3, 4], [3, 5, 7, 9]) == pytest.approx(1.0)
    assert linear_fit_r2([1, 2, 3, 4, 5], [1, 4, 9, 16, 25]) < 0.98
    with pytest.raises(ab.ParameterError, match="at least 3 points"):
        linear_fit_r2([1, 2], [1, 2])


@pytest.mark.parametrize("kw,name", [(dict(n=64), "n"), (dict(d_h=0), "d_h"), (dict(T=0), "T"),
                                     (dict(task="ranking"), "task"), (dict(H=0), "H"),
                                     (dict(context="mixed"), "context"), (dict(lr=2.0), "lr")])
def test_bad_input_is_one_clear_error(kw, name):
    with pytest.raises(ab.ParameterError, match=f"parameter {name} = "):
        MemorizationConfig(**{"H": 1, "T": 10, **kw})


def test_group_must_share_recipe():
    a = MemorizationConfig(H=1, T=10, **SMALL)
    with pytest.raises(ab.ParameterError, match="share"):
        train_group([a, replace(a, steps=40)])
    with pytest.raises(ab.ParameterError):
        saturation_stats(torch.zeros(3))  # neither (T, H, n) nor (T, H)


def test_sweep_resumes_without_retraining(tmp_path, monkeypatch):
    from attnbook.book.notebook import Sweep

    sweep = Sweep(ResultStore("nb", "ci", root=tmp_path), "heads")
    cfgs = [MemorizationConfig(H=h, T=12, **SMALL) for h in (1, 2)]
    df = train_sweep(sweep, cfgs[:1], progress=False)  # an interrupted sweep: one of two done
    assert len(df) == 1
    calls = []
    import attnbook.mahdavi2024.trained as mgd

    real = mgd.train_group
    monkeypatch.setattr(mgd, "train_group", lambda c, *a, **k: calls.append(len(c)) or
                        real(c, *a, **k))
    df = train_sweep(sweep, cfgs, progress=False)
    assert calls == [1] and len(df) == 2 and set(df["H"]) == {1, 2}
    assert df["metric"].between(0, 1).all()


def test_saturation_stats_from_maxima_equals_from_maps():
    theta = torch.softmax(torch.randn(6, 3, 5, generator=torch.Generator().manual_seed(0)) * 4, -1)
    a, b = saturation_stats(theta), saturation_stats(theta.max(-1).values)
    assert a["n_saturated"].tolist() == b["n_saturated"].tolist()
    assert a["frac_saturated"] == b["frac_saturated"]


def test_saturation_stats_takes_read_only_arrays_without_warning():
    import warnings

    import pandas as pd

    theta = torch.softmax(torch.randn(6, 3, 5, generator=torch.Generator().manual_seed(0)) * 4, -1)
    maxima = pd.Series(theta.max(-1).values.reshape(-1).numpy()).to_numpy().reshape(6, 3)
    maxima.flags.writeable = False  # as pandas hands out its data
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns when it wraps a read-only array
        s = saturation_stats(maxima)
    assert s["n_saturated"].tolist() == saturation_stats(theta)["n_saturated"].tolist()


def test_plan_groups_covers_every_config_once_and_bounds_padding():
    from attnbook.mahdavi2024.trained import _step_cost, plan_groups

    cfgs = [MemorizationConfig(H=H, T=T, d=16, n=n, d_h=16, seed=s)
            for H in (1, 2, 8, 30, 60) for T in (50, 500) for n in (4, 8) for s in (0, 1)]
    cfgs += [replace(c, task="regression") for c in cfgs[:6]]
    groups = plan_groups(cfgs, max_group=7, max_waste=1.5)
    flat = [c for g in groups for c in g]
    assert sorted(map(repr, flat)) == sorted(map(repr, cfgs))  # each exactly once
    for g in groups:
        assert 1 <= len(g) <= 7
        assert len({c.group_key() for c in g}) == 1  # one recipe per group
        alone = sum(_step_cost([c]) for c in g)
        assert len(g) == 1 or _step_cost(g) <= 1.5 * alone
    assert len(plan_groups(cfgs, max_waste=1e9)) == 2  # no bound on padding: one per recipe
    with pytest.raises(ab.ParameterError, match="max_waste"):
        plan_groups(cfgs, max_waste=0.5)


def test_cpu_softmax_and_loss_match_torch():
    from attnbook.mahdavi2024.trained import _loss, _softmax

    s = torch.randn(3, 5, 2, 7, dtype=torch.float64) * 30
    s[..., -2:] = float("-inf")  # padded keys
    torch.testing.assert_close(_softmax(s), torch.softmax(s, -1), rtol=0, atol=1e-15)
    out, y = torch.randn(4, 9, 100, dtype=torch.float64) * 20, torch.randint(100, (4, 9))
    ref = F.cross_entropy(out.reshape(36, 100), y.reshape(36), reduction="none").view(4, 9)
    torch.testing.assert_close(_loss(out, y, "classification"), ref.mean(1), rtol=1e-12, atol=0)
    # the fused path (taken off CPU) gives the same values and the same gradients
    a, b = out.clone().requires_grad_(), out.clone().requires_grad_()
    la, lb = _loss(a, y, "classification", fused=False), _loss(b, y, "classification", fused=True)
    torch.testing.assert_close(la, lb, rtol=1e-12, atol=0)
    la.sum().backward()
    lb.sum().backward()
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-10, atol=1e-14)
