"""Properties of helpers.lib.layers, checks, optim and gradcheck: every input gives PyTorch's (or
the formula's) float64 result or an error naming the argument."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import checks, gradcheck, layers, optim
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    covers,
    dims,
    float_arrays,
    inject,
    mask_forms,
    non_finite,
    raises_naming,
)

T = torch.tensor


close = closeness(1e-10)


# ---------------------------------------------------------------- functions
@covers("layers.sigmoid", "layers.softmax", "layers.log_softmax", "layers.relu")
@budget(2)
@given(st.data())
def test_elementwise_functions_are_torchs_and_propagate_nan_like_torch(data):
    shape = data.draw(st.tuples(dims(1, 4), dims(1, 5)))
    z = data.draw(float_arrays(shape, -40, 40))
    if data.draw(st.booleans()):                                # nan / ±inf propagate exactly as in torch
        z = inject(z, data.draw(non_finite), data.draw(st.integers(0, 100)))
    axis = data.draw(st.sampled_from([-1, 0]))
    with np.errstate(all="ignore"):
        close(layers.sigmoid(z), torch.sigmoid(T(z)))
        close(layers.relu(z), torch.relu(T(z)))
        close(layers.softmax(z, axis), torch.softmax(T(z), axis))
        close(layers.log_softmax(z, axis), torch.log_softmax(T(z), axis))
    empty = np.zeros((shape[0], 0))
    raises_naming(lambda: layers.softmax(empty), "softmax", ValueError)
    raises_naming(lambda: layers.log_softmax(empty), "log_softmax", ValueError)
    raises_naming(lambda: layers.softmax(z, axis=3), "axis", ValueError)


# ---------------------------------------------------------------- layers against torch
@covers("layers.Layer", "layers.Linear", "layers.Activation", "layers.Sequential", "layers.mlp")
@budget(2)
@given(st.data())
def test_an_mlp_is_torchs_forward_and_backward_and_refuses_nan(data):
    n, d_in, h, k = (data.draw(dims(1, 4)) for _ in range(4))
    act = data.draw(st.sampled_from(sorted(layers.ACTIVATIONS)))
    net = layers.mlp([d_in, h, k], np.random.default_rng(0), activation=act)
    x = data.draw(float_arrays((n, d_in)))
    lin1, lin2 = net.layers[0], net.layers[2]
    tnet = torch.nn.Sequential(torch.nn.Linear(d_in, h), {"tanh": torch.nn.Tanh(), "relu": torch.nn.ReLU(),
                                                          "sigmoid": torch.nn.Sigmoid()}[act], torch.nn.Linear(h, k))
    tnet = tnet.double()
    with torch.no_grad():
        for ours, theirs in ((lin1, tnet[0]), (lin2, tnet[2])):
            theirs.weight.copy_(T(ours.params[0].T))
            theirs.bias.copy_(T(ours.params[1]))
    tx = T(x, requires_grad=True)
    ty = tnet(tx)
    dout = data.draw(float_arrays((n, k)))
    ty.backward(T(dout))
    close(net.forward(x), ty.detach())
    dx = net.backward(dout)
    if act != "relu" or np.all(np.abs(x @ lin1.params[0] + lin1.params[1]) > 1e-9):   # relu'(0): a tie
        close(dx, tx.grad)
        close(lin1.grads[0], tnet[0].weight.grad.T)
    close(lin2.grads[1], tnet[2].bias.grad)
    bad = inject(x, data.draw(non_finite), data.draw(st.integers(0, 50)))
    raises_naming(lambda: net.forward(bad), "x", ValueError)
    raises_naming(lambda: net.backward(inject(dout, np.nan, 0)), "dout", ValueError)
    raises_naming(lambda: lin1.forward(np.zeros((n, d_in + 1))), "Linear", ValueError)
    raises_naming(lambda: layers.Activation("gelu"), "activation", ValueError)


@covers("layers.LayerNorm")
@budget()
@given(st.data())
def test_layer_norm_is_torchs(data):
    shape = data.draw(st.tuples(dims(1, 3), dims(1, 3), dims(1, 5)))
    x = data.draw(float_arrays(shape))
    ln = layers.LayerNorm(shape[-1])
    ln.params[0][...] = data.draw(float_arrays(shape[-1:]))
    tln = torch.nn.LayerNorm(shape[-1]).double()
    with torch.no_grad():
        tln.weight.copy_(T(ln.params[0]))
    tx = T(x, requires_grad=True)
    ty = tln(tx)
    dout = data.draw(float_arrays(shape))
    ty.backward(T(dout))
    close(ln.forward(x), ty.detach(), 1e-8)
    close(ln.backward(dout), tx.grad, 1e-7)
    close(ln.grads[0], tln.weight.grad, 1e-8)
    raises_naming(lambda: ln.forward(inject(x, np.nan, 0)), "x", ValueError)
    raises_naming(lambda: ln.forward(np.zeros(shape[:-1] + (shape[-1] + 1,))), "LayerNorm", ValueError)


@covers("layers.Dropout")
@budget()
@given(rate=st.sampled_from([0.0, 0.25, 0.5, 0.9]), n=dims(1, 50))
def test_dropout_keeps_the_expectation_and_is_the_identity_in_eval(rate, n):
    x = np.ones((n, 40))
    drop = layers.Dropout(rate, np.random.default_rng(n))
    y = drop.forward(x)
    kept = y != 0
    close(y[kept], 1 / (1 - rate))                                    # survivors scaled by 1/(1-p)
    close(drop.backward(np.ones_like(x)), y)                          # the same mask on the way back
    np.testing.assert_array_equal(drop.eval().forward(x), x)
    for bad in (-0.1, 1.0):
        raises_naming(lambda bad=bad: layers.Dropout(bad, np.random.default_rng(0)), "rate", ValueError)


@covers("layers.SoftmaxCrossEntropy", "checks.check_class_ids", "checks.check_ids",
        "checks.describe_offending", "checks.IdOutOfRangeError")
@budget(3)
@given(st.data())
def test_softmax_cross_entropy_is_torchs_and_refuses_bad_targets_and_nan(data):
    n, k = data.draw(dims(1, 5)), data.draw(dims(1, 5))
    logits = data.draw(float_arrays((n, k), -20, 20))
    t = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))   # 0 and k-1 included
    loss = layers.SoftmaxCrossEntropy()
    tl = T(logits, requires_grad=True)
    ref = torch.nn.functional.cross_entropy(tl, T(t))
    ref.backward()
    close(loss.forward(logits, t), ref.item())
    close(loss.backward(), tl.grad)
    check_bad_ids(lambda ids: loss.forward(logits, ids), t, k, "targets", data.draw(corrupted(t, k)))
    err = raises_naming(lambda: loss.forward(logits, np.full(n, k)), "targets", ValueError)
    assert isinstance(err, checks.IdOutOfRangeError) and isinstance(err, IndexError)
    assert f"{k!r} at index" in str(err)                               # describe_offending names the value
    bad = inject(logits, data.draw(non_finite), data.draw(st.integers(0, 40)))
    raises_naming(lambda: loss.forward(bad, t), "logits", ValueError)
    raises_naming(lambda: loss.forward(np.zeros((0, k)), np.zeros(0, int)), "SoftmaxCrossEntropy", ValueError)
    assert layers.check_class_ids is checks.check_class_ids and layers.describe_offending is checks.describe_offending


@covers("layers.SigmoidCrossEntropy")
@budget()
@given(st.data())
def test_sigmoid_cross_entropy_is_torchs(data):
    shape = data.draw(st.tuples(dims(1, 4), dims(1, 4)))
    s = data.draw(float_arrays(shape, -30, 30))
    y = data.draw(st.sampled_from([np.zeros, np.ones]))(shape)
    y.reshape(-1)[0] = 1 - y.reshape(-1)[0]
    loss = layers.SigmoidCrossEntropy()
    ts = T(s, requires_grad=True)
    ref = torch.nn.functional.binary_cross_entropy_with_logits(ts, T(y))
    ref.backward()
    close(loss.forward(s, y), ref.item(), 1e-9)
    close(loss.backward(), ts.grad, 1e-9)
    for bad in (0.5, 2.0, np.nan, -1.0):
        raises_naming(lambda bad=bad: loss.forward(s, inject(y, bad, 0)), "labels", ValueError)
    raises_naming(lambda: loss.forward(inject(s, np.inf, 0), y), "scores", ValueError)


@covers("layers.Embedding")
@budget(2)
@given(st.data())
def test_embedding_is_torchs_for_every_id_from_0_to_V_minus_1_and_refuses_the_rest(data):
    V, D = data.draw(dims(1, 6)), data.draw(dims(1, 3))
    shape = data.draw(st.tuples(dims(1, 3), dims(1, 4)))
    ids = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=shape[0] * shape[1],
                                      max_size=shape[0] * shape[1]))).reshape(shape)
    scatter = data.draw(st.sampled_from(["add.at", "sparse"]))
    pad = data.draw(st.sampled_from([None, 0, V - 1]))
    emb = layers.Embedding(V, D, np.random.default_rng(0), padding_idx=pad, scatter=scatter)
    temb = torch.nn.Embedding(V, D, padding_idx=pad).double()
    with torch.no_grad():
        temb.weight.copy_(T(emb.params[0]))
    dout = data.draw(float_arrays(shape + (D,)))
    ty = temb(T(ids))
    ty.backward(T(dout))
    close(emb.forward(ids), ty.detach())
    emb.backward(dout)
    close(emb.grads[0], temb.weight.grad)
    check_bad_ids(emb.forward, ids, V, "ids", data.draw(corrupted(ids, V)))


# ---------------------------------------------------------------- checks
@covers("checks.check_mask", "checks.check_integers", "checks.check_whole", "checks.all_finite",
        "checks.check_finite", "checks.check_log_base")
@budget(2)
@given(st.data())
def test_the_checks_accept_exactly_what_the_rules_say(data):
    mask = data.draw(float_arrays((3, 4))) > 0
    for _form, m, expected in mask_forms(mask):
        if expected == "same":
            got = checks.check_mask(m, "m", "here")
            assert got.dtype == bool
            np.testing.assert_array_equal(got, mask)
            np.testing.assert_array_equal(checks.check_mask(torch.as_tensor(m), "m", "here").numpy(), mask)
        else:
            raises_naming(lambda m=m: checks.check_mask(m, "m", "here"), "m", expected)
            raises_naming(lambda m=m: checks.check_mask(torch.as_tensor(m), "m", "here"), "m", expected)
    value = data.draw(st.integers(-5, 5))
    assert checks.check_whole(np.int64(value), "k", "here") == value
    for bad in (float(value), True, "3", None):
        raises_naming(lambda bad=bad: checks.check_whole(bad, "k", "here"), "k", TypeError)
    raises_naming(lambda: checks.check_whole(value, "k", "here", minimum=value + 1), "k", ValueError)
    raises_naming(lambda: checks.check_integers([1.5], "lengths", "here"), "lengths", TypeError)
    assert checks.check_integers([], "lengths", "here").dtype == np.int64
    x = data.draw(float_arrays((2, 3)))
    assert checks.all_finite(x) and checks.all_finite(torch.as_tensor(x)) and checks.all_finite(np.array([1, 2]))
    bad = inject(x, data.draw(non_finite), data.draw(st.integers(0, 5)))
    assert not checks.all_finite(bad) and not checks.all_finite(torch.as_tensor(bad))
    raises_naming(lambda: checks.check_finite(bad, "x", "here"), "x", ValueError)
    assert checks.check_finite(x, "x", "here") is x
    base = data.draw(st.sampled_from([2, np.e, 10, 0.5]))
    assert checks.check_log_base(base, "here") == base
    for bad_base in (1, 0, -2, np.inf, np.nan):
        raises_naming(lambda b=bad_base: checks.check_log_base(b, "here"), "base", ValueError)


# ---------------------------------------------------------------- optimisers
@covers("optim.Optimizer", "optim.SGD", "optim.Momentum", "optim.RMSProp", "optim.Adam", "optim.AdamW",
        "optim.array_list", "optim.check_parallel")
@budget(2)
@given(st.data())
def test_optimisers_take_torchs_steps_and_refuse_nan(data):
    name = data.draw(st.sampled_from(sorted(optim.OPTIMIZERS)))
    shape = data.draw(st.tuples(dims(1, 3), dims(1, 3)))
    p0, g0 = data.draw(float_arrays(shape)), data.draw(float_arrays(shape))
    ours = optim.OPTIMIZERS[name](lr=0.1)
    tp = torch.nn.Parameter(T(p0.copy()))
    theirs = {"SGD": lambda: torch.optim.SGD([tp], lr=0.1),
              "Momentum": lambda: torch.optim.SGD([tp], lr=0.1, momentum=0.9),
              "RMSProp": lambda: torch.optim.RMSprop([tp], lr=0.1, alpha=0.9, eps=1e-8),
              "Adam": lambda: torch.optim.Adam([tp], lr=0.1),
              "AdamW": lambda: torch.optim.AdamW([tp], lr=0.1, weight_decay=1e-2)}[name]()
    p = p0.copy()
    for step in range(3):
        g = g0 * (step + 1)
        ours.step([p], [g])
        tp.grad = T(g)
        theirs.step()
    close(p, tp.detach())
    before = p.copy()
    bad = inject(g0, data.draw(non_finite), data.draw(st.integers(0, 8)))
    raises_naming(lambda: ours.step([p], [bad]), "gradient", ValueError)
    np.testing.assert_array_equal(p, before)
    raises_naming(lambda: ours.step(p, [g0]), "parameters", TypeError)
    raises_naming(lambda: optim.check_parallel([p], [np.zeros(shape[0] + 1)], "here"), "gradient", ValueError)
    raises_naming(lambda: optim.array_list([p, [1.0]], "here"), "gradient", TypeError)


@covers("optim.add_weight_penalty", "optim.clip_global_norm")
@budget()
@given(st.data())
def test_penalty_and_clipping_are_their_formulas(data):
    w = data.draw(float_arrays((2, 3)))
    g = data.draw(float_arrays((2, 3)))
    l1, l2 = data.draw(st.sampled_from([0.0, 0.1])), data.draw(st.sampled_from([0.0, 0.3]))
    g2 = g.copy()
    pen = optim.add_weight_penalty([w], [g2], l1=l1, l2=l2)
    close(pen, l1 * np.abs(w).sum() + l2 * (w * w).sum())
    close(g2, g + l1 * np.sign(w) + 2 * l2 * w)
    raises_naming(lambda: optim.add_weight_penalty([w], [g], l1=-1), "l1", ValueError)
    max_norm = data.draw(st.sampled_from([0.1, 1.0, 100.0]))
    grads = [g.copy(), w.copy()]
    norm = optim.clip_global_norm(grads, max_norm)
    close(norm, np.sqrt((g * g).sum() + (w * w).sum()))
    after = np.sqrt(sum((x * x).sum() for x in grads))
    assert after <= max_norm * (1 + 1e-9) or np.isclose(after, norm)
    raises_naming(lambda: optim.clip_global_norm([inject(g, np.nan, 0)], 1.0), "gradient", ValueError)
    raises_naming(lambda: optim.clip_global_norm([g], 0.0), "max_norm", ValueError)


# ---------------------------------------------------------------- gradient checking
@covers("gradcheck.relative_error", "gradcheck.numerical_gradient", "gradcheck.GradReport",
        "gradcheck.check_layer", "gradcheck.check_function", "gradcheck.assert_close_to_torch")
@budget()
@given(st.data())
def test_the_gradient_checker_passes_right_gradients_and_fails_wrong_ones(data):
    A = data.draw(float_arrays((3, 3)))
    x = data.draw(float_arrays((3,)))
    f = lambda: float(x @ A @ x)                                              # noqa: E731
    exact = (A + A.T) @ x
    close(gradcheck.numerical_gradient(f, x), exact, 1e-6)
    assert gradcheck.check_function(f, [x], [exact]).ok
    wrong = exact + 1.0
    report = gradcheck.check_function(f, [x], [wrong])
    assert not report.ok and "BAD" in str(report)
    a, b = data.draw(float_arrays((4,))), data.draw(float_arrays((4,)))
    denom = np.max(np.abs(a) + np.abs(b))
    close(gradcheck.relative_error(a, b), 0.0 if denom == 0 else np.max(np.abs(a - b)) / denom)
    raises_naming(lambda: gradcheck.relative_error(a, b[:2]), "shapes", ValueError)
    raises_naming(lambda: gradcheck.numerical_gradient(f, x.astype(np.float32)), "float64", TypeError)
    lin = layers.Linear(3, 2, np.random.default_rng(0))
    assert gradcheck.check_layer(lin, data.draw(float_arrays((2, 3)))).ok
    gradcheck.assert_close_to_torch(a, T(a), "a")
    with pytest.raises(AssertionError, match="a: differs from PyTorch"):
        gradcheck.assert_close_to_torch(a, T(a + 1), "a")
