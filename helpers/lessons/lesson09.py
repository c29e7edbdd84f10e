"""Lesson 09 (evaluating word vectors): its measurements and render functions.

- cosine vs Euclidean neighbours by word frequency (:func:`neighbour_overlap`);
- the norm-vs-count figure (:func:`plot_norm_vs_count`);
- the comparison over every shipped method (:func:`comparison_records`, :func:`format_intrinsic`,
  :func:`format_extrinsic`) and the one rule that decides it: every method against the best one on the
  same items, by a paired difference (:func:`differences_to_best`, :func:`verdict`); the per-article BBC
  results behind those differences (:func:`extrinsic_items`);
- analogies: the semantic/syntactic split of the answerable questions (:func:`semantic_mask`), gensim's
  frequency-restricted evaluation for the cross-check (:func:`gensim_restricted_accuracy`);
- antonyms in the similarity benchmarks (:func:`antonym_table`), the WEAT word sets;
- the scaling-grid explorer and its static grid-vs-control figure (:func:`scaling_render`,
  :func:`plot_grid_and_control`), the 2-D projection explorer;
- older material the notebook no longer shows (kept for its tests until it moves): the
  recomputing comparison table (:func:`comparison_table`).

Every render function returns ``(Figure, summary str)``; the notebook wraps them in
:class:`helpers.infra.widgets.Explorer` and the tests call them directly.
"""
from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path
from typing import Sequence

import numpy as np
from scipy.stats import rankdata
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split

from helpers.course.bbc_topics import bbc_groups, bbc_topic_task
from helpers.course.data import load_analogies, load_word_similarity
from helpers.course.scaling_grid import METRICS, ScalingGrid
from helpers.infra.plotting import (
    BLACK,
    COLOURS,
    MARKERS,
    log_axis,
    new_figure,
    set_labels,
)
from helpers.infra.progress import progress_bar
from helpers.lib.extrinsic import extrinsic_classification, make_classifier
from helpers.lib.metrics import (
    Interval,
    analogy_accuracy,
    bootstrap_interval,
    document_vectors,
    nearest_neighbours,
    normalize_rows,
    similarity_correlation,
    vocab_maps,
)
from helpers.lib.near_duplicates import without_copies


# ---------------------------------------------------------------- the comparison table
def evaluate_embedding(vectors, vocab, classifiers: Sequence[str] = ("logreg", "knn"), task=None,
                       analogies=None, similarity_sets=None, seed: int = 0) -> dict:
    """All scores of one embedding: WordSim-353 and SimLex-999 rho (+ OOV counts),
    Google analogy accuracy (3CosAdd and 3CosMul), and extrinsic accuracy per classifier.

    ``task`` = (documents, labels) defaults to :func:`bbc_topic_task` (then the test articles with a
    copy among the training ones are not scored, :func:`bbc_groups`); ``analogies`` to
    :func:`helpers.course.data.load_analogies`; ``similarity_sets`` to {'ws353': ..., 'simlex': ...}.
    """
    if similarity_sets is None:
        similarity_sets = {"ws353": load_word_similarity("wordsim353"), "simlex": load_word_similarity("simlex999")}
    analogies = analogies if analogies is not None else load_analogies()
    docs, labels = task if task is not None else bbc_topic_task()
    groups = bbc_groups() if task is None else None
    row = {}
    for key, pairs in similarity_sets.items():
        row[key] = similarity_correlation(vectors, vocab, pairs, name=key)
    row["analogy_add"] = analogy_accuracy(vectors, vocab, analogies, "add")
    row["analogy_mul"] = analogy_accuracy(vectors, vocab, analogies, "mul")
    for clf in classifiers:
        row[f"extrinsic_{clf}"] = extrinsic_classification(vectors, vocab, docs, labels, clf, seed=seed, groups=groups)
    return row


