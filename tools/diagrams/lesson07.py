"""Diagrams of lesson 07 (the embedding layer and word2vec).

The lesson's notation: input vectors v_w are the rows of W ∈ ℝ^{|V|×d}, output vectors u_w the
rows of C; a pair's score s = u_o^⊤ v_c, y = σ(s), binary cross-entropy with target t and
∂L/∂s = y − t; negative sampling draws k words w_i ~ P_n(w) ∝ P(w)^0.75:
J = −[log σ(u_o^⊤ v_c) + Σ_i log σ(−u_{w_i}^⊤ v_c)]. CBOW uses h = mean of the context rows.
The example sentence is "… he rests in peace …" with the window L = 2.
"""

from tools.diagrams.style import DATA, GRAD, LOSS, NEUTRAL, OP, STATE
from tools.diagrams.svg import SMALL_SIZE, Drawing

LESSON = 7

_VOCAB = ("the", "life", "he", "rests", "in", "peace", "bank", "song", "of", "during")
_D = 5          # cells drawn per vector (d = 100 in the lesson)
_U = 16         # px per cell


def _table(d: Drawing, x: float, y: float, name: str, shape: str, picked: dict[int, str]):
    """An embedding table (|V| rows × d columns) with some rows picked (row -> fill)."""
    for i, word in enumerate(_VOCAB):
        fill = picked.get(i, "white")
        d.rect(x, y + i * _U, _D * _U, _U, fill=fill, stroke="grey", stroke_width=0.6)
        d.text(x - 6, y + (i + 0.5) * _U, word, anchor="end", size=12, plain=True,
               color="black" if i in picked else "grey_dark")
    d.rect(x, y, _D * _U, len(_VOCAB) * _U, fill="none", stroke="black")
    d.text(x + _D * _U / 2, y - 28, name, bold=True)
    d.text(x + _D * _U / 2, y - 10, shape, size=12, color="grey_dark")


def _vector(d: Drawing, x: float, y: float, fill: str, label: str = "", side: str = "left"):
    """A d-dimensional row vector as a bar of cells, its top-left at x, y."""
    for j in range(_D):
        d.rect(x + j * _U, y, _U, _U, fill=fill, stroke="grey", stroke_width=0.6)
    b = d.rect(x, y, _D * _U, _U, fill="none", stroke="black")
    if label:
        if side == "left":
            d.text(x - 6, y + _U / 2, label, anchor="end", size=SMALL_SIZE)
        else:
            d.text(x + _D * _U / 2, y + _U + 12, label, size=SMALL_SIZE)
    return b


