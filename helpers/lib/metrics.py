"""Comparing word vectors: neighbours, analogies, human ratings, documents, bias (lesson 09)."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from helpers.lib.checks import check_whole
from helpers.lib.stats import Interval, paired_spearman_difference, spearman, spearman_interval
from helpers.lib.text import UnknownWordError, check_token_lists, check_tokens


# ---------------------------------------------------------------- basics
def vocab_maps(vocab) -> tuple[dict, list]:
    """(word -> row, row -> word) of any vocabulary (lesson 09 §1)."""
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
    """Row of ``word``; UnknownWordError naming it when it has no vector (lesson 09 §1)."""
    stoi, _ = vocab_maps(vocab)
    if word not in stoi:
        raise UnknownWordError(f"{word!r} is not in the vocabulary of these vectors "
                               f"({len(stoi)} words)")
    return stoi[word]


def _check(vectors, vocab):
    """(vectors, stoi, itos), refusing a shape that does not match the vocabulary, nan or inf."""
    if not sp.issparse(vectors):
        vectors = np.asarray(vectors)
    stoi, itos = vocab_maps(vocab)
    if vectors.ndim != 2 or vectors.shape[0] != len(itos):
        raise ValueError(f"vectors must be (V, D) with V = {len(itos)} (the vocabulary size), "
                         f"got shape {vectors.shape}")
    bad = ~np.isfinite(vectors.data if sp.issparse(vectors) else vectors)
    if bad.any():
        row = int((vectors.tocoo().row[bad] if sp.issparse(vectors) else np.nonzero(bad)[0]).min())
        raise ValueError(f"the vectors hold nan or inf (first in row {row}, the word "
                         f"{itos[row]!r}); did their training diverge?")
    return vectors, stoi, itos


def normalize_rows(vectors):
    """Rows scaled to unit length, zero rows kept (lesson 09 §1); float32 stays float32, other
    dense arrays become float64, a sparse matrix float64 CSR."""
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


def nearest_neighbours(vectors, vocab, query, k: int = 10,
                       exclude: Sequence[str] = ()) -> list[tuple[str, float]]:
    """The ``k`` words [(word, cosine)] nearest ``query`` (a word or a (D,) vector), best first,
    never the query word, ``exclude``, special tokens or all-zero rows (lesson 05 §4)."""
    k = check_whole(k, "k", "nearest_neighbours", minimum=0)
    check_tokens(exclude, "exclude", "nearest_neighbours")
    vectors, stoi, itos = _check(sp.csr_matrix(vectors) if sp.issparse(vectors) else vectors, vocab)
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
        raise ValueError(f"{what} an all-zero vector (never seen in the counts?), so its cosine "
                         "similarity is undefined")
    q = (q / norm).astype(np.float64 if sp.issparse(unit) else unit.dtype)
    sims = np.asarray(unit @ q).ravel()
    zero = np.diff(unit.indptr) == 0 if sp.issparse(unit) else ~np.any(unit != 0, axis=1)
    sims = np.where(zero, -np.inf, sims)
    sims[list(banned)] = -np.inf
    k = min(k, int(np.isfinite(sims).sum()))
    top = np.argpartition(-sims, k - 1)[:k] if k > 0 else np.array([], int)
    top = top[np.lexsort((top, -sims[top]))]
    return [(itos[j], float(sims[j])) for j in top]


# ---------------------------------------------------------------- analogies
def analogy_scores(vectors, a, b, c, method: str = "add") -> np.ndarray:
    """Scores (Q, V) of every word d for a : b :: c : d, a, b, c (Q,) rows (lesson 09 §3):
    3CosAdd cos(d, b) - cos(d, a) + cos(d, c); 3CosMul cos'(d, b) cos'(d, c) / (cos'(d, a) +
    0.001), cos' = (cos + 1) / 2; the query words score -inf."""
    E = normalize_rows(vectors)
    a, b, c = (np.atleast_1d(np.asarray(x)) for x in (a, b, c))
    if method == "add":
        scores = (E[b] - E[a] + E[c]) @ E.T
    elif method == "mul":
        sa, sb, sc = ((E[x] @ E.T + 1) / 2 for x in (a, b, c))
        scores = sb * sc / (sa + 1e-3)
    else:
        raise ValueError(f"method must be 'add' (3CosAdd) or 'mul' (3CosMul), got {method!r}")
    rows = np.arange(len(a))
    for x in (a, b, c):
        scores[rows, x] = -np.inf
    return scores


