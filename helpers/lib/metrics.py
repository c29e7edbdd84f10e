"""Comparing word vectors: cosine, nearest neighbours, analogies, correlation with human
similarity ratings, and document vectors.

Every function takes ``vectors`` — a (V, D) float array (some also a sparse matrix) — and
``vocab``: a :class:`helpers.lib.text.Vocab`, anything with ``stoi`` (word -> row) and ``itos``
(row -> word), a {word: row} dict, or a plain list of words. Results are **returned** (floats,
lists, dataclasses); notebooks print them. Unknown words raise
:class:`helpers.lib.text.UnknownWordError` naming the word.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.stats import spearmanr

from helpers.lib.checks import check_whole
from helpers.lib.stats import (  # noqa: F401
    Interval,
    bootstrap_interval,
    paired_spearman_difference,
    spearman,
    spearman_interval,
)
from helpers.lib.text import UnknownWordError, check_token_lists, check_tokens


# ---------------------------------------------------------------- basics
def vocab_maps(vocab) -> tuple[dict, list]:
    """Word-to-row and row-to-word maps of any vocabulary. Taught in lesson 09, section 1.

    (stoi, itos) of a vocabulary: a Vocab (or anything with ``stoi`` and ``itos``), a
    {word: row} dict, or a list of words (row = position)."""
    if hasattr(vocab, "stoi") and hasattr(vocab, "itos"):
        return vocab.stoi, vocab.itos
    check_tokens(vocab, "vocab", "vocab_maps")
    if isinstance(vocab, dict):
        itos = [None] * len(vocab)
        for w, i in vocab.items():
            itos[i] = w
        return vocab, itos
    itos = list(vocab)
    return {w: i for i, w in enumerate(itos)}, itos


def word_index(vocab, word: str) -> int:
    """Row of ``word``; raises UnknownWordError naming it when it has no vector. Taught in lesson 09, section 1."""
    stoi, _ = vocab_maps(vocab)
    if word not in stoi:
        raise UnknownWordError(f"{word!r} is not in the vocabulary of these vectors ({len(stoi)} words)")
    return stoi[word]


def _check_finite(vectors, itos) -> None:
    """Raise naming the first word whose vector holds nan or inf (a diverged training run)."""
    data = vectors.data if sp.issparse(vectors) else vectors
    if np.all(np.isfinite(data)):
        return
    if sp.issparse(vectors):
        row = int(np.searchsorted(vectors.indptr, np.flatnonzero(~np.isfinite(data))[0], side="right") - 1)
    else:
        row = int(np.flatnonzero(~np.all(np.isfinite(vectors), axis=1))[0])
    raise ValueError(f"the vectors hold nan or inf (first in row {row}, the word {itos[row]!r}); "
                     "did their training diverge?")


def _check(vectors, vocab):
    vectors = np.asarray(vectors)
    stoi, itos = vocab_maps(vocab)
    if vectors.ndim != 2 or vectors.shape[0] != len(itos):
        raise ValueError(f"vectors must be (V, D) with V = {len(itos)} (the vocabulary size), got shape {vectors.shape}")
    _check_finite(vectors, itos)
    return vectors, stoi, itos


def normalize_rows(vectors):
    """Rows scaled to unit L2 length; zero rows stay zero. Taught in lesson 09, section 1.

    Dense (V, D) in, dense out: float32 stays float32 (the trained embeddings; half the memory
    and time of float64 in the analogy search), any other dtype becomes float64. A sparse
    matrix (e.g. PPMI rows) comes back as a float64 CSR matrix.
    """
    if sp.issparse(vectors):
        x = sp.csr_matrix(vectors, dtype=np.float64, copy=True)
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        x.data *= np.repeat(scale, np.diff(x.indptr))
        return x
    v = np.asarray(vectors)
    v = v if v.dtype == np.float32 else v.astype(np.float64)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n == 0, 1, n)


def cosine(u: np.ndarray, v: np.ndarray) -> float:
    """cos(u, v) = u.v / (|u| |v|) for two (D,) vectors; 0.0 if either is all zero. Taught in lesson 09, section 1."""
    u, v = np.asarray(u, np.float64), np.asarray(v, np.float64)
    if u.shape != v.shape or u.ndim != 1:
        raise ValueError(f"cosine needs two vectors of the same length, got shapes {u.shape} and {v.shape}")
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(v))):
        raise ValueError("cosine: a vector holds nan or inf")
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    return 0.0 if nu == 0 or nv == 0 else float(u @ v / (nu * nv))


def word_similarity(vectors, vocab, w1: str, w2: str) -> float:
    """Cosine similarity of two words' vectors. Taught in lesson 09, section 2."""
    return cosine(vectors[word_index(vocab, w1)], vectors[word_index(vocab, w2)])


