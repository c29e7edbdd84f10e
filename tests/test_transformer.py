"""Tests of helpers.lib.transformer: the decoder-only model, its LSTM baseline, sampling, training."""
import functools

import numpy as np
import pytest
import torch

from helpers.infra.widgets import Explorer, slider
from helpers.lessons.lesson04 import (
    render_attention,
    render_temperature,
    time_parallel_vs_sequential,
)
from helpers.lib.attention import MultiHeadAttention
from helpers.lib.gradcheck import assert_close_to_torch
from helpers.lib.language_models import count_parameters
from helpers.lib.text import UnknownWordError, Vocab
from helpers.lib.transformer import (
    LSTMLM,
    Block,
    CausalSelfAttention,
    CharCorpus,
    DecoderLM,
    TransformerConfig,
    block_parameter_count,
    encode_chars,
    evaluate_lm,
    generate,
    next_token_probs,
    sample_from_logits,
    train_lm,
)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # tiny models: thread synchronisation costs more than it saves (and the test machine is shared)
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def tiny_corpus():
    text = "to be or not to be, that is the question. " * 60
    vocab = Vocab.build(list(text), specials=())   # characters
    ids = encode_chars(vocab, text)
    return CharCorpus(vocab, ids[:2000], ids[2000:], ("tiny",))


@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("positions", ["learned", "sinusoidal", "rope"])
def test_decoder_is_causal(norm, positions):
    model = DecoderLM(TransformerConfig(11, d_model=16, n_heads=2, n_layers=2, max_len=12,
                                        norm=norm, positions=positions), seed=1)
    ids = torch.randint(0, 11, (2, 9), generator=torch.Generator().manual_seed(0))
    out = model(ids)
    assert out.shape == (2, 9, 11)
    ids2 = ids.clone()
    ids2[:, 6] = (ids2[:, 6] + 1) % 11
    out2 = model(ids2)
    torch.testing.assert_close(out2[:, :6], out[:, :6])        # the past does not see the future
    assert not torch.allclose(out2[:, 6:], out[:, 6:])          # the present and future do change


def test_positions_break_permutation_symmetry():
    # without positions, attention is permutation-equivariant; with them the model sees order
    cfg = TransformerConfig(5, d_model=8, n_heads=2, n_layers=1, max_len=4)
    model = DecoderLM(cfg, seed=0)
    a, b = torch.tensor([[1, 2, 3]]), torch.tensor([[3, 2, 1]])
    assert not torch.allclose(model(a)[0, 2], model(b)[0, 2])


def test_same_seed_same_weights_and_global_rng_untouched():
    cfg = TransformerConfig(7, d_model=8, n_heads=2, n_layers=1, max_len=4)
    state = torch.random.get_rng_state()
    a, b, c = DecoderLM(cfg, seed=3), DecoderLM(cfg, seed=3), DecoderLM(cfg, seed=4)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(a.tok.weight, b.tok.weight) and not torch.equal(a.tok.weight, c.tok.weight)


def test_explicit_attention_equals_fused_and_numpy_multihead():
    cfg = TransformerConfig(10, d_model=12, n_heads=3, max_len=8)
    torch.manual_seed(0)
    attn = CausalSelfAttention(cfg).double()
    x = torch.randn(2, 6, 12, dtype=torch.float64)
    fused = attn(x)
    explicit = attn(x, need_weights=True)
    torch.testing.assert_close(explicit, fused)
    W = attn.last_weights
    torch.testing.assert_close(W.sum(-1), torch.ones(2, 3, 6, dtype=torch.float64))
    assert torch.all(W.triu(1) == 0)
    # the NumPy layer with the same weights gives the same output
    ours = MultiHeadAttention(12, 3, np.random.default_rng(0))
    Wqkv, bqkv = attn.qkv.weight.detach().numpy(), attn.qkv.bias.detach().numpy()
    for k in range(3):
        ours.params[2 * k][...] = Wqkv[12 * k:12 * (k + 1)].T
        ours.params[2 * k + 1][...] = bqkv[12 * k:12 * (k + 1)]
    ours.params[6][...] = attn.proj.weight.detach().numpy().T
    ours.params[7][...] = attn.proj.bias.detach().numpy()
    assert_close_to_torch(ours.forward(x.numpy(), causal=True), fused, "NumPy MHA vs CausalSelfAttention",
                          rtol=1e-10, atol=1e-12)