def analogy(vectors, vocab, a: str, b: str, c: str, method: str = "add",
            k: int = 1) -> list[tuple[str, float]]:
    """The ``k`` best answers [(word, score)] to a : b :: c : ?, query words excluded
    (lesson 09 §3): king - man + woman is ``analogy(W, vocab, 'man', 'king', 'woman')``."""
    k = check_whole(k, "k", "analogy", minimum=0)
    vectors, _, itos = _check(vectors, vocab)
    scores = analogy_scores(vectors, *(word_index(vocab, w) for w in (a, b, c)), method)[0]
    return [(itos[i], float(scores[i])) for i in np.argsort(-scores)[:k]]


def analogy_rank(vectors, vocab, a: str, b: str, c: str, d: str, method: str = "add") -> int:
    """Rank (1 = first) of the expected answer ``d`` to a : b :: c : ? (lesson 09 §3)."""
    vectors, _, _ = _check(vectors, vocab)
    ids = [word_index(vocab, w) for w in (a, b, c, d)]
    s = analogy_scores(vectors, *ids[:3], method)[0]
    return int(np.sum(s > s[ids[3]]) + 1)


def analogy_hits(vectors, vocab, questions: dict, method: str | Callable = "add",
                 batch: int = 512) -> np.ndarray:
    """1.0 or 0.0 for every question of {category: [(a, b, c, d)]} with four known words: is d
    the best-scoring word? (lesson 09 §4). ``method``: 'add', 'mul' or a function like
    :func:`analogy_scores`, called on ``batch`` questions at a time."""
    vectors, stoi, _ = _check(vectors, vocab)
    known = [q for qs in questions.values() for q in qs if all(w in stoi for w in q)]
    ids = np.array([[stoi[w] for w in q] for q in known], dtype=np.int64).reshape(-1, 4)
    score = method if callable(method) else lambda V, a, b, c: analogy_scores(V, a, b, c, method)
    right = np.zeros(len(ids))
    for s in range(0, len(ids), batch):
        a, b, c, d = ids[s:s + batch].T
        right[s:s + len(a)] = np.argmax(score(vectors, a, b, c), axis=1) == d
    return right


@dataclass
class AnalogyResult:
    """Analogy accuracy: {category: (correct, answered, out of vocabulary)} (lesson 09 §4)."""

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
        """Correct / answered; None if no question could be answered."""
        return self.correct / self.answered if self.answered else None

    def subset_accuracy(self, syntactic: bool) -> float | None:
        """Accuracy over the syntactic ('gram...') or the semantic categories."""
        rows = [v for k, v in self.per_category.items() if k.startswith("gram") == syntactic]
        n = sum(r[1] for r in rows)
        return sum(r[0] for r in rows) / n if n else None


def analogy_accuracy(vectors, vocab, questions: dict, method: str = "add") -> AnalogyResult:
    """Accuracy on {category: [(a, b, c, d)]}, category by category (lesson 09 §4)."""
    _, stoi, _ = _check(vectors, vocab)
    res = AnalogyResult(method)
    for cat, qs in questions.items():
        hits = analogy_hits(vectors, vocab, {cat: qs}, method)
        known = sum(all(w in stoi for w in q) for q in qs)
        res.per_category[cat] = (int(hits.sum()), known, len(qs) - known)
    return res


# ---------------------------------------------------------------- similarity
def pair_cosines(vectors, vocab, pairs: Sequence[tuple]) -> dict:
    """{(w1, w2): cosine} of the pairs [(w1, w2, ...)] with both words known (lesson 09 §2)."""
    vectors, stoi, _ = _check(vectors, vocab)
    known = [(w1, w2) for w1, w2, *_ in pairs if w1 in stoi and w2 in stoi]
    if not known:
        return {}
    E = normalize_rows(vectors)
    i, j = (np.array([stoi[w] for w in ws]) for ws in zip(*known, strict=True))
    return dict(zip(known, np.einsum("nd,nd->n", E[i], E[j]).tolist(), strict=True))


@dataclass
class SimilarityResult:
    """Spearman's rho (None below two scored pairs) and the pairs not scored (lesson 09 §2)."""

    name: str
    rho: float | None
    n_pairs: int
    n_oov: int

    @property
    def n_used(self) -> int:
        return self.n_pairs - self.n_oov


def _known_pairs(vectors, vocab, pairs, at_least: int = 3) -> np.ndarray:
    """(cosines (n,), human scores (n,)) of the pairs with both words known (``at_least`` n)."""
    sims = pair_cosines(vectors, vocab, pairs)
    known = [(sims[(a, b)], s) for a, b, s in pairs if (a, b) in sims]
    if len(known) < at_least:
        raise ValueError(f"only {len(known)} of {len(pairs)} pairs are in the vocabulary; "
                         f"need at least {at_least}")
    return np.array(known, dtype=np.float64).reshape(-1, 2).T


