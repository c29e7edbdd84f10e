"""Documents as contexts (lesson 05): document-term matrices, TF-IDF, truncated SVD, LSA vectors."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import randomized_svd

from helpers.lib.checks import check_log_base, check_whole
from helpers.lib.metrics import normalize_rows
from helpers.lib.text import Vocab, check_token_lists

TF_SCHEMES = ("raw", "log1p", "sublinear")
SVD_WEIGHTINGS = {"US": 1.0, "sqrtS": 0.5, "U": 0.0}


def document_term_matrix(documents: Sequence[Sequence[str]], vocab: Vocab) -> sp.csr_matrix:
    """Raw counts ``tf[d, w]``, a (|D|, |W|) csr_matrix of float64 (lesson 05 §1). Tokens not in
    ``vocab`` are skipped, as scikit-learn's vectorisers do."""
    check_token_lists(documents, "documents", "document_term_matrix", "document")
    if len(documents) == 0:
        raise ValueError("document_term_matrix: empty corpus, no documents")
    ids, lengths = [], []
    for doc in documents:
        d = [vocab.stoi[t] for t in doc if t in vocab.stoi]
        ids.extend(d)
        lengths.append(len(d))
    rows = np.repeat(np.arange(len(documents)), lengths)
    m = sp.csr_matrix((np.ones(len(ids)), (rows, np.asarray(ids, dtype=np.int64))),
                      shape=(len(documents), len(vocab)))
    m.sum_duplicates()
    m.sort_indices()
    return m


def tfidf(tf: sp.spmatrix, tf_scheme: str = "raw", smooth: bool = True, norm: str | None = "l2",
          base: float = np.e, n_documents: int | None = None, df=None):
    """TF-IDF of a (|D|, |W|) count matrix: ``(weights csr (|D|, |W|), idf (|W|,))`` (lesson 05 §2).
    tf_scheme "raw", "log1p" or "sublinear" (1 + ln tf); ``smooth``: idf = log((1 + |D|) /
    (1 + df)) + 1, else log(|D| / df); ``norm`` "l2" or None."""
    if tf_scheme not in TF_SCHEMES:
        raise ValueError(f"tfidf: unknown tf_scheme {tf_scheme!r}; choose one of {TF_SCHEMES}")
    if norm not in ("l2", None):
        raise ValueError(f"tfidf: norm must be 'l2' or None, got {norm!r}")
    w = sp.csr_matrix(tf, dtype=np.float64, copy=True)
    w.eliminate_zeros()
    n = w.shape[0] if n_documents is None else n_documents
    df = np.bincount(w.indices, minlength=w.shape[1]) if df is None else np.asarray(df, np.float64)
    if not np.all(np.isfinite(df)) or np.any(df < 0) or np.any(df > n) or n < 1:
        raise ValueError(f"tfidf: document frequencies must lie in [0, n_documents = {n}]")
    log_base = np.log(check_log_base(base, "tfidf"))
    with np.errstate(divide="ignore"):
        idf = np.log((1.0 + n) / (1.0 + df)) + log_base if smooth else np.log(n / df)
    idf = idf / log_base
    if tf_scheme == "log1p":
        w.data = np.log1p(w.data)
    elif tf_scheme == "sublinear":
        w.data = 1.0 + np.log(w.data)
    w.data *= idf[w.indices]
    return (normalize_rows(w) if norm == "l2" else w), idf


def truncated_svd(matrix, k: int, seed: int = 0, n_iter: int = 5):
    """The top ``k`` singular triplets of an (m, n) matrix: U (m, k), S (k,), Vt (k, n), by
    randomised SVD, each column of U with its largest entry positive (lesson 05 §3)."""
    k = check_whole(k, "k", "truncated_svd")
    m, n = matrix.shape
    if not 1 <= k <= min(m, n):
        raise ValueError(f"truncated_svd: k must be in [1, {min(m, n)}] for a {m}x{n} matrix, "
                         f"got {k}")
    values = matrix.data if sp.issparse(matrix) else np.asarray(matrix)
    if not np.all(np.isfinite(values)):
        raise ValueError("truncated_svd: the matrix holds nan or inf; its SVD is undefined")
    if not np.any(values):                      # every singular value is 0: any orthonormal vectors
        return np.eye(m, k), np.zeros(k), np.eye(k, n)
    u, s, vt = randomized_svd(matrix, k, n_iter=n_iter, random_state=seed, flip_sign=False)
    signs = np.sign(u[np.abs(u).argmax(axis=0), np.arange(k)])
    signs[signs == 0] = 1.0
    return u * signs, s, vt * signs[:, None]


