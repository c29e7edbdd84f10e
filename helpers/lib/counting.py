"""Counting words in context: co-occurrence matrices and pointwise mutual information.

Lesson 06 builds word vectors from counts. Everything here works on SciPy sparse matrices
and is vectorised over the corpus: the co-occurrence counter loops over the *offsets*
1..window (a handful of iterations), never over tokens.

Conventions
-----------
- Token ids are integers in ``[0, vocab_size)``; a negative id marks a *hole* (a word that
  was filtered out): it keeps its position in the text but is never counted.
- ``counts[w, c]`` is how often context word ``c`` was seen within the window of centre
  word ``w``. Rows are words, columns are contexts.
- Logarithms are base 2 by default (the source notes use ``log2``); pass ``base=np.e``
  for natural-log PMI. Every PMI variant is the same function up to a positive factor
  ``1 / ln(base)``, so the base never changes a ranking.
- A pair that was never seen has ``PMI = log 0 = -inf``. Dense outputs store the ``-inf``;
  sparse outputs store only observed pairs (an absent entry of a sparse PMI matrix means
  "never seen", i.e. -inf, not 0). PPMI maps -inf to 0, so sparse PPMI is exact.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from helpers.lib.checks import check_log_base, check_whole
from helpers.lib.text import check_tokens

__all__ = [
    "flatten_sentences", "cooccurrence_matrix", "cooccurrence_python",
    "pmi", "ppmi", "npmi", "pmi_table", "top_pmi_pairs", "cooccurrence_countvectorizer",
    "ppmi_python",
]

WEIGHTINGS = ("uniform", "harmonic")


# ----------------------------------------------------------------------------- counting
def flatten_sentences(sentences_ids, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate sentences into one id stream plus a sentence label per token. Taught in lesson 06, section 4.

    ``sentences_ids``: a list of 1-D integer arrays (one per sentence) or one 1-D array
    (a single running text). Returns ``(ids, sentence)``: two (n_tokens,) int64 arrays.
    Raises ValueError for an empty corpus or ids outside ``[0, vocab_size)``
    (negative ids are allowed: they are holes).
    """
    vocab_size = check_whole(vocab_size, "vocab_size", "flatten_sentences", minimum=1)
    if isinstance(sentences_ids, np.ndarray) and sentences_ids.ndim == 1 and sentences_ids.dtype != object:
        parts = [sentences_ids]
    else:
        parts = [np.asarray(s) for s in sentences_ids]
    if not parts or sum(p.size for p in parts) == 0:
        raise ValueError("empty corpus: there are no tokens to count")
    for i, p in enumerate(parts):
        if p.ndim != 1:
            raise ValueError(f"sentence {i} has shape {p.shape}; each sentence must be a 1-D array of ids")
        if p.size and not np.issubdtype(p.dtype, np.integer):
            raise TypeError(f"flatten_sentences: sentence {i} has dtype {p.dtype}; token ids must be integers "
                            "(encode words with Vocab.encode first; a float id would be truncated)")
    ids = np.concatenate(parts).astype(np.int64, copy=False)
    if ids.size and ids.max() >= vocab_size:
        bad = int(ids.max())
        raise ValueError(f"token id {bad} is outside the vocabulary [0, {vocab_size})")
    lengths = np.fromiter((p.size for p in parts), dtype=np.int64, count=len(parts))
    sentence = np.repeat(np.arange(len(parts), dtype=np.int64), lengths)
    return ids, sentence


