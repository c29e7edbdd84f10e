"""Properties of helpers.lib.feedforward_lm and optim.adam_update: the NumPy feed-forward LM is
language_models.FeedForwardLM (PyTorch, weights loaded) forward and backward, its mean NLL is
torch's cross-entropy over any batching, sampling draws from softmax(scores / temperature) and never
a banned id, the pure Adam step is torch.optim.Adam's, and bad arguments are refused by name."""
import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import feedforward_lm as FF
from helpers.lib import optim as O
from helpers.lib.language_models import FeedForwardLM
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    covers,
    dims,
    float_arrays,
    raises_naming,
)

T = torch.tensor


close = closeness(1e-9)


def ids_of(data, V, shape):
    n = int(np.prod(shape))
    return np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=n, max_size=n)), np.int64).reshape(shape)


def pair(data, dropout=0.0):
    """A PyTorch FeedForwardLM (float64) and the NumPy model with its weights."""
    V, n, d, h = data.draw(dims(2, 6)), data.draw(dims(1, 3)), data.draw(dims(1, 3)), data.draw(dims(1, 4))
    torch.manual_seed(data.draw(st.integers(0, 3)))
    ref = FeedForwardLM(V, n, d, h).double().eval()
    ours = FF.NumpyFeedForwardLM(V, n, d, h, np.random.default_rng(0), dropout=dropout, dtype=np.float64)
    return ref, ours.load_torch(ref), V, n


@covers("feedforward_lm.NumpyFeedForwardLM")
@budget(0.5)
@given(st.data())
def test_the_numpy_feedforward_lm_is_the_torch_model_forward_and_backward(data):
    ref, model, V, n = pair(data, dropout=data.draw(st.sampled_from([0.0, 0.5])))
    B = data.draw(dims(1, 4))
    ids = ids_of(data, V, (B, n))
    ids.reshape(-1)[0], ids.reshape(-1)[-1] = 0, V - 1
    model.eval()
    logits = model.forward(ids)
    tlogits = ref(T(ids))
    close(logits, tlogits.detach())
    dout = data.draw(float_arrays((B, V)))
    model.backward(dout)
    grads = torch.autograd.grad((tlogits * T(dout)).sum(), [ref.embed.weight, ref.hidden.weight, ref.hidden.bias,
                                                            ref.out.weight, ref.out.bias])
    for ours, r in zip(model.grads, (grads[0], grads[1].T, grads[2], grads[3].T, grads[4]), strict=True):
        close(ours, r)
    model.train()
    trained = model.forward(ids)
    assert trained.shape == (B, V) and np.all(np.isfinite(trained))
    model.eval()
    close(model.forward(ids), logits, 0)                 # eval mode: no dropout, the same scores again
    check_bad_ids(model.forward, ids, V, "ids", data.draw(corrupted(ids, V)))
    raises_naming(lambda: model.forward(ids[:, :0] if n else ids), "ids", ValueError)
    raises_naming(lambda: model.load_torch(FeedForwardLM(V + 1, n, 2, 2)), "load_torch", ValueError)


@covers("feedforward_lm.mean_nll_numpy")
@budget(0.5)
@given(st.data())
def test_the_mean_nll_is_torchs_cross_entropy_over_any_batching(data):
    ref, model, V, n = pair(data, dropout=0.5)
    N = data.draw(dims(1, 7))
    X, y = ids_of(data, V, (N, n)), ids_of(data, V, (N,))
    batch = data.draw(st.integers(1, N + 1))
    training = data.draw(st.booleans())
    model.train(training)
    close(FF.mean_nll_numpy(model, X, y, batch), F.cross_entropy(ref(T(X)), T(y)).item())
    assert model.training == training                    # the mode is restored
    raises_naming(lambda: FF.mean_nll_numpy(model, X, y[:-1]), "targets", ValueError)
    raises_naming(lambda: FF.mean_nll_numpy(model, X[:0], y[:0]), "targets", ValueError)
    bad = y.copy()
    bad[0] = data.draw(st.sampled_from([-1, V]))
    raises_naming(lambda: FF.mean_nll_numpy(model, X, bad), "targets", ValueError)