def nearest_neighbours(vectors, vocab, query, k: int = 10, exclude: Sequence[str] = ()) -> list[tuple[str, float]]:
    """The ``k`` words whose rows of ``vectors`` have the highest cosine with ``query``. Taught in lesson 05, section 4.

    ``vectors``: (V, D) dense array or sparse matrix (e.g. PPMI rows); ``query``: a word of
    ``vocab`` or a (D,) vector. Never returned: the query word itself, the words in ``exclude``,
    the vocabulary's special tokens (``<unk>`` ...) and words whose row is all zero (never seen
    in the counts). Returns [(word, cosine)], best first (ties in row order); fewer than ``k``
    when fewer words are left (``k`` a whole number >= 0; 0 gives []). Raises UnknownWordError for a word not in ``vocab``, ValueError
    for a query whose vector is zero or has the wrong length.
    """
    k = check_whole(k, "k", "nearest_neighbours", minimum=0)
    stoi, itos = vocab_maps(vocab)
    check_tokens(exclude, "exclude", "nearest_neighbours")
    if not sp.issparse(vectors):
        vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.shape[0] != len(itos):
        raise ValueError(f"vectors must be (V, D) with V = {len(itos)} (the vocabulary size), got shape {vectors.shape}")
    if sp.issparse(vectors):
        vectors = sp.csr_matrix(vectors)
    _check_finite(vectors, itos)
    unit = normalize_rows(vectors)
    banned = {word_index(vocab, w) for w in exclude}
    banned |= {stoi[s] for s in getattr(vocab, "specials", ()) if s in stoi}
    if isinstance(query, str):
        i = word_index(vocab, query)
        banned.add(i)
        q = vectors[i].toarray().ravel() if sp.issparse(vectors) else np.asarray(vectors[i])
    else:
        q = np.asarray(query, dtype=np.float64)
        if q.shape != (vectors.shape[1],):
            raise ValueError(f"query vector must have shape ({vectors.shape[1]},), got {q.shape}")
        if not np.all(np.isfinite(q)):
            raise ValueError("the query vector holds nan or inf")
    norm = np.linalg.norm(q)
    if norm == 0:
        what = f"{query!r} has" if isinstance(query, str) else "the query vector is"
        raise ValueError(f"{what} an all-zero vector (never seen in the counts?), so its cosine similarity is undefined")
    q = (q / norm).astype(np.float64 if sp.issparse(unit) else unit.dtype)
    if sp.issparse(unit):
        sims = np.asarray(unit @ q).ravel()
        zero = np.diff(unit.indptr) == 0
    else:
        sims = unit @ q
        zero = ~np.any(unit != 0, axis=1)
    sims = np.where(zero, -np.inf, sims)
    sims[list(banned)] = -np.inf
    k = min(k, int(np.isfinite(sims).sum()))
    top = np.argpartition(-sims, k - 1)[:k] if k > 0 else np.array([], int)
    top = top[np.lexsort((top, -sims[top]))]
    return [(itos[j], float(sims[j])) for j in top]


