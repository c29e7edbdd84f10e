"""Diagrams of lesson 09 (evaluating word vectors).

The lesson's notation: "a is to b as c is to ?" — man : king :: woman : ?; on unit-length
vectors 3CosAdd picks argmax_d cos(d, b) − cos(d, a) + cos(d, c), and 3CosMul
argmax_d cos'(d, b) cos'(d, c) / (cos'(d, a) + ε) with cos' = (cos + 1)/2 and ε = 10^−3;
both exclude the three query words.
"""

import math

import numpy as np

from tools.diagrams.style import DATA, NEUTRAL, OP
from tools.diagrams.svg import SMALL_SIZE, Drawing, fmt

LESSON = 9

#: toy unit vectors, as angles in degrees (an illustration, not trained vectors)
TOY_ANGLES = {"man": 10, "woman": 62, "king": -22, "queen": 36, "princess": 52,
              "prince": -40, "throne": 18, "girl": 82}
QUERY = ("man", "king", "woman")          # a, b, c


def analogy_scores() -> dict[str, dict[str, float]]:
    """For every toy word d: cos(d, b), cos(d, a), cos(d, c), its 3CosAdd and 3CosMul scores
    for man : king :: woman : ?  (unit vectors in 2-D at :data:`TOY_ANGLES`)."""
    vec = {w: np.array([math.cos(math.radians(t)), math.sin(math.radians(t))])
           for w, t in TOY_ANGLES.items()}
    a, b, c = (vec[w] for w in QUERY)
    out = {}
    for w, v in vec.items():
        cb, ca, cc = float(v @ b), float(v @ a), float(v @ c)
        out[w] = {"cos_b": cb, "cos_a": ca, "cos_c": cc, "add": cb - ca + cc,
                  "mul": (cb + 1) / 2 * (cc + 1) / 2 / ((ca + 1) / 2 + 1e-3)}
    return out