@covers("feedforward_lm.sample_text")
@budget(0.5)
@given(st.data())
def test_sampling_draws_from_the_tempered_softmax_and_never_a_banned_id(data):
    ref, model, V, n = pair(data)
    ctx = ids_of(data, V, (n + data.draw(st.integers(0, 2)),))
    temperature = data.draw(st.sampled_from([0.5, 1.0, 2.0]))
    banned = sorted(set(data.draw(st.lists(st.integers(0, V - 1), max_size=V - 1))))
    seed = data.draw(st.integers(0, 10))
    out = FF.sample_text(model, ctx, 4, np.random.default_rng(seed), temperature, banned)
    assert len(out) == 4 and all(isinstance(i, int) and 0 <= i < V and i not in banned for i in out)
    assert out == FF.sample_text(model, ctx, 4, np.random.default_rng(seed), temperature, banned)
    # the first draw is rng.choice from softmax(scores / temperature), banned ids at probability 0
    z = ref(T(ctx[None, -n:])).detach()[0] / temperature
    z[banned] = -torch.inf
    p = torch.softmax(z, 0).numpy()
    assert out[0] == int(np.random.default_rng(seed).choice(V, p=p / p.sum()))
    assert FF.sample_text(model, ctx, 0, np.random.default_rng(seed)) == []
    raises_naming(lambda: FF.sample_text(model, ctx, 1, np.random.default_rng(0), 0.0), "temperature", ValueError)
    raises_naming(lambda: FF.sample_text(model, ctx[:n - 1], 1, np.random.default_rng(0)), "ids", ValueError)
    raises_naming(lambda: FF.sample_text(model, ctx, 1, np.random.default_rng(0), banned=[-1]), "banned",
                  ValueError)                             # was: the last id banned silently
    raises_naming(lambda: FF.sample_text(model, ctx, 1, np.random.default_rng(0), banned=[V]), "banned", ValueError)
    raises_naming(lambda: FF.sample_text(model, ctx, 1, np.random.default_rng(0), banned=range(V)), "banned",
                  ValueError)                             # was: nan probabilities inside rng.choice
    bad = ctx.copy()
    bad[-1] = V
    raises_naming(lambda: FF.sample_text(model, bad, 1, np.random.default_rng(0)), "ids", ValueError)


@covers("optim.adam_update")
@budget(0.5)
@given(st.data())
def test_the_pure_adam_step_is_torch_optim_adams_and_changes_no_input(data):
    shape = (data.draw(dims(1, 3)), data.draw(dims(1, 3)))
    p = data.draw(float_arrays(shape))
    lr, beta1, beta2, eps = data.draw(st.sampled_from([(1e-3, 0.9, 0.999, 1e-8), (0.1, 0.5, 0.9, 1e-3)]))
    tp = T(p.copy(), requires_grad=True)
    opt = torch.optim.Adam([tp], lr=lr, betas=(beta1, beta2), eps=eps)
    m, v = np.zeros(shape), np.zeros(shape)
    for t in range(1, data.draw(dims(1, 3)) + 1):
        g = data.draw(float_arrays(shape))
        tp.grad = T(g)
        opt.step()
        copies = [a.copy() for a in (p, g, m, v)]
        new_p, new_m, new_v = O.adam_update(p, g, m, v, t, lr, beta1, beta2, eps)
        assert all(np.array_equal(a, b) for a, b in zip((p, g, m, v), copies, strict=True))   # pure
        close(new_p, tp.detach())
        close(new_m, opt.state[tp]["exp_avg"])
        close(new_v, opt.state[tp]["exp_avg_sq"])
        p, m, v = new_p, new_m, new_v
    for bad_t in (0, -1, 1.5):
        raises_naming(lambda bad_t=bad_t: O.adam_update(p, g, m, v, bad_t), "t", ValueError)
