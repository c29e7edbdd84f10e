"""Documents as contexts: document-term matrices, TF-IDF, truncated SVD (LSA), document retrieval.

Lesson 05. Matrices are SciPy sparse; documents are sequences of tokens (lists of str).
Rows of a document-term matrix are documents, columns are words; its transpose is the
word-document matrix whose SVD gives LSA word vectors.

Logarithms are natural by default (as in scikit-learn); lesson 05's worked example uses
``base=2``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds
from sklearn.utils.extmath import randomized_svd

from helpers.lib.checks import check_log_base, check_whole
from helpers.lib.metrics import normalize_rows
from helpers.lib.text import UnknownWordError, Vocab, check_token_lists, check_tokens

__all__ = [
    "document_term_matrix", "term_frequency", "inverse_document_frequency", "tfidf",
    "tfidf_matrix", "truncated_svd", "svd_vectors", "energy_kept", "lsa_word_vectors",
    "DocumentIndex", "group_sentences",
]

TF_SCHEMES = ("raw", "log1p", "sublinear", "binary")
SVD_WEIGHTINGS = ("US", "U", "sqrtS")


# ----------------------------------------------------------------------------- matrices
def document_term_matrix(documents: Sequence[Sequence[str]], vocab: Vocab,
                         skip_unknown: bool = True) -> sp.csr_matrix:
    """Raw counts ``tf[d, w]``: (n_documents, len(vocab)) csr_matrix, float64. Taught in lesson 05, section 1.

    ``documents``: one sequence of tokens per document. Tokens not in ``vocab`` are skipped
    (as scikit-learn's vectorisers do; the ``<unk>`` column stays empty) unless
    ``skip_unknown=False``, which raises UnknownWordError naming the first unknown token.
    An empty list of documents raises ValueError. Counting is vectorised: one id array for
    the whole corpus, duplicates summed by SciPy.
    """
    check_token_lists(documents, "documents", "document_term_matrix", "document")
    if len(documents) == 0:
        raise ValueError("empty corpus: no documents")
    get, unk = vocab.stoi.get, -1
    ids, lengths = [], []
    for doc in documents:
        if skip_unknown:
            d = [i for i in (get(t, unk) for t in doc) if i >= 0]
        else:
            d = [vocab.index(t) for t in doc]
        ids.extend(d)
        lengths.append(len(d))
    ids = np.asarray(ids, dtype=np.int64)
    rows = np.repeat(np.arange(len(documents)), lengths)
    m = sp.csr_matrix((np.ones(ids.size), (rows, ids)), shape=(len(documents), len(vocab)))
    m.sum_duplicates()
    m.sort_indices()
    return m


def term_frequency(tf: sp.spmatrix, scheme: str = "raw") -> sp.csr_matrix:
    """Term-frequency schemes applied to raw counts. Taught in lesson 05, section 2.

    Transform raw counts: "raw" tf, "log1p" log(1+tf), "sublinear" 1+ln(tf)
    (scikit-learn's ``sublinear_tf``), "binary" 0/1. Zero stays zero. Same shape, float64."""
    if scheme not in TF_SCHEMES:
        raise ValueError(f"unknown tf scheme {scheme!r}; choose one of {TF_SCHEMES}")
    out = sp.csr_matrix(tf, dtype=np.float64, copy=True)
    if scheme == "log1p":
        out.data = np.log1p(out.data)
    elif scheme == "sublinear":
        out.data = 1.0 + np.log(out.data)
    elif scheme == "binary":
        out.data = (out.data > 0).astype(np.float64)
    return out


def inverse_document_frequency(df, n_documents: int, smooth: bool = False,
                               base: float = np.e) -> np.ndarray:
    """IDF per word, (V,) float64. Taught in lesson 05, section 2.

    ``smooth=False``: ``log(|D| / df)`` (lesson 05's worked example; a word in no document gets +inf, so it is
    better removed); ``smooth=True``: ``log((1+|D|)/(1+df)) + 1`` (scikit-learn's default).
    """
    df = np.asarray(df, dtype=np.float64)
    if n_documents < 1:
        raise ValueError("n_documents must be >= 1")
    if not np.all(np.isfinite(df)) or np.any(df < 0) or np.any(df > n_documents):
        raise ValueError(f"document frequencies must lie in [0, {n_documents}]")
    lg = np.log(check_log_base(base, "inverse_document_frequency"))
    if smooth:
        return np.log((1.0 + n_documents) / (1.0 + df)) / lg + 1.0
    with np.errstate(divide="ignore"):
        return np.log(n_documents / df) / lg


def tfidf(tf: sp.spmatrix, tf_scheme: str = "raw", smooth: bool = True, norm: str | None = "l2",
          base: float = np.e, n_documents: int | None = None, df=None):
    """TF-IDF of a (|D|, |W|) count matrix. Taught in lesson 05, section 2.

    Returns ``(weights csr (|D|, |W|), idf (|W|,))``.

    ``norm="l2"`` scales each document row to unit length (scikit-learn's default); None keeps
    raw products. ``df``/``n_documents`` may be given when ``tf`` is only a few rows of a
    bigger corpus (lesson 05's worked example); by default they are measured from ``tf``.
    """
    tf = sp.csr_matrix(tf, dtype=np.float64)
    if n_documents is None:
        n_documents = tf.shape[0]
    if df is None:
        df = np.bincount(tf.indices[tf.data > 0], minlength=tf.shape[1])
    idf = inverse_document_frequency(df, n_documents, smooth=smooth, base=base)
    w = term_frequency(tf, tf_scheme)
    w.data *= idf[w.indices]
    if norm == "l2":
        w = normalize_rows(w)
    elif norm is not None:
        raise ValueError(f"norm must be 'l2' or None, got {norm!r}")
    return w, idf


def tfidf_matrix(documents: Sequence[Sequence[str]], vocab: Vocab, tf_scheme: str = "raw",
                 smooth: bool = True, norm: str | None = "l2", base: float = np.e):
    """TF-IDF of tokenised documents, scikit-learn's defaults. Taught in lesson 05, section 2.

    Tokenised documents -> ``(tfidf csr (D, V), idf (V,))``. Defaults = scikit-learn's
    ``TfidfVectorizer()`` given the same vocabulary and tokens."""
    return tfidf(document_term_matrix(documents, vocab), tf_scheme, smooth, norm, base)


# ----------------------------------------------------------------------------- SVD
def truncated_svd(matrix, k: int, seed: int = 0, solver: str = "randomized", n_iter: int = 5):
    """Top-``k`` singular triplets of a sparse or dense (m, n) matrix. Taught in lesson 05, section 3.

    Returns ``(U (m, k), S (k,), Vt (k, n))``, float64, singular values in decreasing order.
    ``solver``: "randomized" (default; scikit-learn's randomized SVD with ``n_iter`` power
    iterations, seeded: several times faster than ARPACK here, approximate in the tail of
    the spectrum when it is flat), "arpack" (SciPy's ``svds``, Lanczos, accurate to machine
    precision; its start vector is drawn from ``seed``) or "dense"
    (full ``numpy.linalg.svd`` then truncation: exact, O(m n min(m, n)) time, dense memory).
    Signs are fixed so that the largest-magnitude entry of each column of U is positive, so
    the same input and seed always give the same vectors.
    """
    k = check_whole(k, "k", "truncated_svd")
    m, n = matrix.shape
    if not 1 <= k <= min(m, n):
        raise ValueError(f"k must be in [1, {min(m, n)}] for a {m}x{n} matrix, got {k}")
    values = matrix.data if sp.issparse(matrix) else np.asarray(matrix)
    if not np.all(np.isfinite(values)):
        raise ValueError("truncated_svd: the matrix holds nan or inf; its SVD is undefined")
    if solver not in ("arpack", "randomized", "dense"):
        raise ValueError(f"unknown solver {solver!r}; choose 'arpack', 'randomized' or 'dense'")
    if not np.any(values):
        # an all-zero matrix: every singular value is 0 and any orthonormal vectors will do; ARPACK
        # cannot start from A v = 0, so every solver returns what the dense one does (identity columns)
        return np.eye(m, k), np.zeros(k), np.eye(k, n)
    if solver == "arpack" and k >= min(m, n):  # svds needs k < min(m, n)
        solver = "dense"
    if solver == "dense":
        a = matrix.toarray() if sp.issparse(matrix) else np.asarray(matrix, np.float64)
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        u, s, vt = u[:, :k], s[:k], vt[:k]
    elif solver == "arpack":
        a = sp.csr_matrix(matrix, dtype=np.float64) if sp.issparse(matrix) else np.asarray(matrix, np.float64)
        v0 = np.random.default_rng(seed).uniform(-1, 1, size=min(m, n))
        u, s, vt = svds(a, k=k, v0=v0, solver="arpack")
        order = np.argsort(-s)
        u, s, vt = u[:, order], s[order], vt[order]
    else:
        u, s, vt = randomized_svd(matrix, k, n_iter=n_iter, random_state=seed, flip_sign=False)
    signs = np.sign(u[np.abs(u).argmax(axis=0), np.arange(u.shape[1])])
    signs[signs == 0] = 1.0
    return u * signs, s, vt * signs[:, None]


def _zero_rows(matrix) -> np.ndarray:
    if sp.issparse(matrix):
        m = sp.csr_matrix(matrix)
        return np.asarray(abs(m).sum(axis=1)).ravel() == 0
    return ~np.any(np.asarray(matrix) != 0, axis=1)


def svd_vectors(matrix, k: int, weighting: str = "US", seed: int = 0,
                solver: str = "randomized") -> np.ndarray:
    """Word vectors from the rows of a (V, n) word-context matrix: (V, k) float64. Taught in lesson 05, section 4.

    ``weighting``: "US" -> ``U_k Σ_k`` (LSA), "U" -> ``U_k`` (Levy et al. find this often
    better for similarity), "sqrtS" -> ``U_k Σ_k^{1/2}`` (the symmetric split).
    Rows that are all zero in ``matrix`` (words never seen) are exactly zero in the output.
    ``solver`` and ``seed``: see :func:`truncated_svd`. Raises ValueError when ``k`` exceeds the
    matrix's numerical rank r and the weighting is "U" or "sqrtS": the singular vectors beyond
    r belong to a zero singular value, so they are arbitrary directions that "U" would keep at
    full length ("US" scales them to zero, and is allowed).
    """
    if weighting not in SVD_WEIGHTINGS:
        raise ValueError(f"unknown weighting {weighting!r}; choose one of {SVD_WEIGHTINGS}")
    u, s, _ = truncated_svd(matrix, k, seed=seed, solver=solver)
    if s[0] == 0:
        raise ValueError("svd_vectors: the matrix is all zeros; it has no singular vectors to use")
    rank = int(np.sum(s > s[0] * max(matrix.shape) * np.finfo(np.float64).eps))
    if rank < k and weighting != "US":
        raise ValueError(f"svd_vectors: k={k} exceeds the matrix's numerical rank {rank}; the last {k - rank} "
                         f"columns of U are arbitrary directions (their singular values are 0). Use k <= {rank}, "
                         "or weighting='US'")
    power = {"US": 1.0, "U": 0.0, "sqrtS": 0.5}[weighting]
    vectors = u * s ** power
    vectors[_zero_rows(matrix)] = 0.0
    return vectors


def energy_kept(singular_values, frobenius_sq: float) -> tuple[np.ndarray, np.ndarray]:
    """Energy kept and reconstruction error of a truncated SVD, for every k. Taught in lesson 05, section 3.

    For k = 1..len(s): fraction of ``‖A‖_F²`` kept by the top-k singular values, and the
    relative reconstruction error ``‖A − A_k‖_F / ‖A‖_F = sqrt(1 − energy)`` (Eckart-Young).
    ``frobenius_sq`` = ``‖A‖_F²`` = sum of all squared singular values. Two (k,) arrays."""
    if not (frobenius_sq > 0 and np.isfinite(frobenius_sq)):
        raise ValueError(f"energy_kept: frobenius_sq must be positive and finite (the matrix's squared norm), "
                         f"got {frobenius_sq}")
    s2 = np.asarray(singular_values, np.float64) ** 2
    if s2.size == 0 or not np.all(np.isfinite(s2)):
        raise ValueError("energy_kept: singular_values must be a non-empty array of finite numbers")
    energy = np.cumsum(s2) / float(frobenius_sq)
    return energy, np.sqrt(np.clip(1.0 - energy, 0.0, None))


def group_sentences(sentences: Sequence[Sequence[str]], per_doc: int) -> list[list[str]]:
    """Join every ``per_doc`` consecutive sentences into one pseudo-document. Taught in lesson 05, section 4."""
    check_token_lists(sentences, "sentences", "group_sentences")
    if per_doc < 1:
        raise ValueError(f"per_doc must be >= 1, got {per_doc}")
    return [[t for s in sentences[i:i + per_doc] for t in s] for i in range(0, len(sentences), per_doc)]


def lsa_word_vectors(sentences: Sequence[Sequence[str]], vocab: Vocab, k: int = 100,
                     sentences_per_doc: int = 10, tf_scheme: str = "log1p", smooth: bool = True,
                     weighting: str = "US", seed: int = 0) -> np.ndarray:
    """LSA word vectors: TF-IDF word-document matrix -> truncated SVD -> (len(vocab), k). Taught in lesson 05, section 4.

    ``sentences``: tokenised sentences (or documents); every ``sentences_per_doc``
    consecutive ones form one document (1 = each is its own document). The word-document
    matrix is the transpose of the (un-normalised) TF-IDF document-term matrix with
    ``tf_scheme`` and (smoothed) IDF. Words of ``vocab`` never seen (e.g. specials) get
    zero rows. Returns float64 (V, k), rows = ``vocab`` ids.
    """
    docs = group_sentences(sentences, sentences_per_doc)
    w, _ = tfidf(document_term_matrix(docs, vocab), tf_scheme, smooth=smooth, norm=None)
    return svd_vectors(w.T.tocsr(), k, weighting=weighting, seed=seed)


# ----------------------------------------------------------------------------- document retrieval
@dataclass
class DocumentIndex:
    """Cosine document retrieval over TF-IDF vectors, optionally in an LSA space. Taught in lesson 05, section 5.

    Build with :meth:`build`; :meth:`search` returns ``[(doc_id, cosine)]``.

    Attributes: ``vocab``; ``idf`` (V,); ``doc_vectors`` (D, V) csr (TF-IDF, L2-normalised)
    or (D, k) ndarray (LSA, unit rows); ``projection`` None or (V, k) ``V_k`` matrix that
    maps a TF-IDF row to LSA coordinates; ``tf_scheme``.
    """
    vocab: Vocab
    idf: np.ndarray
    doc_vectors: object
    projection: np.ndarray | None
    tf_scheme: str

    @classmethod
    def build(cls, documents: Sequence[Sequence[str]], vocab: Vocab, k: int | None = None,
              tf_scheme: str = "sublinear", seed: int = 0) -> "DocumentIndex":
        """Index tokenised documents. ``k=None``: plain TF-IDF; ``k``: LSA with k dimensions
        (documents are represented by ``Σ_k``-scaled rows of ``V_k``, i.e. their TF-IDF
        vectors projected onto the top-k word directions).

        Raises ValueError naming the first document that is empty or has no word in the
        vocabulary (it could never be retrieved)."""
        x, idf = tfidf_matrix(documents, vocab, tf_scheme=tf_scheme)
        empty = np.flatnonzero(np.diff(x.indptr) == 0)
        if empty.size:
            i = int(empty[0])
            what = "is empty" if len(documents[i]) == 0 else "has no word in the vocabulary"
            raise ValueError(f"document {i} {what} ({empty.size} such documents); "
                             "remove it before indexing")
        if k is None:
            return cls(vocab, idf, x, None, tf_scheme)
        _, _, vt = truncated_svd(x, k, seed=seed)
        proj = vt.T  # (V, k): a document's TF-IDF row @ proj = its LSA coordinates
        return cls(vocab, idf, normalize_rows(x @ proj), proj, tf_scheme)

    def query_vector(self, query: Sequence[str]):
        """A tokenised query -> its unit vector in the index space; ValueError if the query
        is empty or has no word in the vocabulary."""
        check_tokens(query, "query", "DocumentIndex.query_vector")
        if len(query) == 0:
            raise ValueError("empty query: it has no tokens")
        known = [t for t in query if t in self.vocab.stoi and t not in self.vocab.specials]
        if not known:
            raise UnknownWordError(f"no word of the query {list(query)!r} is in the vocabulary")
        tf = document_term_matrix([known], self.vocab)
        q = term_frequency(tf, self.tf_scheme)
        q.data *= self.idf[q.indices]
        q = normalize_rows(q)
        if self.projection is not None:
            q = normalize_rows(np.asarray(q @ self.projection))
        return q

    def query_matrix(self, queries: Sequence[Sequence[str]]):
        """Many tokenised queries at once -> their unit vectors, one row per query: (Q, V) csr
        (TF-IDF) or (Q, k) ndarray (LSA). The same vectors as :meth:`query_vector`, row by row.

        Raises UnknownWordError naming the first query with no word in the vocabulary, and
        ValueError for an empty list or an empty query."""
        check_token_lists(queries, "queries", "DocumentIndex.query_matrix", "query")
        if len(queries) == 0:
            raise ValueError("query_matrix: the list of queries is empty")
        known = [[t for t in q if t in self.vocab.stoi and t not in self.vocab.specials] for q in queries]
        bad = [i for i, q in enumerate(known) if not q]
        if bad:
            i = bad[0]
            what = "is empty" if len(queries[i]) == 0 else f"{list(queries[i])!r} has no word in the vocabulary"
            error = ValueError if len(queries[i]) == 0 else UnknownWordError
            raise error(f"query {i} {what} ({len(bad)} such queries); remove it before searching")
        q = term_frequency(document_term_matrix(known, self.vocab), self.tf_scheme)
        q.data *= self.idf[q.indices]
        q = normalize_rows(q)
        if self.projection is not None:
            q = normalize_rows(np.asarray(q @ self.projection))
        return q

    def scores(self, queries: Sequence[Sequence[str]]) -> np.ndarray:
        """Cosine of every query with every document: (Q, D) float64 (Q = len(queries))."""
        sims = self.query_matrix(queries) @ self.doc_vectors.T
        return np.asarray(sims.toarray() if sp.issparse(sims) else sims, dtype=np.float64)

    def search(self, query: Sequence[str], n: int = 5) -> list[tuple[int, float]]:
        """The ``n`` documents with the highest cosine to ``query``: ``[(doc_id, cosine)]``."""
        n = check_whole(n, "n", "DocumentIndex.search", minimum=1)
        q = self.query_vector(query)
        sims = self.doc_vectors @ q.T
        sims = np.asarray(sims.todense() if sp.issparse(sims) else sims).ravel()
        n = min(n, sims.size)
        top = np.argpartition(-sims, n - 1)[:n]
        top = top[np.lexsort((top, -sims[top]))]
        return [(int(j), float(sims[j])) for j in top]