def comparison_table(methods: dict, classifiers: Sequence[str] = ("logreg", "knn"), progress: bool = True, **kw) -> list[dict]:
    """Evaluate every method of ``{name: (vectors, vocab, training_seconds)}`` the same way.

    Returns one dict per method: {'method', 'seconds', 'ws353', 'simlex', 'analogy_add',
    'analogy_mul', 'extrinsic_<clf>' ...} holding the result objects (see
    :func:`evaluate_embedding`). Add a method by adding one entry to the dict.
    """
    if not methods:
        raise ValueError("no methods to compare (the dict is empty)")
    kw.setdefault("analogies", load_analogies())
    kw.setdefault("similarity_sets", {"ws353": load_word_similarity("wordsim353"),
                                      "simlex": load_word_similarity("simlex999")})
    kw.setdefault("task", bbc_topic_task())
    rows = []
    for name, entry in progress_bar(methods.items(), desc="evaluating", disable=not progress):
        if len(entry) != 3:
            raise ValueError(f"{name}: expected (vectors, vocab, training seconds), got {len(entry)} items")
        vectors, vocab, secs = entry
        t = time.perf_counter()
        row = {"method": name, "seconds": float(secs), "dim": int(np.shape(vectors)[1]),
               **evaluate_embedding(vectors, vocab, classifiers, **kw)}
        row["eval_seconds"] = time.perf_counter() - t
        rows.append(row)
    return rows


def _fmt(x, pct=False):
    if x is None:
        return "all OOV" if not pct else "n/a"
    return f"{x:.1%}" if pct else f"{x:.3f}"


def format_comparison(rows: list[dict]) -> str:
    """The comparison table as fixed-width text, one line per method; the ranking of each
    method under each classifier is shown in brackets."""
    clfs = [k[len("extrinsic_"):] for k in rows[0] if k.startswith("extrinsic_")]
    ranks = {}
    for c in clfs:
        order = sorted(rows, key=lambda r: -r[f"extrinsic_{c}"].accuracy)
        ranks[c] = {r["method"]: i + 1 for i, r in enumerate(order)}
    head = (f"{'method':<22}{'train s':>9}{'WS353 ρ':>9}{'SimLex ρ':>10}{'3CosAdd':>9}{'3CosMul':>9}"
            + "".join(f"{'acc ' + c:>14}" for c in clfs))
    lines = [head, "-" * len(head)]
    for r in rows:
        line = (f"{r['method']:<22}{r['seconds']:>9.1f}{_fmt(r['ws353'].rho):>9}{_fmt(r['simlex'].rho):>10}"
                f"{_fmt(r['analogy_add'].accuracy, True):>9}{_fmt(r['analogy_mul'].accuracy, True):>9}")
        for c in clfs:
            line += f"{r[f'extrinsic_{c}'].accuracy:>9.1%} ({ranks[c][r['method']]})"
        lines.append(line)
    r0 = rows[0]
    lines.append(f"OOV: WordSim-353 {r0['ws353'].n_oov}/{r0['ws353'].n_pairs} pairs, SimLex-999 "
                 f"{r0['simlex'].n_oov}/{r0['simlex'].n_pairs}, analogies {r0['analogy_add'].oov}/"
                 f"{r0['analogy_add'].oov + r0['analogy_add'].answered} questions (first row's vocabulary)")
    return "\n".join(lines)


def rank_changes(rows: list[dict], a: str = "logreg", b: str = "knn") -> list[tuple[str, int, int]]:
    """[(method, rank under classifier a, rank under classifier b)] — 1 is best."""
    out = []
    for c in (a, b):
        order = sorted(rows, key=lambda r: -r[f"extrinsic_{c}"].accuracy)
        out.append({r["method"]: i + 1 for i, r in enumerate(order)})
    return [(r["method"], out[0][r["method"]], out[1][r["method"]]) for r in rows]


# ---------------------------------------------------------------- 2-D projections (explorer)
WORD_GROUPS = {
    "countries": ["france", "germany", "italy", "spain", "china", "japan", "india"],
    "sport": ["football", "tennis", "cricket", "rugby", "golf", "olympic"],
    "music": ["album", "band", "song", "singer", "guitar", "concert"],
    "economy": ["bank", "shares", "profit", "market", "economy", "prices"],
    "family": ["mother", "father", "son", "daughter", "wife", "husband"],
    "numbers": ["two", "three", "four", "five", "six", "seven"],
}