def _ns_head(d: Drawing, h_out, candidates, target_word: str, x0: float,
             step: float) -> None:
    """The negative-sampling head: look up the candidates' rows of C, dot each with the hidden
    vector (a bus from ``h_out``), σ, and the binary cross-entropy terms summed into J."""
    y_c, y_u, y_bus, y_dot, y_sig, y_loss, y_sum = 60, 230, 272, 310, 375, 445, 530
    picked = {_VOCAB.index(w): (DATA if t else NEUTRAL) for w, t in candidates}
    c_x = 862
    _table(d, c_x, y_c + 30, "C", "(|V|, d): output vectors u_w", picked)
    last = x0 + (len(candidates) - 1) * step + _D * _U / 2
    d.arrow((c_x - 2, y_u + _U / 2), (last + 4, y_u + _U / 2), head=8)
    d.text((c_x + last) / 2, y_u + _U + 14, "look up", size=12, plain=True)
    d.text((c_x + last) / 2, y_u + _U + 30, "rows", size=12, plain=True)
    xs = [x0 + i * step for i in range(len(candidates))]
    # the bus carrying the hidden vector to every dot product
    d.line(h_out, (h_out[0], y_bus), width=1.5)
    d.line((h_out[0], y_bus), (xs[-1] - 34, y_bus), width=1.5)
    terms = []
    for i, ((word, t), x) in enumerate(zip(candidates, xs)):
        kind = f"real: {word}" if t else f"sampled: {word}"
        d.text(x, y_u - 44, kind, size=SMALL_SIZE, plain=True, bold=bool(t))
        d.text(x, y_u - 26, f"t = {t}", size=SMALL_SIZE)
        sub = "o" if t else f"w_{i}"
        _vector(d, x - _D * _U / 2, y_u, DATA if t else NEUTRAL)
        d.text(x - _D * _U / 2 - 6, y_u + _U / 2, f"u_{{{sub}}}", anchor="end", size=SMALL_SIZE)
        dot = d.circle(x, y_dot, 14, "·", size=22)
        d.arrow((x, y_u + _U), dot.top)
        if i < len(candidates) - 1:             # a junction where the bus branches
            d.circle(x - 34, y_bus, 3, fill="black", stroke="black", stroke_width=1)
        d.arrow_path([(x - 34, y_bus), (x - 34, y_dot), dot.left], head=8)
        score = "s_o" if t else f"s_{i}"
        d.text(x + 20, y_dot, score, anchor="start", size=SMALL_SIZE)
        sig = d.box(x, y_sig, 44, 32, "σ", fill=OP)
        d.arrow(dot.bottom, sig.top)
        d.text(x + 28, y_sig, "y", anchor="start", size=SMALL_SIZE)
        term = "−log σ(s_o)" if t else f"−log σ(−s_{i})"
        loss = d.box(x, y_loss, 112, 34, term, fill=LOSS, size=SMALL_SIZE)
        d.arrow((x - 7, sig.y + sig.h), (x - 7, loss.y))
        d.arrow((x + 7, loss.y), (x + 7, sig.y + sig.h), color=GRAD, dashed=True, head=8)
        d.text(x + 16, (y_sig + y_loss) / 2 + 2, "y − t", anchor="start", size=12, color=GRAD)
        terms.append(loss)
    total = d.box((xs[0] + xs[-1]) / 2, y_sum, 560, 40,
                  "J = −log σ(u_o^⊤ h) − Σ_{i=1..k} log σ(−u_{w_i}^⊤ h)", fill=LOSS, bold=True,
                  size=SMALL_SIZE + 1)
    for loss in terms:
        d.arrow(loss.bottom, (loss.cx, total.y))
    d.text((xs[0] + xs[-1]) / 2, y_sum + 40, f"one real pair and k sampled words "
           f"(k = {len(candidates) - 1} drawn, k = 5 in the lesson): k + 1 dot products "
           "instead of a softmax over all |V| words", size=12, plain=False, color="grey_dark")
    d.text((xs[0] + xs[-1]) / 2, y_sum + 60, f"target of the real pair: “{target_word}”;  "
           "sampled words w_i ~ P_n(w) ∝ P(w)^{0.75};  dashed: ∂L/∂s = y − t",
           size=12, color="grey_dark")


