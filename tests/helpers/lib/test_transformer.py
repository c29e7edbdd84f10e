"""helpers.lib.transformer: the decoder-only model, its LSTM baseline, counts, evaluation."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import transformer as TR
from helpers.lib.language_models import count_parameters
from tests.props import budget, check_bad_ids, closeness, corrupted, dims, raises_naming

T = torch.tensor
close = closeness(1e-10)
_CFG = TR.TransformerConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=1, max_len=6)


@budget(2)
@given(st.data())
def test_the_decoder_is_causal_for_every_setting_and_refuses_bad_ids(data):
    norm = data.draw(st.sampled_from(["pre", "post"]))
    pos = data.draw(st.sampled_from(["learned", "sinusoidal", "rope"]))
    cfg = TR.TransformerConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=1, max_len=6,
                               norm=norm, positions=pos)
    model = TR.DecoderLM(cfg, seed=data.draw(st.integers(0, 2))).eval()
    B, T_ = data.draw(dims(1, 3)), data.draw(dims(1, 6))
    ids = np.array(data.draw(st.lists(st.integers(0, 6), min_size=B * T_, max_size=B * T_)))
    ids = ids.reshape(B, T_)
    with torch.no_grad():
        out = model(T(ids))
        t = data.draw(st.integers(0, T_ - 1))
        changed = ids.copy()
        changed[:, t:] = (changed[:, t:] + 1) % 7          # the future changes ...
        close(out[:, :t], model(T(changed))[:, :t], 1e-5)  # ... the past does not see it
    check_bad_ids(lambda x: model(torch.as_tensor(x)), ids, 7, "ids", data.draw(corrupted(ids, 7)))
    raises_naming(lambda: model(T(np.zeros((1, 7), np.int64))), "max_len", ValueError)
    raises_naming(lambda: model(T(np.zeros(5, np.int64))), "(B, T)", ValueError)
    raises_naming(lambda: TR.TransformerConfig(vocab_size=7, d_model=9, n_heads=2), "n_heads",
                  ValueError)
    raises_naming(lambda: TR.TransformerConfig(vocab_size=7, norm="mid"), "norm", ValueError)
    raises_naming(lambda: TR.TransformerConfig(vocab_size=7, positions="alibi"), "positions",
                  ValueError)


def test_positions_break_permutation_symmetry_and_the_seed_alone_sets_the_weights():
    cfg = TR.TransformerConfig(5, d_model=8, n_heads=2, n_layers=1, max_len=4)
    model = TR.DecoderLM(cfg, seed=0)
    assert not torch.allclose(model(T([[1, 2, 3]]))[0, 2], model(T([[3, 2, 1]]))[0, 2])
    state = torch.random.get_rng_state()
    a, b, c = (TR.DecoderLM(cfg, seed=s) for s in (3, 3, 4))
    assert torch.equal(torch.random.get_rng_state(), state)       # the global generator untouched
    assert torch.equal(a.tok.weight, b.tok.weight) and not torch.equal(a.tok.weight, c.tok.weight)


def test_pre_and_post_ln_differ_in_where_the_norm_sits():
    torch.manual_seed(0)
    pre = TR.Block(TR.TransformerConfig(10, d_model=8, n_heads=2, norm="pre"))
    post = TR.Block(TR.TransformerConfig(10, d_model=8, n_heads=2, norm="post"))
    post.load_state_dict(pre.state_dict())
    x = 3 + 5 * torch.randn(1, 4, 8)
    y_post = post(x)              # a LayerNorm output: zero mean, unit variance per position
    torch.testing.assert_close(y_post.mean(-1), torch.zeros(1, 4), atol=1e-5, rtol=0)
    torch.testing.assert_close(y_post.var(-1, unbiased=False), torch.ones(1, 4), atol=1e-3, rtol=0)
    assert abs(pre(x).mean().item()) > 1          # Pre-LN keeps the residual stream as it is


@budget()
@given(d=dims(1, 64))
def test_a_block_has_12d2_plus_13d_parameters(d):
    parts = TR.block_parameter_count(d)
    assert parts["total"] == 12 * d * d + 13 * d
    block = TR.Block(TR.TransformerConfig(vocab_size=3, d_model=d, n_heads=1, n_layers=1))
    assert count_parameters(block) == parts["total"]


def test_the_worked_parameter_counts():
    gpt3 = TR.block_parameter_count(12288)
    assert gpt3["total"] == 1_812_099_072 and 96 * gpt3["total"] == 173_961_510_912
    lstm = TR.LSTMLM(84, emb_dim=64, hidden=128)      # torch keeps two bias vectors per gate
    assert count_parameters(lstm) == 84 * 64 + 4 * 128 * (64 + 128) + 2 * 4 * 128 + 128 * 84 + 84
    ids = np.array([[0, 4, 2]])
    assert lstm(T(ids)).shape == (1, 3, 84)
    raises_naming(lambda: lstm(T([[0, 84, 2]])), "ids", ValueError)


def test_evaluate_lm_is_the_mean_cross_entropy_of_non_overlapping_windows():
    model = TR.DecoderLM(_CFG, seed=0)
    ids = np.random.default_rng(0).integers(0, 7, 41)
    with torch.no_grad():
        logits = model(T(ids[:36].reshape(6, 6)))
    expected = torch.nn.functional.cross_entropy(logits.flatten(0, 1), T(ids[1:37])).item()
    assert TR.evaluate_lm(model, ids, seq_len=6, batch_size=4) == pytest.approx(expected, rel=1e-6)
    raises_naming(lambda: TR.evaluate_lm(model, ids[:3], seq_len=6), "tokens", ValueError)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the error of a machine without a GPU")
def test_the_device_argument_without_a_gpu_raises_clearly():
    model = TR.DecoderLM(_CFG)
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        TR.evaluate_lm(model, np.zeros(20, np.int64), seq_len=6, device="cuda")
