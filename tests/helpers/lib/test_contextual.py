"""helpers.lib.contextual: a word's vector is the mean of its pieces' vectors and depends on its
context; senses go to the nearest centroid."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import contextual as CX
from helpers.lib.bert import BertConfig, TinyBert
from helpers.lib.bpe import BPETokenizer
from helpers.lib.mlm import encode_sentence, pad_batch
from tests.props import budget, closeness, float_arrays, raises_naming

T = torch.tensor
SENTS = [["the", "river", "bank"], ["the", "money", "bank"], ["a", "river", "of", "money"],
         ["the", "bank", "sat"]]
TOK = BPETokenizer.train([w for s in SENTS for w in s] * 3, vocab_size=40)
CFG = BertConfig(vocab_size=len(TOK), dim=8, n_layers=1, n_heads=2, ff_dim=16, max_len=8,
                 dropout=0.0)
close = closeness(1e-9)


@budget()
@given(st.data())
def test_a_words_vector_is_the_mean_of_its_pieces_and_senses_go_to_the_nearest_centroid(data):
    torch.manual_seed(0)
    model = TinyBert(CFG, TOK.pad_id).eval()
    words = SENTS[data.draw(st.integers(0, len(SENTS) - 1))]
    pos = data.draw(st.integers(0, len(words) - 1))
    layer = data.draw(st.integers(-2, 1))
    v = CX.word_vectors(model, TOK, [words], [pos], layer=layer)[0]
    ids, att = pad_batch([encode_sentence(TOK, words, CFG.max_len)], TOK.pad_id)
    with torch.no_grad():
        hidden, _ = model.layers_and_attention(T(ids), T(att))
    _, owner = TOK.encode_words(words)
    close(v, hidden[layer][0, np.flatnonzero(owner == pos) + 1].mean(0).numpy(), 1e-6)
    assert CX.find_word(words, words[pos]) == words.index(words[pos])
    close(CX.contextual_vector(model, TOK, " ".join(words), words[pos], layer=layer),
          CX.word_vectors(model, TOK, [words], [words.index(words[pos])], layer=layer)[0], 1e-6)
    raises_naming(lambda: CX.word_vectors(model, TOK, [words], [len(words)]), "position",
                  ValueError)
    raises_naming(lambda: CX.word_vectors(model, TOK, [words], [0.5]), "position", TypeError)
    raises_naming(lambda: CX.word_vectors(model, TOK, [words], [0], layer=5), "layer", ValueError)
    raises_naming(lambda: CX.find_word(words, "zebra"), "zebra", ValueError)
    X = data.draw(float_arrays((6, 3)))
    X[:, 0] += np.array([5, 5, 5, -5, -5, -5])
    senses = ["x", "x", "x", "y", "y", "y"]
    best, scores = CX.nearest_sense(X[0], X[1:], senses[1:])
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    cent = {s: unit[1:][np.array(senses[1:]) == s].mean(0) for s in "xy"}
    ref = {s: cent[s] / np.linalg.norm(cent[s]) @ unit[0] for s in "xy"}
    close([scores[s] for s in "xy"], [ref[s] for s in "xy"])
    assert best == max("xy", key=lambda s: (round(ref[s], 12), -"xy".index(s)))
    acc = CX.nearest_sense_accuracy(X, senses, 1, np.random.default_rng(0), repeats=3)
    assert 0 <= acc["accuracy"] <= 1 and acc["per_round"].shape == (3,)


def test_a_contextual_vector_depends_on_the_sentence_the_embedding_layer_does_not():
    torch.manual_seed(0)
    model = TinyBert(CFG, TOK.pad_id).eval()
    v1 = CX.contextual_vector(model, TOK, "the river bank", "bank")
    v2 = CX.contextual_vector(model, TOK, "the money bank", "bank")
    assert v1.shape == (8,) and not np.allclose(v1, v2, atol=1e-3)
    e1 = CX.word_vectors(model, TOK, [["the", "bank", "sat"]], [1], layer=0)
    e2 = CX.word_vectors(model, TOK, [["the", "bank", "river"]], [1], layer=0)
    assert np.allclose(e1, e2)                    # the same word in the same slot
    with pytest.raises(ValueError, match="'vault' occurs 0 time"):
        CX.contextual_vector(model, TOK, "the bank sat", "vault")


def test_nearest_sense_accuracy_extremes():
    rng = np.random.default_rng(0)
    senses = np.array(["a"] * 6 + ["b"] * 6)
    same = np.ones((12, 3))                       # static vectors: one vector for every occurrence
    assert CX.nearest_sense_accuracy(same, senses, 2, rng, repeats=20)["accuracy"] == 0.5
    apart = np.concatenate([rng.normal([4, 0, 0], 0.5, (6, 3)), rng.normal([0, 4, 0], 0.5, (6, 3))])
    assert CX.nearest_sense_accuracy(apart, senses, 2, rng, repeats=20)["accuracy"] == 1.0
    assert CX.nearest_sense(np.array([0.0, 1.0, 0.0]), apart, senses)[0] == "b"
    with pytest.raises(ValueError, match="more than n_support=6"):
        CX.nearest_sense_accuracy(apart, senses, 6, rng)


def test_the_numpy_encoder_with_the_same_weights_gives_the_same_word_vectors():
    from helpers.lib.encoder_numpy import NumpyEncoder
    torch.manual_seed(0)
    model = TinyBert(CFG, TOK.pad_id).eval()
    sents, pos = SENTS[:3], [2, 1, 3]
    ours = CX.numpy_word_vectors(NumpyEncoder.from_torch(model), TOK, sents, pos)
    close(ours, CX.word_vectors(model, TOK, sents, pos), 1e-5)
    with pytest.raises(ValueError, match="position 5 is outside"):
        CX.numpy_word_vectors(NumpyEncoder.from_torch(model), TOK, sents[:1], [5])
