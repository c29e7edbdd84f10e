"""helpers.lib.rnn_lm: the torch recurrent LM, its NumPy copy, generation at a temperature, the
unigram floor and how bland a text is."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import rnn_lm as RL
from helpers.lib.text import UNK, Vocab
from tests.props import budget, check_bad_ids, closeness, corrupted, float_arrays, raises_naming

T = torch.tensor
close = closeness(1e-10)


@pytest.fixture(scope="module")
def tiny():
    words = ("the cat sat on the mat " * 60).split() + [RL.EOS]
    vocab = Vocab.build(words, specials=(UNK, RL.EOS))
    ids = vocab.encode(words)
    return RL.LMData(vocab, ids, ids[:200], ids[:200])


@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_the_numpy_copy_of_the_model_gives_its_hidden_states(tiny, kind):
    model = RL.RecurrentLM(len(tiny.vocab), kind, emb_dim=8, hidden=16, seed=0)
    E, layer, W_out, b_out = RL.to_numpy_layers(model)
    ids = tiny.train[:12]
    with torch.no_grad():
        h_t, _ = model.rnn(model.embed(torch.as_tensor(ids[None])))
        logits, _ = model(torch.as_tensor(ids[None]))
    hs = layer.forward(E[ids][None])
    np.testing.assert_allclose(hs, h_t.double().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hs @ W_out.T + b_out, logits.double().numpy(), rtol=1e-4, atol=1e-5)


def test_the_model_refuses_a_bad_kind_and_shape_and_the_unigram_floor_is_its_formula(tiny):
    with pytest.raises(ValueError, match="kind must be one of"):
        RL.RecurrentLM(10, "transformer")
    model = RL.RecurrentLM(len(tiny.vocab), "rnn", emb_dim=4, hidden=4)
    with pytest.raises(ValueError, match=r"token ids of shape \(batch, time\)"):
        model(torch.zeros(5, dtype=torch.long))
    V = len(tiny.vocab)
    counts = np.bincount(tiny.train, minlength=V) + 1.0
    expected = math.exp(-np.log(counts / counts.sum())[tiny.valid].mean())
    close(RL.unigram_perplexity(tiny.train, tiny.valid, V), expected)
    assert "vocabulary 7 types" in tiny.describe()


@budget()
@given(st.data())
def test_generation_reads_the_softmax_at_its_temperature_and_refuses_bad_input(data):
    logits = data.draw(float_arrays((2, 5), -10, 10))
    temp = data.draw(st.sampled_from([0.25, 1.0, 4.0]))
    close(RL.temperature_probs(logits, temp), torch.softmax(T(logits) / temp, -1))
    raises_naming(lambda: RL.temperature_probs(logits, 0), "temperature", ValueError)
    vocab = Vocab(["<unk>", "<eos>", "a", "b", "c"], specials=("<unk>", "<eos>"))
    model = RL.RecurrentLM(5, "gru", emb_dim=3, hidden=4)
    words = RL.generate(model, vocab, ["a", "zzz"], n_words=3, greedy=True)
    assert len(words) == 3 and "<unk>" not in words
    logits_a = RL.next_word_logits(model, vocab, ["a"])
    assert logits_a.shape == (5,) and RL.generate(model, vocab, ["a"], 1, greedy=True)[0] == \
        vocab.itos[int(np.argmax(np.where(np.arange(5) == vocab.unk_id, -np.inf, logits_a)))]
    raises_naming(lambda: RL.generate(model, vocab, ["a"], n_words=1), "rng", ValueError)
    raises_naming(lambda: RL.generate(model, vocab, "a b", n_words=1, greedy=True), "prompt",
                  TypeError)
    ids = vocab.encode(["a", "b"])
    check_bad_ids(lambda x: model(torch.as_tensor(x)[None]), ids, 5, "ids",
                  data.draw(corrupted(ids, 5)))


def test_sampling_follows_the_tempered_distribution(tiny):
    model = RL.RecurrentLM(len(tiny.vocab), "gru", emb_dim=4, hidden=8, seed=1)
    with torch.no_grad():
        model.out.weight.mul_(40)              # a peaked distribution, so the temperature matters
    z = RL.next_word_logits(model, tiny.vocab, ["the"])
    z[tiny.vocab.unk_id] = -np.inf
    rng = np.random.default_rng(0)
    for temp in (0.5, 2.0):
        draws = [RL.generate(model, tiny.vocab, ["the"], 1, temp, rng)[0] for _ in range(3000)]
        freq = np.array([draws.count(w) for w in tiny.vocab.itos]) / len(draws)
        np.testing.assert_allclose(freq, RL.temperature_probs(z, temp), atol=0.03)


def test_the_frequency_profile(tiny):
    prof = RL.frequency_profile(["the", "the", "cat", "mat", RL.EOS], tiny.vocab, top=1)
    assert prof == {"top_share": 0.5, "median_rank": 1.5, "distinct": 0.75}
    with pytest.raises(ValueError, match="empty"):
        RL.frequency_profile([], tiny.vocab)
    with pytest.raises(TypeError, match="tokens"):
        RL.frequency_profile("the cat", tiny.vocab)
