"""Stacked training (many seeds of one language model as one program) equals one at a time.

Model m of a stack must start from the weights ``LanguageModel(cfg)`` draws under its seed, see
the batches and dropout masks ``train_lm`` gives it, and end with the same losses and weights
up to float rounding (the batched matmuls sum in another order).
"""

import numpy as np
import pytest
import torch

from attnbook import ParameterError
from attnbook.engines.lm import LanguageModel, LMConfig, StackedLanguageModel
from attnbook.engines.training import (
    TrainConfig,
    evaluate,
    lr_at,
    sample_batch,
    sample_batch_on,
    train_lm,
    train_lm_stacked,
    train_step,
)

V, N = 24, 16
_rng = np.random.default_rng(0)
TRAIN = ((np.arange(5000) + (_rng.random(5000) < 0.1)) % V).astype(np.uint16)
TEST = ((np.arange(700) * 5) % V).astype(np.uint16)
TC = TrainConfig(steps=30, batch=6, lr=3e-3, warmup=3, eval_every=10, eval_tokens=400,
                 eval_batch=5)
SEEDS = [3, 7, 11]
# factorized embeddings (r, r_e), H d_a != d_x, two blocks
FACTORIZED = dict(V=V, N=N, L=2, d_x=16, H=2, d_a=12, r=4, r_e=3)


def _one_at_a_time(cfg, seeds, tc=TC):
    results, models = [], []
    for s in seeds:
        def make():
            models.append(LanguageModel(cfg))
            return models[-1]

        results.append(train_lm(make, TRAIN, TEST, N, tc, seed=s))
    return results, models


@pytest.mark.parametrize("kw", [FACTORIZED, dict(V=V, N=N, L=1, d_x=16, H=4, tie=True)])
def test_initial_weights_are_those_of_each_seed(kw):
    cfg = LMConfig(**kw)
    net = StackedLanguageModel(cfg, SEEDS)
    for m, s in enumerate(SEEDS):
        torch.manual_seed(s)
        ref = LanguageModel(cfg)
        got = dict(net.unstack(m).named_parameters())
        assert all(torch.equal(got[n], p) for n, p in ref.named_parameters())