def skipgram_ns() -> Drawing:
    """Skip-gram with negative sampling: the centre word's row v_c of the input matrix W, the
    rows of the output matrix C for the real context word and k sampled words, their dot
    products, σ, and the loss J."""
    d = Drawing(
        1000, 640,
        title="Skip-gram with negative sampling: two matrices W and C, dot products, sigmoid, "
              "and the loss",
        desc=("The centre word 'rests' selects its row v_c of the input matrix W. The output "
              "matrix C gives the row u_o of the real context word 'in' and the rows of three "
              "sampled words. Each is dotted with v_c, passed through a sigmoid, and scored with "
              "binary cross-entropy: target 1 for the real pair, 0 for the sampled ones. The "
              "terms add up to the loss J."))
    d.text(30, 24, "skip-gram: the centre word predicts each context word;  "
                   "“… he rests in peace …”, window L = 2", anchor="start", bold=True)
    centre = _VOCAB.index("rests")
    _table(d, 90, 90, "W", "(|V|, d): input vectors v_w", {centre: STATE})
    d.arrow((90 + _D * _U + 4, 90 + (centre + 0.5) * _U), (196, 90 + (centre + 0.5) * _U),
            head=8)
    v = _vector(d, 200, 90 + centre * _U, STATE)
    d.text(v.cx, v.y - 12, "h = v_c", size=SMALL_SIZE)
    d.text(30, 300, "input: the centre word", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    d.text(30, 320, "“rests” (a row lookup,", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    d.text(30, 340, "= one-hot × W)", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    d.text(30, 372, "the same is done for", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    d.text(30, 392, "every context word:", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    d.text(30, 412, "life, he, in, peace", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    _ns_head(d, (v.x + v.w + 12, v.cy),
             [("in", 1), ("bank", 0), ("song", 0), ("during", 0)], "in", x0=372, step=125)
    d.line((v.x + v.w, v.cy), (v.x + v.w + 12, v.cy), width=1.5)
    return d


def cbow_ns() -> Drawing:
    """CBOW with negative sampling: the mean of the context words' rows of W as the hidden
    vector h, scored against the centre word's row of C and k sampled rows."""
    d = Drawing(
        1000, 640,
        title="CBOW with negative sampling: the mean of the context rows of W, scored against "
              "rows of C",
        desc=("The context words 'life', 'he', 'in' and 'peace' select four rows of the input "
              "matrix W; their mean is the hidden vector h. The output matrix C gives the row of "
              "the real centre word 'rests' and the rows of three sampled words; each is dotted "
              "with h, passed through a sigmoid and scored with binary cross-entropy; the terms "
              "add up to J."))
    d.text(30, 24, "CBOW: the mean of the context words predicts the centre word;  "
                   "“… he rests in peace …”", anchor="start", bold=True)
    context = [_VOCAB.index(w) for w in ("life", "he", "in", "peace")]
    _table(d, 90, 90, "W", "(|V|, d): input vectors v_w", {i: STATE for i in context})
    mean = d.box(232, 170, 54, 40, "mean", fill=OP, size=SMALL_SIZE)
    for i in context:
        d.arrow((90 + _D * _U + 4, 90 + (i + 0.5) * _U), mean.toward((90 + _D * _U,
                90 + (i + 0.5) * _U)), head=7, width=1.2)
    d.arrow(mean.bottom, (232, 226), head=8)
    v = _vector(d, 192, 230, STATE)
    d.text(v.x - 6, v.cy, "h", anchor="end", size=SMALL_SIZE)
    d.text(30, 300, "h = (1/|ctx|) Σ_j v_{c_j}", anchor="start", size=SMALL_SIZE)
    d.text(30, 324, "input: the context words", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    d.text(30, 344, "life, he, in, peace", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    d.text(30, 376, "(gensim and our trainers", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    d.text(30, 396, "give every context row the", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    d.text(30, 416, "full error of h)", anchor="start", size=SMALL_SIZE, plain=True,
           color="grey_dark")
    _ns_head(d, (v.x + v.w + 12, v.cy), [("rests", 1), ("bank", 0), ("song", 0), ("of", 0)],
             "rests", x0=372, step=125)
    d.line((v.x + v.w, v.cy), (v.x + v.w + 12, v.cy), width=1.5)
    return d


def softmax_vs_negative_sampling() -> Drawing:
    """Why negative sampling: the full softmax scores the centre vector against every row of C
    (|V| dot products and a sum over the vocabulary per pair); negative sampling scores k + 1
    rows with independent sigmoids."""
    V, k, u = 30, 3, 16
    o = 11                                                # the column of the true context word
    d = Drawing(
        1000, 520,
        title="The full softmax over the vocabulary versus negative sampling",
        desc=("Top: the centre vector v_c times C transposed gives a score for every one of the "
              "|V| words; a softmax over all of them gives P(o | c), whose negative log is the "
              "loss. Bottom: negative sampling looks up only the true context word's row and k "
              "sampled rows of C, and scores each with a sigmoid."))
    # ---- the full softmax -----------------------------------------------------------------------
    d.text(30, 24, "full softmax:  P(o | c) = exp(u_o^⊤ v_c) / Σ_{w∈V} exp(u_w^⊤ v_c)",
           anchor="start", bold=True)
    y = 70
    v = _vector(d, 40, y + 2 * u, STATE)
    d.text(v.cx, v.y - 12, "v_c  (1, d)", size=12)
    d.text(v.x + v.w + 18, v.cy, "@", size=18, bold=True)
    for j in range(V):
        d.rect(156 + j * u, y, u, _D * u, fill="orange_light" if j == o else "white",
               stroke="grey", stroke_width=0.5)
    Ct = d.rect(156, y, V * u, _D * u, fill="none", stroke="black")
    d.text(Ct.cx, Ct.y + Ct.h + 14, "C^⊤  (d, |V|): every word's u_w", size=12,
           color="grey_dark")
    d.text(Ct.x + Ct.w + 18, v.cy, "=", size=18, bold=True)
    sx = Ct.x + Ct.w + 40
    d.text(sx + 100, y + 2 * u - 14, "|V| scores", size=12, plain=True)
    for j in range(V):
        d.rect(sx + j * 200 / V, y + 2 * u, 200 / V, u, fill="orange_light" if j == o else
               "sky_light", stroke="grey", stroke_width=0.4)
    d.rect(sx, y + 2 * u, 200, u, fill="none", stroke="black")
    d.text(sx + 100, y + 3 * u + 14, "→ softmax → p_o → −log p_o", size=12)
    d.text(30, 200, "• per training pair: |V| dot products, an exponential for each, and their "
                    "sum: the cost grows in proportion to the vocabulary", anchor="start",
           size=SMALL_SIZE)
    d.text(30, 224, "• the gradient reaches every row of C (∂L/∂u_w = (p_w − t_w) v_c for "
                    "every w), however rare the word", anchor="start", size=SMALL_SIZE)

    # ---- negative sampling ----------------------------------------------------------------------
    d.line((20, 252), (980, 252), color="grey_light", width=1.5)
    d.text(30, 280, "negative sampling:  J = −log σ(u_o^⊤ v_c) − Σ_{i=1..k} log σ(−u_{w_i}^⊤ v_c)",
           anchor="start", bold=True)
    y2 = 330
    d.text(30, y2 + 8, "look up the rows", anchor="start", size=SMALL_SIZE, plain=True)
    d.text(30, y2 + 28, "of C for the real", anchor="start", size=SMALL_SIZE)
    d.text(30, y2 + 48, "word and k sampled", anchor="start", size=SMALL_SIZE)
    d.text(30, y2 + 68, "ones, P_n(w) ∝ P(w)^{0.75}", anchor="start", size=SMALL_SIZE)
    rows = [("u_o", DATA, "real: t = 1", "−log σ(s_o)")] + [
        (f"u_{{w_{i}}}", NEUTRAL, "sampled: t = 0", f"−log σ(−s_{i})") for i in range(1, k + 1)]
    for i, (name, fill, note, term) in enumerate(rows):
        ry = y2 + i * (u + 14)
        d.text(236, ry + u / 2, name, anchor="end", size=12)
        _vector(d, 244, ry, fill)
        d.text(244 + _D * _U + 12, ry + u / 2, "·  v_c  →  σ  →", anchor="start", size=12)
        d.text(440, ry + u / 2, term, anchor="start", size=12)
        d.text(540, ry + u / 2, note, anchor="start", size=12, color="grey_dark")
    d.text(680, y2 + 10, "• per pair: k + 1 dot products,", anchor="start", size=SMALL_SIZE)
    d.text(680, y2 + 30, "  whatever the size of |V|", anchor="start", size=SMALL_SIZE)
    d.text(680, y2 + 60, "• only k + 1 rows of C get", anchor="start", size=SMALL_SIZE)
    d.text(680, y2 + 80, "  a gradient: ∂L/∂s = y − t", anchor="start", size=SMALL_SIZE)
    d.text(30, 500, "drawn: |V| = 30, d = 5, k = 3; lesson 07 times both as |V| grows "
                    "(section 6) and trains with k = 5", anchor="start", size=12,
           color="grey_dark")
    return d


FIGURES = (skipgram_ns, cbow_ns, softmax_vs_negative_sampling)

# where each figure belongs in the lesson (a suggestion for the lesson's authors)
PLACES = {
    skipgram_ns: "section “Negative sampling” or “Skip-gram and CBOW in NumPy”",
    cbow_ns: "section “Skip-gram and CBOW in NumPy”",
    softmax_vs_negative_sampling: "section “From a softmax over |V| words to yes/no questions”",
}
