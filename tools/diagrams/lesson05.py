"""Diagrams of lesson 05 (TF-IDF and SVD).

The lesson's notation: the document–term matrix X ∈ ℝ^{|D|×|W|} (rows = documents, columns =
words); its transpose, the word–document matrix A ∈ ℝ^{|W|×|D|}, factorised A = U Σ V^⊤ and
truncated to A_k = U_k Σ_k V_k^⊤; rows of U_k Σ_k are word vectors, rows of V_k Σ_k document
vectors.
"""

from tools.diagrams.style import NEUTRAL, PARAM, STATE
from tools.diagrams.svg import SMALL_SIZE, Drawing

LESSON = 5

_WORD, _DOC = "orange", "blue"


def svd_blocks() -> Drawing:
    """The document–term matrix X (|D| × |W|), its transpose the word–document matrix A, and
    the truncated SVD A ≈ U_k Σ_k V_k^⊤ drawn to scale with shapes: which factor holds the word
    vectors and which the document vectors."""
    u = 16
    D, W, k, m = 8, 12, 3, 8                          # documents, words, kept rank, full rank
    d = Drawing(
        1000, 670,
        title="The document-term matrix and the truncated SVD of the word-document matrix, "
              "with shapes",
        desc=("Top: the document-term matrix X with 8 documents as rows and 12 words as columns; "
              "one row (a document) and one column (a word) are highlighted. Bottom: its "
              "transpose A, 12 words by 8 documents, is approximated by U_k (12 by k), Sigma_k "
              "(k by k, the k largest singular values on the diagonal) and V_k transposed (k by "
              "8), with k = 3; the discarded columns of U and rows of V transposed are greyed. "
              "Rows of U_k Sigma_k are word vectors, rows of V_k Sigma_k document vectors."))
    # ---- 1: the document–term matrix ----------------------------------------------------------
    d.text(30, 24, "1 · the document–term matrix X: read by rows (documents) or by columns "
                   "(words)", anchor="start", bold=True)
    x0, y0 = 140, 70
    doc_row, word_col = 2, 4
    for i in range(D):
        for j in range(W):
            fill = ("blue_light" if i == doc_row else "orange_light" if j == word_col
                    else "white")
            d.rect(x0 + j * u, y0 + i * u, u, u, fill=fill, stroke="grey", stroke_width=0.6)
    d.rect(x0, y0, W * u, D * u, fill="none", stroke="black")
    d.text(x0 + W * u / 2, y0 - 14, "words →", size=SMALL_SIZE, plain=True)
    d.text(x0 - 10, y0 + D * u / 2 - 10, "documents ↓", anchor="end", size=SMALL_SIZE,
           plain=True)
    d.text(x0 - 10, y0 + D * u / 2 + 12, "X: (|D|, |W|)", anchor="end", size=SMALL_SIZE,
           color="grey_dark")
    nx = x0 + W * u + 40
    d.arrow((nx, y0 + (doc_row + 0.5) * u), (x0 + W * u + 4, y0 + (doc_row + 0.5) * u),
            color=_DOC, head=8)
    d.text(nx + 6, y0 + (doc_row + 0.5) * u, "a row: one document as the counts of its words "
           "(the vector space model)", anchor="start", size=SMALL_SIZE)
    d.arrow_path([(nx, y0 + D * u + 22), (x0 + (word_col + 0.5) * u, y0 + D * u + 22),
                  (x0 + (word_col + 0.5) * u, y0 + D * u + 2)], color=_WORD, head=8)
    d.text(nx + 6, y0 + D * u + 22, "a column: one word as the documents it occurs in "
           "(its context)", anchor="start", size=SMALL_SIZE)
    d.text(nx + 6, y0 + 5 * u, "cells: counts, or TF-IDF weights", anchor="start",
           size=SMALL_SIZE, plain=True, color="grey_dark")

    # ---- 2: transpose and truncated SVD --------------------------------------------------------
    d.text(30, 260, "2 · the word–document matrix A = X^⊤ and its truncated SVD  "
                    "A ≈ A_k = U_k Σ_k V_k^⊤  (here k = 3)", anchor="start", bold=True)
    y1 = 320
    ax = 140
    A = d.matrix(ax, y1, W, D, u, "A", shape="(|W|, |D|)", fill="white", grid=True)
    d.text(ax - 10, y1 + W * u / 2, "words ↓", anchor="end", size=SMALL_SIZE, plain=True)
    d.text(ax + D * u / 2, y1 - 14, "documents →", size=SMALL_SIZE, plain=True)
    d.text(A.x + A.w + 26, A.cy, "≈", size=22, bold=True)
    # U: k kept columns (coloured) and the dropped ones (grey)
    ux = A.x + A.w + 52
    d.matrix(ux, y1, W, k, u, "U_k", shape="(|W|, k)", fill=PARAM, grid=False)
    d.matrix(ux + k * u, y1, W, m - k, u, "", fill=NEUTRAL)
    d.text(ux + k * u + (m - k) * u / 2, y1 + W * u / 2, "dropped", size=11, plain=True,
           color="grey_dark")
    # Σ: k × k diagonal
    sx = ux + m * u + 26
    S = d.matrix(sx, y1, k, k, u * 1.4, "", shape="(k, k)", fill="white")
    for i in range(k):
        d.text(sx + (i + 0.5) * u * 1.4, y1 + (i + 0.5) * u * 1.4, f"σ_{i + 1}", size=12)
    d.text(S.cx, y1 - 14, "Σ_k", size=SMALL_SIZE)
    # V_k^⊤: k kept rows, the rest dropped
    vx = sx + S.w + 26
    d.matrix(vx, y1, k, D, u, "V_k^⊤", shape="(k, |D|)", shape_side="above", fill=STATE)
    d.matrix(vx, y1 + k * u, m - k, D, u, "", fill=NEUTRAL)
    d.text(vx + D * u / 2, y1 + k * u + (m - k) * u / 2, "dropped", size=11, plain=True,
           color="grey_dark")

    # which factor gives what
    d.arrow((ux + k * u / 2, y1 + W * u + 44), (ux + k * u / 2, y1 + W * u + 26), color=_WORD,
            head=8)
    d.text(ux + k * u / 2 - 8, y1 + W * u + 56, "word vectors: the rows of U_k Σ_k "
           "(or of U_k), k numbers per word", anchor="start", size=SMALL_SIZE, bold=True)
    tx = vx + D * u + 16
    d.arrow((tx, y1 + k * u / 2), (vx + D * u + 3, y1 + k * u / 2), color=_DOC, head=8)
    d.text(tx + 6, y1 + k * u / 2 - 10, "document vectors:", anchor="start", size=SMALL_SIZE,
           bold=True)
    d.text(tx + 6, y1 + k * u / 2 + 10, "the rows of V_k Σ_k", anchor="start", size=SMALL_SIZE,
           bold=True)
    d.text(tx + 6, y1 + k * u / 2 + 30, "(the columns of Σ_k V_k^⊤)", anchor="start",
           size=SMALL_SIZE)

    notes = [
        "• U_k and V_k have orthonormal columns; σ_1 ≥ σ_2 ≥ … are the singular values. "
        "A_k is the best rank-k approximation of A:",
        "   ‖A − A_k‖_F^2 = Σ_{i>k} σ_i^2,  energy kept = Σ_{i≤k} σ_i^2 / Σ_i σ_i^2",
        "• drawn to scale for 12 words, 8 documents, k = 3; section 4 keeps k = 100 of a matrix "
        "of about 16,000 words × 6,000 pseudo-documents",
    ]
    for i, line in enumerate(notes):
        d.text(30, 596 + 22 * i, line, anchor="start", size=SMALL_SIZE)
    return d


FIGURES = (svd_blocks,)

# where each figure belongs in the lesson (a suggestion for the lesson's authors)
PLACES = {
    svd_blocks: "section “SVD: the few directions that matter”",
}
