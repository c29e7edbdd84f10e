"""Lesson 06 (pointwise mutual information): the explorers of collocations and of the
co-occurrence window, the measurements of the low-frequency bias and its cures (ties made
visible), the benchmark protocol (validation / report halves, bootstrap intervals) and the
bridge to lesson 07 (skip-gram's w·c against shifted PMI)."""
from __future__ import annotations

import textwrap
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.stats import rankdata, spearmanr

from helpers.infra.plotting import COLOURS, new_figure, set_labels
from helpers.lib.counting import cooccurrence_matrix, npmi, pmi, ppmi, top_pmi_pairs
from helpers.lib.lsa import truncated_svd
from helpers.lib.metrics import nearest_neighbours, normalize_rows


def render_collocations(min_count: int, measure: str = "PMI", *, bigrams: sp.spmatrix,
                        itos: Sequence[str], n: int = 12):
    """Explorer view for lesson 06: the ``n`` bigrams with the highest PMI (or NPMI) among
    those seen at least ``min_count`` times. ``bigrams``: (V, V) ordered bigram counts.
    Returns ``(figure, summary)``."""
    if measure not in ("PMI", "NPMI"):
        raise ValueError(f"measure must be 'PMI' or 'NPMI', got {measure!r}")
    rows = top_pmi_pairs(bigrams, itos, n=n, min_count=min_count, measure=measure.lower())
    fig, ax = new_figure()
    if rows:
        labels = [f"{a} {b} ({int(cnt)})" for a, b, _, cnt in rows][::-1]
        ax.barh(labels, [r[2] for r in rows][::-1], color=COLOURS["purple"])
    set_labels(ax, f"Top bigrams by {measure}, pairs seen >= {min_count} times",
               measure, "bigram (times seen)", x_unit="bits" if measure == "PMI" else "in [−1, 1]")
    ax.tick_params(axis="y", labelsize=8)
    if not rows:
        return fig, f"min count {min_count}: no bigram is that frequent"
    summary = (f"min count {min_count}: " + ", ".join(f"{a} {b} ({s:.2f})" for a, b, s, _ in rows))
    return fig, textwrap.fill(summary, 100, break_long_words=False)


def render_contexts(window: int, weighting: str, cross_sentences: bool, word: str, *,
                    sentences_ids, vocab, alpha: float = 0.75, n: int = 10):
    """Explorer view for lesson 06: count co-occurrences with the given window choices, take
    PPMI, and show the ``n`` nearest neighbours of ``word`` by cosine of PPMI rows.
    ``sentences_ids``: encoded sentences (negative ids = filtered words); ``vocab``: a
    helpers.lib.text.Vocab. Returns ``(figure, summary)``."""

    counts = cooccurrence_matrix(sentences_ids, len(vocab), window=window, weighting=weighting,
                                 cross_sentences=cross_sentences)
    vectors = ppmi(counts, alpha=alpha)
    neighbours = nearest_neighbours(vectors, vocab, word, k=n)
    fig, ax = new_figure()
    ax.barh([w for w, _ in neighbours][::-1], [c for _, c in neighbours][::-1], color=COLOURS["orange"])
    set_labels(ax, f"PPMI neighbours of '{word}' (window ±{window}, {weighting}, "
                   f"{'across' if cross_sentences else 'within'} sentences)",
               "cosine similarity of PPMI rows", "neighbour")
    ax.set_xlim(0, max(0.5, neighbours[0][1] * 1.1))
    summary = (f"window ±{window}, {weighting}, {'across' if cross_sentences else 'within'} sentences: "
               f"{counts.nnz:,} distinct pairs, total weight {counts.sum():,.0f}; neighbours of "
               f"'{word}': " + ", ".join(f"{w} ({c:.2f})" for w, c in neighbours))
    return fig, textwrap.fill(summary, 100, break_long_words=False)


# ----------------------------------------------------------------------------- section 6: ties
def pair_scores(counts: sp.spmatrix, measure: str = "pmi", min_count: float = 1, alpha: float = 1.0,
                k: float = 1.0) -> dict[str, np.ndarray]:
    """Every observed off-diagonal pair of ``counts`` (V, V) with its score, for lesson 06, section 6.

    ``measure``: "pmi" (with ``alpha`` and ``k``: PMI^k with a smoothed context distribution) or
    "npmi". Marginals come from all counts; pairs seen fewer than ``min_count`` times are dropped
    afterwards. Returns {"row", "col": (n,) int64, "score", "count": (n,) float64}.
    """
    if measure not in ("pmi", "npmi"):
        raise ValueError(f"measure must be 'pmi' or 'npmi', got {measure!r}")
    c = sp.csr_matrix(counts, dtype=np.float64)
    c.eliminate_zeros()
    s = (pmi(c, alpha=alpha, k=k) if measure == "pmi" else npmi(c)).tocoo()
    cc = c.tocoo()  # the same csr structure, so the same order of entries as s
    keep = (cc.row != cc.col) & (cc.data >= min_count)
    return {"row": cc.row[keep].astype(np.int64), "col": cc.col[keep].astype(np.int64),
            "score": s.data[keep], "count": cc.data[keep]}