def similarity_correlation(vectors, vocab, pairs: Sequence[tuple[str, str, float]],
                           name: str = "similarity") -> SimilarityResult:
    """Spearman's rho between the cosines and the human scores of [(w1, w2, score)]; the pairs
    with an unknown word are counted, not scored (lesson 09 §2)."""
    if not pairs:
        raise ValueError(f"{name}: the list of pairs is empty")
    x, y = _known_pairs(vectors, vocab, pairs, at_least=0)
    rho = spearman(x, y) if len(x) >= 2 else math.nan          # nan: a constant sample
    return SimilarityResult(name, None if math.isnan(rho) else rho, len(pairs), len(pairs) - len(x))


def similarity_interval(vectors, vocab, pairs: Sequence[tuple[str, str, float]],
                        n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> Interval:
    """Spearman's rho of cosines with human scores, and its bootstrap interval (lesson 09 §2)."""
    sims, gold = _known_pairs(vectors, vocab, pairs)
    return spearman_interval(sims, gold, n_boot=n_boot, level=level, seed=seed)


def paired_similarity_difference(vectors_a, vectors_b, vocab, pairs, n_boot: int = 1000,
                                 seed: int = 0) -> Interval:
    """rho(a) - rho(b) on the same rated pairs, with a paired bootstrap interval (lesson 08 §3)."""
    sims_a, gold = _known_pairs(vectors_a, vocab, pairs)
    sims_b, _ = _known_pairs(vectors_b, vocab, pairs)
    return paired_spearman_difference(sims_a, sims_b, gold, n_boot=n_boot, seed=seed)


# ---------------------------------------------------------------- documents
def document_vectors(vectors, vocab, documents: Sequence[Sequence[str]]
                     ) -> tuple[np.ndarray, float]:
    """Each document's mean unit word vector (N, D) float32, and the share of its tokens that
    had no vector (lesson 09 §5); a document with no known token gets zeros."""
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


# ---------------------------------------------------------------- association tests (bias)
@dataclass
class WeatResult:
    """A WEAT's effect size d, one-sided p-value, statistic, partitions scored (all when
    ``exact``) and the words missing from the vocabulary (lesson 09 §9)."""

    effect_size: float
    p_value: float
    statistic: float
    n_partitions: int
    exact: bool
    missing: list


def weat(vectors, vocab, X: Sequence[str], Y: Sequence[str], A: Sequence[str], B: Sequence[str],
         max_exact: int = 200_000, n_perm: int = 100_000, seed: int = 0) -> WeatResult:
    """Word-embedding association test, Caliskan et al. 2017 (lesson 09 §9): s(w) = mean cos(w, A)
    - mean cos(w, B); d = (mean_X s - mean_Y s) / std_{X∪Y} s; p = the share of the equal splits
    of X ∪ Y (all, or ``n_perm`` random ones) whose sum_Xi s - sum_Yi s reaches the observed."""
    vectors, stoi, _ = _check(vectors, vocab)
    missing = [w for w in (*X, *Y, *A, *B) if w not in stoi]
    sets = [[w for w in S if w in stoi] for S in (X, Y, A, B)]
    for name, S in zip("XYAB", sets, strict=True):
        if len(S) < 2:
            raise ValueError(f"WEAT set {name} has {len(S)} word(s) in the vocabulary, need at "
                             f"least 2 (missing: {missing})")
    X, Y, A, B = sets
    E = normalize_rows(np.asarray(vectors, dtype=np.float64))
    T = E[[stoi[w] for w in (*X, *Y)]]
    s = (T @ E[[stoi[w] for w in A]].T).mean(axis=1) - (T @ E[[stoi[w] for w in B]].T).mean(axis=1)
    nx, n = len(X), len(X) + len(Y)
    spread = s.std(ddof=1)
    if not spread > 0:
        raise ValueError("WEAT: every target word of X and Y has the same association s(w), so "
                         "the effect size is 0/0")
    observed = s[:nx].sum() - s[nx:].sum()
    exact = math.comb(n, nx) <= max_exact
    if exact:
        sums = np.array([s[list(c)].sum() for c in itertools.combinations(range(n), nx)])
    else:
        rng = np.random.default_rng(seed)
        sums = np.array([s[rng.permutation(n)[:nx]].sum() for _ in range(n_perm)] + [s[:nx].sum()])
    p = float(np.mean(2 * sums - s.sum() >= observed - 1e-12))    # sum_Yi s = total - sum_Xi s
    return WeatResult(float((s[:nx].mean() - s[nx:].mean()) / spread), p, float(observed),
                      len(sums), exact, missing)