def project_2d(X: np.ndarray, method: str = "PCA", seed: int = 0) -> np.ndarray:
    """2-D coordinates (N, 2) of the rows of X (N, D): 'PCA' or 't-SNE' (scikit-learn),
    both on unit-length rows (cosine geometry)."""
    # heavy optional import (scikit-learn's manifold module): loaded only when a t-SNE is asked for
    from sklearn.manifold import TSNE
    X = normalize_rows(X)
    if len(X) < 3:
        raise ValueError(f"need at least 3 words to project, got {len(X)}")
    if method == "PCA":
        return PCA(n_components=2, random_state=seed).fit_transform(X)
    if method == "t-SNE":
        return TSNE(n_components=2, perplexity=min(10.0, len(X) - 1.0), init="pca", random_state=seed,
                    metric="cosine").fit_transform(X)
    raise ValueError(f"method must be 'PCA' or 't-SNE', got {method!r}")


def make_projection_render(embeddings: dict, groups: dict | None = None):
    """A render function for an Explorer of 2-D projections.

    ``embeddings``: {name: (vectors, vocab)}; ``groups``: {group: [group words]} (default
    WORD_GROUPS). The returned ``render(neighbours, method, embedding) -> (figure, summary)``
    plots each group's words (and their ``neighbours`` nearest neighbours, smaller) in
    one colour and reports how often a word's nearest group word in 2-D is from its own group.
    """
    groups = groups or WORD_GROUPS

    def render(neighbours: int = 0, method: str = "PCA", embedding: str | None = None):
        name = embedding or next(iter(embeddings))
        vectors, vocab = embeddings[name]
        stoi, _ = vocab_maps(vocab)
        words, labels, is_seed = [], [], []
        for g, ws in groups.items():
            for w in ws:
                if w not in stoi or w in words:
                    continue
                words.append(w)
                labels.append(g)
                is_seed.append(True)
                for nb, _ in nearest_neighbours(vectors, vocab, w, k=int(neighbours)):
                    if nb not in words:
                        words.append(nb)
                        labels.append(g)
                        is_seed.append(False)
        if len(words) < 3:
            raise ValueError(f"fewer than 3 of the group words are in the vocabulary of {name}")
        Y = project_2d(np.asarray(vectors)[[stoi[w] for w in words]], method)
        fig, ax = new_figure(width=7, height=5)
        palette = list(COLOURS.values())
        style = {g: (palette[i % len(palette)], MARKERS[i % len(MARKERS)]) for i, g in enumerate(groups)}
        for (x, y), w, g, s in zip(Y, words, labels, is_seed, strict=True):
            ax.scatter(x, y, color=style[g][0], marker=style[g][1], s=40 if s else 12, alpha=1.0 if s else 0.6)
            ax.annotate(w, (x, y), fontsize=9 if s else 7, color=style[g][0], alpha=1.0 if s else 0.7,
                        xytext=(2, 2), textcoords="offset points")
        for g in groups:
            ax.scatter([], [], color=style[g][0], marker=style[g][1], label=g)
        ax.legend(loc="best")
        set_labels(ax, f"{method} of {len(words)} words, {name}", f"{method} dimension 1", f"{method} dimension 2")
        seeds = np.array(is_seed)
        lab = np.array(labels)
        D = np.linalg.norm(Y[:, None, :] - Y[None, seeds, :], axis=2)
        D[np.arange(len(Y))[seeds], np.arange(seeds.sum())] = np.inf    # a group word is not its own neighbour
        agree = float(np.mean(lab[seeds][D.argmin(axis=1)] == lab))
        summary = (f"{name}, {method}, {neighbours} neighbours per group word: {len(words)} words; "
                   f"nearest group word in 2-D is from the same group for {agree:.0%} of them")
        return fig, summary

    return render