def top_pairs(scores: dict[str, np.ndarray], n: int = 100, ties: str = "frequent",
              decimals: int = 9) -> np.ndarray:
    """Indices (into ``scores``' arrays) of the ``n`` best pairs, best first, for lesson 06, section 6.

    Scores equal to ``decimals`` places are ties; ``ties`` says, visibly, how they are broken:
    "frequent" (the more often seen pair first) or "rare" (the less often seen first); then by row
    and column id. Returns an (min(n, pairs),) int64 array.
    """
    if ties not in ("frequent", "rare"):
        raise ValueError(f"ties must be 'frequent' or 'rare', got {ties!r}")
    score = np.round(scores["score"], decimals)
    count = scores["count"] if ties == "rare" else -scores["count"]
    return np.lexsort((scores["col"], scores["row"], count, -score))[:n]


def tie_report(scores: dict[str, np.ndarray], n: int = 100, decimals: int = 9) -> dict[str, float]:
    """How much of a top-``n`` list the tie-break decides, for lesson 06, section 6.

    Returns {"top_score": the best score, "tied_at_top": how many pairs share it,
    "tied_in_top_n": how many pairs share the n-th best score or a better one that is shared
    (pairs whose order among themselves only the tie-break sets), "median_count_frequent_first",
    "median_count_rare_first": the median pair count of the top n under each tie-break}.
    """
    if scores["score"].size == 0:
        raise ValueError("no pairs to rank (is min_count larger than every count?)")
    score = np.round(scores["score"], decimals)
    best = score.max()
    nth = np.sort(score)[::-1][min(n, score.size) - 1]
    values, sizes = np.unique(score[score >= nth], return_counts=True)
    out = {"top_score": float(best), "tied_at_top": int((score == best).sum()),
           "tied_in_top_n": int(sizes[sizes > 1].sum())}
    for ties in ("frequent", "rare"):
        out[f"median_count_{ties}_first"] = float(np.median(scores["count"][top_pairs(scores, n, ties, decimals)]))
    return out


def alpha_effect(counts: sp.spmatrix, alpha: float = 0.75, n: int = 100,
                 context_bins=(1, 2, 10, 100, 1000)) -> dict:
    """What context smoothing changes in a PMI ranking of ``counts`` (V, V), for lesson 06, section 6.

    Returns {"top_overlap": how many of the top ``n`` pairs (frequent-first tie-break) alpha keeps,
    "spearman": Spearman correlation of PMI and PMI_alpha over all observed pairs,
    "shift_by_context_count": [(lo, hi, mean PMI_alpha − PMI over pairs whose context count is in
    [lo, hi)), ...]} (bits; negative = alpha lowers the score)."""
    plain = pair_scores(counts, "pmi")
    smooth = pair_scores(counts, "pmi", alpha=alpha)
    overlap = len(set(top_pairs(plain, n).tolist()) & set(top_pairs(smooth, n).tolist()))
    rho = spearmanr(plain["score"], smooth["score"]).statistic
    context_count = np.asarray(sp.csr_matrix(counts).sum(axis=0)).ravel()[plain["col"]]
    edges = list(context_bins) + [np.inf]
    shifts = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (context_count >= lo) & (context_count < hi)
        if sel.any():
            shifts.append((lo, hi, float(np.mean(smooth["score"][sel] - plain["score"][sel]))))
    return {"top_overlap": overlap, "spearman": float(rho), "shift_by_context_count": shifts}


# ----------------------------------------------------------------------------- sections 5 and 8
def frequency_ranks(vectors, vocab, word: str, k: int = 10) -> np.ndarray:
    """Frequency ranks (1 = the most frequent word) of the ``k`` nearest neighbours of ``word``,
    for lesson 06, section 5. ``vocab`` must list its words by decreasing count after its specials
    (as ``Vocab.build`` does). Returns a (k,) int64 array."""
    n_special = len(vocab.specials)
    return np.array([vocab.index(w) - n_special + 1 for w, _ in nearest_neighbours(vectors, vocab, word, k=k)],
                    dtype=np.int64)


