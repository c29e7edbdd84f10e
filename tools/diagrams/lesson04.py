"""Diagrams of lesson 04 (self-attention and the Transformer).

The lesson's notation: rows are tokens; q_i = x_i W_Q, k_i = x_i W_K, v_i = x_i W_V;
Attention(Q, K, V) = softmax(QK^⊤/√d_k) V with masks that are True where a query may attend
(a hidden score becomes −∞); MultiHead(X) = Concat(head_1, …, head_h) W_O with d_k = d/h and
the split (B, T, d) → (B, h, T, d/h); Post-LN x = LN(x + Attn(x)), Pre-LN x = x + Attn(LN(x)).
"""

import numpy as np

from tools.diagrams.style import DATA, NEUTRAL, OP, PARAM, STATE
from tools.diagrams.svg import FONT_SIZE, SMALL_SIZE, Box, Drawing

LESSON = 4

_Q, _K, _V = "sky_light", "orange_light", "green_light"
_HEADS = ("sky_light", "orange_light", "green_light", "purple_light")
_TOKENS = ("I", "made", "her", "duck")


def _op(d: Drawing, x: float, y: float, label: str, size: float = 18) -> None:
    """An operator between two blocks (@, =, +, →)."""
    d.text(x, y, label, size=size, bold=True)


def _example_weights() -> np.ndarray:
    """Causal attention weights for the four tokens of "I made her duck" from small integer
    queries and keys (d_k = 3), so the shading of :func:`attention_matrix` shows real weights."""
    q = np.array([[1, 0, 1], [0, 2, 1], [1, 1, 2], [2, 0, 1]], dtype=float)
    k = np.array([[1, 1, 0], [0, 2, 1], [1, 0, 2], [2, 1, 1]], dtype=float)
    s = q @ k.T / np.sqrt(3)
    s[np.triu_indices(4, 1)] = -np.inf
    a = np.exp(s - s.max(axis=1, keepdims=True))
    return a / a.sum(axis=1, keepdims=True)


