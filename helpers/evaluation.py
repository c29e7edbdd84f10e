"""Evaluating word vectors: similarity, analogies, a downstream task, one comparison table.

Every function takes ``vectors`` (V, D) float array and ``vocab`` — a
:class:`helpers.text.Vocab`, or anything with ``stoi`` (word -> row) and ``itos``
(row -> word), or a plain list of words — and **returns** values (floats, lists,
dataclasses); notebooks print them. Unknown words raise
:class:`helpers.text.UnknownWordError` naming the word.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy.stats import spearmanr

from helpers.text import UnknownWordError


# ---------------------------------------------------------------- basics
def _maps(vocab):
    if hasattr(vocab, "stoi") and hasattr(vocab, "itos"):
        return vocab.stoi, vocab.itos
    if isinstance(vocab, dict):
        itos = [None] * len(vocab)
        for w, i in vocab.items():
            itos[i] = w
        return vocab, itos
    itos = list(vocab)
    return {w: i for i, w in enumerate(itos)}, itos


def word_index(vocab, word: str) -> int:
    """Row of ``word``; raises UnknownWordError naming it when it has no vector."""
    stoi, _ = _maps(vocab)
    if word not in stoi:
        raise UnknownWordError(f"{word!r} is not in the vocabulary of these vectors ({len(stoi)} words)")
    return stoi[word]


def _check(vectors, vocab):
    vectors = np.asarray(vectors)
    stoi, itos = _maps(vocab)
    if vectors.ndim != 2 or vectors.shape[0] != len(itos):
        raise ValueError(f"vectors must be (V, D) with V = {len(itos)} (the vocabulary size), got shape {vectors.shape}")
    return vectors, stoi, itos


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), float32 (V, D)."""
    v = np.asarray(vectors, dtype=np.float32)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(n == 0, 1, n)


def cosine(u: np.ndarray, v: np.ndarray) -> float:
    """cos(u, v) = u.v / (|u| |v|) for two (D,) vectors; 0.0 if either is all zero."""
    u, v = np.asarray(u, np.float64), np.asarray(v, np.float64)
    if u.shape != v.shape or u.ndim != 1:
        raise ValueError(f"cosine needs two vectors of the same length, got shapes {u.shape} and {v.shape}")
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    return 0.0 if nu == 0 or nv == 0 else float(u @ v / (nu * nv))


def word_similarity(vectors, vocab, w1: str, w2: str) -> float:
    """Cosine similarity of two words' vectors."""
    return cosine(vectors[word_index(vocab, w1)], vectors[word_index(vocab, w2)])


def nearest_neighbours(vectors, vocab, query, k: int = 10, exclude: Sequence[str] = ()) -> list[tuple[str, float]]:
    """The ``k`` words with the highest cosine to ``query`` (a word, or a (D,) vector).

    A query word is excluded from its own neighbours, as are the words in ``exclude``.
    Returns [(word, cosine)], best first.
    """
    vectors, stoi, itos = _check(vectors, vocab)
    skip = {word_index(vocab, w) for w in exclude}
    if isinstance(query, str):
        q = vectors[word_index(vocab, query)]
        skip.add(stoi[query])
    else:
        q = np.asarray(query, dtype=np.float64)
        if q.shape != (vectors.shape[1],):
            raise ValueError(f"query vector must have shape ({vectors.shape[1]},), got {q.shape}")
    sims = normalize_rows(vectors) @ (q / (np.linalg.norm(q) or 1)).astype(np.float32)
    sims[list(skip)] = -np.inf
    top = np.argsort(-sims)[:k]
    return [(itos[i], float(sims[i])) for i in top]


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
    """Solve a : b :: c : ? (``king - man + woman`` is ``analogy(v, voc, 'man', 'king', 'woman')``).

    The three query words are excluded from the answers. Returns the top ``k``
    [(word, score)]; the score is 3CosAdd's or 3CosMul's, depending on ``method``.
    """
    vectors, stoi, itos = _check(vectors, vocab)
    ids = np.array([[word_index(vocab, w)] for w in (a, b, c)])
    scores = _analogy_scores(normalize_rows(vectors), ids[0], ids[1], ids[2], method)[0]
    scores[ids.ravel()] = -np.inf
    top = np.argsort(-scores)[:k]
    return [(itos[i], float(scores[i])) for i in top]