def svd_vectors(matrix, k: int, weighting: str = "US", seed: int = 0) -> np.ndarray:
    """Word vectors U_k Σ_k^p (V, k) from the rows of a (V, n) matrix (lesson 05 §4): ``weighting``
    "US" (p = 1, LSA), "sqrtS" (p = 1/2) or "U" (p = 0)."""
    if weighting not in SVD_WEIGHTINGS:
        raise ValueError(f"svd_vectors: unknown weighting {weighting!r}; choose one of "
                         f"{list(SVD_WEIGHTINGS)}")
    u, s, _ = truncated_svd(matrix, k, seed=seed)
    if s[0] == 0:
        raise ValueError("svd_vectors: the matrix is all zeros; it has no singular vectors to use")
    rank = int(np.sum(s > s[0] * max(matrix.shape) * np.finfo(np.float64).eps))
    if rank < k and weighting != "US":
        raise ValueError(f"svd_vectors: k={k} exceeds the matrix's numerical rank {rank}; use "
                         f"k <= {rank} or weighting='US'")
    vectors = u * s ** SVD_WEIGHTINGS[weighting]
    zero = np.asarray(abs(sp.csr_matrix(matrix)).sum(axis=1)).ravel() == 0
    vectors[zero] = 0.0
    return vectors


def energy_kept(singular_values, frobenius_sq: float) -> tuple[np.ndarray, np.ndarray]:
    """For k = 1, 2, ...: the share of ‖A‖_F² the top k singular values keep, and the relative
    error ‖A − A_k‖_F / ‖A‖_F = sqrt(1 − share) (lesson 05 §3). Two (K,) arrays."""
    if not (frobenius_sq > 0 and np.isfinite(frobenius_sq)):
        raise ValueError(f"energy_kept: frobenius_sq must be positive and finite, got "
                         f"{frobenius_sq}")
    s2 = np.asarray(singular_values, np.float64) ** 2
    if s2.size == 0 or not np.all(np.isfinite(s2)):
        raise ValueError("energy_kept: singular_values must be a non-empty array of finite numbers")
    energy = np.cumsum(s2) / float(frobenius_sq)
    return energy, np.sqrt(np.clip(1.0 - energy, 0.0, None))


def group_sentences(sentences: Sequence[Sequence[str]], per_doc: int) -> list[list[str]]:
    """Every ``per_doc`` consecutive sentences joined into one pseudo-document (lesson 05 §4)."""
    check_token_lists(sentences, "sentences", "group_sentences")
    per_doc = check_whole(per_doc, "per_doc", "group_sentences", minimum=1)
    starts = range(0, len(sentences), per_doc)
    return [[t for s in sentences[i:i + per_doc] for t in s] for i in starts]


def lsa_word_vectors(sentences: Sequence[Sequence[str]], vocab: Vocab, k: int = 100,
                     sentences_per_doc: int = 10, tf_scheme: str = "log1p", smooth: bool = True,
                     weighting: str = "US", seed: int = 0) -> np.ndarray:
    """LSA word vectors (len(vocab), k): the truncated SVD of the TF-IDF word-document matrix of
    pseudo-documents of ``sentences_per_doc`` sentences (lesson 05 §4)."""
    docs = group_sentences(sentences, sentences_per_doc)
    w, _ = tfidf(document_term_matrix(docs, vocab), tf_scheme, smooth=smooth, norm=None)
    return svd_vectors(w.T.tocsr(), k, weighting=weighting, seed=seed)
