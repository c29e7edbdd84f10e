"""training.word2vec_trainers: the NumPy, PyTorch and gensim trainers (and fastText)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib.negative_sampling import unigram_table
from helpers.lib.word2vec import prepare_corpus
from tests.props import budget, raises_naming
from training.word2vec_trainers import (
    _torch_batches,
    fasttext_from_gensim,
    train_fasttext,
    train_gensim,
    train_numpy,
    train_torch,
)

SENTS = st.lists(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=0, max_size=6),
                 min_size=1, max_size=5)


def _toy_corpus():
    # two "topics" whose words co-occur only within their topic
    rng = np.random.default_rng(0)
    a, b = ["cat", "dog", "pet", "fur"], ["stock", "bank", "money", "trade"]
    sents = [tuple(rng.choice(a if i % 2 else b, 8)) for i in range(400)]
    return prepare_corpus(sents, min_count=1)


@pytest.mark.parametrize("trainer", [train_numpy, train_torch])
@pytest.mark.parametrize("model", ["skipgram", "cbow"])
def test_trainers_learn_topics_and_are_seeded(trainer, model):
    corpus = _toy_corpus()
    tv = trainer(corpus, model, dim=10, window=2, negative=3, sample=0, epochs=3, alpha=0.05,
                 batch_size=64, progress=False)
    assert tv.W.shape == (8, 10) and tv.words_per_second > 0
    E = tv.W / np.linalg.norm(tv.W, axis=1, keepdims=True)
    s = corpus.vocab.stoi
    within, across = E[s["cat"]] @ E[s["dog"]], E[s["cat"]] @ E[s["bank"]]
    assert within > across + 0.3, (within, across)
    assert tv.epoch_loss[-1] < tv.epoch_loss[0]
    kw = dict(dim=8, window=2, negative=3, sample=1e-2, epochs=2, batch_size=64, progress=False)
    runs = [trainer(corpus, model, seed=3, **kw) for _ in range(2)]
    assert np.array_equal(runs[0].W, runs[1].W) and np.array_equal(runs[0].C, runs[1].C)
    assert not np.array_equal(runs[0].W, trainer(corpus, model, seed=4, **kw).W)


@pytest.mark.parametrize("cbow", [False, True])
def test_torch_closed_form_step_equals_autograd(cbow):
    """One batch of the PyTorch trainer (closed-form gradients, embedding_bag, index_add_) is the
    SGD step autograd takes on the summed negative-sampling loss, with the same negatives."""
    V, D, k, m, lr = 9, 5, 3, 6, 0.1
    g = torch.Generator().manual_seed(0)
    W0, C0 = torch.randn(V, D, generator=g), torch.randn(V, D, generator=g)
    table = torch.from_numpy(unigram_table(np.arange(1, V + 1), size=1000).astype(np.int64))
    t = torch.tensor([1, 2, 2, 0, 8, 4])
    if cbow:
        inp = torch.tensor([[3, 4, 0], [5, 5, 1], [2, 3, 6], [7, 7, 7], [0, 1, 2], [6, 3, 3]])
        msk = torch.tensor([[1, 1, 0], [1, 1, 1], [1, 0, 0], [1, 1, 1], [0, 1, 1], [1, 1, 0]],
                           dtype=torch.float32)
    else:
        inp, msk = torch.tensor([3, 5, 5, 7, 0, 6]), None
    W, C = W0.clone(), C0.clone()
    list(_torch_batches(W, C, table, inp, t, msk, [0], m, lambda start: lr,
                        torch.Generator().manual_seed(7), k, None))

    neg = table[torch.randint(len(table), (m * k,), generator=torch.Generator().manual_seed(7))]
    neg = neg.view(m, k)
    keep = (neg != t[:, None]).float()  # a negative equal to the word is skipped
    Wr, Cr = W0.clone().requires_grad_(), C0.clone().requires_grad_()
    h = Wr[inp] if msk is None else (Wr[inp] * (msk / msk.sum(1, keepdim=True))[:, :, None]).sum(1)
    h.retain_grad()
    loss = F.softplus(-(Cr[t] * h).sum(1)) + (F.softplus((Cr[neg] * h[:, None, :]).sum(2))
                                              * keep).sum(1)
    loss.sum().backward()                                    # summed over the batch, as the trainer
    assert torch.allclose(C, C0 - lr * Cr.grad, atol=1e-6)
    if msk is None:
        assert torch.allclose(W, W0 - lr * Wr.grad, atol=1e-6)
    else:   # word2vec.c / gensim: each real context word gets the full dL/dh, not dL/dh / count
        dx = msk[:, :, None] * h.grad[:, None, :]
        assert torch.allclose(W, W0.index_add(0, inp.reshape(-1), -lr * dx.reshape(-1, D)),
                              atol=1e-6)


@budget(0.3)
@given(sents=SENTS, model=st.sampled_from(["skipgram", "cbow"]),
       sample=st.sampled_from([0.0, 1e-3]))
def test_every_trainer_trains_a_tiny_corpus_or_says_why_it_cannot(sents, model, sample):
    if not any(sents):
        return
    corpus = prepare_corpus(sents, min_count=1)
    for train in (train_numpy, train_torch):
        try:
            tv = train(corpus, model=model, dim=3, window=2, epochs=2, sample=sample,
                       progress=False)
        except ValueError as e:
            assert "has no training" in str(e) and ("sample=0" in str(e) or "more text" in str(e))
            continue
        assert tv.W.shape == tv.C.shape == (len(corpus.vocab), 3) and np.all(np.isfinite(tv.W))
        assert len(tv.epoch_loss) == 2
    tv = train_gensim(corpus, model=model, dim=3, window=2, epochs=1, sample=sample, workers=1,
                      min_count=1)
    assert tv.W.shape == (len(corpus.vocab), 3)
    raises_naming(lambda: train_numpy(corpus, model="glove"), "model", ValueError)


def test_gensims_fasttext_trains_and_its_vectors_are_gensims():
    from gensim.models import FastText
    sents = [["the", "river", "bank"], ["the", "money", "bank"], ["river", "water"]] * 5
    ftv = train_fasttext(sents, dim=4, min_count=1, epochs=1, buckets=100, seed=1, workers=1)
    assert "bank" in ftv and ftv.vector("bannk").shape == (4,) and ftv.config["buckets"] == 100
    raises_naming(lambda: train_fasttext([[]]), "corpus", ValueError)
    model = FastText(sents, vector_size=4, min_count=1, epochs=1, bucket=100, workers=1, seed=0)
    ft = fasttext_from_gensim(model.wv)
    for w in ("bank", "bannk", "rivers"):
        assert np.allclose(ft.vector(w), model.wv.get_vector(w), rtol=1e-5, atol=1e-7), w


@pytest.mark.parametrize("sentences", [[["a", "b", "c"]] * 2, [["a", "a"]] * 2])
@pytest.mark.parametrize("train", [train_numpy, train_torch])
def test_a_corpus_without_a_training_pair_is_refused_with_the_reason(train, sentences):
    corpus = prepare_corpus(sentences, min_count=1)
    with pytest.raises(
        ValueError, match=r"epoch 1 has no training \(centre, context\) pairs.*pass sample=0"
    ):
        train(corpus, dim=4, epochs=1, progress=False)