# ---------------------------------------------------------------- more data or more dimensions (explorer)
def _seed_stats(S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, min, max) over seeds of scores (S, F, D), or the (F, D) scores themselves three times."""
    S = np.asarray(S, dtype=float)
    if S.ndim == 2:
        return S, S, S
    return np.nanmean(S, axis=0), np.nanmin(S, axis=0), np.nanmax(S, axis=0)


def _grid_lines(ax, grid: ScalingGrid, metric: str, across: str) -> None:
    mean, lo, hi = _seed_stats(grid.scores[metric])
    scale = 100 if metric == "analogy" else 1
    if across == "corpus size":
        xs, n_lines, label = grid.tokens, len(grid.dims), lambda j: f"{grid.dims[j]} dims"
        pick = lambda A, j: A[:, j]       # noqa: E731
    else:
        xs, n_lines, label = grid.dims, len(grid.tokens), lambda i: f"{grid.tokens[i] / 1e6:.2f}M tokens"
        pick = lambda A, i: A[i, :]       # noqa: E731
    for j in range(n_lines):
        m = scale * pick(mean, j)
        ax.errorbar(xs, m, yerr=[m - scale * pick(lo, j), scale * pick(hi, j) - m], marker=MARKERS[j % len(MARKERS)],
                    capsize=3, label=label(j))
    log_axis(ax, "x", base=2, ticks=xs)
    if across == "corpus size":
        ax.set_xticks(xs, [f"{t / 1e6:.2f}M" for t in xs])
    else:
        ax.set_xticks(xs, [str(d) for d in xs])
    ax.axhline(0, color=BLACK, lw=0.5)


def scaling_render(grid: ScalingGrid, metric: str = "analogy", across: str = "corpus size"):
    """Explorer render: ``metric`` (a key of METRICS) of every cell, as lines against the
    corpus size (one line per dimension) or against the dimension (one line per corpus
    size), as ``across`` says; with scores over seeds (S, F, D) the mean and the min-max bar.
    Returns (figure, summary)."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose one of {list(METRICS)}")
    if across not in ("corpus size", "dimension"):
        raise ValueError(f"across must be 'corpus size' or 'dimension', got {across!r}")
    S, _, _ = _seed_stats(grid.scores[metric])
    scale = 100 if metric == "analogy" else 1
    fig, ax = new_figure()
    n = grid.n_scored.get(metric)
    what = "questions" if metric == "analogy" else "pairs"
    model = {"cbow": "CBOW", "skipgram": "skip-gram"}.get(grid.config.get("model"), "")
    _grid_lines(ax, grid, metric, across)
    xlabel = "training tokens (log scale)" if across == "corpus size" else "vector dimension (log scale)"
    set_labels(ax, f"word2vec {model}: {METRICS[metric]} on the same {n} {what}", xlabel, METRICS[metric],
               y_unit="%" if scale == 100 else None)
    ax.legend(ncol=2)
    i_best, j_best = np.unravel_index(np.nanargmax(S), S.shape)
    fmt = (lambda v: f"{100 * v:.1f}%") if scale == 100 else (lambda v: f"{v:.3f}")
    seeds = "" if np.ndim(grid.scores[metric]) == 2 else f" (mean of {np.shape(grid.scores[metric])[0]} trainings)"
    summary = (f"{METRICS[metric]}{seeds}: smallest sample ({grid.tokens[0]:,} tokens) "
               f"{fmt(np.nanmin(S[0]))}–{fmt(np.nanmax(S[0]))} over the dimensions; whole corpus "
               f"{fmt(np.nanmin(S[-1]))}–{fmt(np.nanmax(S[-1]))}; best cell {fmt(S[i_best, j_best])} "
               f"({grid.tokens[i_best]:,} tokens, {grid.dims[j_best]} dims)")
    return fig, summary


def plot_grid_and_control(grid: ScalingGrid, control: ScalingGrid, control_epochs, metric: str = "wordsim353"):
    """Two panels, ``metric`` against the corpus size, one line per dimension (mean of the seeds,
    min-max bars): the fixed-epoch grid, and the equal-updates control (``control_epochs`` per
    sample). Returns the figure."""
    fig, axes = new_figure(ncols=2, sharey=True)
    scale = 100 if metric == "analogy" else 1
    epochs = grid.config.get("epochs", [None])[0]
    titles = (f"{epochs} epochs on every sample", f"equal updates: {'/'.join(map(str, control_epochs))} epochs")
    for ax, g, title in zip(axes, (grid, control), titles, strict=True):
        _grid_lines(ax, g, metric, "corpus size")
        set_labels(ax, title, "training tokens (log scale)", METRICS[metric], y_unit="%" if scale == 100 else None)
    axes[0].legend(ncol=2)
    return fig


# ---------------------------------------------------------------- cosine vs Euclidean neighbours
def plot_norm_vs_count(norms: np.ndarray, counts: np.ndarray, itos: Sequence[str], label_words: Sequence[str],
                       rho: float):
    """Each word's vector norm against its corpus count (log scale), a few words labelled in red.
    ``norms`` and ``counts`` (V,) in the order of ``itos``; ``rho`` the Spearman correlation, for the
    title. Returns the figure."""
    fig, ax = new_figure(width=6.5)
    ax.scatter(counts, norms, s=2, alpha=0.3)
    index = {w: i for i, w in enumerate(itos)}
    for w in label_words:
        i = index[w]
        ax.annotate(w, (counts[i], norms[i]), color=COLOURS["vermillion"], fontsize=9)
    ax.set_xscale("log")
    set_labels(ax, f"Vector norm vs word count (Spearman ρ = {rho:.2f})", "word count in the corpus (log scale)",
               "norm of the skip-gram vector W[w]")
    return fig