def cooccurrence_matrix(sentences_ids, vocab_size: int, window: int = 5,
                        weighting: str = "uniform", cross_sentences: bool = False,
                        symmetric: bool = True) -> sp.csr_matrix:
    """Word-context co-occurrence counts within ``±window`` tokens. Taught in lesson 06, section 4.

    Parameters
    ----------
    sentences_ids : list of (n_i,) int arrays, or one (n,) int array
    vocab_size : V, the number of rows and columns
    window : the largest distance counted (>= 1)
    weighting : "uniform" (every pair counts 1) or "harmonic" (a pair at distance d counts 1/d,
        as in GloVe)
    cross_sentences : if False (default) a window stops at a sentence boundary
    symmetric : if True (default) both directions are counted, so ``counts`` is symmetric and
        ``counts[w, c]`` = weight of ``c`` seen within ``window`` left *or* right of ``w``.
        If False only ordered pairs (left word -> right word) are counted; with ``window=1``
        that is the bigram count matrix.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (V, V), float64, with sorted indices and no duplicates.

    The hot path is one vectorised step per offset d = 1..window: all pairs (t, t+d) are
    formed by slicing, filtered (same sentence, no holes) and handed to SciPy, which sums
    duplicates while converting COO -> CSR; the per-offset matrices are added up (sparse
    additions keep the peak memory at one offset's pairs).
    """
    if not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    if weighting not in WEIGHTINGS:
        raise ValueError(f"unknown weighting {weighting!r}; choose one of {WEIGHTINGS}")
    ids, sentence = flatten_sentences(sentences_ids, vocab_size)
    index_dtype = np.int32 if vocab_size < 2**31 else np.int64
    ids = ids.astype(index_dtype)
    counts = sp.csr_matrix((vocab_size, vocab_size), dtype=np.float64)
    for d in range(1, min(window, ids.size - 1) + 1):
        left, right = ids[:-d], ids[d:]  # every pair of tokens d apart, at once
        keep = (left >= 0) & (right >= 0)
        if not cross_sentences:
            keep &= sentence[:-d] == sentence[d:]
        weight = 1.0 if weighting == "uniform" else 1.0 / d
        # COO -> CSR sums duplicate (row, col) entries: that sum is the counting.
        counts = counts + sp.csr_matrix((np.full(int(keep.sum()), weight), (left[keep], right[keep])),
                                        shape=(vocab_size, vocab_size))
    if symmetric:
        counts = counts + counts.T
    counts = sp.csr_matrix(counts)
    counts.sum_duplicates()
    counts.sort_indices()
    return counts


def cooccurrence_python(sentences_ids, vocab_size: int, window: int = 5,
                        weighting: str = "uniform", cross_sentences: bool = False,
                        symmetric: bool = True) -> sp.csr_matrix:
    """The same counts as :func:`cooccurrence_matrix`, with a plain Python loop over tokens. Taught in lesson 06, section 4.

    A readable reference (and the slow baseline of the benchmark); same arguments, output and errors.
    """
    if not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    if weighting not in WEIGHTINGS:
        raise ValueError(f"unknown weighting {weighting!r}; choose one of {WEIGHTINGS}")
    flatten_sentences(sentences_ids, vocab_size)   # the same checks: an empty corpus, ids out of range
    if isinstance(sentences_ids, np.ndarray) and sentences_ids.ndim == 1 and sentences_ids.dtype != object:
        sentences = [sentences_ids.tolist()]
    else:
        sentences = [list(map(int, s)) for s in sentences_ids]
    if cross_sentences:
        sentences = [[w for s in sentences for w in s]]
    table: dict[tuple[int, int], float] = defaultdict(float)
    for sent in sentences:
        n = len(sent)
        for i, w in enumerate(sent):
            if w < 0:
                continue
            for d in range(1, window + 1):
                if i + d >= n:
                    break
                c = sent[i + d]
                if c < 0:
                    continue
                x = 1.0 if weighting == "uniform" else 1.0 / d
                table[w, c] += x
                if symmetric:
                    table[c, w] += x
    if not table:
        return sp.csr_matrix((vocab_size, vocab_size), dtype=np.float64)
    keys = np.array(list(table.keys()), dtype=np.int64)
    vals = np.fromiter(table.values(), dtype=np.float64, count=len(table))
    m = sp.csr_matrix((vals, (keys[:, 0], keys[:, 1])), shape=(vocab_size, vocab_size))
    m.sort_indices()
    return m