def attention_matrix() -> Drawing:
    """Scaled dot-product attention in matrix form, drawn to scale with every shape: the
    projections Q = X W_Q, K = X W_K, V = X W_V, then softmax(QK^⊤/√d_k + M) V with a causal
    mask M."""
    u = 22                                              # px per matrix cell
    T, d_model, dk = 4, 6, 3
    d = Drawing(
        1000, 600,
        title="Scaled dot-product attention in matrix form, with the shape of every matrix",
        desc=("Top: the token matrix X (T by d) times W_Q, W_K and W_V (d by d_k each) gives Q, K "
              "and V (T by d_k each). Bottom: Q times K transposed (d_k by T) gives a T by T score "
              "matrix, divided by the square root of d_k; a causal mask adds minus infinity above "
              "the diagonal; a softmax over each row gives the attention weights A, whose rows sum "
              "to 1; A times V gives the output, T by d_k."))
    d.text(30, 24, "1 · project every token row x_i:  q_i = x_i W_Q,  k_i = x_i W_K,  "
                   "v_i = x_i W_V", anchor="start", bold=True)
    y1 = 75
    x0 = 110
    X = d.matrix(x0, y1 + 12, T, d_model, u, "X", shape="(T, d)", fill=DATA, grid=True)
    for i, tok in enumerate(_TOKENS):
        d.text(x0 - 10, y1 + 12 + (i + 0.5) * u, tok, anchor="end", size=SMALL_SIZE, plain=True)
    _op(d, X.x + X.w + 24, X.cy, "@")
    wx = X.x + X.w + 48
    for k, (name, fill) in enumerate((("W_Q", _Q), ("W_K", _K), ("W_V", _V))):
        d.matrix(wx + k * (dk * u + 14), y1, d_model, dk, u, name, shape="(d, d_k)",
                 fill=fill, grid=False)
    _op(d, wx + 3 * (dk * u + 14) + 10, X.cy, "=")
    qx = wx + 3 * (dk * u + 14) + 38
    for k, (name, fill) in enumerate((("Q", _Q), ("K", _K), ("V", _V))):
        d.matrix(qx + k * (dk * u + 14), y1 + 12, T, dk, u, name, shape="(T, d_k)", fill=fill,
                 grid=True)
    d.text(qx + 3 * (dk * u + 14) + 10, y1 + 12 + T * u / 2 - 10, "row i of Q is q_i:",
           anchor="start", size=SMALL_SIZE)
    d.text(qx + 3 * (dk * u + 14) + 10, y1 + 12 + T * u / 2 + 10, "one token's query",
           anchor="start", size=SMALL_SIZE, plain=True)

    d.text(30, 262, "2 · Attention(Q, K, V) = softmax(*QK*^⊤/√d_k + M) V  — every query "
                    "against every key at once", anchor="start", bold=True)
    y2, mid = 330, 330 + T * u / 2
    x = 40
    Q = d.matrix(x, y2, T, dk, u, "Q", shape="(T, d_k)", fill=_Q, grid=True)
    _op(d, Q.x + Q.w + 18, mid, "@")
    Kt = d.matrix(Q.x + Q.w + 36, y2 + (T - dk) * u / 2, dk, T, u, "K^⊤", shape="(d_k, T)",
                  fill=_K, grid=True)
    d.text(Kt.x + Kt.w + 30, mid, "/ √d_k", size=FONT_SIZE)
    sx = Kt.x + Kt.w + 62
    d.text(sx + T * u / 2, y2 - 34, "scores", size=SMALL_SIZE, plain=True)
    S = d.matrix(sx, y2, T, T, u, "", shape="(T, T)", fill="white", grid=True)
    d.text(S.cx, S.cy, "*QK*^⊤/√d_k", size=SMALL_SIZE)
    _op(d, S.x + S.w + 18, mid, "+")
    mx = S.x + S.w + 36
    d.text(mx + T * u / 2, y2 - 34, "causal mask M", size=SMALL_SIZE)
    for i in range(T):
        for j in range(T):
            hidden = j > i
            d.rect(mx + j * u, y2 + i * u, u, u, fill=NEUTRAL if hidden else "white",
                   stroke="grey", stroke_width=0.8)
            d.text(mx + (j + 0.5) * u, y2 + (i + 0.5) * u, "−∞" if hidden else "0", size=10)
    d.rect(mx, y2, T * u, T * u, fill="none", stroke="black")
    d.text(mx + T * u / 2, y2 + T * u + 12, "(T, T)", size=SMALL_SIZE, color="grey_dark")
    ax = mx + T * u + 104
    d.arrow((mx + T * u + 12, mid), (ax - 12, mid), label="softmax", label_dy=-12)
    d.text((mx + T * u + ax) / 2, mid + 14, "each row", size=SMALL_SIZE, plain=True)
    weights = _example_weights()
    d.text(ax + T * u / 2, y2 - 34, "weights A", size=SMALL_SIZE)
    for i in range(T):
        for j in range(T):
            d.rect(ax + j * u, y2 + i * u, u, u, fill="blue", stroke="grey", stroke_width=0.8,
                   fill_opacity=float(0.85 * weights[i, j]))
    A = d.rect(ax, y2, T * u, T * u, fill="none", stroke="black")
    d.text(A.cx, A.y + A.h + 12, "(T, T)", size=SMALL_SIZE, color="grey_dark")
    _op(d, A.x + A.w + 18, mid, "@")
    V = d.matrix(A.x + A.w + 36, y2, T, dk, u, "V", shape="(T, d_k)", fill=_V, grid=True)
    _op(d, V.x + V.w + 18, mid, "=")
    O = d.matrix(V.x + V.w + 36, y2, T, dk, u, "", shape="(T, d_k)", fill=STATE, grid=True)
    d.text(O.cx, y2 - 34, "output", size=SMALL_SIZE, plain=True)
    for i, tok in enumerate(_TOKENS):
        d.text(O.x + O.w + 8, y2 + (i + 0.5) * u, tok, anchor="start", size=SMALL_SIZE,
               plain=True)

    notes = [
        "• row i of the scores holds q_i · k_j / √d_k for every key j: how well token j matches "
        "what token i looks for",
        "• the mask adds −∞ where a query may not look (here: the future), so its weight "
        "becomes exactly 0",
        "• each row of A is a softmax: weights in (0, 1) that sum to 1 (darker = larger; "
        "an example with d_k = 3)",
        "• row i of the output is Σ_j A_{ij} v_j: a weighted average of the values",
    ]
    for k, line in enumerate(notes):
        d.text(30, 470 + 26 * k, line, anchor="start", size=SMALL_SIZE)
    return d


