"""Diagrams of lesson 06 (pointwise mutual information).

The lesson's notation: a window of ±m tokens around the centre word w; every context word c
inside it makes one (w, c) pair; the counts form the |V| × |V| word–context matrix. Its toy
corpus starts with the sentence "the cat sat on the mat".
"""

from tools.diagrams.style import DATA, OP
from tools.diagrams.svg import SMALL_SIZE, Drawing

LESSON = 6

SENTENCE = ("the", "cat", "sat", "on", "the", "mat")


def window_pairs(tokens, window: int = 2) -> list[list[tuple[str, str]]]:
    """For each centre position, its (centre, context) pairs within ±``window`` (same sentence),
    left to right: ``pairs[i]`` belongs to ``tokens[i]``."""
    return [[(tokens[i], tokens[j]) for j in range(max(0, i - window),
                                                    min(len(tokens), i + window + 1)) if j != i]
            for i in range(len(tokens))]


def cooccurrence_window() -> Drawing:
    """A ±2 co-occurrence window sliding over "the cat sat on the mat", the (word, context)
    pairs counted at each position, and the word–context counts they add up to."""
    m = 2
    pairs = window_pairs(SENTENCE, m)
    d = Drawing(
        1000, 720,
        title="A plus-minus 2 co-occurrence window sliding over a sentence, and the pairs it "
              "counts",
        desc=("Six rows, one per position of the sentence 'the cat sat on the mat'. In each row "
              "the centre word is highlighted, the up to two words on each side inside the window "
              "are shaded, and the (centre, context) pairs are listed. Below, the counts of all "
              "pairs as a word-by-context matrix; 'sat' with 'the' counts 2."))
    d.text(30, 24, "a window of ±2 slides over the sentence; every (centre word, context word) "
                   "pair inside it is counted once", anchor="start", plain=True)
    d.legend(30, 40, [("box", "centre word w", OP), ("box", "context words c in the window",
                                                     DATA)])
    bw, gap, x0, y0, row = 58, 6, 40, 130, 58
    for i, centre_pairs in enumerate(pairs):
        y = y0 + i * row
        for j, tok in enumerate(SENTENCE):
            fill = OP if j == i else DATA if abs(j - i) <= m else "white"
            stroke = "black" if abs(j - i) <= m else "grey"
            d.box(x0 + j * (bw + gap) + bw / 2, y, bw, 32, tok, fill=fill, stroke=stroke,
                  plain=True, size=SMALL_SIZE + 1, text_color="black" if abs(j - i) <= m
                  else "grey_dark")
        lo, hi = max(0, i - m), min(len(SENTENCE) - 1, i + m)
        d.brace((x0 + lo * (bw + gap) + 2, y - 20), (x0 + hi * (bw + gap) + bw - 2, y - 20),
                depth=7, width=1.2)
        text = "  ".join(f"({w}, {c})" for w, c in centre_pairs)
        d.text(x0 + 6 * (bw + gap) + 16, y, text, anchor="start", size=SMALL_SIZE, plain=True)
    d.text(x0 + 6 * (bw + gap) + 16, y0 - 36, "pairs counted at this position", anchor="start",
           size=SMALL_SIZE, plain=True, color="grey_dark", bold=True)

    # the counts they add up to
    vocab = list(dict.fromkeys(SENTENCE))
    counts = {(w, c): 0 for w in vocab for c in vocab}
    for centre_pairs in pairs:
        for pair in centre_pairs:
            counts[pair] += 1
    total = sum(counts.values())
    cell, mx, my = 52, 150, 530
    d.text(30, my - 58, f"the counts: a word–context matrix ({total} pairs in all; it is "
                        "symmetric, because a window looks both ways)", anchor="start",
           plain=True, bold=True, size=SMALL_SIZE)
    d.text(mx + len(vocab) * cell / 2, my - 30, "context word c", size=SMALL_SIZE,
           color="grey_dark")
    d.text(mx - 70, my + len(vocab) * cell / 4 - 20, "centre", anchor="end",
           size=SMALL_SIZE, plain=True, color="grey_dark")
    d.text(mx - 70, my + len(vocab) * cell / 4, "word w", anchor="end", size=SMALL_SIZE,
           color="grey_dark")
    for j, c in enumerate(vocab):
        d.text(mx + (j + 0.5) * cell, my - 10, c, size=SMALL_SIZE, plain=True)
    cell_h = 30
    for i, w in enumerate(vocab):
        d.text(mx - 10, my + (i + 0.5) * cell_h, w, anchor="end", size=SMALL_SIZE, plain=True)
        for j, c in enumerate(vocab):
            n = counts[(w, c)]
            d.rect(mx + j * cell, my + i * cell_h, cell, cell_h,
                   fill="sky_light" if n else "white", stroke="grey",
                   stroke_width=0.8)
            d.text(mx + (j + 0.5) * cell, my + (i + 0.5) * cell_h, str(n), size=SMALL_SIZE,
                   bold=n > 1, color="black" if n else "grey")
    d.rect(mx, my, len(vocab) * cell, len(vocab) * cell_h, fill="none", stroke="black")
    notes = [f"row “sat”: the {counts[('sat', 'the')]}, cat {counts[('sat', 'cat')]}, "
             f"on {counts[('sat', 'on')]}: the counts lesson 06 prints",
             "(its toy corpus adds a second sentence, “a dog sat down”)",
             "choices the lesson varies: the window (±2, ±5),",
             "sentence boundaries, and distance weighting",
             "(harmonic: a pair d tokens apart counts 1/d)"]
    for k, line in enumerate(notes):
        d.text(mx + len(vocab) * cell + 40, my + 10 + 24 * k + (12 if k >= 2 else 0), line,
               anchor="start", size=SMALL_SIZE, plain=k < 2,
               color="black" if k < 2 else "grey_dark")
    return d


FIGURES = (cooccurrence_window,)

# where each figure belongs in the lesson (a suggestion for the lesson's authors)
PLACES = {
    cooccurrence_window: "section “Idea: a word is known by the company it keeps”",
}