@dataclass
class AnalogyResult:
    """Google-analogy accuracy. per_category: {category: (correct, answered, out_of_vocabulary)};
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
    """Accuracy on analogy questions {category: [(a, b, c, d)]}: a question is right when
    the best word for a : b :: c : ? (query words excluded) is d. Returns an AnalogyResult."""
    vectors, stoi, itos = _check(vectors, vocab)
    E = normalize_rows(vectors)
    res = AnalogyResult(method)
    for cat, qs in questions.items():
        known = [q for q in qs if all(w in stoi for w in q)]
        correct = 0
        if known:
            ids = np.array([[stoi[w] for w in q] for q in known])
            for s in range(0, len(ids), batch):
                a, b, c, d = ids[s:s + batch].T
                scores = _analogy_scores(E, a, b, c, method)
                rows = np.arange(len(a))
                for x in (a, b, c):
                    scores[rows, x] = -np.inf
                correct += int(np.sum(scores.argmax(axis=1) == d))
        res.per_category[cat] = (correct, len(known), len(qs) - len(known))
    return res


# ---------------------------------------------------------------- similarity
@dataclass
class SimilarityResult:
    """Spearman correlation between cosines and human ratings.

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
    """Spearman rho between cos(w1, w2) and the human score for the in-vocabulary pairs
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


# ---------------------------------------------------------------- extrinsic
def document_vectors(vectors, vocab, documents: Sequence[Sequence[str]]) -> tuple[np.ndarray, float]:
    """Average of the unit-length vectors of each document's known tokens.

    Returns (X (N, D) float32, share of tokens that had no vector). A document with no
    known token gets the zero vector.
    """
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


def make_classifier(name: str, seed: int = 0):
    """A scikit-learn pipeline (standardise -> classifier): 'logreg', 'knn' or 'mlp'."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    models = {
        "logreg": lambda: LogisticRegression(max_iter=2000, C=1.0),
        "knn": lambda: KNeighborsClassifier(n_neighbors=10, metric="cosine"),
        "mlp": lambda: MLPClassifier(hidden_layer_sizes=(64,), max_iter=300, random_state=seed),
    }
    if name not in models:
        raise ValueError(f"unknown classifier {name!r}; choose one of {sorted(models)}")
    return make_pipeline(StandardScaler(), models[name]())


@dataclass
class ClassificationResult:
    """Test accuracy of a classifier on averaged word vectors."""

    classifier: str
    accuracy: float
    n_train: int
    n_test: int
    unknown_token_share: float


def extrinsic_classification(vectors, vocab, documents: Sequence[Sequence[str]], labels: Sequence,
                             classifier: str = "logreg", test_fraction: float = 0.3, seed: int = 0) -> ClassificationResult:
    """Topic classification from averaged word vectors: a stratified, seeded train/test
    split, ``make_classifier(classifier)``, test accuracy. Returns a ClassificationResult."""
    from sklearn.model_selection import train_test_split
    if len(documents) != len(labels):
        raise ValueError(f"{len(documents)} documents but {len(labels)} labels")
    if len(set(labels)) < 2:
        raise ValueError("classification needs at least two different labels")
    X, unk = document_vectors(vectors, vocab, documents)
    Xtr, Xte, ytr, yte = train_test_split(X, np.asarray(labels), test_size=test_fraction,
                                          random_state=seed, stratify=np.asarray(labels))
    clf = make_classifier(classifier, seed).fit(Xtr, ytr)
    return ClassificationResult(classifier, float((clf.predict(Xte) == yte).mean()), len(ytr), len(yte), unk)


# ---------------------------------------------------------------- the comparison table
def bbc_topic_task() -> tuple[list[list[str]], list[str]]:
    """BBC News articles as token lists and their topics (the course's extrinsic task)."""
    from helpers.data import load_bbc_news
    from helpers.text import tokenize
    arts = load_bbc_news()
    return [tokenize(a.title + " " + a.text) for a in arts], [a.topic for a in arts]


def evaluate_embedding(vectors, vocab, classifiers: Sequence[str] = ("logreg", "knn"), task=None,
                       analogies=None, similarity_sets=None, seed: int = 0) -> dict:
    """All scores of one embedding: WordSim-353 and SimLex-999 rho (+ OOV counts),
    Google analogy accuracy (3CosAdd and 3CosMul), and extrinsic accuracy per classifier.

    ``task`` = (documents, labels) defaults to :func:`bbc_topic_task`; ``analogies`` to
    :func:`helpers.data.load_analogies`; ``similarity_sets`` to {'ws353': ..., 'simlex': ...}.
    """
    from helpers.data import load_analogies, load_word_similarity
    if similarity_sets is None:
        similarity_sets = {"ws353": load_word_similarity("wordsim353"), "simlex": load_word_similarity("simlex999")}
    analogies = analogies if analogies is not None else load_analogies()
    docs, labels = task if task is not None else bbc_topic_task()
    row = {}
    for key, pairs in similarity_sets.items():
        row[key] = similarity_correlation(vectors, vocab, pairs, name=key)
    row["analogy_add"] = analogy_accuracy(vectors, vocab, analogies, "add")
    row["analogy_mul"] = analogy_accuracy(vectors, vocab, analogies, "mul")
    for clf in classifiers:
        row[f"extrinsic_{clf}"] = extrinsic_classification(vectors, vocab, docs, labels, clf, seed=seed)
    return row