def benchmark_halves(pairs: Sequence, seed: int = 14) -> tuple[list, list]:
    """Split a similarity benchmark in a fixed validation half and a report half, for lesson 06, section 8.

    The course's protocol: a permutation of the pair indices by ``np.random.default_rng(seed)``;
    the first ``len // 2`` are the validation half (tune on it), the rest the report half (report
    on it). Drawn from the full list, before any vocabulary is known. Returns two lists, each in
    the file's order."""
    if len(pairs) < 2:
        raise ValueError(f"need at least 2 pairs to split, got {len(pairs)}")
    perm = np.random.default_rng(seed).permutation(len(pairs))
    half = len(pairs) // 2
    return [pairs[i] for i in np.sort(perm[:half])], [pairs[i] for i in np.sort(perm[half:])]


def similarity_items(vectors, vocab, pairs: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """Cosine similarities and human scores of the ``pairs`` [(w1, w2, score)] whose two words are
    in ``vocab``, for lesson 06, section 8. ``vectors``: (V, D) dense or sparse. Returns two (n,)
    float64 arrays (model, human)."""
    unit = normalize_rows(vectors)
    got, gold = [], []
    for a, b, score in pairs:
        if a in vocab and b in vocab:
            x, y = unit[vocab.index(a)], unit[vocab.index(b)]
            got.append(float(x.multiply(y).sum()) if sp.issparse(unit) else float(x @ y))
            gold.append(float(score))
    if len(got) < 3:
        raise ValueError(f"only {len(got)} of {len(pairs)} pairs have both words in the vocabulary; need >= 3")
    return np.array(got), np.array(gold)


def spearman_interval(sims: dict[str, np.ndarray], gold: np.ndarray, n_boot: int = 1000, seed: int = 0,
                      level: float = 0.95) -> dict[str, tuple[float, float, float]]:
    """Spearman ρ of each model's similarities with ``gold`` and its percentile bootstrap interval,
    for lesson 06, section 8. ``sims``: {name: (n,) array} scored on the same n pairs; every model
    is scored on the same resampled pairs (so :func:`difference_interval` can pair them).
    Returns {name: (rho, low, high)}."""
    idx = _bootstrap_indices(gold.size, n_boot, seed)
    out = {}
    for name, s in sims.items():
        if s.shape != gold.shape:
            raise ValueError(f"{name}: expected {gold.shape} similarities, got {s.shape}")
        lo, hi = np.nanpercentile(_spearman_rows(s[idx], gold[idx]), [50 * (1 - level), 50 * (1 + level)])
        out[name] = (float(spearmanr(s, gold).statistic), float(lo), float(hi))
    return out


def difference_interval(a: np.ndarray, b: np.ndarray, gold: np.ndarray, n_boot: int = 1000, seed: int = 0,
                        level: float = 0.95) -> tuple[float, float, float]:
    """ρ(a) − ρ(b) on the same pairs with a paired percentile bootstrap interval, for lesson 06,
    section 8. An interval that contains 0 is a tie. Returns (difference, low, high)."""
    idx = _bootstrap_indices(gold.size, n_boot, seed)
    boot = _spearman_rows(a[idx], gold[idx]) - _spearman_rows(b[idx], gold[idx])
    lo, hi = np.nanpercentile(boot, [50 * (1 - level), 50 * (1 + level)])
    return float(spearmanr(a, gold).statistic - spearmanr(b, gold).statistic), float(lo), float(hi)


def _spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman ρ of each row pair of two (B, n) arrays (average ranks for ties): (B,)."""
    rx, ry = rankdata(x, axis=1), rankdata(y, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=1) / np.sqrt((rx ** 2).sum(axis=1) * (ry ** 2).sum(axis=1))


def svd_weightings(matrix, k: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The three SVD word vectors of lesson 06, section 8 from one truncated SVD of ``matrix`` (V, n):
    {"U": U_k, "sqrtS": U_k Σ_k^½, "US": U_k Σ_k}, each (V, k) float64 — the same vectors as
    ``svd_vectors(matrix, k, weighting, seed)`` for each weighting, at a third of the cost."""
    u, s, _ = truncated_svd(matrix, k, seed=seed)
    return {name: u * s ** power for name, power in (("U", 0.0), ("sqrtS", 0.5), ("US", 1.0))}


def _bootstrap_indices(n: int, n_boot: int, seed: int) -> np.ndarray:
    if n < 3:
        raise ValueError(f"a bootstrap over pairs needs at least 3 pairs, got {n}")
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


# ----------------------------------------------------------------------------- section 9: bridge to lesson 07
def shifted_pmi_fit(W: np.ndarray, C: np.ndarray, word_counts, cooc: sp.spmatrix, window: int,
                    k: int, *, min_word_count: int = 100, min_pair_count: int = 20,
                    alphas=(1.0, 0.75), n_boot: int = 1000, seed: int = 0,
                    level: float = 0.95) -> dict:
    """How well skip-gram's dot products w·c match the shifted PMI, PMI(w, c) − ln k, for lesson 06,
    section 9 (Levy & Goldberg 2014).

    Parameters
    ----------
    W, C : (V, d) float arrays — the word and the context vectors of a skip-gram trained with
        negative sampling (gensim: ``model.wv.vectors`` and ``model.syn1neg``), in vocabulary order
    word_counts : (V,) corpus counts of the vocabulary's words (the frequency threshold uses them)
    cooc : (V, V) sparse co-occurrence counts of the same corpus and vocabulary, counted as the
        skip-gram drew its pairs (the optimum of SGNS is stated for these counts)
    window, k : the skip-gram's window and number of negative samples
    min_word_count, min_pair_count : only pairs whose two words occur at least
        ``min_word_count`` times and which co-occur at least ``min_pair_count`` times are
        compared (their PMI is well estimated; rare pairs are where SGNS, which rarely sees
        them, and PMI disagree)
    alphas : the context-distribution exponents of the PMI to compare with (SGNS draws its
        negatives from the unigram distribution raised to 0.75, so alpha = 0.75 is its own)

    Returns
    -------
    {"window", "k", "pairs": number of pairs compared, "dot": (n,) w·c,
     "fits": {alpha: {"target": (n,) PMI_alpha − ln k (nats), "pearson": (r, low, high),
                      "spearman": (rho, low, high), "mean_gap": mean of w·c − target}},
     "difference": {"pearson": (d, low, high), "spearman": (d, low, high)}}
    with percentile bootstrap intervals over the pairs (the same resamples for every alpha);
    "difference" is the fit of the second alpha minus the first's, with the paired interval of
    those resamples (the two fits share their pairs, so that is the comparison that decides).
    """
    W, C = np.asarray(W, np.float64), np.asarray(C, np.float64)
    counts = np.asarray(word_counts, np.float64).ravel()
    if W.ndim != 2 or W.shape != C.shape:
        raise ValueError(f"W and C must be (V, d) arrays of one shape, got {W.shape} and {C.shape}")
    V = W.shape[0]
    if counts.shape != (V,) or cooc.shape != (V, V):
        raise ValueError(f"word_counts must be ({V},) and cooc ({V}, {V}) to match W; "
                         f"got {counts.shape} and {cooc.shape}")
    integers = all(isinstance(x, (int, np.integer)) and x >= 1 for x in (window, k))
    if not integers:
        raise ValueError(f"window and k must be integers >= 1, got window={window!r}, k={k!r}")
    c = sp.csr_matrix(cooc, dtype=np.float64)
    c.eliminate_zeros()
    pairs = c.tocoo()
    frequent = counts >= min_word_count
    keep = frequent[pairs.row] & frequent[pairs.col] & (pairs.data >= min_pair_count)
    rows, cols = pairs.row[keep], pairs.col[keep]
    if rows.size < 3:
        raise ValueError(f"only {rows.size} pairs pass min_word_count={min_word_count} and "
                         f"min_pair_count={min_pair_count}; lower the thresholds")
    dot = np.einsum("ij,ij->i", W[rows], C[cols])
    idx = _bootstrap_indices(rows.size, n_boot, seed)
    fits, boots = {}, {}
    q = [50 * (1 - level), 50 * (1 + level)]
    for alpha in alphas:
        shifted = pmi(c, base=np.e, alpha=alpha).tocoo().data[keep] - np.log(k)
        boots[alpha] = {"pearson": _pearson_rows(dot[idx], shifted[idx]),
                        "spearman": _spearman_rows(dot[idx], shifted[idx])}
        r_low, r_high = np.nanpercentile(boots[alpha]["pearson"], q)
        s_low, s_high = np.nanpercentile(boots[alpha]["spearman"], q)
        r, rho = np.corrcoef(dot, shifted)[0, 1], spearmanr(dot, shifted).statistic
        fits[alpha] = {"target": shifted,
                       "pearson": (float(r), float(r_low), float(r_high)),
                       "spearman": (float(rho), float(s_low), float(s_high)),
                       "mean_gap": float(np.mean(dot - shifted))}
    out = {"window": int(window), "k": int(k), "pairs": int(rows.size), "dot": dot,
           "fits": fits}
    if len(alphas) >= 2:
        a, b = alphas[0], alphas[1]
        out["difference"] = {m: (fits[b][m][0] - fits[a][m][0],
                                 *map(float, np.nanpercentile(boots[b][m] - boots[a][m], q)))
                             for m in ("pearson", "spearman")}
    return out


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of two (B, n) arrays: (B,)."""
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x * y).sum(axis=1) / np.sqrt((x ** 2).sum(axis=1) * (y ** 2).sum(axis=1))