# ---------------------------------------------------------------- analogies
def _analogy_scores(E: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray, method: str) -> np.ndarray:
    """Scores (Q, V) of every candidate d for a : b :: c : d on unit-length rows E."""
    if method == "add":                     # 3CosAdd: cos(d, b - a + c) up to a constant
        return (E[b] - E[a] + E[c]) @ E.T
    if method == "mul":                     # 3CosMul (Levy & Goldberg 2014), cosines shifted to [0, 1]
        eps = 1e-3
        sa, sb, sc = ((E[x] @ E.T + 1) / 2 for x in (a, b, c))
        return sb * sc / (sa + eps)
    raise ValueError(f"method must be 'add' (3CosAdd) or 'mul' (3CosMul), got {method!r}")


def analogy(vectors, vocab, a: str, b: str, c: str, method: str = "add", k: int = 1) -> list[tuple[str, float]]:
    """Solve a : b :: c : ? (``king - man + woman`` is ``analogy(v, voc, 'man', 'king', 'woman')``). Taught in lesson 09, section 3.

    The three query words are excluded from the answers. Returns the top ``k``
    [(word, score)]; the score is 3CosAdd's or 3CosMul's, depending on ``method``.
    """
    k = check_whole(k, "k", "analogy", minimum=0)
    vectors, stoi, itos = _check(vectors, vocab)
    ids = np.array([[word_index(vocab, w)] for w in (a, b, c)])
    scores = _analogy_scores(normalize_rows(vectors), ids[0], ids[1], ids[2], method)[0]
    scores[ids.ravel()] = -np.inf
    top = np.argsort(-scores)[:k]
    return [(itos[i], float(scores[i])) for i in top]


@dataclass
class AnalogyResult:
    """Google-analogy accuracy, by category. Taught in lesson 09, section 4.

    Google-analogy accuracy. per_category: {category: (correct, answered, out_of_vocabulary)};
    questions with any word outside the vocabulary are not answered (counted as OOV)."""

    method: str
    per_category: dict = field(default_factory=dict)

    @property
    def correct(self) -> int:
        return sum(c for c, _, _ in self.per_category.values())

    @property
    def answered(self) -> int:
        return sum(n for _, n, _ in self.per_category.values())

    @property
    def oov(self) -> int:
        return sum(o for _, _, o in self.per_category.values())

    @property
    def accuracy(self) -> float | None:
        """Correct / answered over all categories; None if nothing could be answered."""
        return self.correct / self.answered if self.answered else None

    def category_accuracy(self, category: str) -> float | None:
        c, n, _ = self.per_category[category]
        return c / n if n else None

    def subset_accuracy(self, syntactic: bool) -> float | None:
        """Accuracy over the syntactic ('gram...') or the semantic categories."""
        rows = [v for k, v in self.per_category.items() if k.startswith("gram") == syntactic]
        n = sum(r[1] for r in rows)
        return sum(r[0] for r in rows) / n if n else None

    def __str__(self) -> str:
        if not self.answered:
            return f"analogies ({self.method}): every one of the {self.oov} questions has a word out of vocabulary"
        return (f"analogies ({self.method}): {self.accuracy:.1%} of {self.answered} answered "
                f"({self.oov} skipped as out of vocabulary)")


def analogy_accuracy(vectors, vocab, questions: dict[str, list[tuple[str, str, str, str]]],
                     method: str = "add", batch: int = 2048) -> AnalogyResult:
    """Accuracy on analogy questions (3CosAdd or 3CosMul). Taught in lesson 09, section 4.

    Accuracy on analogy questions {category: [(a, b, c, d)]}: a question is right when
    the best word for a : b :: c : ? (query words excluded) is d. Returns an AnalogyResult."""
    vectors, stoi, itos = _check(vectors, vocab)
    E = normalize_rows(vectors)
    res = AnalogyResult(method)
    for cat, qs in questions.items():
        known = [q for q in qs if all(w in stoi for w in q)]
        ids = np.array([[stoi[w] for w in q] for q in known], dtype=np.int64).reshape(-1, 4)
        correct = int(_answered_right(E, ids, method, batch).sum())
        res.per_category[cat] = (correct, len(known), len(qs) - len(known))
    return res


