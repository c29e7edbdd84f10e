"""Co-occurrence matrices and PMI (lesson 06); a negative token id is a hole, never counted."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from helpers.lib.checks import check_log_base, check_whole

WEIGHTINGS = ("uniform", "harmonic")


def flatten_sentences(sentences_ids, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """A list of 1-D id arrays (or one array) as one id stream and each token's sentence
    number: two (n,) int64 arrays (lesson 06 §4)."""
    vocab_size = check_whole(vocab_size, "vocab_size", "flatten_sentences", minimum=1)
    one_array = isinstance(sentences_ids, np.ndarray) and sentences_ids.ndim == 1 \
        and sentences_ids.dtype != object
    parts = [sentences_ids] if one_array else [np.asarray(s) for s in sentences_ids]
    if sum(p.size for p in parts) == 0:
        raise ValueError("empty corpus: there are no tokens to count")
    for i, p in enumerate(parts):
        if p.ndim != 1:
            raise ValueError(f"sentence {i} has shape {p.shape}; a sentence is a 1-D array of ids")
        if p.size and not np.issubdtype(p.dtype, np.integer):
            raise TypeError(f"sentence {i} has dtype {p.dtype}; token ids must be integers")
    ids = np.concatenate(parts).astype(np.int64, copy=False)
    if ids.max() >= vocab_size:
        raise ValueError(f"token id {int(ids.max())} is outside the vocabulary [0, {vocab_size})")
    sentence = np.repeat(np.arange(len(parts)), [p.size for p in parts])
    return ids, sentence


def cooccurrence_matrix(sentences_ids, vocab_size: int, window: int = 5,
                        weighting: str = "uniform", cross_sentences: bool = False,
                        symmetric: bool = True) -> sp.csr_matrix:
    """Word-context counts within ±``window`` tokens, a (V, V) csr_matrix (lesson 06 §4):
    ``weighting`` "uniform" (1 a pair) or "harmonic" (1/d for a pair d apart); ``cross_sentences``
    lets a window reach into the next sentence; ``symmetric=False`` counts left -> right only."""
    if not isinstance(window, (int, np.integer)) or isinstance(window, bool) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    if weighting not in WEIGHTINGS:
        raise ValueError(f"unknown weighting {weighting!r}; choose one of {WEIGHTINGS}")
    ids, sentence = flatten_sentences(sentences_ids, vocab_size)
    counts = sp.csr_matrix((vocab_size, vocab_size), dtype=np.float64)
    for d in range(1, min(window, ids.size - 1) + 1):
        left, right = ids[:-d], ids[d:]
        keep = (left >= 0) & (right >= 0)
        if not cross_sentences:
            keep &= sentence[:-d] == sentence[d:]
        weight = 1.0 if weighting == "uniform" else 1.0 / d
        pairs = (np.full(int(keep.sum()), weight), (left[keep], right[keep]))
        counts = counts + sp.csr_matrix(pairs, shape=(vocab_size, vocab_size))
    if symmetric:
        counts = counts + counts.T
    counts = sp.csr_matrix(counts)
    counts.sort_indices()
    return counts


def _marginals(c, row_sums, col_sums, total, alpha: float):
    """Natural logs of P(w), P_alpha(c) and N."""
    r = np.asarray(c.sum(axis=1) if row_sums is None else row_sums, np.float64).ravel()
    k = np.asarray(c.sum(axis=0) if col_sums is None else col_sums, np.float64).ravel()
    if r.shape != (c.shape[0],) or k.shape != (c.shape[1],):
        raise ValueError(f"row_sums/col_sums have shapes {r.shape}/{k.shape}; expected "
                         f"({c.shape[0]},)/({c.shape[1]},)")
    if not (np.all(np.isfinite(r) & (r >= 0)) and np.all(np.isfinite(k) & (k >= 0))):
        raise ValueError("row_sums and col_sums must be finite and non-negative counts")
    n = float(c.sum() if total is None else total)
    if not (np.isfinite(n) and n > 0):
        raise ValueError(f"the total count must be finite and above 0, got {n}")
    with np.errstate(divide="ignore"):
        ka = k ** alpha                                 # smoothing: P_alpha(c) ∝ count(c)^alpha
        log_pc = np.log(ka) - np.log(ka.sum() if alpha != 1.0 else n)
        return np.log(r) - np.log(n), log_pc, np.log(n)


def pmi(counts, base: float = 2.0, alpha: float = 1.0, k: float = 1.0, row_sums=None,
        col_sums=None, total=None):
    """PMI^k with a smoothed context distribution, log P(w,c)^k / (P(w) P_alpha(c)) (lesson 06 §2):
    counts (W, C), ``alpha`` = 1 for none; ``row_sums``, ``col_sums``, ``total`` for part of a
    bigger table. Dense in, dense out (-inf where the count is 0); sparse in, csr out."""
    sparse = sp.issparse(counts)
    c = sp.csr_matrix(counts, dtype=np.float64, copy=True) if sparse else np.asarray(counts, float)
    values = c.data if sparse else c
    if c.ndim != 2 or np.any(values < 0) or not np.all(np.isfinite(values)):
        raise ValueError("counts must be a 2-D matrix of finite, non-negative numbers")
    if alpha <= 0 or k <= 0:
        raise ValueError(f"alpha and k must be > 0, got alpha={alpha}, k={k}")
    log_pw, log_pc, log_n = _marginals(c, row_sums, col_sums, total, alpha)
    scale = 1.0 / np.log(check_log_base(base, "pmi"))
    if sparse:
        c.eliminate_zeros()
        rows = np.repeat(np.arange(c.shape[0]), np.diff(c.indptr))
        c.data = (k * (np.log(c.data) - log_n) - log_pw[rows] - log_pc[c.indices]) * scale
        return c
    out = np.full(c.shape, -np.inf)
    i, j = np.nonzero(c > 0)
    out[i, j] = (k * (np.log(c[i, j]) - log_n) - log_pw[i] - log_pc[j]) * scale
    return out


def ppmi(counts, alpha: float = 0.75, k: float = 1.0, base: float = 2.0) -> sp.csr_matrix:
    """Positive PMI, max(PMI, 0), as a csr_matrix holding only positive values (lesson 06 §3).
    ``alpha`` smooths the context distribution (pass 1.0 for plain PPMI)."""
    out = pmi(sp.csr_matrix(counts), base=base, alpha=alpha, k=k)
    out.data[out.data < 0] = 0.0
    out.eliminate_zeros()
    return out


def npmi(counts, row_sums=None, col_sums=None, total=None):
    """Normalised PMI, PMI(w,c) / -log P(w,c), in [-1, 1]: -1 for a pair never seen, 0 for
    independence, 1 for words that only occur together (lesson 06 §3). Dense or sparse."""
    p = pmi(counts, base=np.e, row_sums=row_sums, col_sums=col_sums, total=total)
    n = float(counts.sum() if total is None else total)
    if sp.issparse(p):
        c = sp.csr_matrix(counts, dtype=np.float64, copy=True)
        c.eliminate_zeros()
        h = np.log(n) - np.log(c.data)                       # -log P(w,c) >= 0
        p.data = np.divide(p.data, h, out=np.ones_like(p.data), where=h > 0)
        return p
    c = np.asarray(counts, np.float64)
    out = np.full(c.shape, -1.0)
    seen = c > 0
    h = np.log(n) - np.log(c[seen])
    out[seen] = np.divide(p[seen], h, out=np.ones_like(h), where=h > 0)
    return out


def top_pmi_pairs(counts: sp.spmatrix, itos: Sequence[str], n: int = 20, min_count: float = 1,
                  alpha: float = 1.0, k: float = 1.0, measure: str = "pmi") -> list[tuple]:
    """The ``n`` pairs (w ≠ c) seen ``min_count`` times with the highest PMI (or NPMI):
    [(w, c, score, count)], best first, ties to the more frequent (lesson 06 §6)."""
    c = sp.csr_matrix(counts, dtype=np.float64)
    c.eliminate_zeros()
    if len(itos) != c.shape[0]:
        raise ValueError(f"itos has {len(itos)} words but counts has {c.shape[0]} rows")
    if measure not in ("pmi", "npmi"):
        raise ValueError(f"measure must be 'pmi' or 'npmi', got {measure!r}")
    scores = (pmi(c, alpha=alpha, k=k) if measure == "pmi" else npmi(c)).tocoo()
    cc = c.tocoo()                                   # the same entries in the same order as scores
    keep = (cc.data >= min_count) & (cc.row != cc.col)
    if (abs(c - c.T) > 1e-9).nnz == 0:
        keep &= cc.row < cc.col
    idx = np.flatnonzero(keep)
    score = np.round(scores.data[idx], 9)
    order = np.lexsort((cc.col[idx], cc.row[idx], -cc.data[idx], -score))[:n]
    return [(itos[cc.row[i]], itos[cc.col[i]], float(scores.data[i]), float(cc.data[i]))
            for i in idx[order]]
