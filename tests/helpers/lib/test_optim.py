"""helpers.lib.optim: every optimiser takes PyTorch's steps, refuses lists that do not pair up
or change after the first step, and nan; the penalty and the clipping are their formulas."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import optim
from tests.props import budget, closeness, dims, float_arrays, inject, non_finite, raises_naming

T = torch.tensor
close = closeness(1e-10)
OPTIMIZERS = {"SGD": optim.SGD, "Momentum": optim.Momentum, "RMSProp": optim.RMSProp,
              "Adam": optim.Adam, "AdamW": optim.AdamW}
TORCH = {"SGD": lambda p: torch.optim.SGD(p, lr=0.1),
         "Momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
         "RMSProp": lambda p: torch.optim.RMSprop(p, lr=0.1, alpha=0.9, eps=1e-8),
         "Adam": lambda p: torch.optim.Adam(p, lr=0.1),
         "AdamW": lambda p: torch.optim.AdamW(p, lr=0.1, weight_decay=1e-2)}


def test_the_table_lists_every_optimizer_of_the_library():
    subclasses, todo = set(), [optim.Optimizer]
    while todo:
        for sub in todo.pop().__subclasses__():
            subclasses.add(sub)
            todo.append(sub)
    ours = {c for c in subclasses if c.__module__ == "helpers.lib.optim"}
    assert ours == set(OPTIMIZERS.values())


@budget(2)
@given(st.data())
def test_optimisers_take_torchs_steps_and_refuse_nan(data):
    name = data.draw(st.sampled_from(sorted(OPTIMIZERS)))
    shape = data.draw(st.tuples(dims(1, 3), dims(1, 3)))
    p0, g0 = data.draw(float_arrays(shape)), data.draw(float_arrays(shape))
    ours = OPTIMIZERS[name](lr=0.1)
    tp = torch.nn.Parameter(T(p0.copy()))
    theirs = TORCH[name]([tp])
    p = p0.copy()
    for step in range(3):
        ours.step([p], [g0 * (step + 1)])
        tp.grad = T(g0 * (step + 1))
        theirs.step()
    close(p, tp.detach())
    before = p.copy()
    bad = inject(g0, data.draw(non_finite), 0)
    raises_naming(lambda: ours.step([p], [bad]), "gradient", ValueError)
    np.testing.assert_array_equal(p, before)
    raises_naming(lambda: ours.step(p, [g0]), "parameters", TypeError)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_lists_that_do_not_pair_up_are_refused(name):
    cls, a, b = OPTIMIZERS[name], np.ones(3), np.ones((2, 2))
    for params, grads, message in [
            ([a, b], [np.ones(3)], "2 parameters but 1 gradients"),
            ([a, b], [np.ones(3), np.ones(4)], r"gradient 1 has shape \(4,\), but parameter 1"),
            ([1.0], [np.ones(())], "parameter 0 is a float, not a NumPy array"),
            ([a, a], [np.ones(3), np.ones(3)], "an array is listed twice")]:
        with pytest.raises((ValueError, TypeError), match=rf"{name}.step: {message}"):
            cls().step(params, grads)
    assert np.all(a == 1) and np.all(b == 1)              # nothing was updated
    with pytest.raises(ValueError, match=rf"{name}: the learning rate must be a positive number"):
        cls(float("nan"))
    ps = [np.ones(2), np.ones(3)]                           # a generator is read once, all updated
    cls(0.1).step((p for p in ps), (np.ones_like(p) for p in ps))
    assert all(np.all(p < 1) for p in ps)


@pytest.mark.parametrize("name", ["Momentum", "RMSProp", "Adam", "AdamW"])
def test_a_list_that_changes_after_the_first_step_is_refused(name):
    a, b = np.ones(3), np.ones(2)
    opt = OPTIMIZERS[name]()
    opt.step([a, b], [np.ones(3), np.ones(2)])
    for params in ([a, b, np.ones(4)], [a], [a, b.copy()], [b, a]):   # added, removed, new, moved
        with pytest.raises(ValueError, match=rf"{name}.step: these are not the arrays the state"):
            opt.step(params, [np.ones_like(p) for p in params])
    before = a.copy()
    opt.step([a, b], [np.ones(3), np.ones(2)])              # the original list still works
    assert not np.allclose(a, before)


def test_decay_rates_lie_in_0_1():
    for make, message in [(lambda: optim.Momentum(0.1, beta=1.0), "Momentum: beta must lie in"),
                          (lambda: optim.RMSProp(0.1, rho=np.nan), "RMSProp: rho must lie in"),
                          (lambda: optim.Adam(0.1, beta2=1.5), "Adam: beta2 must lie in"),
                          (lambda: optim.AdamW(weight_decay=-1.0), "weight_decay must be finite")]:
        with pytest.raises(ValueError, match=message):
            make()


@budget()
@given(st.data())
def test_the_pure_adam_step_is_the_class_s_and_torchs_and_changes_no_input(data):
    shape = data.draw(st.tuples(dims(1, 3), dims(1, 4)))
    b1, b2 = data.draw(st.sampled_from([(0.9, 0.999), (0.8, 0.99), (0.5, 0.9)]))
    lr, eps = 0.05, 1e-6
    p = data.draw(float_arrays(shape))
    q, q_t = p.copy(), torch.tensor(p.copy(), requires_grad=True)
    opt = optim.Adam(lr, b1, b2, eps)
    opt_t = torch.optim.Adam([q_t], lr=lr, betas=(b1, b2), eps=eps)
    m = v = np.zeros_like(p)
    for t in range(1, 6):
        g = 4 * p ** 3
        originals, copies = (p, g, m, v), [a.copy() for a in (p, g, m, v)]
        p, m, v = optim.adam_update(p, g, m, v, t, lr, b1, b2, eps)
        assert all(np.array_equal(a, b) for a, b in zip(originals, copies, strict=True))
        opt.step([q], [4 * q ** 3])
        opt_t.zero_grad()
        (q_t ** 4).sum().backward()
        opt_t.step()
        close(p, q)
        close(p, q_t.detach(), 1e-9)
    with pytest.raises(ValueError, match="counted from 1"):
        optim.adam_update(p, p, p, p, 0)


def test_adamw_is_torchs_and_not_adam_with_l2():
    theta = np.random.default_rng(0).standard_normal((3, 4))
    coupled, t = theta.copy(), torch.tensor(theta.copy(), requires_grad=True)
    ours = optim.AdamW(lr=0.05, weight_decay=0.3)
    theirs = torch.optim.AdamW([t], lr=0.05, weight_decay=0.3)
    adam = optim.Adam(lr=0.05)
    assert ours.t == adam.t == 0                           # a schedule may read t before step 1
    for _ in range(15):                                    # minimise sum(sin θ): gradient cos θ
        ours.step([theta], [np.cos(theta)])
        theirs.zero_grad()
        torch.sin(t).sum().backward()
        theirs.step()
        g = np.cos(coupled)
        optim.add_weight_penalty([coupled], [g], l2=0.15)  # 2·λ = weight_decay: "the same" strength
        adam.step([coupled], [g])
    close(theta, t.detach())
    assert not np.allclose(coupled, theta, atol=1e-3)


@budget()
@given(st.data())
def test_penalty_and_clipping_are_their_formulas(data):
    w, g = data.draw(float_arrays((2, 3))), data.draw(float_arrays((2, 3)))
    l1, l2 = data.draw(st.sampled_from([0.0, 0.1])), data.draw(st.sampled_from([0.0, 0.3]))
    g2 = g.copy()
    penalty = optim.add_weight_penalty([w], [g2], l1=l1, l2=l2)
    close(penalty, l1 * np.abs(w).sum() + l2 * (w * w).sum())
    close(g2, g + l1 * np.sign(w) + 2 * l2 * w)
    for bad in (-1, np.nan, np.inf):
        raises_naming(lambda bad=bad: optim.add_weight_penalty([w], [g], l1=bad), "l1", ValueError)
    raises_naming(lambda: optim.add_weight_penalty([w], [g, g], l2=0.1), "weights", ValueError)
    max_norm = data.draw(st.sampled_from([0.1, 1.0, 100.0]))
    grads = [g.copy(), w.copy()]
    norm = optim.clip_global_norm(grads, max_norm)
    close(norm, np.sqrt((g * g).sum() + (w * w).sum()))
    after = np.sqrt(sum((x * x).sum() for x in grads))
    assert after <= max_norm * (1 + 1e-9) or np.isclose(after, norm)
    raises_naming(lambda: optim.clip_global_norm([g, inject(g, np.nan, 0)], 1.0), "gradient 1",
                  ValueError)
    raises_naming(lambda: optim.clip_global_norm([g], 0.0), "max_norm", ValueError)
    raises_naming(lambda: optim.clip_global_norm(np.array([3.0, 4.0]), 1.0), "gradients", TypeError)


def test_clip_adam_step_is_clipping_then_adam():
    rng = np.random.default_rng(1)
    params = [rng.standard_normal(3), rng.standard_normal((2, 2))]
    grads = [np.full(3, 10.0), np.ones((2, 2))]
    zeros = [np.zeros_like(p) for p in params]
    new_p, _, _ = optim.clip_adam_step(params, grads, zeros, zeros, 1, lr=0.1, max_norm=1.0)
    norm = np.sqrt(sum((g * g).sum() for g in grads))
    clipped = [g / (norm + 1e-6) for g in grads]
    for p, g, q in zip(params, clipped, new_p, strict=True):
        close(q, optim.adam_update(p, g, np.zeros_like(p), np.zeros_like(p), 1, 0.1)[0])