def _answered_right(E: np.ndarray, ids: np.ndarray, method: str, batch: int) -> np.ndarray:
    """For unit vectors E (V, D) and questions ids (n, 4) = (a, b, c, d): (n,) bool, whether the best
    word for a : b :: c : ? other than a, b and c is d, scored ``batch`` questions at a time."""
    right = np.zeros(len(ids), dtype=bool)
    for s in range(0, len(ids), batch):
        a, b, c, d = ids[s:s + batch].T
        scores = _analogy_scores(E, a, b, c, method)
        rows = np.arange(len(a))
        for x in (a, b, c):
            scores[rows, x] = -np.inf
        right[s:s + len(a)] = scores.argmax(axis=1) == d
    return right


# ---------------------------------------------------------------- similarity
@dataclass
class SimilarityResult:
    """Spearman correlation between cosines and human ratings. Taught in lesson 09, section 2.

    rho is None when no pair could be scored (every pair out of vocabulary); ``oov_pairs``
    lists the skipped pairs.
    """

    name: str
    rho: float | None
    n_pairs: int
    n_oov: int
    oov_pairs: list = field(default_factory=list, repr=False)
    note: str = ""

    @property
    def n_used(self) -> int:
        return self.n_pairs - self.n_oov

    def __str__(self) -> str:
        if self.rho is None:
            return f"{self.name}: {self.note or 'no correlation computed'}"
        return f"{self.name}: Spearman rho = {self.rho:.3f} on {self.n_used} pairs ({self.n_oov} of {self.n_pairs} out of vocabulary)"


def similarity_correlation(vectors, vocab, pairs: Sequence[tuple[str, str, float]], name: str = "similarity") -> SimilarityResult:
    """Spearman correlation between cosines and human similarity ratings. Taught in lesson 09, section 2.

    Spearman rho between cos(w1, w2) and the human score for the in-vocabulary pairs
    of ``pairs`` [(w1, w2, score)]; pairs with an unknown word are counted, not scored."""
    vectors, stoi, _ = _check(vectors, vocab)
    if not pairs:
        raise ValueError(f"{name}: the list of pairs is empty")
    E = normalize_rows(vectors)
    sims, gold, oov = [], [], []
    for w1, w2, score in pairs:
        if w1 in stoi and w2 in stoi:
            sims.append(float(E[stoi[w1]] @ E[stoi[w2]]))
            gold.append(score)
        else:
            oov.append((w1, w2))
    rho, note = None, ""
    if not sims:
        note = f"all {len(pairs)} pairs are out of vocabulary; no correlation computed"
    elif len(sims) < 2 or np.ptp(sims) == 0 or np.ptp(gold) == 0:
        note = f"only {len(sims)} pair(s) in vocabulary, or all their scores equal; Spearman rho is undefined"
    else:
        rho = float(spearmanr(sims, gold).statistic)
    return SimilarityResult(name, rho, len(pairs), len(oov), oov, note)


# ---------------------------------------------------------------- documents
def document_vectors(vectors, vocab, documents: Sequence[Sequence[str]]) -> tuple[np.ndarray, float]:
    """Average of the unit-length vectors of each document's known tokens. Taught in lesson 09, section 5.

    Returns (X (N, D) float32, share of tokens that had no vector). A document with no
    known token gets the zero vector.
    """
    check_token_lists(documents, "documents", "document_vectors", "document")
    vectors, stoi, _ = _check(vectors, vocab)
    E = normalize_rows(vectors)
    X = np.zeros((len(documents), E.shape[1]), np.float32)
    total = unknown = 0
    for i, doc in enumerate(documents):
        ids = [stoi[t] for t in doc if t in stoi]
        total += len(doc)
        unknown += len(doc) - len(ids)
        if ids:
            X[i] = E[ids].mean(axis=0)
    return X, unknown / max(total, 1)