def _tensor(d: Drawing, x: float, y: float, rows: int, cols: int, u: float, fills,
            depth: int = 2, step: float = 6) -> Box:
    """A (B, rows, cols) tensor: ``depth`` grey sheets behind a front sheet whose columns are
    split into ``len(fills)`` equal coloured groups (heads). Returns the front sheet's box."""
    for k in range(depth, 0, -1):
        d.rect(x + k * step, y - k * step, cols * u, rows * u, fill="grey_light", stroke="grey",
               stroke_width=1)
    group = cols // len(fills)
    for g, fill in enumerate(fills):
        d.rect(x + g * group * u, y, group * u, rows * u, fill=fill, stroke="grey",
               stroke_width=0.8)
    return d.rect(x, y, cols * u, rows * u, fill="none", stroke="black")


def multi_head() -> Drawing:
    """Multi-head attention with shapes: the projections, splitting heads (B, T, d) →
    (B, h, T, d/h), attention per head, concatenation and the output matrix W_O."""
    u = 14
    T, dm, h = 4, 8, 4
    d = Drawing(
        1000,
        560,
        title="Multi-head attention: split into heads, attend per head, concatenate, project "
        "with W_O",
        desc=(
            "A batch X of shape (B, T, d) is projected by W_Q, W_K, W_V (d by d) into Q, K, V of "
            "shape (B, T, d). Their d columns are split into h = 4 groups of d/h columns, one per "
            "head, giving (B, h, T, d/h). Each head computes its own softmax(QK^T/sqrt(d_k)) V "
            "with d_k = d/h, giving h outputs of shape (B, h, T, d/h) and h weight maps of shape "
            "(B, h, T, T). The heads are concatenated back to (B, T, d) and multiplied by W_O "
            "(d by d)."
        ),
    )
    d.text(30, 24, "MultiHead(X) = Concat(head_1, …, head_h) W_O,   "
                   "head_i = Attention(X W_Q^{(i)}, X W_K^{(i)}, X W_V^{(i)}),   d_k = d/h",
           anchor="start", bold=True, size=SMALL_SIZE + 1)
    d.text(30, 50, "here h = 4 heads (one colour each), B = batch (the sheets behind), "
                   "T = 4 tokens, d = 8", anchor="start", size=SMALL_SIZE, color="grey_dark")

    # row 1: X → projections → Q, K, V → split heads
    y = 120
    X = _tensor(d, 40, y, T, dm, u, ["white"])
    d.text(X.cx, y - 28, "X", bold=True)
    d.text(X.cx, X.y + X.h + 14, "(B, T, d)", size=SMALL_SIZE, color="grey_dark")
    d.arrow((X.x + X.w + 26, X.cy), (X.x + X.w + 116, X.cy), label="@ W_Q, W_K, W_V",
            label_dy=-14, label_color="black")
    d.text(X.x + X.w + 71, X.cy + 16, "(d, d) each", size=SMALL_SIZE, color="grey_dark")
    qx = X.x + X.w + 130
    for k, name in enumerate("QKV"):
        t = _tensor(d, qx + k * (dm * u + 36), y, T, dm, u, _HEADS)
        d.text(t.cx, y - 28, name, bold=True)
        d.text(t.cx, t.y + t.h + 14, "(B, T, d)", size=SMALL_SIZE, color="grey_dark")
    sx = qx + 3 * (dm * u + 36) + 10
    d.arrow((sx - 10, X.cy), (sx + 70, X.cy), label="split heads", label_dy=-14,
            label_color="black")
    hx = sx + 84
    for g in range(h):
        _tensor(d, hx + g * (2 * u + 14), y, T, 2, u, [_HEADS[g]], depth=2, step=5)
    d.text(hx + 2 * (2 * u + 14) - 7, y - 28, "Q, K, V per head", size=SMALL_SIZE)
    d.text(hx + 2 * (2 * u + 14) - 7, y + T * u + 14, "(B, h, T, d/h)", size=SMALL_SIZE,
           color="grey_dark")
    d.text(hx + 2 * (2 * u + 14) - 7, y + T * u + 34, "a reshape + transpose", size=SMALL_SIZE,
           color="grey_dark", plain=True)

    # row 2: attention per head → concat → W_O
    y2 = 330
    d.text(30, 272, "each head attends on its own d/h columns, all heads in parallel:",
           anchor="start", size=SMALL_SIZE)
    ax = 60
    for g in range(h):
        bx = ax + g * 80
        for i in range(T):
            for j in range(T):
                d.rect(bx + j * u, y2 + i * u, u, u, fill=_HEADS[g], stroke="grey",
                       stroke_width=0.6)
        d.rect(bx, y2, T * u, T * u, fill="none", stroke="black")
        d.text(bx + T * u / 2, y2 - 16, f"A_{g + 1}", size=SMALL_SIZE)
    d.text(ax + 150, y2 + T * u + 20, "A_i = softmax(Q_i K_i^⊤ / √d_k): (B, h, T, T)",
           size=SMALL_SIZE)
    d.text(ax + 150, y2 + T * u + 42, "head_i = A_i V_i: (B, h, T, d/h)", size=SMALL_SIZE)
    cx0 = ax + 3 * 80 + T * u + 40
    d.arrow((cx0, y2 + T * u / 2), (cx0 + 90, y2 + T * u / 2), label="concat heads",
            label_dy=-14, label_color="black")
    C = _tensor(d, cx0 + 104, y2, T, dm, u, _HEADS)
    d.text(C.cx, C.y + C.h + 14, "(B, T, d)", size=SMALL_SIZE, color="grey_dark")
    d.text(C.x + C.w + 26, C.cy, "@", size=18, bold=True)
    W = d.matrix(C.x + C.w + 42, y2 - 2 * u, dm, dm, u, "W_O", shape="(d, d)", fill=PARAM)
    d.text(W.x + W.w + 16, C.cy, "=", size=18, bold=True)
    out = _tensor(d, W.x + W.w + 32, y2, T, dm, u, [STATE])
    d.text(out.cx, out.y + out.h + 14, "(B, T, d)", size=SMALL_SIZE, color="grey_dark")
    d.text(out.cx, y2 - 30, "output", size=SMALL_SIZE, plain=True)
    d.text(30, 490, "W_O mixes the heads: each output feature can combine what every head found.",
           anchor="start", size=SMALL_SIZE)
    d.text(30, 512, "Parameters: 4 matrices d × d (W_Q, W_K, W_V, W_O) and 4 biases, 4(d^2 + d), "
                    "whatever h is: more heads means narrower heads, not more weights.",
           anchor="start", size=SMALL_SIZE)
    return d


