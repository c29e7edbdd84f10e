"""helpers.lib.recurrent: every backward against PyTorch and finite differences; sampling."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.course.word_lms import RecurrentLM
from helpers.lib import recurrent as R
from helpers.lib.gradcheck import check_function
from helpers.lib.transformer import LSTMLM
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    dims,
    float_arrays,
    raises_naming,
)

T = torch.tensor
close = closeness(1e-9)
TORCH = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}


def _weights(module, kind):
    """Our Wx, Wh and biases from a torch.nn.RNN/LSTM/GRU (two biases summed, b_hn kept apart)."""
    Wx, Wh = module.weight_ih_l0.detach().numpy().T, module.weight_hh_l0.detach().numpy().T
    b_ih, b_hh = module.bias_ih_l0.detach().numpy(), module.bias_hh_l0.detach().numpy()
    if kind != "gru":
        return Wx, Wh, [b_ih + b_hh]
    H = Wh.shape[0]
    return Wx, Wh, [b_ih + np.r_[b_hh[:2 * H], np.zeros(H)], b_hh[2 * H:]]


@budget(2)
@given(st.data())
def test_the_recurrences_and_their_bptt_are_torchs_and_autograds(data):
    kind = data.draw(st.sampled_from(sorted(TORCH)))
    B, Tn, D, H = (data.draw(dims(1, 3)) for _ in range(4))
    torch.manual_seed(data.draw(st.integers(0, 3)))
    module = TORCH[kind](D, H, batch_first=True).double()
    Wx, Wh, biases = _weights(module, kind)
    xs, h0, dhs = (data.draw(float_arrays(s)) for s in ((B, Tn, D), (B, H), (B, Tn, H)))
    tx, th = T(xs, requires_grad=True), T(h0[None], requires_grad=True)
    wanted = (tx, th, module.weight_ih_l0, module.weight_hh_l0, module.bias_ih_l0)
    if kind == "lstm":
        c0 = data.draw(float_arrays((B, H)))
        tc = T(c0[None], requires_grad=True)
        out, (_, tcT) = module(tx, (th, tc))
        hs, cs, caches = R.lstm_forward(xs, h0, c0, Wx, Wh, *biases)
        close(cs[:, -1], tcT[0].detach())
        ours = R.lstm_bptt(dhs, caches, Wx, Wh)
        ref = torch.autograd.grad((out * T(dhs)).sum(), wanted[:2] + (tc,) + wanted[2:])
        ref = (ref[0], ref[1][0], ref[2][0], ref[3].T, ref[4].T, ref[5])
    else:
        out, _ = module(tx, th)
        if kind == "rnn":
            hs = R.rnn_forward(xs, h0, Wx, Wh, *biases)
            ours = R.rnn_bptt(dhs, xs, hs, Wx, Wh)
        else:
            hs, caches = R.gru_forward(xs, h0, Wx, Wh, *biases)
            ours = R.gru_bptt(dhs, caches, Wx, Wh)
        gru = kind == "gru"
        ref = torch.autograd.grad((out * T(dhs)).sum(), wanted + ((module.bias_hh_l0,) * gru))
        ref = (ref[0], ref[1][0], ref[2].T, ref[3].T, ref[4]) + ((ref[5][2 * H:],) if gru else ())
    assert hs.shape == (B, Tn + 1, H)
    close(hs[:, 0], h0)
    close(hs[:, 1:], out.detach())
    for a, r in zip(ours, ref, strict=True):
        close(a, r)


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_the_language_model_s_gradients_match_finite_differences(kind):
    model = R.NumpyLM(7, 3, 4, kind, np.random.default_rng(1), dtype=np.float64, forget_bias=1.0)
    for p in model.params:
        p *= 1.5                                      # away from the linear regime
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 7, (2, 5)), rng.integers(0, 7, (2, 5))
    y[0, 1] = -1                                      # a position that is not scored
    model.train_loss(x, y)
    report = check_function(lambda: model.loss(x, y), model.params,
                            [g.copy() for g in model.grads], names=model.names)
    assert report.ok, report


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_the_language_model_is_pytorch_s_with_the_same_weights(kind):
    torch_model = RecurrentLM(7, kind, emb_dim=3, hidden=4, seed=3).double()
    ours = R.NumpyLM.from_torch(torch_model, dtype=np.float64)
    rng = np.random.default_rng(2)
    x, y = rng.integers(0, 7, (2, 5)), rng.integers(0, 7, (2, 5))
    logits, _ = torch_model(T(x))
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 7), T(y).reshape(-1))
    loss.backward()
    assert ours.train_loss(x, y) == pytest.approx(loss.item(), rel=1e-12)
    rnn = torch_model.rnn
    expected = [torch_model.embed.weight.grad, rnn.weight_ih_l0.grad.T, rnn.weight_hh_l0.grad.T,
                rnn.bias_ih_l0.grad] + [rnn.bias_hh_l0.grad[8:]] * (kind == "gru")
    expected += [torch_model.out.weight.grad.T, torch_model.out.bias.grad]
    for mine, ref in zip(ours.grads, expected, strict=True):
        close(mine, ref)
    lstm = LSTMLM(7, emb_dim=3, hidden=4, seed=0).double()       # lesson 04's shipped architecture
    with torch.no_grad():
        close(R.NumpyLM.from_torch(lstm, np.float64).forward(x), lstm(T(x)))
        torch_model.rnn = TORCH[kind](3, 4, batch_first=True, bias=False).double()  # zero biases
        close(R.NumpyLM.from_torch(torch_model, np.float64).forward(x), torch_model(T(x))[0])


def test_stream_nlls_carry_the_state_as_make_models_scores_token_by_token_in_stream_order():
    from training.word_lms import evaluate_nll
    torch_model = RecurrentLM(7, "lstm", emb_dim=3, hidden=4, seed=5)
    ids = np.random.default_rng(6).integers(0, 7, 501)
    nll, positions = R.stream_nlls(R.NumpyLM.from_torch(torch_model, np.float64), ids, 4, 16)
    assert nll.shape == positions.shape == (500,) and positions[5] == 6
    expected = evaluate_nll(torch_model, ids, batch_size=4, seq_len=16)
    assert nll.mean() == pytest.approx(expected, rel=1e-6)
    with torch.no_grad():                                  # row 0 of the batch reads ids[0:125]
        logits, _ = torch_model(T(ids[None, :40]))
    expected = -torch.log_softmax(logits[0, 5].double(), -1)[ids[6]].item()
    assert nll[5] == pytest.approx(expected, rel=1e-6)
    model = R.NumpyLM(7, 3, 4, "gru", dtype=np.float64)
    whole = model.forward(ids[None, :9])
    first = model.forward(ids[None, :4])
    close(np.concatenate([first, model.forward(ids[None, 4:9], model.last_state)], 1), whole)


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_the_gradient_through_time_is_autograd_s_at_every_step(kind):
    torch_model = RecurrentLM(9, kind, emb_dim=3, hidden=4, seed=1).double()
    model = R.NumpyLM.from_torch(torch_model, np.float64)
    ids = np.random.default_rng(0).integers(0, 9, (2, 6))
    dh_last = np.random.default_rng(1).standard_normal((2, 4))
    model.states(ids)
    norms = R.gradient_through_time(model, dh_last)
    hs = []
    state = None
    x = torch_model.embed(T(ids))
    for t in range(6):                       # one step at a time, keeping every h_t's gradient
        _, state = torch_model.rnn(x[:, t:t + 1], state)
        h = state[0] if kind == "lstm" else state
        h.retain_grad()
        hs.append(h)
    (hs[-1][0] * T(dh_last)).sum().backward()
    close(norms, np.stack([np.linalg.norm(h.grad[0].numpy(), axis=1) for h in hs[::-1]], axis=1))


def test_random_layers_have_the_chosen_scale_and_the_gradient_vanishes_or_explodes():
    for kind in ("rnn", "lstm", "gru"):
        model = R.random_recurrent_lm(kind, 2.0, hidden=8)
        close(np.linalg.svd(model.params[2][:, :8], compute_uv=False).max(), 2.0)
    small, big = (R.gradient_norms(R.random_recurrent_lm("rnn", s), 40) for s in (0.5, 3.0))
    assert small[-1] < 1e-10 * small[0] and big[-1] > 1e3 * big[0]
    open_, closed = (R.gradient_norms(R.random_recurrent_lm("lstm", 1.0, forget_bias=b), 40)
                     for b in (5.0, 0.0))
    assert open_[-1] / open_[0] > 1e3 * closed[-1] / closed[0]


def test_the_recurrences_have_torch_s_parameters_but_its_redundant_biases():
    for D, H in ((300, 256), (1, 1), (7, 3)):
        for kind, redundant in (("rnn", H), ("lstm", 4 * H), ("gru", 2 * H)):
            torch_count = sum(p.numel() for p in TORCH[kind](D, H).parameters())
            ours = R.NumpyLM(2, D, H, kind).n_params() - 2 * D - 2 * H - 2
            assert ours == torch_count - redundant


def test_a_few_hundred_steps_learn_a_repeating_text_and_sample_it():
    from helpers.lib.optim import Adam, clip_global_norm
    text = np.tile(np.arange(7), 40)
    for kind in ("rnn", "lstm", "gru"):
        model, opt = R.NumpyLM(7, 8, 16, kind, np.random.default_rng(0)), Adam(0.02)
        x, y = text[None, :60].repeat(2, 0), text[None, 1:61].repeat(2, 0)
        before = model.loss(x, y)
        for _ in range(150):
            model.train_loss(x, y)
            clip_global_norm(model.grads, 1.0)
            opt.step(model.params, model.grads)
        assert model.loss(x, y) < 0.1 < before, kind
        assert list(model.sample([0], 6, greedy=True)) == [1, 2, 3, 4, 5, 6]
        assert list(model.sample([0], 6, banned=[3], greedy=True))[:2] == [1, 2]


@budget(0.5)
@given(st.data())
def test_bad_input_gets_a_clear_error_naming_it(data):
    kind = data.draw(st.sampled_from(["rnn", "lstm", "gru"]))
    V = data.draw(dims(2, 6))
    model = R.NumpyLM(V, 2, 3, kind, dtype=np.float64)
    ids = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=4, max_size=4))).reshape(2, 2)
    targets = ids[:, ::-1].copy()
    check_bad_ids(lambda x: model.loss(x, targets), ids, V, "ids", data.draw(corrupted(ids, V)))
    raises_naming(lambda: model.train_loss(ids, targets + V), "targets", ValueError)
    raises_naming(lambda: model.loss(ids, targets[:, :1]), "targets", ValueError)
    raises_naming(lambda: model.loss(ids, np.full_like(targets, -1)), "targets", ValueError)
    raises_naming(lambda: model.loss(ids[:, :0], targets[:, :0]), "ids", ValueError)
    raises_naming(lambda: model.loss(ids.astype(float), targets), "ids", TypeError)
    raises_naming(lambda: model.forward(ids, state=np.zeros((3, 3))), "state")
    raises_naming(lambda: model.sample([0], 2, banned=range(V)), "banned", ValueError)
    raises_naming(lambda: model.sample([V], 2), "start", ValueError)
    raises_naming(lambda: model.sample([0], 2, temperature=0.0), "temperature", ValueError)
    raises_naming(lambda: R.NumpyLM(V, 2, 3, "transformer"), "kind", ValueError)
    raises_naming(lambda: R.NumpyLM(0, 2, 3), "vocab_size", ValueError)
    model.params[2][0, 0] = np.nan                       # a diverged run: refused, naming Wh
    raises_naming(lambda: model.loss(ids, targets), "Wh", ValueError)
    with pytest.raises(TypeError, match="nn.RNN, nn.LSTM or nn.GRU"):
        R.NumpyLM.from_torch(LSTMLM(5, emb_dim=2, hidden=3, num_layers=1).embed)
    with pytest.raises(ValueError, match="one unidirectional layer"):
        R.NumpyLM.from_torch(LSTMLM(5, emb_dim=2, hidden=3, num_layers=2))