# ---------------------------------------------------------------- uncertainty
def similarity_interval(vectors, vocab, pairs: Sequence[tuple[str, str, float]], n_boot: int = 1000,
                        level: float = 0.95, seed: int = 0) -> Interval:
    """Spearman rho with a bootstrap interval over the rated pairs. Taught in lesson 09, section 2.

    The in-vocabulary pairs of ``pairs`` are resampled (pairs with an unknown word are skipped,
    as in :func:`similarity_correlation`, whose rho is the estimate). Returns an Interval."""
    vectors, stoi, _ = _check(vectors, vocab)
    E = normalize_rows(vectors)
    known = [(stoi[a], stoi[b], s) for a, b, s in pairs if a in stoi and b in stoi]
    if len(known) < 3:
        raise ValueError(f"only {len(known)} of {len(pairs)} pairs are in the vocabulary; need at least 3")
    i, j, gold = (np.array(x) for x in zip(*known, strict=True))
    sims = np.einsum("nd,nd->n", E[i], E[j])
    return spearman_interval(sims, gold.astype(float), n_boot=n_boot, level=level, seed=seed)


def paired_similarity_difference(vectors_a, vectors_b, vocab, pairs: Sequence[tuple[str, str, float]],
                                 n_boot: int = 1000, seed: int = 0) -> Interval:
    """Spearman ρ(a) − ρ(b) on the same rated pairs, with a paired bootstrap interval. Taught in lesson 08, section 3.

    ``vectors_a`` and ``vectors_b`` (V, D) share ``vocab``; the pairs with both words in it are
    used. Each resample draws the pairs once and scores both sets of vectors on them, so the noise
    the two share (which pairs happen to be in the benchmark) cancels — tighter than comparing two
    separate intervals. Returns an :class:`Interval`; it excludes 0 when one set is ahead."""
    stoi, _ = vocab_maps(vocab)
    known = [(stoi[a], stoi[b], s) for a, b, s in pairs if a in stoi and b in stoi]
    if len(known) < 3:
        raise ValueError(f"only {len(known)} of {len(pairs)} pairs are in the vocabulary; need at least 3")
    i, j, gold = (np.array(x) for x in zip(*known, strict=True))

    def cosines(W):
        E = W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-12)
        return np.einsum("nd,nd->n", E[i], E[j])

    return paired_spearman_difference(cosines(vectors_a), cosines(vectors_b), gold.astype(float),
                                      n_boot=n_boot, seed=seed)


def analogy_hits(vectors, vocab, questions: dict[str, list[tuple[str, str, str, str]]],
                 method: str = "add", batch: int = 2048) -> np.ndarray:
    """0/1 correctness of every answerable analogy question. Taught in lesson 09, section 4.

    The answerable questions (all four words known) of every category in order, scored as
    :func:`analogy_accuracy` scores them; returns (n,) float64 of 0/1, whose mean is its
    accuracy — the column to give :func:`bootstrap_interval`."""
    vectors, stoi, _ = _check(vectors, vocab)
    E = normalize_rows(vectors)
    known = [q for qs in questions.values() for q in qs if all(w in stoi for w in q)]
    ids = np.array([[stoi[w] for w in q] for q in known], dtype=np.int64).reshape(-1, 4)
    return _answered_right(E, ids, method, batch).astype(np.float64)


def analogy_rank(vectors, vocab, a: str, b: str, c: str, d: str, method: str = "add") -> int:
    """Rank of the expected answer d for a : b :: c : ? (1 = first). Taught in lesson 09, section 3.

    Scores every word as :func:`analogy` does (the three query words excluded) and returns
    1 + the number of words that score higher than ``d``; e.g. the rank of *queen* for
    man : king :: woman : ?. Unknown words raise UnknownWordError naming the word."""
    vectors, stoi, itos = _check(vectors, vocab)
    ids = [word_index(stoi, w) for w in (a, b, c, d)]
    E = normalize_rows(vectors)
    s = _analogy_scores(E, *(np.array([i]) for i in ids[:3]), method)[0]
    s[ids[:3]] = -np.inf
    return int(np.sum(s > s[ids[3]]) + 1)