def comparison_table(methods: dict, classifiers: Sequence[str] = ("logreg", "knn"), progress: bool = True, **kw) -> list[dict]:
    """Evaluate every method of ``{name: (vectors, vocab, training_seconds)}`` the same way.

    Returns one dict per method: {'method', 'seconds', 'ws353', 'simlex', 'analogy_add',
    'analogy_mul', 'extrinsic_<clf>' ...} holding the result objects (see
    :func:`evaluate_embedding`). Add a method by adding one entry to the dict.
    """
    from tqdm.auto import tqdm
    if not methods:
        raise ValueError("no methods to compare (the dict is empty)")
    from helpers.data import load_analogies, load_word_similarity
    kw.setdefault("analogies", load_analogies())
    kw.setdefault("similarity_sets", {"ws353": load_word_similarity("wordsim353"),
                                      "simlex": load_word_similarity("simlex999")})
    kw.setdefault("task", bbc_topic_task())
    rows = []
    for name, entry in tqdm(methods.items(), desc="evaluating", disable=not progress, leave=False):
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


# ---------------------------------------------------------------- projections (widget)
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
    from sklearn.decomposition import PCA
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

    ``embeddings``: {name: (vectors, vocab)}; ``groups``: {group: [seed words]} (default
    WORD_GROUPS). The returned ``render(neighbours, method, embedding) -> (figure, summary)``
    plots each group's seed words (and their ``neighbours`` nearest neighbours, smaller) in
    one colour and reports how often a word's nearest seed word in 2-D is from its own group.
    """
    from helpers.plotting import new_figure
    groups = groups or WORD_GROUPS

    def render(neighbours: int = 0, method: str = "PCA", embedding: str | None = None):
        name = embedding or next(iter(embeddings))
        vectors, vocab = embeddings[name]
        stoi, _ = _maps(vocab)
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
        colours = dict(zip(groups, ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
                                     "tab:pink", "tab:gray", "tab:olive", "tab:cyan"], strict=False))
        for (x, y), w, g, s in zip(Y, words, labels, is_seed, strict=True):
            ax.scatter(x, y, color=colours[g], s=40 if s else 12, alpha=1.0 if s else 0.6)
            ax.annotate(w, (x, y), fontsize=9 if s else 7, color=colours[g], alpha=1.0 if s else 0.7,
                        xytext=(2, 2), textcoords="offset points")
        for g in groups:
            ax.scatter([], [], color=colours[g], label=g)
        ax.legend(fontsize=8, loc="best")
        ax.set_title(f"{method} of {len(words)} words, {name}")
        ax.set_xlabel(f"{method} dimension 1")
        ax.set_ylabel(f"{method} dimension 2")
        seeds = np.array(is_seed)
        lab = np.array(labels)
        D = np.linalg.norm(Y[:, None, :] - Y[None, seeds, :], axis=2)
        D[np.arange(len(Y))[seeds], np.arange(seeds.sum())] = np.inf          # a seed is not its own neighbour
        agree = float(np.mean(lab[seeds][D.argmin(axis=1)] == lab))
        summary = (f"{name}, {method}, {neighbours} neighbours per seed word: {len(words)} words; "
                   f"nearest seed word in 2-D is from the same group for {agree:.0%} of them")
        return fig, summary

    return render


# ---------------------------------------------------------------- every method of the course
def count_based_vectors(k: int = 100, window: int = 5) -> dict:
    """LSA and PPMI-SVD vectors on the course corpus, with the word2vec vocabulary
    (helpers.word2vec.course_corpus), built by helpers.lsa and helpers.counting and cached.

    LSA: TF-IDF word-document matrix (10 sentences per document) -> truncated SVD, U_k Σ_k.
    PPMI-SVD: co-occurrences within ±``window`` words in a sentence -> PPMI with context
    smoothing 0.75 -> truncated SVD, U_k Σ_k^1/2. Returns {name: (vectors (V, k), vocab, seconds)}.
    """
    from helpers.cache import cached
    from helpers.counting import cooccurrence_matrix, ppmi
    from helpers.lsa import lsa_word_vectors, svd_vectors
    from helpers.word2vec import course_corpus

    def build():
        corpus = course_corpus()
        t = time.perf_counter()
        lsa = lsa_word_vectors(corpus.sentences, corpus.vocab, k).astype(np.float32)
        t_lsa = time.perf_counter() - t
        t = time.perf_counter()
        sents = np.split(corpus.ids, np.flatnonzero(np.diff(corpus.sentence)) + 1)
        counts = cooccurrence_matrix(sents, len(corpus.vocab), window=window)
        vec = svd_vectors(ppmi(counts, alpha=0.75), k, weighting="sqrtS").astype(np.float32)
        t_ppmi = time.perf_counter() - t
        return {"LSA": (lsa, corpus.vocab, t_lsa), "PPMI-SVD": (vec, corpus.vocab, t_ppmi)}

    return cached(*count_based_key(k, window), build)


def count_based_key(k: int = 100, window: int = 5) -> tuple[str, str]:
    """The cache entry (name, version) of :func:`count_based_vectors`."""
    return "count-vectors", f"v1-k{k}-w{window}"


def course_cache_jobs(scaling_grid: bool = True) -> list:
    """The cached trainings behind lessons 07-08 as :class:`helpers.cache.CacheJob`s, the
    longest first (seconds measured alone on an idle 2-core machine): NumPy skip-gram
    (~75 s), GloVe (~60 s), PyTorch skip-gram (~35 s), NumPy CBOW (~30 s), fastText (~20 s,
    2 threads), PyTorch CBOW (~15 s), gensim skip-gram (~10 s, 2 threads), LSA + PPMI-SVD
    (~3 s), gensim CBOW (~3 s); and, if ``scaling_grid``, lesson 08's corpus-size x dimension
    grid of gensim CBOW runs (~35 s, 2 threads)."""
    from helpers.cache import CacheJob
    from helpers.glove import course_glove, course_glove_key
    from helpers.scaling import course_scaling_grid, course_scaling_key
    from helpers.subword import course_fasttext, course_fasttext_key
    from helpers.word2vec import course_vectors, course_vectors_key

    def w2v(name):
        return CacheJob(f"word2vec {name}", *course_vectors_key(name), course_vectors,
                        {"name": name, "progress": False})

    grid = [CacheJob("word2vec scaling grid", *course_scaling_key(), course_scaling_grid, {"progress": False})]
    return [w2v("numpy-skipgram"),
            CacheJob("GloVe", *course_glove_key(), course_glove, {"progress": False}),
            w2v("torch-skipgram"), w2v("numpy-cbow"),
            CacheJob("fastText", *course_fasttext_key(), course_fasttext),
            *(grid if scaling_grid else []),
            w2v("torch-cbow"), w2v("gensim-skipgram"),
            CacheJob("LSA and PPMI-SVD", *count_based_key(), count_based_vectors),
            w2v("gensim-cbow")]


def prepare_course_vectors(workers: int | None = None, scaling_grid: bool = True) -> dict:
    """Train whatever lessons 07-08 need that is not cached yet, ``workers`` trainings
    at a time (default: one per CPU core) — see :func:`helpers.cache.build_missing`.
    ``scaling_grid=False`` leaves out lesson 08's corpus-size x dimension grid.
    Returns {label: seconds} of what was built."""
    from helpers.cache import build_missing
    return build_missing(course_cache_jobs(scaling_grid), workers=workers)


def course_embeddings() -> dict:
    """{name: (vectors, vocab, training seconds)} for every method of the course trained on
    the shared corpus: LSA, PPMI-SVD and the six word2vec runs of lesson 07 (input vectors
    W). Everything comes from (or is built into) the cache. Add a method with one line:
    ``methods['GloVe'] = (vectors, vocab, seconds)``."""
    from helpers.word2vec import COURSE_METHODS, course_vectors
    out = dict(count_based_vectors())
    for name in COURSE_METHODS:
        tv = course_vectors(name)
        impl, model = name.split("-")
        label = {"numpy": "NumPy", "torch": "PyTorch", "gensim": "gensim"}[impl] + " " + \
            {"skipgram": "skip-gram", "cbow": "CBOW"}[model]
        out[label] = (tv.W, tv.vocab, tv.seconds)
    return out