def test_pre_and_post_ln_differ_in_where_the_norm_sits():
    cfg_pre = TransformerConfig(10, d_model=8, n_heads=2, norm="pre")
    cfg_post = TransformerConfig(10, d_model=8, n_heads=2, norm="post")
    torch.manual_seed(0)
    pre = Block(cfg_pre)
    post = Block(cfg_post)
    post.load_state_dict(pre.state_dict())
    x = 3 + 5 * torch.randn(1, 4, 8)
    y_post = post(x)
    # Post-LN output is a LayerNorm output: zero mean, unit variance per position (LN at identity)
    torch.testing.assert_close(y_post.mean(-1), torch.zeros(1, 4), atol=1e-5, rtol=0)
    torch.testing.assert_close(y_post.var(-1, unbiased=False), torch.ones(1, 4), atol=1e-3, rtol=0)
    # Pre-LN keeps the residual stream un-normalised
    assert abs(pre(x).mean().item()) > 1


def test_parameter_counts():
    cfg = TransformerConfig(10, d_model=32, n_heads=4)
    assert block_parameter_count(32)["total"] == count_parameters(Block(cfg)) == 12 * 32**2 + 13 * 32
    gpt3 = block_parameter_count(12288)
    assert gpt3["total"] == 1_812_099_072
    assert 96 * gpt3["total"] == 173_961_510_912
    lstm = LSTMLM(84, emb_dim=64, hidden=128)
    # embedding + LSTM (4 gates, two bias vectors in torch) + output layer
    assert count_parameters(lstm) == 84 * 64 + 4 * 128 * (64 + 128) + 2 * 4 * 128 + 128 * 84 + 84


def test_config_errors():
    with pytest.raises(ValueError, match="d_model=10 is not divisible by n_heads=3"):
        TransformerConfig(5, d_model=10, n_heads=3)
    with pytest.raises(ValueError, match="norm must be 'pre' or 'post'"):
        TransformerConfig(5, norm="middle")
    with pytest.raises(ValueError, match="positions must be"):
        TransformerConfig(5, positions="alibi")
    model = DecoderLM(TransformerConfig(5, d_model=8, n_heads=2, max_len=4))
    with pytest.raises(ValueError, match="exceeds max_len=4"):
        model(torch.zeros(1, 5, dtype=torch.long))
    with pytest.raises(ValueError, match=r"shape \(B, T\)"):
        model(torch.zeros(5, dtype=torch.long))


def test_sampler_empirical_distribution():
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0], dtype=torch.float64)
    g = torch.Generator().manual_seed(0)
    n = 40_000
    for temp in (0.5, 1.0, 2.0):
        draws = sample_from_logits(logits, temp, g, num_samples=n).numpy()
        freq = np.bincount(draws, minlength=4) / n
        p = torch.softmax(logits / temp, dim=0).numpy()
        assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / n) + 1e-3), (temp, freq, p)
    assert sample_from_logits(logits, 0.0, g, num_samples=3).tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        sample_from_logits(logits, -1.0, g)


def test_generate_and_temperature(tiny_corpus):
    V = len(tiny_corpus.vocab)
    model = DecoderLM(TransformerConfig(V, d_model=16, n_heads=2, n_layers=1, max_len=16), seed=0)
    prompt = tiny_corpus.encode("to be")
    a = generate(model, prompt, 20, temperature=1.0, seed=5)
    b = generate(model, prompt, 20, temperature=1.0, seed=5)
    c = generate(model, prompt, 20, temperature=1.0, seed=6)
    assert len(a) == 25 and np.array_equal(a[:5], prompt)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    greedy = generate(model, prompt, 20, temperature=0.0)
    # greedy picks the argmax of the next-token distribution at every step (context > max_len is cropped)
    for t in range(5, 25):
        assert greedy[t] == np.argmax(next_token_probs(model, greedy[max(0, t - 16):t]))
    p1, p_hot, p_cold = (next_token_probs(model, prompt, T) for T in (1.0, 100.0, 0.05))
    assert np.isclose(p1.sum(), 1) and np.abs(p_hot - 1 / V).max() < np.abs(p1 - 1 / V).max()
    assert p_cold.max() > p1.max()
    with pytest.raises(ValueError, match="temperature must be > 0"):
        next_token_probs(model, prompt, 0.0)
    # the LSTM baseline samples through the same function
    lstm = LSTMLM(V, emb_dim=8, hidden=16)
    assert len(generate(lstm, prompt, 5, seed=1)) == 10


def test_training_lowers_held_out_loss(tiny_corpus):
    V = len(tiny_corpus.vocab)
    for model in (DecoderLM(TransformerConfig(V, d_model=32, n_heads=2, n_layers=1, max_len=32), seed=0),
                  LSTMLM(V, emb_dim=16, hidden=32, seed=0)):
        before = evaluate_lm(model, tiny_corpus.valid_ids, seq_len=32)
        res = train_lm(model, tiny_corpus, max_seconds=None, max_steps=60, seq_len=32, batch_size=16,
                       lr=1e-2, progress=False, eval_tokens=10_000)
        assert res.steps == 60 and res.tokens == 60 * 16 * 32 and len(res.curve) == 60
        assert before > 2.5 and res.valid_loss < 0.6 * before, (type(model).__name__, before, res.valid_loss)
        assert np.isclose(res.perplexity, np.exp(res.valid_loss))