# ---------------------------------------------------------------- association tests (bias)
@dataclass
class WeatResult:
    """The result of a WEAT test. Taught in lesson 09, section 9.

    Caliskan et al. (2017): effect size d, one-sided p-value, the statistic, how many partitions
    were scored (all of them when ``exact``), and the words left out (not in the vocabulary)."""

    effect_size: float
    p_value: float
    statistic: float
    n_partitions: int
    exact: bool
    missing: list

    def __str__(self) -> str:
        how = "exact, all" if self.exact else "sampled"
        return (f"WEAT: effect size d = {self.effect_size:.2f}, one-sided p = {self.p_value:.4f} "
                f"({how} {self.n_partitions:,} partitions); missing words: {self.missing or 'none'}")


def weat(vectors, vocab, X: Sequence[str], Y: Sequence[str], A: Sequence[str], B: Sequence[str],
         max_exact: int = 200_000, n_perm: int = 100_000, seed: int = 0) -> WeatResult:
    """Word-embedding association test. Taught in lesson 09, section 9.

    s(w) = mean cos(w, A) - mean cos(w, B); statistic = Σ_X s(x) - Σ_Y s(y); effect size
    d = (mean_X s - mean_Y s) / std_{X∪Y} s (sample std, ddof 1); p = share of the equal-size
    re-partitions (Xi, Yi) of X ∪ Y whose statistic is >= the observed one — all of them when
    there are at most ``max_exact``, else ``n_perm`` seeded random ones (plus the observed one).
    Words missing from the vocabulary are dropped and listed; each set must keep 2 words."""
    vectors, stoi, _ = _check(vectors, vocab)
    missing = [w for w in (*X, *Y, *A, *B) if w not in stoi]
    sets = [[w for w in S if w in stoi] for S in (X, Y, A, B)]
    for name, S in zip("XYAB", sets, strict=True):
        if len(S) < 2:
            raise ValueError(f"WEAT set {name} has {len(S)} word(s) in the vocabulary, need at least 2 (missing: {missing})")
    X, Y, A, B = sets
    E = normalize_rows(np.asarray(vectors, dtype=np.float64))
    T = E[[stoi[w] for w in (*X, *Y)]]
    s = (T @ E[[stoi[w] for w in A]].T).mean(axis=1) - (T @ E[[stoi[w] for w in B]].T).mean(axis=1)
    nx, n = len(X), len(X) + len(Y)
    observed = s[:nx].sum() - s[nx:].sum()
    spread = s.std(ddof=1)
    if not spread > 0:
        raise ValueError("WEAT: every target word of X and Y has the same association s(w) with A and B (their "
                         "standard deviation is 0), so the effect size is undefined (0/0); the vectors of X ∪ Y "
                         "cannot be told apart by A and B")
    d = (s[:nx].mean() - s[nx:].mean()) / spread
    total = s.sum()
    n_all = math.comb(n, nx)
    if n_all <= max_exact:
        sums = np.array([s[list(c)].sum() for c in itertools.combinations(range(n), nx)])
        exact = True
    else:
        rng = np.random.default_rng(seed)
        sums = np.array([s[rng.permutation(n)[:nx]].sum() for _ in range(n_perm)] + [s[:nx].sum()])
        exact = False
    stats = 2 * sums - total                     # Σ_Xi s - Σ_Yi s, with Σ_Yi = total - Σ_Xi
    p = float(np.mean(stats >= observed - 1e-12))
    return WeatResult(float(d), p, float(observed), len(sums), exact, missing)
