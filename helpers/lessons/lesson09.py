"""Lesson 09 (evaluating word vectors): its figures, explorer and measurements."""
from __future__ import annotations

from typing import Callable

import numpy as np
from sklearn.decomposition import PCA

from helpers.course.bbc_topics import bbc_topic_task
from helpers.infra.plotting import BLACK, COLOURS, MARKERS, log_axis, new_figure, set_labels
from helpers.lib.extrinsic import fit_softmax_regression, make_classifier
from helpers.lib.metrics import document_vectors, nearest_neighbours, normalize_rows, vocab_maps
from helpers.lib.stats import Interval


# ---------------------------------------------------------------- §1 cosine vs Euclidean
def neighbour_overlap(W: np.ndarray, vocab, bands=((5, 10), (10, 50), (50, 500), (500, None)),
                      k: int = 10, per_band: int = 200, seed: int = 0) -> list[dict]:
    """For ``per_band`` random words of each count band [lo, hi): the share of their ``k``
    cosine neighbours that are also Euclidean neighbours, and the median count of each kind."""
    counts = np.asarray(vocab.counts)
    E, sq = normalize_rows(W), np.einsum("ij,ij->i", W, W)
    rng = np.random.default_rng(seed)
    out = []
    for lo, hi in bands:
        pool = np.flatnonzero((counts >= lo) & (counts < (hi or np.inf)))
        q = rng.choice(pool, size=min(per_band, len(pool)), replace=False)
        cos, d2 = E[q] @ E.T, sq[q][:, None] + sq[None, :] - 2 * W[q] @ W.T
        cos[np.arange(len(q)), q], d2[np.arange(len(q)), q] = -np.inf, np.inf
        nc, ne = np.argpartition(-cos, k, axis=1)[:, :k], np.argpartition(d2, k, axis=1)[:, :k]
        out.append({"band": (lo, hi), "n_words": len(q),
                    "overlap": float(np.mean([len(set(x) & set(z)) / k for x, z in zip(nc, ne)])),
                    "median_count_cosine": float(np.median(counts[nc])),
                    "median_count_euclidean": float(np.median(counts[ne]))})
    return out


# ---------------------------------------------------------------- §2 antonyms
ANTONYMS = [("happy", "sad"), ("hot", "cold"), ("old", "new"), ("good", "bad"), ("big", "small"),
            ("rich", "poor"), ("win", "lose"), ("strong", "weak"), ("fast", "slow"),
            ("hard", "easy"), ("love", "hate"), ("buy", "sell"), ("high", "low"), ("war", "peace"),
            ("long", "short"),
            ("wide", "narrow"), ("true", "false"), ("accept", "reject"), ("smart", "dumb"),
            ("smart", "stupid"), ("difficult", "easy"), ("ancient", "modern"), ("sharp", "dull"),
            ("north", "south"), ("east", "west"), ("top", "bottom"), ("day", "night"),
            ("rise", "fall"), ("begin", "end"), ("left", "right"), ("up", "down"), ("wet", "dry")]


def antonym_table(W: np.ndarray, vocab, pairs_by_set: dict, antonyms=ANTONYMS) -> list[dict]:
    """The antonym pairs (either order) of each benchmark {name: [(w1, w2, score)]}, with their
    human score and cosine, each also as a percentile among the set's in-vocabulary pairs."""
    ant = {frozenset(p) for p in antonyms if p[0] != p[1]}
    E = normalize_rows(W)
    rows = []
    for name, pairs in pairs_by_set.items():
        known = [(a, b, s) for a, b, s in pairs if a in vocab and b in vocab]
        human = np.array([s for _, _, s in known])
        cos = np.array([float(E[vocab.index(a)] @ E[vocab.index(b)]) for a, b, _ in known])
        for (a, b, s), c in zip(known, cos, strict=True):
            if frozenset((a, b)) in ant:
                rows.append({"set": name, "pair": (a, b), "human": s, "cosine": c,
                             "human_pct": float(np.mean(human < s) * 100),
                             "cosine_pct": float(np.mean(cos < c) * 100)})
    return rows


# ---------------------------------------------------------------- §4 and §6 comparisons
def semantic_mask(questions: dict, vocab) -> np.ndarray:
    """(n,) True for a semantic question, over the answerable questions in analogy_hits' order."""
    stoi, _ = vocab_maps(vocab)
    return np.array([not cat.startswith("gram") for cat, qs in questions.items() for q in qs
                     if all(w in stoi for w in q)], dtype=bool)


def against_best(estimates: dict, difference: Callable[[str, str], Interval]) -> tuple[str, dict]:
    """The method with the highest estimate, and {other method: ``difference(method, best)``},
    the Interval of method - best measured on the same items."""
    best = max(estimates, key=estimates.get)
    return best, {m: difference(m, best) for m in estimates if m != best}