def test_wall_clock_budget_stops_training(tiny_corpus):
    model = DecoderLM(TransformerConfig(len(tiny_corpus.vocab), d_model=16, n_heads=2, n_layers=1, max_len=16))
    res = train_lm(model, tiny_corpus, max_seconds=0.3, seq_len=16, batch_size=4, progress=False)
    assert res.history.stopped_early and 0 < res.steps < 100_000
    # the loop stops after the step during which its own clock passed 0.3 s (the curve's clock
    # starts a moment earlier, and the last point is taken just before the loop checks)
    assert res.seconds > 0.3 and res.curve[-1][0] > 0.3 - 0.1 and len(res.curve) == res.steps


def test_corpus_errors(tiny_corpus):
    with pytest.raises(UnknownWordError, match="'Z'"):
        tiny_corpus.encode("to Zed")
    with pytest.raises(ValueError, match="need more than 32 tokens"):
        evaluate_lm(DecoderLM(TransformerConfig(len(tiny_corpus.vocab), d_model=8, n_heads=2)),
                    tiny_corpus.valid_ids[:20], seq_len=32)


def test_time_parallel_vs_sequential():
    model = DecoderLM(TransformerConfig(20, d_model=16, n_heads=2, n_layers=1, max_len=32))
    r = time_parallel_vs_sequential(model, 32, repeats=2)
    assert r["sequential_s"] > r["parallel_s"] > 0 and np.isclose(r["ratio"], r["sequential_s"] / r["parallel_s"])


def test_attention_and_temperature_explorers(tiny_corpus):
    V = len(tiny_corpus.vocab)
    model = DecoderLM(TransformerConfig(V, d_model=16, n_heads=4, n_layers=2, max_len=32), seed=0)
    render = functools.partial(render_attention, model, tiny_corpus, "to be or not")
    ex = Explorer(render, {"head": slider(0, 0, 3, 1, "head"), "layer": slider(0, 0, 1, 1, "layer")})
    before, n = ex.summary, ex.renders
    ex.controls["head"].value = 3
    assert ex.renders == n + 1 and ex.summary != before and "head 3" in ex.summary
    with pytest.raises(ValueError, match="head in"):
        render_attention(model, tiny_corpus, "to be", head=4)
    render_t = functools.partial(render_temperature, model, tiny_corpus, "to be")
    ex2 = Explorer(render_t, {"temperature": slider(1.0, 0.1, 3.0, 0.1, "T")})
    before = ex2.summary
    ex2.controls["temperature"].value = 2.0
    assert ex2.summary != before and "T=2.00" in ex2.summary


def test_norm_comparison_explorer_trains_on_click(tiny_corpus):
    from helpers.course.shakespeare import CharSplit
    from helpers.infra.widgets import log_slider
    from helpers.lessons.lesson04 import render_norm_comparison
    from helpers.lib.transformer import unigram_loss
    split = CharSplit(tiny_corpus.vocab, tiny_corpus.train_ids, tiny_corpus.valid_ids, tiny_corpus.valid_ids,
                      "a work", "another work")
    render = functools.partial(render_norm_comparison, split, steps=2, seeds=(0,))
    ex = Explorer(render, {"lr": log_slider(3e-3, -4, -1, "lr")}, run_button="Train")
    before, n = ex.summary, ex.renders
    assert "pre-LN" in before and "post-LN" in before
    ex.controls["lr"].value = 1e-2
    assert ex.renders == n  # nothing trains until the button is pressed
    ex.button.click()
    assert ex.renders == n + 1 and ex.summary != before and "lr=1.0e-02" in ex.summary
    # the unigram baseline: add-one smoothed frequencies, between 0 and log V
    u = unigram_loss(tiny_corpus.train_ids, tiny_corpus.valid_ids, len(tiny_corpus.vocab))
    assert 0 < u < np.log(len(tiny_corpus.vocab))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error raised on a machine without a GPU")
def test_device_argument_without_gpu_raises_clearly(tiny_corpus):
    model = DecoderLM(TransformerConfig(len(tiny_corpus.vocab), d_model=8, n_heads=2, max_len=16))
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        train_lm(model, tiny_corpus, device="cuda", max_steps=1, seq_len=16, progress=False)
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        evaluate_lm(model, tiny_corpus.valid_ids, seq_len=16, device="cuda")