def neighbour_overlap(W: np.ndarray, vocab, bands=((5, 10), (10, 50), (50, 500), (500, None)), k: int = 10,
                      per_band: int = 200, seed: int = 0) -> list[dict]:
    """How far cosine and Euclidean nearest neighbours agree, by the query word's corpus count.

    For ``per_band`` random query words of each count band [lo, hi): the mean share of their
    ``k`` cosine neighbours that are also Euclidean neighbours, and the median corpus count of
    the neighbours under each measure. Returns one dict per band."""
    counts = np.asarray(vocab.counts)
    E = normalize_rows(W)
    sq = np.einsum("ij,ij->i", W, W)
    rng = np.random.default_rng(seed)
    out = []
    for lo, hi in bands:
        pool = np.flatnonzero((counts >= lo) & (counts < (hi or np.inf)))
        q = rng.choice(pool, size=min(per_band, len(pool)), replace=False)
        cos = E[q] @ E.T
        d2 = sq[q][:, None] + sq[None, :] - 2 * W[q] @ W.T
        cos[np.arange(len(q)), q], d2[np.arange(len(q)), q] = -np.inf, np.inf
        nc = np.argpartition(-cos, k, axis=1)[:, :k]
        ne = np.argpartition(d2, k, axis=1)[:, :k]
        overlap = np.mean([len(set(a) & set(b)) / k for a, b in zip(nc, ne, strict=True)])
        out.append({"band": (lo, hi), "n_words": len(q), "overlap": float(overlap),
                    "median_count_cosine": float(np.median(counts[nc])),
                    "median_count_euclidean": float(np.median(counts[ne])),
                    "median_norm": float(np.median(np.sqrt(sq[q])))})
    return out


def euclidean_neighbours(W: np.ndarray, vocab, word: str, k: int = 6) -> list[str]:
    """The ``k`` nearest words of ``word`` by Euclidean distance (the word itself excluded)."""
    i = vocab.index(word)
    d = np.linalg.norm(W - W[i], axis=1)
    d[i] = np.inf
    return [vocab.itos[j] for j in np.argsort(d)[:k]]


# ---------------------------------------------------------------- the comparison over the shipped vectors
def comparison_records(methods: dict, shipped_records: dict, count_records: dict) -> dict:
    """{label: records} for lesson 09's table: every shipped method of ``methods`` ({label: (W,
    vocab, seconds)}) with the records it was shipped with (``shipped_records[label]``, computed at
    training time by :func:`training.word_vector_models.records`), then the count-based
    methods' records (``count_records``, :mod:`training.count_records`). Each gets 'seconds'
    (training, or for the count-based methods building) and 'kind' ('shipped' or 'count')."""
    out = {}
    for label, (_, _, secs) in methods.items():
        if label not in shipped_records:
            raise KeyError(f"{label}: no records shipped with it (have {sorted(shipped_records)})")
        out[label] = {**shipped_records[label], "seconds": float(secs), "kind": "shipped"}
    for label, rec in count_records.items():
        out[label] = {**rec, "seconds": float(rec["build_seconds"]), "kind": "count"}
    return out


def _iv(x, scale=1.0, digits=3):
    e, lo, hi = (x.estimate, x.low, x.high) if isinstance(x, Interval) else x
    return f"{scale * e:.{digits}f} [{scale * lo:.{digits}f}, {scale * hi:.{digits}f}]"


def format_intrinsic(recs: dict, restricted: dict, top: int) -> str:
    """The intrinsic half of lesson 09's table, one line per method (under 100 characters): report-half
    WordSim-353 and SimLex-999 ρ and 3CosAdd accuracy over all words, each with its 95 % bootstrap
    interval (recorded at training time), and the accuracy with the ``top`` most frequent words
    (``restricted[label]``: an :class:`Interval` of the accuracy in [0, 1])."""
    head = f"{'method':<18}{'WordSim-353 ρ':<22}{'SimLex-999 ρ':<22}{'analogies %':<19}{f'top {top:,} %'}"
    lines = [head, "-" * 98]
    for label, r in recs.items():
        iv = r["report_intervals"]
        lines.append(f"{label:<18}{_iv(iv['wordsim']):<22}{_iv(iv['simlex']):<22}{_iv(iv['analogy'], 100, 1):<19}"
                     f"{_iv(restricted[label], 100, 1)}")
    return "\n".join(lines)


