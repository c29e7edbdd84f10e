"""helpers.lib.positions: the sinusoidal, learned and rotary position encodings are their formulas,
RoPE scores depend on the offset only and equal PyTorch's, the rotary attention's backward is
autograd's, and bad input is refused with a message that names the argument."""
import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import positions as P
from helpers.lib.attention import scaled_dot_product_attention, softmax_attention_backward
from helpers.lib.transformer import rope_torch
from tests.props import budget, closeness, dims, float_arrays, raises_naming

close = closeness(1e-10)


@budget()
@given(st.data())
def test_position_encodings_are_their_formulas_and_rope_is_torchs(data):
    T_, half = data.draw(dims(1, 6)), data.draw(dims(1, 3))
    d = 2 * half
    pe = P.sinusoidal_encoding(T_, d)
    i = np.arange(0, d, 2)
    close(pe[:, 0::2], np.sin(np.arange(T_)[:, None] / 10000 ** (i / d)))
    close(pe[:, 1::2], np.cos(np.arange(T_)[:, None] / 10000 ** (i / d)))
    x = data.draw(float_arrays((2, T_, d)))
    close(P.apply_rope(x), rope_torch(torch.tensor(x)))
    cos, sin = P.rope_angles(T_, d, offset=3)
    close(cos, np.cos((3 + np.arange(T_))[:, None] * 10000.0 ** (-i / d)))
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.arange(T_)[:, None] * 10000.0 ** (-i / d))
    close(P.apply_rope(x)[..., 0::2], z.real)                    # a rotation of each pair
    slope = data.draw(st.sampled_from([0.0, 0.5]))
    b = P.alibi_bias(T_, slope)
    offsets = np.arange(T_)[:, None] - np.arange(T_)[None, :]
    assert np.all(np.isneginf(b[offsets < 0])) and np.allclose(b[offsets >= 0], -slope * offsets[offsets >= 0])
    raises_naming(lambda: P.apply_rope(x[0, 0]), "apply_rope", ValueError)
    raises_naming(lambda: P.apply_rope(x[..., :1]), "d", ValueError)
    raises_naming(lambda: P.apply_rope(x, positions=np.full(T_, np.nan)), "positions", ValueError)
    raises_naming(lambda: P.apply_rope(x, positions=np.ones(T_, bool)), "positions", TypeError)
    raises_naming(lambda: P.apply_rope(x, positions=np.arange(T_ + 1)), "positions", ValueError)
    raises_naming(lambda: P.sinusoidal_encoding(T_, d + 1), "d", ValueError)
    raises_naming(lambda: P.sinusoidal_encoding(float(T_), d), "T", TypeError)


def test_a_sinusoidal_shift_is_one_linear_map_and_rope_scores_depend_on_the_offset_only():
    pe, k = P.sinusoidal_encoding(60, 6), 5
    M, *_ = np.linalg.lstsq(pe[:40], pe[k:40 + k], rcond=None)
    np.testing.assert_allclose(pe[40:55] @ M, pe[40 + k:55 + k], atol=1e-8)
    rng = np.random.default_rng(2)
    q, key = rng.standard_normal(16), rng.standard_normal(16)

    def score(m, n):
        return P.apply_rope(q[None], positions=[m])[0] @ P.apply_rope(key[None], positions=[n])[0]

    for m, n in [(0, 0), (3, 1), (2, 10), (50, 49)]:
        for shift in (1, 7, 1000):
            assert np.isclose(score(m, n), score(m + shift, n + shift), rtol=1e-9, atol=1e-10)
    assert not np.isclose(score(5, 0), score(5, 3))           # ... and it does depend on the offset


@budget()
@given(T_=dims(1, 5), B=dims(1, 3))
def test_learned_positions_sum_their_gradient_over_the_batch(T_, B):
    lp = P.LearnedPositions(5, 3, np.random.default_rng(0))
    np.testing.assert_array_equal(lp.forward(T_), lp.params[0][:T_])
    dout = np.random.default_rng(T_).standard_normal((B, T_, 3))
    lp.backward(dout)
    close(lp.grads[0][:T_], dout.sum(0))
    assert np.all(lp.grads[0][T_:] == 0)
    raises_naming(lambda: lp.forward(6), "sequence length", ValueError)   # lesson 04 prints it
    raises_naming(lambda: lp.forward(2.5), "T", TypeError)


def test_the_rotary_attention_backward_is_autograds():
    rng = np.random.default_rng(3)
    Q, K, V = (rng.standard_normal((2, 3, 5, 4)) for _ in range(3))
    mask, dout = np.tril(np.ones((5, 5), bool)), rng.standard_normal((2, 3, 5, 4))
    attend, attend_backward = P.rotary(scaled_dot_product_attention, softmax_attention_backward)
    out, w = attend(Q, K, V, mask=mask, scale=0.5)
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (Q, K, V))
    t_out = F.scaled_dot_product_attention(rope_torch(tq), rope_torch(tk), tv,
                                           attn_mask=torch.tensor(mask), scale=0.5)
    t_out.backward(torch.tensor(dout))
    close(out, t_out.detach())
    for ours, t in zip(attend_backward(dout, Q, K, V, w, 0.5), (tq, tk, tv), strict=True):
        close(ours, t.grad, 1e-9)
    assert attend(*(a.astype(np.float32) for a in (Q, K, V)))[0].dtype == np.float32
