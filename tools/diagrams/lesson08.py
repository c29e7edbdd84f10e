"""Diagrams of lesson 08 (GloVe and fastText).

The lessons' notation. fastText: the word wrapped in boundary markers, ``<where>``, cut into
character n-grams for n = 3..6, each hashed (FNV-1a, 32 bit) into one of a fixed number of
buckets; v_w = (1/|G_w|) Σ_{g∈G_w} z_g. GloVe: J = Σ_{X_{ij}>0} f(X_{ij})
(w_i^⊤ w̃_j + b_i + b̃_j − log X_{ij})^2 with f(x) = (x/x_max)^α below x_max, 1 above;
x_max = 100, α = 0.75.
"""

from helpers.lib.fasttext import char_ngrams, fnv1a_32
from tools.diagrams.style import NEUTRAL, OP, PARAM, STATE
from tools.diagrams.svg import SMALL_SIZE, Drawing, fmt

LESSON = 8

BUCKETS = 2_000_000                     # fastText's default number of buckets
_N_FILL = {3: "sky_light", 4: "orange_light", 5: "green_light", 6: "purple_light"}
_N_MARK = {3: "blue", 4: "orange", 5: "green", 6: "purple"}


def fasttext_ngrams() -> Drawing:
    """fastText: the word ``<where>`` as the mean of its character n-gram vectors (n = 3..6),
    each n-gram hashed into one of 2,000,000 buckets of the n-gram table, plus the word's own
    vector when it is in the vocabulary."""
    word = "where"
    grams = char_ngrams(word)
    d = Drawing(
        1000, 640,
        title="fastText: a word as the mean of its character n-gram vectors, hashed into buckets",
        desc=("The word 'where' is wrapped in boundary markers, '<where>', and cut into its 14 "
              "character n-grams for n = 3 to 6 (5 trigrams: <wh, whe, her, ere, re>). Each "
              "n-gram is hashed with 32-bit FNV-1a into one of 2,000,000 buckets, a row of the "
              "n-gram table; the marks on the table show where the 14 rows fall. The word "
              "vector is the mean of those rows and of the word's own vector."))
    d.text(30, 26, "where", size=20, bold=True, plain=True, anchor="start")
    d.arrow((112, 26), (192, 26), label="add < and >", label_dy=-14, label_color="black")
    d.text(200, 26, "<where>", size=20, bold=True, plain=True, anchor="start")
    d.text(322, 26, "→ every character n-gram, n = 3 … 6 (repeats kept; here none)",
           anchor="start", size=SMALL_SIZE)

    # the n-gram chips, one row per n
    chip_w, chip_h, x0, y0, row = 74, 30, 90, 92, 76
    table_x, table_y, table_w, table_h = 760, 80, 80, 400
    positions = {}
    for n in range(3, 7):
        of_n = [g for g in grams if len(g) == n]
        y = y0 + (n - 3) * row
        d.text(x0 - 16, y, f"n = {n}", anchor="end", size=SMALL_SIZE)
        for k, g in enumerate(of_n):
            cx = x0 + chip_w / 2 + k * (chip_w + 10)
            d.box(cx, y, chip_w, chip_h, g, fill=_N_FILL[n], plain=True, size=SMALL_SIZE + 1)
            bucket = fnv1a_32(g) % BUCKETS
            d.text(cx, y + chip_h / 2 + 11, f"#{bucket:,}", size=11, plain=True,
                   color="grey_dark")
            positions[g] = (bucket, n)

    # the n-gram table with a mark where each n-gram's bucket falls
    d.rect(table_x, table_y, table_w, table_h, fill="white", stroke="black")
    for g, (bucket, n) in positions.items():
        ty = table_y + bucket / BUCKETS * table_h
        d.rect(table_x, ty - 2, table_w, 4, fill=_N_MARK[n], stroke="none", stroke_width=0)
        if n == 3:                            # name the trigrams' rows
            d.line((table_x - 26, ty), (table_x, ty), color=_N_MARK[n], width=1)
            d.text(table_x - 30, ty, g, anchor="end", size=11, plain=True)
    d.text(table_x + table_w / 2, table_y - 30, "n-gram table Z", bold=True, plain=True)
    d.text(table_x + table_w / 2, table_y - 12, f"({BUCKETS:,} buckets, d)", size=12,
           color="grey_dark")
    d.text(table_x + table_w + 10, table_y + 8, "bucket 0", anchor="start", size=11, plain=True,
           color="grey_dark")
    d.text(table_x + table_w + 10, table_y + table_h - 8, f"bucket {BUCKETS - 1:,}",
           anchor="start", size=11, plain=True, color="grey_dark")
    d.text(table_x + table_w + 10, table_y + table_h / 2 - 10, "each mark: the row",
           anchor="start", size=11, plain=True, color="grey_dark")
    d.text(table_x + table_w + 10, table_y + table_h / 2 + 6, "of one n-gram",
           anchor="start", size=11, plain=True, color="grey_dark")

    # hashing rule and the mean
    d.text(30, 412, f"bucket(g) = FNV-1\\a_{{32}}(g) mod {BUCKETS:,}", anchor="start",
           size=SMALL_SIZE)
    d.text(30, 434, "(too many distinct n-grams for one row each; two n-grams may share a "
                    "bucket)", anchor="start", size=12, plain=True, color="grey_dark")
    d.text(30, 462, "the markers matter: “her” inside “where” is not the word “<her>”, and "
                    "“<wh” is a prefix", anchor="start", size=12, plain=True, color="grey_dark")
    word_row = d.box(420, 520, None, 34, "<where>: the word's own row", fill=STATE,
                     plain=True, size=SMALL_SIZE)
    d.text(420, 548, "(only if “where” is in the vocabulary)", size=11, plain=True,
           color="grey_dark")
    mean = d.box(720, 540, 64, 36, "mean", fill=OP, plain=True)
    d.arrow((table_x + table_w / 2, table_y + table_h + 2), mean.top)
    d.arrow(word_row.right, mean.left)
    v = d.box(900, 540, 84, 36, "v_{where}", fill=PARAM)
    d.arrow(mean.right, v.left)
    d.text(30, 600, f"v_w = (1/|G_w|) Σ_{{g∈G_w}} z_g  over the {len(grams)} n-grams "
                    "(and the word itself): unseen and misspelled words still get a vector",
           anchor="start", size=SMALL_SIZE)
    return d