def analogy_3cosadd() -> Drawing:
    """The geometry of 3CosAdd on unit vectors: king − man + woman, the offset c − a, the
    excluded query words, and the candidates' cosines; 3CosMul's scores beside 3CosAdd's."""
    scores = analogy_scores()
    d = Drawing(
        1000, 560,
        title="Analogies by vector offsets: king minus man plus woman, scored by 3CosAdd and "
              "3CosMul",
        desc=("Left: toy unit-length word vectors as points on a circle. The offset from man to "
              "woman, added to king, reaches the point king - man + woman; the word whose "
              "direction is closest to it, queen, is the answer. The query words man, king and "
              "woman are excluded. Right: a table of each word's cosines with king, man and woman "
              "and its 3CosAdd and 3CosMul scores; queen ranks first under both, while princess "
              "and throne swap places."))
    d.text(30, 24, "man : king :: woman : ?      a = man, b = king, c = woman", anchor="start",
           bold=True)
    # ---- the geometry ----------------------------------------------------------------------------
    ox, oy, R = 110, 310, 220

    def at(angle, r=R):
        return (ox + r * math.cos(math.radians(angle)), oy - r * math.sin(math.radians(angle)))

    arc = [at(t) for t in range(-50, 96, 2)]
    d.polyline(arc, color="grey", width=1, dashed=True)
    d.circle(ox, oy, 3.5, fill="black", stroke="black", stroke_width=1)
    d.text(ox - 8, oy + 14, "0", anchor="end", size=12)
    for t in TOY_ANGLES.values():
        d.line((ox, oy), at(t), color="grey_light", width=1)
    vec = {w: np.array(at(t)) for w, t in TOY_ANGLES.items()}
    a, b, c = (vec[w] for w in QUERY)
    target = b + (c - a)
    # the offset c − a, drawn at a and again at b
    d.arrow(tuple(a), tuple(c), color="blue", width=2, label="c − a", label_dx=-26,
            label_dy=-4, label_color="blue")
    d.arrow(tuple(b), tuple(target), color="blue", width=2, label="c − a", label_dx=26,
            label_dy=8, label_color="blue")
    ang = math.degrees(math.atan2(-(target[1] - oy), target[0] - ox))
    d.line((ox, oy), at(ang, R + 24), color="black", width=1, dashed=True)
    d.text(target[0] + 8, target[1] + 14, "b − a + c", anchor="start", size=SMALL_SIZE,
           bold=True)
    d.circle(target[0], target[1], 5, fill="blue", stroke="blue", stroke_width=1)
    winner = max((w for w in scores if w not in QUERY), key=lambda w: scores[w]["add"])
    for w, t in TOY_ANGLES.items():
        x, y = at(t)
        fill = NEUTRAL if w in QUERY else DATA if w == winner else "white"
        d.circle(x, y, 7, fill=fill, stroke="grey_dark" if w in QUERY else "black")
        lx, ly = at(t, R + 16)
        anchor = "start" if math.cos(math.radians(t)) > 0.3 else "middle"
        label = f"{w} (excluded)" if w in QUERY else w
        d.text(lx + (4 if anchor == "start" else 0), ly - (8 if anchor == "middle" else 0),
               label, anchor=anchor, size=SMALL_SIZE, plain=True, bold=w == winner,
               color="grey_dark" if w in QUERY else "black")
    d.text(30, 520, "toy 2-D unit vectors, not trained ones: on the course corpus the famous "
                    "example does not come out (lesson 09, section 3)", anchor="start",
           size=12, plain=True, color="grey_dark")
    d.text(30, 540, "for unit d, 3CosAdd = d · (b − a + c): the word whose direction is "
                    "closest to the dashed ray wins", anchor="start", size=12,
           color="grey_dark")

    # ---- the table -------------------------------------------------------------------------------
    cols = [("word d", 0), ("cos(d, b)", 112), ("cos(d, a)", 190), ("cos(d, c)", 268),
            ("3CosAdd", 350), ("3CosMul", 432)]
    tx, ty, row = 455, 90, 27
    order = sorted(scores, key=lambda w: -scores[w]["add"])
    d.rect(tx - 10, ty - 16, 530, 30, fill=OP, stroke="none", stroke_width=0)
    for name, dx in cols:
        d.text(tx + dx, ty, name, anchor="start", size=SMALL_SIZE, bold=True, plain=True)
    rank_add = {w: k for k, w in enumerate(w for w in order if w not in QUERY)}
    rank_mul = {w: k for k, w in enumerate(sorted((w for w in scores if w not in QUERY),
                                                   key=lambda w: -scores[w]["mul"]))}
    for k, w in enumerate(order):
        y = ty + (k + 1) * row + 4
        excluded = w in QUERY
        if w == winner:
            d.rect(tx - 10, y - row / 2, 530, row, fill=DATA, stroke="none", stroke_width=0)
        s = scores[w]
        color = "grey" if excluded else "black"
        d.text(tx, y, w + (" (query)" if excluded else ""), anchor="start", size=SMALL_SIZE,
               plain=True, color=color, bold=w == winner)
        for key, (_, dx) in zip(("cos_b", "cos_a", "cos_c", "add", "mul"), cols[1:]):
            text = fmt(s[key], 3)
            if key in ("add", "mul") and not excluded:
                rank = (rank_add if key == "add" else rank_mul)[w] + 1
                text += f"  ({rank})"
            d.text(tx + dx, y, text, anchor="start", size=SMALL_SIZE, color=color)
        if excluded:
            d.line((tx - 4, y), (tx + 512, y), color="grey", width=1)
    d.text(tx, ty + (len(order) + 1) * row + 14, "(rank among the candidates; the query "
           "words are struck out)", anchor="start", size=12, plain=True, color="grey_dark")
    fy = ty + (len(order) + 1) * row + 52
    d.text(tx - 10, fy, "3CosAdd: argmax_d  cos(d, b) − cos(d, a) + cos(d, c)", anchor="start",
           size=SMALL_SIZE)
    d.text(tx - 10, fy + 26, "3CosMul: argmax_d  cos'(d, b) cos'(d, c) / (cos'(d, a) + ε)",
           anchor="start", size=SMALL_SIZE)
    d.text(tx - 10, fy + 48, "cos' = (cos + 1)/2 ∈ [0, 1], ε = 0.001: a product, so one large "
           "term cannot", anchor="start", size=12, color="grey_dark")
    d.text(tx - 10, fy + 66, "make up for a poor one (here princess and throne swap ranks)",
           anchor="start", size=12, plain=True, color="grey_dark")
    return d


FIGURES = (analogy_3cosadd,)

# where each figure belongs in the lesson (a suggestion for the lesson's authors)
PLACES = {
    analogy_3cosadd: "section “Analogies”",
}