# ----------------------------------------------------------------------------- PMI
def _check_counts(counts):
    if sp.issparse(counts):
        c = sp.csr_matrix(counts, dtype=np.float64)
        data = c.data
    else:
        c = np.asarray(counts, dtype=np.float64)
        if c.ndim != 2:
            raise ValueError(f"counts must be a 2-D matrix, got shape {c.shape}")
        data = c
    if data.size and (np.any(data < 0) or not np.all(np.isfinite(data))):
        raise ValueError("counts must be finite and non-negative")
    return c


def _marginals(c, row_sums, col_sums, total, alpha: float):
    """Log-probabilities (natural log) of words and (smoothed) contexts, and log N."""
    n_rows, n_cols = c.shape
    r = np.asarray(c.sum(axis=1)).ravel() if row_sums is None else np.asarray(row_sums, np.float64).ravel()
    k = np.asarray(c.sum(axis=0)).ravel() if col_sums is None else np.asarray(col_sums, np.float64).ravel()
    if r.shape != (n_rows,) or k.shape != (n_cols,):
        raise ValueError(f"row_sums/col_sums have shapes {r.shape}/{k.shape}; expected ({n_rows},)/({n_cols},)")
    for name, m in (("row_sums", r), ("col_sums", k)):
        if not np.all(np.isfinite(m) & (m >= 0)):
            raise ValueError(f"{name} must be finite and non-negative counts")
    n = float(c.sum()) if total is None else float(total)
    if not np.isfinite(n):
        raise ValueError(f"the total count must be finite, got {n}")
    if n <= 0:
        raise ValueError("the co-occurrence matrix is empty (total count is 0)")
    with np.errstate(divide="ignore"):
        log_pw = np.log(r) - np.log(n)
        if alpha == 1.0:
            log_pc = np.log(k) - np.log(n)
        else:
            # context-distribution smoothing: P_alpha(c) = count(c)^alpha / sum_c' count(c')^alpha
            ka = np.power(k, alpha)
            log_pc = np.log(ka) - np.log(ka.sum())
    return log_pw, log_pc, np.log(n)


def pmi(counts, base: float = 2.0, alpha: float = 1.0, k: float = 1.0,
        row_sums=None, col_sums=None, total=None):
    """Pointwise mutual information ``log P(w,c)^k / (P(w) P_alpha(c))``. Taught in lesson 06, section 2.

    Parameters
    ----------
    counts : (W, C) dense array or sparse matrix of non-negative co-occurrence counts
    base : logarithm base (2 as in the notes)
    alpha : context-distribution smoothing exponent (1 = none; 0.75 is the usual cure for
        the low-frequency bias: rare contexts get a larger probability, so a smaller PMI)
    k : the PMI^k variant, ``k log P(w,c) - log P(w) - log P(c)``; k > 1 lowers the score of
        rare pairs more than that of frequent ones
    row_sums, col_sums, total : marginal counts and N when ``counts`` is only part of a bigger
        table (as in the notes' example); default: sums of ``counts`` itself

    Returns
    -------
    dense input -> (W, C) float64 ndarray with ``-inf`` where the count is 0;
    sparse input -> csr_matrix holding PMI for the observed (non-zero) pairs only (an absent
    entry means -inf; a stored value can be exactly 0).
    No NaN and no runtime warnings are produced. A word or context whose marginal is 0
    gets -inf (it co-occurs with nothing).
    """
    c = _check_counts(counts)
    if alpha <= 0 or k <= 0:
        raise ValueError(f"alpha and k must be > 0, got alpha={alpha}, k={k}")
    log_pw, log_pc, log_n = _marginals(c, row_sums, col_sums, total, alpha)
    scale = 1.0 / np.log(check_log_base(base, "pmi"))
    if sp.issparse(c):
        c = c.copy()
        c.eliminate_zeros()
        rows = np.repeat(np.arange(c.shape[0]), np.diff(c.indptr))
        c.data = (k * (np.log(c.data) - log_n) - log_pw[rows] - log_pc[c.indices]) * scale
        return c
    out = np.full(c.shape, -np.inf)
    nz = c > 0
    ii, jj = np.nonzero(nz)
    out[ii, jj] = (k * (np.log(c[ii, jj]) - log_n) - log_pw[ii] - log_pc[jj]) * scale
    return out