def format_extrinsic(accuracy: dict, seconds: dict, dims: dict) -> str:
    """BBC topic accuracy per method and classifier: the mean over the splits and its range (min–max),
    from ``accuracy[label][clf]`` = the per-split accuracies; with each method's dimension and training
    seconds (``dims[label]``, ``seconds[label]``)."""
    head = f"{'method':<18}{'dims':>5}{'train s':>9}{'logistic regression %':>25}{'10-NN %':>21}"
    lines = [head, "-" * len(head)]
    for label, by_clf in accuracy.items():
        cells = []
        for clf in ("logreg", "knn"):
            a = 100 * np.asarray(by_clf[clf])
            cells.append(f"{a.mean():.1f} ({a.min():.1f}–{a.max():.1f})")
        lines.append(f"{label:<18}{dims[label]:>5}{seconds[label]:>9.0f}{cells[0]:>25}{cells[1]:>21}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the course's one rule: paired differences
def differences_to_best(estimates: dict, paired_difference) -> tuple[str, dict]:
    """The method with the highest estimate, and every other method against it on the same items:
    ``paired_difference(method, best) -> Interval`` of (method − best) with a paired bootstrap (the
    same resampled items score both). Returns (best, {method: Interval}); the best method is not in the
    dict. A difference whose interval contains 0 cannot tell the two apart (:func:`verdict`)."""
    if not estimates:
        raise ValueError("no methods to compare")
    best = max(estimates, key=lambda m: estimates[m])
    return best, {m: paired_difference(m, best) for m in estimates if m != best}


def verdict(iv: Interval) -> str:
    """'behind' when the paired difference (method − best) is below 0 with 95 % confidence, 'ahead' when
    above, else 'too close to call' (the interval contains 0)."""
    if iv.high < 0:
        return "behind"
    if iv.low > 0:
        return "ahead"
    return "too close to call"


def hits_difference(hits: dict, mask=None, n_boot: int = 2000, seed: int = 0):
    """A ``paired_difference`` for :func:`differences_to_best` over 0/1 items (analogy questions,
    articles): the bootstrap interval of the mean of hits[m] − hits[best] over the same items (those
    selected by ``mask``, default all)."""
    def diff(m: str, best: str) -> Interval:
        d = np.asarray(hits[m], float) - np.asarray(hits[best], float)
        return bootstrap_interval(np.mean, d if mask is None else d[mask], n_boot=n_boot, seed=seed)
    return diff


def _spearman_rows(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Spearman ρ of every row of x (B, n) with the matching row of g (B, n) (average ranks for ties)."""
    rx, rg = rankdata(x, axis=1), rankdata(g, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    rg -= rg.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * rg).sum(axis=1) / np.sqrt((rx ** 2).sum(axis=1) * (rg ** 2).sum(axis=1))


def similarity_difference(vectors: dict, vocab, pairs, n_boot: int = 10_000, seed: int = 0):
    """A ``paired_difference`` for :func:`differences_to_best` on rated pairs: Spearman ρ(m) − ρ(best)
    over the pairs with both words in ``vocab``, with a paired percentile bootstrap — each resample
    draws the pairs once (``np.random.default_rng(seed).integers(0, n, (n_boot, n))``, the draws of
    :func:`helpers.lib.metrics.paired_similarity_difference`) and scores both methods on them; the
    ranks are computed for all resamples at once, so 10,000 resamples take a fraction of a second.
    ``vectors``: {method: (V, D) array}, all on ``vocab``."""
    stoi, _ = vocab_maps(vocab)
    known = [(stoi[a], stoi[b], x) for a, b, x in pairs if a in stoi and b in stoi]
    if len(known) < 3:
        raise ValueError(f"only {len(known)} of {len(pairs)} pairs are in the vocabulary; need at least 3")
    i, j, gold = (np.array(x) for x in zip(*known, strict=True))
    gold = gold.astype(float)
    idx = np.random.default_rng(seed).integers(0, len(gold), (n_boot, len(gold)))

    def cosines(m):
        E = normalize_rows(np.asarray(vectors[m], dtype=np.float64))
        return np.einsum("nd,nd->n", E[i], E[j])

    def diff(m: str, best: str) -> Interval:
        cm, cb = cosines(m), cosines(best)
        est = float(_spearman_rows(cm[None], gold[None])[0] - _spearman_rows(cb[None], gold[None])[0])
        boot = np.concatenate([_spearman_rows(cm[k], gold[k]) - _spearman_rows(cb[k], gold[k])
                               for k in np.array_split(idx, max(1, n_boot // 2000))])
        boot = boot[np.isfinite(boot)]
        lo, hi = np.percentile(boot, [2.5, 97.5])
        return Interval(est, float(lo), float(hi), 0.95, len(gold), n_boot)
    return diff


def semantic_mask(questions: dict, vocab) -> np.ndarray:
    """(n,) bool over the answerable questions (all four words in ``vocab``), in the order
    :func:`helpers.lib.metrics.analogy_hits` scores them: True for a semantic category (the
    categories not named 'gram…')."""
    stoi, _ = vocab_maps(vocab)
    return np.array([not cat.startswith("gram") for cat, qs in questions.items() for q in qs
                     if all(w in stoi for w in q)], dtype=bool)


# ---------------------------------------------------------------- the BBC results article by article
def extrinsic_items(methods: dict, classifiers=("logreg", "knn"), seeds=(0, 1, 2), test_fraction: float = 0.3) -> dict:
    """Every method's BBC topic predictions, article by article, exactly as the records were computed
    (:func:`helpers.lib.extrinsic.extrinsic_classification`: averaged unit word vectors, a stratified
    70/30 split per seed, the test articles with a copy among the training ones not scored).

    ``methods``: {label: (W, vocab, ...)}. Returns {'test': [ids (n_s,) per split], 'articles': the ids
    tested in at least one split (sorted), 'correct': {label: {clf: [(n_s,) bool per split]}},
    'accuracy': {label: {clf: [accuracy per split]}}, 'per_article': {label: {clf: (n_articles,) the
    share of the splits testing an article in which it was right}} — the items of a paired comparison
    (each article's score first averaged over the splits, as lesson 01's rule averages over seeds)."""
    docs, labels = bbc_topic_task()
    groups, y = bbc_groups(), np.asarray(labels)
    splits = []
    for s in seeds:
        itr, ite = train_test_split(np.arange(len(y)), test_size=test_fraction, random_state=s, stratify=y)
        splits.append((itr, without_copies(ite, itr, groups)))
    articles = np.unique(np.concatenate([te for _, te in splits]))
    pos = {a: k for k, a in enumerate(articles)}
    out = {"test": [te for _, te in splits], "articles": articles, "correct": {}, "accuracy": {}, "per_article": {}}
    for label, entry in methods.items():
        X, _ = document_vectors(entry[0], entry[1], docs)
        out["correct"][label], out["accuracy"][label], out["per_article"][label] = {}, {}, {}
        for clf in classifiers:
            right, total, seen = [], np.zeros(len(articles)), np.zeros(len(articles))
            for s, (itr, ite) in zip(seeds, splits, strict=True):
                ok = make_classifier(clf, s).fit(X[itr], y[itr]).predict(X[ite]) == y[ite]
                right.append(ok)
                k = np.array([pos[a] for a in ite])
                total[k] += ok
                seen[k] += 1
            out["correct"][label][clf] = right
            out["accuracy"][label][clf] = [float(r.mean()) for r in right]
            out["per_article"][label][clf] = total / seen
    return out


# ---------------------------------------------------------------- gensim's frequency-restricted analogy test
def gensim_restricted_accuracy(vectors, words, questions: dict, restrict_vocab: int) -> dict:
    """gensim's ``KeyedVectors.evaluate_word_analogies(restrict_vocab=...)`` on ``questions``
    ({category: [(a, b, c, d)]}, written to a questions-words file): only questions whose four words
    are among the first ``restrict_vocab`` words are scored, and the answer is searched among those
    words (3CosAdd, the query words excluded). ``words`` must be sorted by frequency, most frequent
    first. Returns {category: (correct, scored)}."""
    from gensim.models import KeyedVectors  # heavy optional import: loaded only when gensim is used

    logging.getLogger("gensim").setLevel(logging.ERROR)
    kv = KeyedVectors(np.shape(vectors)[1])
    kv.add_vectors(list(words), np.asarray(vectors, dtype=np.float32))
    lines = []
    for cat, qs in questions.items():
        lines.append(f": {cat}")
        lines += [" ".join(q) for q in qs]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "questions-words.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        _, sections = kv.evaluate_word_analogies(str(path), restrict_vocab=restrict_vocab, case_insensitive=False)
    return {s["section"]: (len(s["correct"]), len(s["correct"]) + len(s["incorrect"]))
            for s in sections if s["section"] != "Total accuracy"}


def extrinsic_interval(rec: dict, clf: str) -> tuple[float, float, float]:
    """(mean, min, max) BBC topic accuracy over the recorded splits."""
    a = np.array(rec["bbc_topic_accuracy"][clf])
    return float(a.mean()), float(a.min()), float(a.max())


# ---------------------------------------------------------------- antonyms in the similarity benchmarks
ANTONYMS = [("happy", "sad"), ("hot", "cold"), ("old", "new"), ("good", "bad"), ("big", "small"),
            ("rich", "poor"), ("win", "lose"), ("dark", "light"), ("strong", "weak"), ("fast", "slow"),
            ("hard", "easy"), ("love", "hate"), ("buy", "sell"), ("high", "low"), ("young", "old"),
            ("early", "late"), ("war", "peace"), ("long", "short"), ("wide", "narrow"), ("heavy", "light"),
            ("true", "false"), ("accept", "reject"), ("increase", "decrease"), ("smart", "dumb"),
            ("friend", "enemy"), ("clean", "dirty"), ("difficult", "easy"), ("wet", "dry"), ("cheap", "expensive"),
            ("success", "failure"), ("sunny", "cloudy"), ("ancient", "modern"), ("stupid", "smart"),
            ("inside", "outside"), ("dangerous", "safe"), ("deep", "shallow"), ("guilty", "innocent"),
            ("give", "take"), ("begin", "end"), ("start", "finish"), ("left", "right"), ("up", "down"),
            ("nice", "nasty"), ("fear", "courage"), ("polite", "rude"), ("sharp", "dull"), ("private", "public"),
            ("major", "minor"), ("maximum", "minimum"), ("plus", "minus"), ("positive", "negative"),
            ("entrance", "exit"), ("north", "south"), ("east", "west"), ("top", "bottom"), ("day", "night"),
            ("rise", "fall"), ("attack", "defend"), ("forget", "remember"), ("sell", "purchase")]


def antonym_table(W: np.ndarray, vocab, pairs_by_set: dict, antonyms=ANTONYMS) -> list[dict]:
    """For each benchmark {name: [(w1, w2, score)]}: its pairs that are antonyms (the list
    ``antonyms``, either order) with both words in the vocabulary, their human score, its percentile
    among the set's in-vocabulary pairs, their cosine and the cosine's percentile."""
    ant = {frozenset(p) for p in antonyms if p[0] != p[1]}
    E = normalize_rows(W)
    rows = []
    for name, pairs in pairs_by_set.items():
        known = [(a, b, s) for a, b, s in pairs if a in vocab and b in vocab]
        human = np.array([s for _, _, s in known])
        cos = np.array([float(E[vocab.index(a)] @ E[vocab.index(b)]) for a, b, _ in known])
        for (a, b, s), c in zip(known, cos, strict=True):
            if frozenset((a, b)) in ant:
                rows.append({"set": name, "pair": (a, b), "human": s, "human_pct": float(np.mean(human < s) * 100),
                             "cosine": c, "cosine_pct": float(np.mean(cos < c) * 100)})
    return rows


# ---------------------------------------------------------------- bias: WEAT
WEAT_SETS = {   # Caliskan et al. (2017), WEAT 6 with terms instead of first names (names are rare here)
    "career": ["executive", "management", "professional", "corporation", "salary", "office", "business", "career"],
    "family": ["home", "parents", "children", "family", "cousins", "marriage", "wedding", "relatives"],
    "male": ["he", "him", "his", "man", "men", "boy", "father", "son", "brother", "husband"],
    "female": ["she", "her", "hers", "woman", "women", "girl", "mother", "daughter", "sister", "wife"],
}