# ---------------------------------------------------------------- §5 BBC topics
def topic_results(vectors, vocab, loss_grad: Callable, splits) -> dict:
    """{classifier: (accuracy per split, each article's share of right answers)} from mean unit
    word vectors: 'logreg' (softmax regression with ``loss_grad``) and 'knn'."""
    docs, labels = bbc_topic_task()
    topics = sorted(set(labels))
    y = np.array([topics.index(t) for t in labels])
    X, _ = document_vectors(vectors, vocab, docs)
    articles = np.unique(np.concatenate([test for _, test in splits]))
    out = {c: ([], np.zeros(len(articles)), np.zeros(len(articles))) for c in ("logreg", "knn")}
    for train, test in splits:
        Z = (X - X[train].mean(axis=0)) / X[train].std(axis=0)
        W, b = fit_softmax_regression(Z[train], y[train], len(topics), 1 / len(train), loss_grad)
        knn = make_classifier("knn").fit(X[train], y[train])
        guesses = {"logreg": (Z[test] @ W + b).argmax(axis=1), "knn": knn.predict(X[test])}
        for c, guess in guesses.items():
            accuracy, right, seen = out[c]
            accuracy.append(float(np.mean(guess == y[test])))
            right[np.searchsorted(articles, test)] += guess == y[test]
            seen[np.searchsorted(articles, test)] += 1
    return {c: (accuracy, right / seen) for c, (accuracy, right, seen) in out.items()}


# ---------------------------------------------------------------- §7 more data or dimensions
def plot_grid_and_control(grid, control, control_epochs, metric: str, label: str):
    """``metric`` against the corpus size, one line per dimension: the grid and the control."""
    fig, axes = new_figure(ncols=2, sharey=True)
    scale = 100 if metric == "analogy" else 1
    titles = (f"{grid.config['epochs'][0]} epochs on every sample",
              f"equal updates: {'/'.join(map(str, control_epochs))} epochs")
    for ax, g, title in zip(axes, (grid, control), titles, strict=True):
        S = scale * np.asarray(g.scores[metric], dtype=float)
        mean, lo, hi = S.mean(axis=0), S.min(axis=0), S.max(axis=0)
        for j, dim in enumerate(g.dims):
            ax.errorbar(g.tokens, mean[:, j], yerr=[mean[:, j] - lo[:, j], hi[:, j] - mean[:, j]],
                        marker=MARKERS[j % len(MARKERS)], capsize=3, label=f"{dim} dims")
        log_axis(ax, "x", base=2, ticks=g.tokens)
        ax.set_xticks(g.tokens, [f"{t / 1e6:.2f}M" for t in g.tokens])
        ax.axhline(0, color=BLACK, lw=0.5)
        set_labels(ax, title, "training tokens (log scale)", label,
                   y_unit="%" if scale == 100 else None)
    axes[0].legend(ncol=2)
    return fig


# ---------------------------------------------------------------- §8 2-D projections
def project_2d(X: np.ndarray, method: str = "PCA", seed: int = 0) -> np.ndarray:
    """2-D coordinates (N, 2) of the unit-length rows of X (N, D), by 'PCA' or 't-SNE'."""
    from sklearn.manifold import TSNE  # loaded only when a projection is drawn
    X = normalize_rows(X)
    if method == "PCA":
        return PCA(n_components=2, random_state=seed).fit_transform(X)
    if method == "t-SNE":
        return TSNE(n_components=2, perplexity=min(10.0, len(X) - 1.0), init="pca",
                    random_state=seed, metric="cosine").fit_transform(X)
    raise ValueError(f"method must be 'PCA' or 't-SNE', got {method!r}")


def make_projection_render(embeddings: dict, groups: dict):
    """The projection explorer's render(neighbours, method, embedding) -> (figure, summary)."""

    def render(neighbours: int = 0, method: str = "PCA", embedding: str | None = None):
        name = embedding or next(iter(embeddings))
        vectors, vocab = embeddings[name]
        stoi, _ = vocab_maps(vocab)
        points, seen = [], set()                 # (word, group, is it a group word)
        for g, ws in groups.items():
            for w in ws:
                if w not in stoi or w in seen:
                    continue
                near = [nb for nb, _ in nearest_neighbours(vectors, vocab, w, k=int(neighbours))]
                for i, x in enumerate([w] + near):
                    if x not in seen:
                        seen.add(x)
                        points.append((x, g, i == 0))
        words, labels, is_seed = (list(t) for t in zip(*points)) if points else ([], [], [])
        if len(words) < 3:
            raise ValueError(f"fewer than 3 of the group words are in the vocabulary of {name}")
        Y = project_2d(np.asarray(vectors)[[stoi[w] for w in words]], method)
        seeds, lab = np.array(is_seed), np.array(labels)
        fig, ax = new_figure(width=7, height=5)
        for i, g in enumerate(groups):
            colour, marker = list(COLOURS.values())[i % len(COLOURS)], MARKERS[i % len(MARKERS)]
            for big, size, alpha in ((True, 40, 1.0), (False, 12, 0.6)):
                pick = (lab == g) & (seeds == big)
                ax.scatter(*Y[pick].T, color=colour, marker=marker, s=size, alpha=alpha,
                           label=g if big else None)
                for (x, y), w in zip(Y[pick], np.array(words)[pick]):
                    ax.annotate(w, (x, y), fontsize=9 if big else 7, color=colour, alpha=alpha,
                                xytext=(2, 2), textcoords="offset points")
        ax.legend(loc="best")
        set_labels(ax, f"{method} of {len(words)} words, {name}", f"{method} dimension 1",
                   f"{method} dimension 2")
        D = np.linalg.norm(Y[:, None, :] - Y[None, seeds, :], axis=2)
        D[np.flatnonzero(seeds), np.arange(seeds.sum())] = np.inf   # not its own neighbour
        agree = float(np.mean(lab[seeds][D.argmin(axis=1)] == lab))
        return fig, (f"{name}, {method}, {neighbours} neighbours per group word: {len(words)} "
                     f"words; nearest group word in 2-D is from the same group for {agree:.0%} "
                     "of them")

    return render