def ppmi(counts, alpha: float = 0.75, k: float = 1.0, min_count: float = 0,
         base: float = 2.0, row_sums=None, col_sums=None, total=None) -> sp.csr_matrix:
    """Positive PMI, ``max(PMI, 0)``, as a sparse matrix. Taught in lesson 06, section 3.

    ``counts``: (W, C) sparse or dense co-occurrence counts. ``alpha`` smooths the context
    distribution (0.75 by default, as in word2vec and Levy et al. 2015; pass 1.0 for plain
    PPMI); ``k`` is the PMI^k exponent; pairs seen fewer than ``min_count`` times get 0
    (marginals are still computed from all counts). Returns a csr_matrix (W, C) float64
    with only positive entries stored.
    """
    c = _check_counts(counts)
    c = sp.csr_matrix(c)
    if row_sums is None:
        row_sums = np.asarray(c.sum(axis=1)).ravel()
    if col_sums is None:
        col_sums = np.asarray(c.sum(axis=0)).ravel()
    if total is None:
        total = float(c.sum())
    if min_count > 0:
        c = c.copy()
        c.data[c.data < min_count] = 0
    out = pmi(c, base=base, alpha=alpha, k=k, row_sums=row_sums, col_sums=col_sums, total=total)
    out.data[out.data < 0] = 0.0
    out.eliminate_zeros()
    return out


def npmi(counts, base: float = 2.0, row_sums=None, col_sums=None, total=None):
    """Normalised PMI ``PMI(w,c) / -log P(w,c)``, in [-1, 1]. Taught in lesson 06, section 3.

    -1 for a pair never seen (the limit as P(w,c) -> 0), 0 for independence, +1 when the two
    words only ever occur together. Dense input -> dense ndarray (with -1 at zero counts);
    sparse input -> csr_matrix over observed pairs (absent = -1). The value does not depend
    on the log base; ``base`` is accepted for symmetry with :func:`pmi`.
    """
    check_log_base(base, "npmi")
    c = _check_counts(counts)
    n = float(c.sum()) if total is None else float(total)
    p = pmi(c, base=np.e, row_sums=row_sums, col_sums=col_sums, total=total)
    if sp.issparse(p):
        cc = c.copy() if sp.issparse(c) else sp.csr_matrix(c)
        cc.eliminate_zeros()
        h = np.log(n) - np.log(cc.data)  # -log P(w,c) >= 0
        p.data = np.divide(p.data, h, out=np.ones_like(p.data), where=h > 0)
        return p
    out = np.full(c.shape, -1.0)
    nz = c > 0
    h = np.log(n) - np.log(c[nz])
    out[nz] = np.divide(p[nz], h, out=np.ones_like(h), where=h > 0)
    return out


def pmi_table(counts, rows: Sequence[str], cols: Sequence[str], row_sums, col_sums,
              total: float, base: float = 2.0) -> dict[tuple[str, str], float]:
    """PMI of every cell of a labelled partial count table (the notes' worked example). Taught in lesson 06, section 2.

    ``counts`` (len(rows), len(cols)); ``row_sums``/``col_sums`` the words' marginal counts in
    the whole matrix; ``total`` = N. Returns {(row_word, col_word): pmi} with -inf for zeros.
    """
    check_tokens(rows, "rows", "pmi_table")
    check_tokens(cols, "cols", "pmi_table")
    values = pmi(np.asarray(counts, float), base=base, row_sums=row_sums,
                 col_sums=col_sums, total=total)
    return {(r, c): float(values[i, j]) for i, r in enumerate(rows) for j, c in enumerate(cols)}