def test_forward_matches_each_model():
    cfg = LMConfig(**FACTORIZED)
    net = StackedLanguageModel(cfg, SEEDS).eval()
    idx = torch.randint(0, V, (len(SEEDS), 4, N), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        out = net(idx)
        for m in range(len(SEEDS)):
            ref = net.unstack(m).eval()(idx[m])
            assert torch.allclose(out[m], ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dropout", [0.1, 0.0])
def test_stacked_training_equals_one_at_a_time(dropout):
    cfg = LMConfig(**FACTORIZED, dropout=dropout)
    singles, models = _one_at_a_time(cfg, SEEDS)
    stacked, net = train_lm_stacked(cfg, TRAIN, TEST, TC, SEEDS, return_model=True)
    assert len(stacked) == len(SEEDS)
    for m, (a, b) in enumerate(zip(singles, stacked, strict=True)):
        assert a.keys() == b.keys()
        assert a["curve_step"] == b["curve_step"] == [10, 20, 30]
        for k in ("params_total", "params_embedding", "params_head", "params_non_embedding",
                  "tokens_seen", "peak_mem_bytes"):
            assert a[k] == b[k]
        for k in ("curve_train", "curve_test"):
            np.testing.assert_allclose(b[k], a[k], rtol=1e-4)
        assert b["test_loss"] == pytest.approx(a["test_loss"], rel=1e-4)
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=1e-4)
        got = dict(net.unstack(m).named_parameters())
        for name, p in models[m].named_parameters():
            # atol: the key bias has a gradient that is zero up to rounding (softmax ignores a
            # shift of all scores), which Adam turns into steps of lr size in either program
            assert torch.allclose(got[name], p.detach(), rtol=1e-4, atol=1e-5), name


def test_tied_head_trains_as_one_at_a_time():
    cfg = LMConfig(V=V, N=N, L=1, d_x=16, tie=True, dropout=0.1)
    tc = TrainConfig(steps=12, batch=4, lr=3e-3, eval_tokens=200)
    singles, _ = _one_at_a_time(cfg, [0, 1], tc)
    stacked = train_lm_stacked(cfg, TRAIN, TEST, tc, [0, 1])
    for a, b in zip(singles, stacked, strict=True):
        assert b["test_loss"] == pytest.approx(a["test_loss"], rel=1e-4)
        assert a["params_total"] == b["params_total"]


def test_deterministic_and_independent_of_the_other_seeds():
    cfg = LMConfig(**FACTORIZED)
    a, net_a = train_lm_stacked(cfg, TRAIN, TEST, TC, SEEDS, return_model=True)
    b, net_b = train_lm_stacked(cfg, TRAIN, TEST, TC, SEEDS, return_model=True)
    for x, y in zip(a, b, strict=True):
        x.pop("tokens_per_s"), y.pop("tokens_per_s")
        assert x == y
    pairs = zip(net_a.parameters(), net_b.parameters(), strict=True)
    assert all(torch.equal(p, q) for p, q in pairs)
    c = train_lm_stacked(cfg, TRAIN, TEST, TC, [SEEDS[1], 99])  # seed 7 in another stack
    np.testing.assert_allclose(c[0]["curve_train"], a[1]["curve_train"], rtol=1e-5)
    assert c[1]["test_loss"] != a[1]["test_loss"]


def test_dropout_masks_per_model_stream_and_shared_stream():
    cfg = LMConfig(V=V, N=N, L=2, d_x=16, dropout=0.25)
    net = StackedLanguageModel(cfg, [0, 1, 2, 3])
    noise = net.draw_noise(8, N)
    assert [tuple(n.shape) for n in noise] == [(4, *s) for s in net.noise_layout(8, N)]
    flat = torch.cat([n.reshape(-1) for n in noise])
    assert flat.unique().tolist() == pytest.approx([0.0, 1 / 0.75])
    assert (flat > 0).float().mean().item() == pytest.approx(0.75, abs=0.01)
    assert not torch.equal(noise[1][0], noise[1][1])  # each model its own masks
    # the shared stream (the default off the CPU): another draw, the same distribution, so
    # training ends at the same loss statistically, not bit for bit
    tc = TrainConfig(steps=50, batch=8, lr=3e-3, warmup=5, eval_tokens=400, eval_every=25)
    seeds = list(range(4))
    exact = train_lm_stacked(cfg, TRAIN, TEST, tc, seeds)
    shared = train_lm_stacked(cfg, TRAIN, TEST, tc, seeds, per_model_dropout=False)
    ex, sh = (np.array([r["train_loss"] for r in res]) for res in (exact, shared))  # steps 26-50
    assert not np.array_equal(ex, sh)
    assert abs(ex.mean() - sh.mean()) < 3 * np.hypot(ex.std(), sh.std()) + 0.05
    assert ex.mean() < 0.8 * np.log(V) and sh.mean() < 0.8 * np.log(V)  # both learn


def test_device_sampler_gives_the_cpu_sampler_batches():
    tokens = torch.from_numpy(TRAIN.astype(np.int64))
    for seed in (0, 5):
        a = sample_batch(TRAIN, N, 7, torch.Generator().manual_seed(seed))
        b = sample_batch_on(tokens, N, 7, torch.Generator().manual_seed(seed))
        assert all(torch.equal(u, v) for u, v in zip(a, b, strict=True))


def test_train_lm_cpu_numbers_are_those_of_the_per_step_loop():
    """train_lm keeps its running loss on the device now; on the CPU its numbers must stay
    those of the former loop (``.item()`` per step into a Python float), bit for bit."""
    cfg = LMConfig(**FACTORIZED, dropout=0.1)
    out = train_lm(lambda: LanguageModel(cfg), TRAIN, TEST, N, TC, seed=5)
    torch.manual_seed(5)
    model = LanguageModel(cfg)
    gen = torch.Generator().manual_seed(6)
    opt = torch.optim.AdamW([{"params": [p for p in model.parameters() if p.dim() >= 2],
                              "weight_decay": TC.weight_decay},
                             {"params": [p for p in model.parameters() if p.dim() < 2],
                              "weight_decay": 0.0}], lr=TC.lr, betas=(TC.beta1, TC.beta2))
    running, curve, tests = 0.0, [], []
    model.train()
    for step in range(TC.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, TC)
        x, y = sample_batch(TRAIN, N, TC.batch, gen)
        running += train_step(model, opt, x, y, torch.device("cpu")).item()
        if (step + 1) % TC.eval_every == 0:
            curve.append(running / TC.eval_every)
            running = 0.0
            tests.append(evaluate(model, TEST, N, max_tokens=TC.eval_tokens,
                                  batch=TC.eval_batch))
    assert out["curve_train"] == curve and out["curve_test"] == tests


@pytest.mark.parametrize("call,name", [
    (lambda c: train_lm_stacked(c, TRAIN, TEST, TC, []), "seeds"),
    (lambda c: train_lm_stacked(c, TRAIN, TEST, TC, [1, 2, 1]), "seeds"),
    (lambda c: train_lm_stacked(c, TRAIN, TEST, TC, [1, 2.5]), "seeds"),
    (lambda c: train_lm_stacked([c, LMConfig(**{**FACTORIZED, "r": 5})], TRAIN, TEST, TC,
                                [1, 2]), "cfg"),
    (lambda c: train_lm_stacked([c], TRAIN, TEST, TC, [1, 2]), "cfg"),
    (lambda c: train_lm_stacked(c, TRAIN, TEST, {"steps": 3}, [1]), "train_cfg"),
    (lambda c: train_lm_stacked(c, TRAIN + V, TEST, TC, [1]), "train_tokens"),
    (lambda c: train_lm_stacked(c, TRAIN[:10], TEST, TC, [1]), "N"),
    (lambda c: StackedLanguageModel(c, [0]).unstack(1), "m"),
    (lambda c: StackedLanguageModel(c, [0])(torch.zeros(2, 1, N, dtype=torch.long)), "idx"),
])
def test_bad_input(call, name):
    with pytest.raises(ParameterError, match=f"^parameter {name} =") as e:
        call(LMConfig(**FACTORIZED))
    assert "\n" not in str(e.value)


def test_same_config_list_is_accepted():
    cfg = LMConfig(**FACTORIZED)
    tc = TrainConfig(steps=2, batch=2, eval_tokens=64)
    a = train_lm_stacked([cfg, LMConfig(**FACTORIZED)], TRAIN, TEST, tc, [4, 5])
    b = train_lm_stacked(cfg, TRAIN, TEST, tc, [4, 5])
    assert [r["test_loss"] for r in a] == [r["test_loss"] for r in b]