def masks() -> Drawing:
    """The causal and the padding masks as grids over (query, key), True = may attend, and
    the two combined for a padded batch of a decoder."""
    cell = 46
    d = Drawing(
        1000, 420,
        title="Attention masks: causal, padding, and both, as query-by-key grids",
        desc=("Three grids with queries as rows and keys as columns. Causal mask for 'I made her "
              "duck': a query may see its own position and earlier ones; the cells above the "
              "diagonal are hidden (minus infinity). Padding mask for 'dog bites man <pad>': no "
              "query may attend to the padding key, whose column is hidden. Both: the causal "
              "triangle with the padding column hidden as well."))
    d.text(30, 24, "mask[i, j] = True: query i may attend to key j.  Hidden scores become −∞, "
                   "so their softmax weight is exactly 0.", anchor="start", size=SMALL_SIZE)
    d.legend(30, 40, [("box", "may attend (True)", "sky_light"),
                      ("box", "hidden (False): score −∞", NEUTRAL)])
    grids = [
        ("causal mask (decoder-only)", _TOKENS, lambda i, j: j <= i),
        ("padding mask (a padded batch row)", ("dog", "bites", "man", "<pad>"),
         lambda i, j: j < 3),
        ("causal + padding", ("dog", "bites", "man", "<pad>"), lambda i, j: j <= i and j < 3),
    ]
    for g, (title, toks, allowed) in enumerate(grids):
        x0, y0 = 100 + g * 320, 170
        d.text(x0 + 2 * cell, y0 - 62, title, bold=True, size=SMALL_SIZE, plain=True)
        d.text(x0 + 2 * cell, y0 - 40, "keys j →", size=SMALL_SIZE, color="grey_dark")
        d.text(x0 - 8, y0 - 40, "queries i ↓", anchor="end", size=SMALL_SIZE,
               color="grey_dark")
        for j, tok in enumerate(toks):
            d.text(x0 + (j + 0.5) * cell, y0 - 14, tok, size=12, plain=True)
        for i, tok in enumerate(toks):
            d.text(x0 - 8, y0 + (i + 0.5) * cell, tok, anchor="end", size=12, plain=True)
            for j in range(len(toks)):
                ok = allowed(i, j)
                d.rect(x0 + j * cell, y0 + i * cell, cell, cell,
                       fill="sky_light" if ok else NEUTRAL, stroke="grey", stroke_width=1)
                d.text(x0 + (j + 0.5) * cell, y0 + (i + 0.5) * cell, "✓" if ok else "−∞",
                       size=SMALL_SIZE, color="black" if ok else "grey_dark")
        d.rect(x0, y0, 4 * cell, 4 * cell, fill="none", stroke="black")
    d.text(100 + 320 + 2 * cell, 170 + 4 * cell + 24, "the <pad> query's own output is "
           "ignored (never a target)", size=12, plain=True, color="grey_dark")
    return d