def top_pmi_pairs(counts: sp.spmatrix, itos: Sequence[str], n: int = 20, min_count: float = 1,
                  base: float = 2.0, alpha: float = 1.0, k: float = 1.0,
                  exclude_self: bool = True, measure: str = "pmi") -> list[tuple[str, str, float, float]]:
    """The ``n`` observed pairs with the highest PMI among pairs seen >= ``min_count`` times. Taught in lesson 06, section 6.

    ``measure="npmi"`` ranks by normalised PMI instead (``alpha`` and ``k`` then unused).
    ``counts``: (V, V) sparse counts (e.g. bigrams: ``cooccurrence_matrix(..., window=1,
    symmetric=False)``); ``itos``: id -> word. Marginals use all counts. For a symmetric
    matrix each unordered pair is listed once. Returns ``[(word, context, pmi, count)]``,
    best first (ties broken by count, then alphabetically).
    """
    c = sp.csr_matrix(counts, dtype=np.float64)
    if len(itos) != c.shape[0]:
        raise ValueError(f"itos has {len(itos)} words but counts has {c.shape[0]} rows")
    if measure not in ("pmi", "npmi"):
        raise ValueError(f"measure must be 'pmi' or 'npmi', got {measure!r}")
    p = (pmi(c, base=base, alpha=alpha, k=k) if measure == "pmi" else npmi(c)).tocoo()
    cc = c.copy()
    cc.eliminate_zeros()
    cc = cc.tocoo()  # same order of entries as p (both come from the same csr structure)
    keep = cc.data >= min_count
    if exclude_self:
        keep &= cc.row != cc.col
    if (abs(c - c.T) > 1e-9).nnz == 0:  # symmetric: list each unordered pair once
        keep &= cc.row < cc.col
    idx = np.flatnonzero(keep)
    if idx.size == 0:
        return []
    order = np.lexsort((cc.col[idx], cc.row[idx], -cc.data[idx], -p.data[idx]))[:n]
    sel = idx[order]
    return [(itos[int(cc.row[i])], itos[int(cc.col[i])], float(p.data[i]), float(cc.data[i])) for i in sel]


def cooccurrence_countvectorizer(sentences_ids, vocab_size: int, window: int = 5) -> sp.csr_matrix:
    """Uniform, symmetric, within-sentence counts through scikit-learn's ``CountVectorizer``. Taught in lesson 06, section 8.

    A common "library" route, kept as a reference for tests and the benchmark: every token
    becomes a small document made of its context words; CountVectorizer turns those into a
    (n_tokens, V) context-count matrix M; with E the (n_tokens, V) one-hot matrix of the
    centre words, ``E^T M`` is the co-occurrence matrix. Same output as
    ``cooccurrence_matrix(sentences_ids, vocab_size, window)``.
    """
    ids, sentence = flatten_sentences(sentences_ids, vocab_size)
    bounds = np.flatnonzero(np.diff(sentence)) + 1
    centres, contexts = [], []
    for sent in np.split(ids, bounds):
        toks = sent.tolist()
        for i, w in enumerate(toks):
            if w < 0:
                continue
            ctx = [str(c) for c in toks[max(0, i - window):i] + toks[i + 1:i + 1 + window] if c >= 0]
            centres.append(w)
            contexts.append(ctx)
    vec = CountVectorizer(analyzer=lambda ctx: ctx, vocabulary={str(i): i for i in range(vocab_size)})
    m = vec.fit_transform(contexts).astype(np.float64)
    e = sp.csr_matrix((np.ones(len(centres)), (np.arange(len(centres)), centres)),
                      shape=(len(centres), vocab_size))
    out = (e.T @ m).tocsr()
    out.sort_indices()
    return out


def ppmi_python(table: dict, base: float = 2.0) -> dict:
    """Plain-Python PPMI (alpha = 1) of a {(w, c): count} dict -> {(w, c): ppmi > 0}. Taught in lesson 06, section 8.
    The readable reference of the benchmark's loop route."""
    check_log_base(base, "ppmi_python")
    row, col, n = defaultdict(float), defaultdict(float), 0.0
    for (w, c), x in table.items():
        if not (isinstance(x, (int, float, np.integer, np.floating)) and math.isfinite(x) and x > 0):
            raise ValueError(f"ppmi_python: every count must be a finite number > 0, got {x!r} for the pair {(w, c)!r}")
        row[w] += x
        col[c] += x
        n += x
    out = {}
    for (w, c), x in table.items():
        value = math.log(x * n / (row[w] * col[c]), base)
        if value > 0:
            out[w, c] = value
    return out
