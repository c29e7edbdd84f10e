"""Diagrams of lesson 10 (contextual representations).

The lesson's notation: each sentence becomes ``[CLS] pieces [SEP]``; 15 % of the ordinary
positions are chosen (the set M); a chosen token becomes [MASK] 80 % of the time, a random
token 10 %, and stays 10 %; token + position (+ segment) embeddings, normalised, go through
Pre-LN encoder blocks to h_i^L; the head g (dense, GELU, LayerNorm) and the tied output
logits_i = g(h_i^L) E^⊤ + b_out score the vocabulary; L_MLM = −(1/|M|) Σ_{i∈M} log P(x_i | h_i^L).
"""

from tools.diagrams.style import DATA, LOSS, NEUTRAL, OP, PARAM, STATE
from tools.diagrams.svg import SMALL_SIZE, Drawing

LESSON = 10

TOKENS = ("[CLS]", "the", "cat", "sat", "on", "the", "river", "bank", "[SEP]")
#: chosen position -> (what the input shows, the rule)
CHOSEN = {2: ("[MASK]", "80 %: [MASK]"), 4: ("apple", "10 %: random"),
          7: ("bank", "10 %: kept")}


def mlm_pretraining() -> Drawing:
    """Masked-LM pre-training: 15 % of positions chosen and replaced 80/10/10, token and position
    embeddings E, encoder blocks, h_i, the head g and the tied output logits = g(h_i) E^⊤, softmax,
    and the loss over the masked positions only."""
    d = Drawing(
        1000, 760,
        title="Masked language modelling with tied input and output embeddings",
        desc=("A sentence '[CLS] the cat sat on the river bank [SEP]'. Three positions are "
              "chosen: 'cat' becomes [MASK] (the 80 % case), 'on' becomes a random token (10 %), "
              "'bank' stays (10 %). The corrupted tokens are embedded with rows of the table E "
              "plus position embeddings, normalised, and passed through bidirectional encoder "
              "blocks to vectors h_i. Only at the chosen positions, a head g and the output "
              "projection by the same matrix E transposed give logits over the vocabulary; the "
              "softmax probability of the original token enters the loss, averaged over the "
              "chosen positions."))
    x0, step = 250, 88
    xs = [x0 + k * step for k in range(len(TOKENS))]
    left = xs[0] - 44
    right = xs[-1] + 44

    # original and corrupted tokens
    d.text(20, 60, "original x_i", anchor="start", size=SMALL_SIZE)
    d.text(20, 180, "model input", anchor="start", size=SMALL_SIZE, plain=True)
    for k, (x, tok) in enumerate(zip(xs, TOKENS)):
        special = tok.startswith("[")
        d.box(x, 60, 78, 30, tok, fill=NEUTRAL if special else "white", plain=True,
              size=SMALL_SIZE)
        shown = CHOSEN[k][0] if k in CHOSEN else tok
        fill = (OP if shown == "[MASK]" else "orange_light" if k in CHOSEN and shown != tok
                else DATA if k in CHOSEN else NEUTRAL if special else "white")
        d.box(x, 180, 78, 30, shown, fill=fill, plain=True, size=SMALL_SIZE,
              bold=k in CHOSEN)
        if k in CHOSEN:
            d.arrow((x, 76), (x, 164), width=1.5)
            d.text(x + 4, 108, "chosen", anchor="start", size=11, plain=True,
                   color="grey_dark")
            d.text(x + 4, 126, CHOSEN[k][1], anchor="start", size=11, plain=True)
        else:
            d.arrow((x, 76), (x, 164), width=1, color="grey")
    d.text(20, 108, "15 % of the ordinary", anchor="start", size=12, plain=True,
           color="grey_dark")
    d.text(20, 126, "positions are chosen:", anchor="start", size=12, plain=True,
           color="grey_dark")
    d.text(20, 144, "the set M", anchor="start", size=12, color="grey_dark")

    # the shared embedding table E, drawn where it is used: rows in, transposed out
    E = d.matrix(40, 236, 6, 4, 10, "", fill=PARAM)
    d.text(E.x + E.w + 8, E.cy - 9, "E", anchor="start", bold=True)
    d.text(E.x + E.w + 8, E.cy + 11, "(V, d)", anchor="start", size=12, color="grey_dark")
    # embeddings → encoder → h_i
    emb = d.box((left + right) / 2, 265, right - left, 40, "", fill=PARAM)
    d.text(emb.cx, 265, "token embedding E[x_i]  +  position embedding P_i  (+ segment)  "
                        "→  LayerNorm", size=SMALL_SIZE)
    for x in xs:
        d.arrow((x, 196), (x, 244), width=1)
    enc = d.box((left + right) / 2, 345, right - left, 48, "", fill=OP)
    d.text(enc.cx, 336, "encoder: L Pre-LN Transformer blocks (lesson 04)", size=SMALL_SIZE)
    d.text(enc.cx, 355, "bidirectional attention: no causal mask, every position sees every "
                        "other", size=12, plain=True, color="grey_dark")
    for x in xs:
        d.arrow((x, 286), (x, 320), width=1)
        d.arrow((x, 370), (x, 398), width=1)
        d.rect(x - 28, 400, 56, 12, fill=STATE, stroke="black", stroke_width=1)
    d.text(60, 406, "contextual h_i^L", anchor="start", size=SMALL_SIZE)

    # the head and the tied output, at the chosen positions only
    for k, x in enumerate(xs):
        if k not in CHOSEN:
            d.text(x, 450, "no loss", size=11, plain=True, color="grey")
            continue
        head = d.box(x, 455, 84, 32, "head g", fill=OP, plain=True, size=SMALL_SIZE)
        d.arrow((x, 412), head.top)
        logit = d.box(x, 520, 112, 32, "g(h_i) E^⊤ + b_{out}", fill=PARAM, size=SMALL_SIZE)
        d.arrow(head.bottom, logit.top)
        soft = d.box(x, 585, 84, 32, "softmax", fill=OP, plain=True, size=SMALL_SIZE)
        d.arrow(logit.bottom, soft.top)
        d.text(x, 622, f"P({TOKENS[k]} | h_i)", size=12)
        d.arrow((x, 632), (x, 676), width=1.2)
    d.text(50, 455, "head g: dense,", anchor="start", size=12, plain=True, color="grey_dark")
    d.text(50, 471, "GELU, LayerNorm", anchor="start", size=12, plain=True, color="grey_dark")
    Et = d.matrix(40, 506, 4, 6, 10, "", fill=PARAM)
    d.text(Et.x + Et.w + 8, Et.cy - 9, "E^⊤", anchor="start", bold=True)
    d.text(Et.x + Et.w + 8, Et.cy + 11, "(d, V)", anchor="start", size=12, color="grey_dark")
    d.arrow((Et.x + Et.w + 60, 520), (xs[2] - 52, 520), color="orange", width=2.5)
    d.arrow((E.x + E.w + 60, E.cy), (left - 2, E.cy), color="orange", width=2.5)
    d.arrow_path([(E.x + 8, E.y + E.h + 4), (E.x + 8, Et.y - 4)], both=True, color="orange",
                 width=2.5)
    d.text_lines(60, 318, ["tied: one matrix,", "W = E^⊤; its gradient", "adds both uses"],
                 anchor="start", size=12, line_height=17, color="black")
    d.text(50, 585, "logits over all V", anchor="start", size=12, color="grey_dark")
    d.text(50, 601, "pieces, softmax", anchor="start", size=12, plain=True, color="grey_dark")
    loss = d.box((xs[2] + xs[7]) / 2, 700, 560, 44,
                 "L_{MLM} = −(1/|M|) Σ_{i∈M} log P(x_i | h_i^L)", fill=LOSS, bold=True)
    d.text(loss.cx, 738, "the original token is the target, also where the input kept it or "
                         "showed a random one", size=12, plain=True, color="grey_dark")
    d.text(20, 700, "only the chosen", anchor="start", size=12, plain=True)
    d.text(20, 716, "positions count", anchor="start", size=12, plain=True)
    return d


FIGURES = (mlm_pretraining,)

# where each figure belongs in the lesson (a suggestion for the lesson's authors)
PLACES = {
    mlm_pretraining: "section “Masked language modelling: 15 % of positions, 80/10/10”",
}