def transformer_block() -> Drawing:
    """The Transformer block in Post-LN form (the original) and Pre-LN form side by side:
    multi-head attention and a position-wise feed-forward network, each inside a residual
    connection, with two LayerNorms."""
    d = Drawing(
        1000, 700,
        title="The Transformer block, Post-LN and Pre-LN side by side",
        desc=("Two columns read from bottom to top. Post-LN: the input x goes through multi-head "
              "attention, is added to x, and the sum is layer-normalised; the result goes through "
              "the feed-forward network, is added, and is normalised again. Pre-LN: the residual "
              "stream runs straight from input to output; each branch first normalises, then "
              "applies attention or the feed-forward network, and adds its result to the stream."))
    for col, pre in ((0, False), (1, True)):
        sx = 150 + col * 480                            # the residual stream
        bx = sx + 170                                   # the branch with the sub-layers
        title = "Pre-LN (most modern models)" if pre else "Post-LN (the original Transformer)"
        d.text(sx + 85, 26, title, bold=True, plain=True)
        rows = ({"in": 640, "b1": 595, "ln1": 545, "attn": 480, "add1": 415, "b2": 375,
                 "ln2": 325, "ffn": 260, "add2": 195, "out": 90}
                if pre else
                {"in": 640, "b1": 595, "attn": 520, "add1": 455, "ln1": 400, "b2": 355,
                 "ffn": 280, "add2": 215, "ln2": 160, "out": 90})
        # the residual stream, highlighted where it is never normalised
        stream_top = rows["out"] + 18
        if pre:
            d.line((sx, rows["in"] - 16), (sx, stream_top), color="yellow", width=14)
        d.text(sx, rows["in"], "x", bold=True)
        d.text(sx, rows["out"], "output: (B, T, d)", bold=True, size=SMALL_SIZE)
        d.text(sx + 22, rows["in"], "(B, T, d)", anchor="start", size=SMALL_SIZE,
               color="grey_dark")
        add1 = d.circle(sx, rows["add1"], 14, "+")
        add2 = d.circle(sx, rows["add2"], 14, "+")
        wide = 190
        attn = d.box(bx, rows["attn"], wide, 40, "multi-head attention", fill=OP, plain=True)
        ffn = d.box(bx, rows["ffn"], wide, 44, "", fill=OP)
        d.text(bx, rows["ffn"] - 9, "feed-forward", size=FONT_SIZE, plain=True)
        d.text(bx, rows["ffn"] + 10, "d → 4d → d, per position", size=12)
        for b in (rows["b1"], rows["b2"]):
            d.circle(sx, b, 3.5, fill="black", stroke="black", stroke_width=1)
        if pre:
            ln1 = d.box(bx, rows["ln1"], 120, 34, "LayerNorm", fill=STATE, plain=True)
            ln2 = d.box(bx, rows["ln2"], 120, 34, "LayerNorm", fill=STATE, plain=True)
            d.arrow((sx, rows["in"] - 14), (sx, add1.y + add1.h))
            d.arrow((sx, add1.y), (sx, add2.y + add2.h))
            d.arrow((sx, add2.y), (sx, rows["out"] + 12))
            d.arrow_path([(sx, rows["b1"]), (bx, rows["b1"]), ln1.bottom])
            d.arrow(ln1.top, attn.bottom)
            d.arrow_path([attn.top, (bx, rows["add1"]), add1.right])
            d.arrow_path([(sx, rows["b2"]), (bx, rows["b2"]), ln2.bottom])
            d.arrow(ln2.top, ffn.bottom)
            d.arrow_path([ffn.top, (bx, rows["add2"]), add2.right])
            d.text(sx - 16, (rows["add1"] + rows["b1"]) / 2, "residual stream:",
                   anchor="end", size=SMALL_SIZE, plain=True)
            d.text(sx - 16, (rows["add1"] + rows["b1"]) / 2 + 18, "never normalised",
                   anchor="end", size=SMALL_SIZE, plain=True)
            eqs = ["x ← x + Attn(LN(x))", "x ← x + FFN(LN(x))",
                   "(a final LayerNorm follows the last block)"]
        else:
            ln1 = d.box(sx, rows["ln1"], 120, 34, "LayerNorm", fill=STATE, plain=True)
            ln2 = d.box(sx, rows["ln2"], 120, 34, "LayerNorm", fill=STATE, plain=True)
            d.arrow((sx, rows["in"] - 14), (sx, add1.y + add1.h))
            d.arrow((sx, add1.y), ln1.bottom)
            d.arrow(ln1.top, (sx, add2.y + add2.h))
            d.arrow((sx, add2.y), ln2.bottom)
            d.arrow(ln2.top, (sx, rows["out"] + 12))
            d.arrow_path([(sx, rows["b1"]), (bx, rows["b1"]), attn.bottom])
            d.arrow_path([attn.top, (bx, rows["add1"]), add1.right])
            d.arrow_path([(sx, rows["b2"]), (bx, rows["b2"]), ffn.bottom])
            d.arrow_path([ffn.top, (bx, rows["add2"]), add2.right])
            eqs = ["x ← LN(x + Attn(x))", "x ← LN(x + FFN(x))",
                   "every path from input to output is normalised"]
        if not pre:
            d.text(sx - 14, (rows["b1"] + rows["add1"]) / 2, "residual", anchor="end",
                   size=SMALL_SIZE, plain=True, color="grey_dark")
            d.text(sx - 14, (rows["b2"] + rows["add2"]) / 2, "residual", anchor="end",
                   size=SMALL_SIZE, plain=True, color="grey_dark")
        d.text(bx, rows["out"] - 10, eqs[0], size=SMALL_SIZE)
        d.text(bx, rows["out"] + 10, eqs[1], size=SMALL_SIZE)
        d.text(sx + 85, 680, eqs[2], size=12, color="grey_dark", plain=True)
    return d