def glove_weight(x: float, x_max: float = 100.0, alpha: float = 0.75) -> float:
    """GloVe's weighting f(x): (x/x_max)^alpha below x_max, 1 from there on."""
    return (x / x_max) ** alpha if x < x_max else 1.0


def glove_objective() -> Drawing:
    """GloVe: each non-zero cell of the log co-occurrence matrix is approximated by
    w_i^⊤ w̃_j + b_i + b̃_j, weighted by f(X_ij) (weighted least squares); the curve of f."""
    u, n, dim = 26, 8, 4
    i_hi, j_hi = 2, 5
    d = Drawing(
        1000, 540,
        title="GloVe: weighted least squares on the log co-occurrence counts",
        desc=("Left: the co-occurrence matrix X of lesson 06 as log X, words by context words; "
              "one cell (i, j) is highlighted and the cells with X_ij = 0 are greyed out: they "
              "do not enter the loss. Middle: the cell is approximated by the dot product of "
              "row i of the word vectors W and row j of the context vectors W-tilde, plus the "
              "biases b_i and b-tilde_j. Right: the weighting function f(x) rises as "
              "(x / x_max) to the 0.75 up to x_max = 100 and stays at 1 beyond."))
    d.text(30, 24, "GloVe fits word vectors so that their dot products reproduce the log "
                   "co-occurrence counts", anchor="start", bold=True, plain=True)
    # the log co-occurrence matrix; zero counts are skipped
    mx, my = 80, 100
    for i in range(n):
        for j in range(n):
            zero = (3 * i + 5 * j) % 7 == 0 and (i, j) != (i_hi, j_hi)
            fill = "orange_light" if (i, j) == (i_hi, j_hi) else NEUTRAL if zero else "white"
            d.rect(mx + j * u, my + i * u, u, u, fill=fill, stroke="grey", stroke_width=0.6)
            if zero:
                d.text(mx + (j + 0.5) * u, my + (i + 0.5) * u, "0", size=11, color="grey")
    d.rect(mx, my, n * u, n * u, fill="none", stroke="black")
    d.text(mx + n * u / 2, my - 34, "log X", bold=True)
    d.text(mx + n * u / 2, my - 14, "(|V|, |V|), from lesson 06", size=12, color="grey_dark")
    d.text(mx - 8, my + (i_hi + 0.5) * u, "i", anchor="end", size=SMALL_SIZE)
    d.text(mx + (j_hi + 0.5) * u, my + n * u + 12, "j", size=SMALL_SIZE)
    d.text(mx + n * u / 2, my + n * u + 34, "grey: X_{*ij*} = 0, left out of the sum",
           size=12, color="grey_dark")
    d.text(mx + n * u / 2, my + n * u + 52, "(the cost grows with the non-zero pairs)",
           size=12, plain=True, color="grey_dark")

    # the model of one cell
    ex = 400
    d.text(ex + 150, my - 34, "log X_{*ij*}  ≈  w_i^⊤ w̃_j + b_i + b̃_j", bold=True)
    wy = my + 10

    def table(x, name, shape, row, fill, cols):
        for r in range(n):
            d.rect(x, wy + r * u * 0.75, cols * u * 0.75, u * 0.75,
                   fill=fill if r == row else "white", stroke="grey", stroke_width=0.6)
        d.rect(x, wy, cols * u * 0.75, n * u * 0.75, fill="none", stroke="black")
        d.text(x + cols * u * 0.375, wy + n * u * 0.75 + 14, name, size=SMALL_SIZE)
        d.text(x + cols * u * 0.375, wy + n * u * 0.75 + 32, shape, size=11, color="grey_dark")

    table(ex, "W", "(|V|, d)", i_hi, PARAM, dim)
    table(ex + 110, "W̃", "(|V|, d)", j_hi, PARAM, dim)
    table(ex + 220, "b", "(|V|)", i_hi, STATE, 1)
    table(ex + 280, "b̃", "(|V|)", j_hi, STATE, 1)
    d.text(ex + dim * u * 0.375, wy - 12, "row i: w_i", size=12)
    d.text(ex + 110 + dim * u * 0.375, wy - 12, "row j: w̃_j", size=12)
    d.arrow(
        (mx + (j_hi + 1) * u + 4, my + (i_hi + 0.5) * u),
        (ex - 6, wy + (i_hi + 0.5) * u * 0.75),
        color="grey_dark",
        head=8,
    )

    # the weighting f(x)
    px, py, pw, ph = 760, 120, 200, 150
    x_max, x_hi = 100.0, 150.0
    d.line((px, py + ph), (px + pw + 10, py + ph))
    d.line((px, py + ph), (px, py - 10))
    pts = [(px + pw * x / x_hi, py + ph - ph * glove_weight(x)) for x in
           [k * 1.5 for k in range(101)]]
    d.polyline(pts, color="blue", width=2.5)
    d.line((px + pw * x_max / x_hi, py + ph), (px + pw * x_max / x_hi, py), color="grey",
           width=1, dashed=True)
    d.text(px + pw * x_max / x_hi, py + ph + 14, "x_{max} = 100", size=12)
    d.text(px - 6, py, "1", anchor="end", size=12)
    d.text(px - 6, py + ph, "0", anchor="end", size=12)
    d.text(px + pw + 14, py + ph, "X_{*ij*}", anchor="start", size=12)
    d.text(px + pw / 2, py - 34, "f(x) = (x/x_{max})^α, α = 0.75", size=SMALL_SIZE)
    d.text(px + pw / 2, py - 16, "(1 from x_{max} on)", size=12, color="grey_dark")
    for x in (1, 10):
        d.text(px + pw / 2, py + ph + 36 + 18 * (x == 10),
               f"f({x}) = {fmt(glove_weight(x), 3)}", size=12, color="grey_dark")

    notes = [
        "J = Σ_{i,j: X_{*ij*} > 0}  f(X_{*ij*}) (w_i^⊤ w̃_j + b_i + b̃_j − log X_{*ij*})^2",
        "• f keeps rare, noisy pairs (seen once or twice) from counting much, and caps very "
        "frequent pairs (“of the”) at 1",
        "• every word has two vectors, w (as a word) and w̃ (as a context); the paper keeps "
        "w + w̃",
        "• counting, like lessons 05–06, then fitting by gradient descent, like word2vec "
        "(lesson 07): the bridge between the two",
    ]
    d.text(30, 420, notes[0], anchor="start", bold=True)
    for k, line in enumerate(notes[1:]):
        d.text(30, 456 + 24 * k, line, anchor="start", size=SMALL_SIZE)
    return d


FIGURES = (fasttext_ngrams, glove_objective)

# where each figure belongs in the lesson (a suggestion for the lesson's authors)
PLACES = {
    fasttext_ngrams: "the fastText section",
    glove_objective: "the GloVe section",
}