def seq2seq_attention() -> Drawing:
    """From the RNN bottleneck to attention: an encoder–decoder that squeezes the source into
    one vector, beside one whose decoder takes, at every step, a weighted average of all the
    encoder states."""
    d = Drawing(
        1000, 520,
        title="Encoder-decoder without and with attention",
        desc=("Left: an RNN encoder reads four source tokens; only its last state is passed to "
              "the decoder, a bottleneck. Right: the same encoder keeps all four states h_1 to "
              "h_4; at decoder step t the weights alpha_tj (a softmax over scores of s_t-1 "
              "against each h_j) mix the states into a context vector c_t that the decoder "
              "reads. Line thickness shows illustrative weights."))
    src = ("x_1", "x_2", "x_3", "x_4")
    alpha = (0.06, 0.12, 0.70, 0.12)                    # illustrative weights of one step

    def encoder(x0):
        states = []
        for j, tok in enumerate(src):
            x = x0 + j * 90
            inp = d.box(x, 450, 56, 30, tok, fill=DATA)
            h = d.box(x, 380, 56, 32, f"h_{j + 1}", fill=STATE)
            d.arrow(inp.top, h.bottom)
            if states:
                d.arrow(states[-1].right, h.left)
            states.append(h)
        return states

    # ---- without attention: one vector carries everything --------------------------------------
    d.text(30, 24, "without attention: one vector carries the whole source", anchor="start",
           bold=True, plain=True)
    hs = encoder(70)
    last = hs[-1]
    dec = [d.box(x, 200, 56, 32, f"s_{t + 1}", fill=STATE) for t, x in
           enumerate((160, 250, 340))]
    d.arrow_path([last.top, (last.cx, 290), (dec[0].cx - 50, 290), (dec[0].cx - 50, 200),
                  dec[0].left], width=2.5)
    d.text(last.cx + 8, 320, "the bottleneck", anchor="start", size=12, plain=True, bold=True)
    for t, s in enumerate(dec):
        if t:
            d.arrow(dec[t - 1].right, s.left)
        y = d.box(s.cx, 120, 56, 30, f"y_{t + 1}", fill=OP)
        d.arrow(s.top, y.bottom)
    d.text(250, 70, "decoder", size=SMALL_SIZE, plain=True, color="grey_dark")
    d.text(205, 500, "encoder", size=SMALL_SIZE, plain=True, color="grey_dark")

    # ---- with attention: a context vector per step ---------------------------------------------
    d.line((480, 40), (480, 500), color="grey_light", width=1.5)
    d.text(510, 24, "with attention: every step looks at every source state", anchor="start",
           bold=True, plain=True)
    hs = encoder(560)
    ctx = d.circle(740, 250, 18, "Σ", fill="white")
    for h, a in zip(hs, alpha):
        d.line(h.top, ctx.toward(h.top), color="blue", width=0.8 + 8 * a)
        d.text((h.cx + ctx.cx) / 2 + (-14 if h.cx < ctx.cx else 14), (h.y + ctx.cy) / 2 + 8,
               f"α_{{t{hs.index(h) + 1}}}", size=12, color="blue",
               anchor="end" if h.cx < ctx.cx else "start")
    s_prev = d.box(600, 150, 64, 32, "s_{t−1}", fill=STATE)
    s_t = d.box(740, 150, 56, 32, "s_t", fill=STATE)
    d.arrow(s_prev.right, s_t.left)
    d.arrow(ctx.top, s_t.bottom, label="c_t", label_dx=16, label_dy=0, label_color="black")
    y = d.box(740, 80, 56, 30, "y_t", fill=OP)
    d.arrow(s_t.top, y.bottom)
    d.curve(s_prev.bottom, (ctx.x + 4, ctx.cy - 8), bend=-20, color="grey_dark", width=1.2,
            head=8)
    d.text(800, 232, "α_{*tj*} = softmax_j(score(s_{t−1}, h_j))", anchor="start", size=12)
    d.text(800, 252, "c_t = Σ_j α_{*tj*} h_j", anchor="start", size=12)
    d.text(800, 276, "(thickness: one step's weights)", anchor="start", size=11, plain=True,
           color="grey_dark")
    d.text(695, 500, "encoder (all states kept)", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    return d


FIGURES = (attention_matrix, multi_head, masks, transformer_block, seq2seq_attention)

# where each figure belongs in the lesson (a suggestion for the lesson's authors)
PLACES = {
    attention_matrix: "section “Idea”, after the matrix form",
    multi_head: "section “Multi-head attention”",
    masks: "section “Build it: softmax attention” (the masks)",
    transformer_block: "section “The Transformer block”",
    seq2seq_attention: "section “Idea: from the RNN bottleneck to attention”",
}
