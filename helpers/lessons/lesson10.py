"""Lesson 10 (contextual representations): its baselines, tables, live runs and explorers."""
from __future__ import annotations

import textwrap
from collections import Counter
from typing import Callable, Sequence

import numpy as np
import torch

from helpers.course.bert_finetune import (
    METHODS,
    FinetuneResults,
    bbc_finetune_data,
    choose_logreg,
    classifier_accuracy,
    encode_docs,
    finetune_run,
    logreg_test_predictions,
    static_features,
    static_vectors_of,
    training_subset,
)
from helpers.course.data import SenseExample
from helpers.course.mlm_model import (
    TEST_SEED,
    VALID_SEED,
    ShippedMLM,
    mlm_sentences,
)
from helpers.course.models import load_model
from helpers.course.shipped_vectors import load_word_vectors
from helpers.infra.plotting import (
    BLACK,
    COLOURS,
    LINESTYLES,
    MARKERS,
    log_axis,
    new_figure,
    set_labels,
)
from helpers.infra.seeding import make_rng
from helpers.lib.bert import TinyBert
from helpers.lib.bpe import SPECIALS, BPETokenizer
from helpers.lib.contextual import (
    nearest_sense,
    nearest_sense_accuracy,
    numpy_word_vectors,
    word_vectors,
)
from helpers.lib.encoder_numpy import NumpyEncoder
from helpers.lib.mlm import IGNORE, MaskedBatch, encode_sentence, length_bucketed_batches, pad_batch
from helpers.lib.optim import Adam, clip_global_norm
from helpers.lib.pretraining import (
    batch_to_torch,
    encode_corpus,
    fixed_eval_batches,
)
from helpers.lib.stats import Interval, bootstrap_interval, resamples

WIDTH = 96  # explorers' summaries are wrapped to this width (an HTML export breaks longer lines)


# ---------------------------------------------------------------- static baselines
def shipped_static_vectors(name: str = "gensim-skipgram"):
    """The course's shipped static word vectors as gensim KeyedVectors, and their metadata."""
    from gensim.models import KeyedVectors  # heavy optional import: loaded only when gensim is used
    W, _, vocab, meta = load_word_vectors(name)
    kv = KeyedVectors(W.shape[1])
    kv.add_vectors(list(vocab.itos), np.asarray(W, dtype=np.float32))
    return kv, meta


def static_vectors(kv, examples: Sequence[SenseExample], context: bool = False,
                   missing: Counter | None = None) -> np.ndarray:
    """Static vectors of the examples (n, d): the target word's vector, or with ``context=True``
    the mean of the other words' (a word without a vector counted in ``missing``, or a KeyError)."""
    out = []
    for e in examples:
        if not context:
            if e.word not in kv:
                raise KeyError(f"{e.word!r} is not in the static vocabulary")
            out.append(kv[e.word])
            continue
        ctx = []
        for i, w in enumerate(e.tokens):
            if i == e.position:
                continue
            if w in kv:
                ctx.append(kv[w])
            elif missing is None:
                raise KeyError(f"the context word {w!r} of {e.sentence!r} has no static vector; "
                               "pass missing=Counter() to leave such words out and count them")
            else:
                missing[w] += 1
        if not ctx:
            raise ValueError(f"no context word of {e.sentence!r} has a static vector")
        out.append(np.mean(ctx, axis=0))
    return np.asarray(out, dtype=np.float64)


# ------------------------------------------------------------ contextual vectors of the examples
def example_vectors(model: TinyBert | NumpyEncoder, tok: BPETokenizer,
                    examples: Sequence[SenseExample], layer: int = -1,
                    device: str = "cpu") -> np.ndarray:
    """Contextual vectors (n, d) of the examples' target words at ``layer``."""
    sentences, positions = [e.tokens for e in examples], [e.position for e in examples]
    if isinstance(model, NumpyEncoder):
        if layer != -1:
            raise ValueError(f"a NumpyEncoder gives its final layer only (layer=-1), got {layer}")
        return numpy_word_vectors(model, tok, sentences, positions)
    return word_vectors(model, tok, sentences, positions, layer, device)


# ---------------------------------------------------------------- the sense explorer
def pca_2d(X: np.ndarray) -> np.ndarray:
    """Project (n, d) onto its first two principal components, (n, 2), signs fixed."""
    Xc = np.asarray(X, np.float64) - np.mean(X, axis=0)
    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
    Vt = Vt[:2] * np.sign(Vt[:2][np.arange(2), np.argmax(np.abs(Vt[:2]), axis=1)])[:, None]
    return Xc @ Vt.T


def render_sense_explorer(model: TinyBert, tok: BPETokenizer, examples,
                          sentence: int = 0, word: str = "bank", layer: int = -1):
    """Explorer: one sentence of ``word``, its attention at ``layer`` and its nearest sense, with
    the word's contextual vectors by PCA. Returns (figure, summary)."""
    if not isinstance(examples, dict):
        examples = {w: [e for e in examples if e.word == w] for w in {e.word for e in examples}}
    exs = examples.get(word)
    if not exs:
        raise ValueError(f"no examples for the word {word!r}")
    if sentence < 0:
        raise ValueError(f"sentence must be 0 or more, got {sentence}")
    L = model.cfg.n_layers
    layer = L if layer == -1 else layer
    if not 1 <= layer <= L:
        raise ValueError(f"layer must be in [1, {L}] (or -1 for the last), got {layer}")
    sentence = min(sentence, len(exs) - 1)
    ex = exs[sentence]
    X = example_vectors(model, tok, exs, layer)
    senses = np.array([e.sense for e in exs])
    others = np.arange(len(exs)) != sentence
    pred, scores = nearest_sense(X[sentence], X[others], senses[others])

    _, owner = tok.encode_words(list(ex.tokens))
    seq = encode_sentence(tok, ex.tokens, model.cfg.max_len)
    q = 1 + int(np.flatnonzero(owner == ex.position)[0])
    _, attn = model.layers_and_attention(torch.as_tensor(seq[None]))
    a = attn[layer - 1, 0].mean(0)[q].numpy()            # (L,) over keys
    # word-initial pieces without their marker, continuation pieces as '-ing', specials as they are
    pieces = [piece_text(p) for p in tok.pieces(seq)]

    fig, (ax1, ax2) = new_figure(2, height=3.8)
    colors = [COLOURS["vermillion"] if k == q else COLOURS["blue"] for k in range(len(seq))]
    ax1.bar(np.arange(len(seq)), a, color=colors)
    ax1.set_xticks(np.arange(len(seq)), pieces, rotation=90, fontsize=8)
    set_labels(ax1, f"layer {layer}: where '{ex.word}' (red) looks", "piece of the sentence",
               "attention weight (mean of heads)")
    P = pca_2d(X)
    for s, c, m in zip(sorted(set(senses)), [COLOURS["orange"], COLOURS["green"]], ["o", "s"],
                       strict=False):
        ax2.scatter(*P[senses == s].T, color=c, marker=m, label=s, alpha=0.75)
    ax2.scatter(*P[sentence], marker="*", s=300, color=BLACK, label="this sentence")
    set_labels(ax2, f"contextual vectors of '{ex.word}', layer {layer} (PCA)",
               "principal component 1", "principal component 2")
    ax2.legend()
    top = int(np.argmax(np.where(np.arange(len(seq)) == q, -1, a)))
    cos = ", ".join(f"{s} {v:.2f}" for s, v in scores.items())
    acc = [spread(sense_rounds(example_vectors(model, tok, exs, k), senses, 3, 200, 0))[0]
           for k in range(L + 1)]
    summary = (f"sentence {sentence} of {len(exs)}: “{ex.sentence}” — labelled: {ex.sense}; "
               f"nearest sense at layer {layer}: {pred} (cosine to centroids: {cos}); "
               f"'{ex.word}' attends most to '{pieces[top]}' ({a[top]:.2f}). Nearest-sense "
               f"accuracy of '{word}' (3 labelled per sense, 200 draws) at layer {layer}: "
               f"{acc[layer]:.1%}; at every layer 0..{L}: " + ", ".join(f"{v:.1%}" for v in acc))
    return fig, textwrap.fill(summary, WIDTH)


# ------------------------------------------------------------ the shipped masked LM: test numbers
@torch.no_grad()
def sentence_scores(model: TinyBert, batches: list) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence of ``batches`` with a masked piece: the masked pieces predicted right (top-1)
    and the masked pieces, both (n,) int64."""
    right, count = [], []
    model.eval()
    for b in batches:
        x, y, att = batch_to_torch(b, "cpu")
        sel = y != IGNORE
        pred = torch.full_like(y, -1)
        if sel.any():
            pred[sel] = model.mlm_logits(model(x, att)[sel]).argmax(-1)
        right.append(((pred == y) & sel).sum(1).numpy())
        count.append(sel.sum(1).numpy())
    right, count = np.concatenate(right), np.concatenate(count)
    keep = count > 0
    return right[keep].astype(np.int64), count[keep].astype(np.int64)


def accuracy_interval(right: np.ndarray, count: np.ndarray, n_boot: int = 1000,
                      seed: int = 0) -> Interval:
    """Masked-token accuracy sum(right) / sum(count) with a 95 % bootstrap interval over sentences.
    """
    return bootstrap_interval(lambda r, c: r.sum() / c.sum(), right, count, n_boot=n_boot,
                              seed=seed)


def unigram_sentence_scores(top_id: int, batches: list) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`sentence_scores` for the unigram baseline that always answers ``top_id``."""
    right, count = [], []
    for b in batches:
        sel = b.labels != IGNORE
        right.append(((b.labels == top_id) & sel).sum(1))
        count.append(sel.sum(1))
    right, count = np.concatenate(right), np.concatenate(count)
    keep = count > 0
    return right[keep].astype(np.int64), count[keep].astype(np.int64)


def split_batches(tok: BPETokenizer, split: str, max_len: int = 64) -> list:
    """The shipped model's evaluation batches of ``split``, masked as the trainer masked them."""
    seeds = {"valid": VALID_SEED, "test": TEST_SEED}
    if split not in seeds:
        raise ValueError(f"split must be 'valid' or 'test', got {split!r}")
    return fixed_eval_batches(tok, encode_corpus(tok, mlm_sentences()[split], max_len),
                              seed=seeds[split])


# ---------------------------------------------------------------- word senses with their spread
def sense_rounds(X: np.ndarray, senses: Sequence[str], n_support: int = 3, repeats: int = 200,
                 seed: int = 0, classify: Callable | None = None) -> np.ndarray:
    """Accuracy of each of ``repeats`` rounds of nearest-sense classification (repeats,), drawn
    with ``seed`` (:func:`helpers.lib.contextual.nearest_sense_accuracy`)."""
    return nearest_sense_accuracy(X, senses, n_support, make_rng(seed), repeats,
                                  classify)["per_round"]


def spread(rounds: np.ndarray) -> tuple[float, float, float]:
    """(mean, 2.5 %, 97.5 % percentile) of per-round accuracies."""
    r = np.asarray(rounds, dtype=np.float64)
    return float(r.mean()), float(np.percentile(r, 2.5)), float(np.percentile(r, 97.5))


def paired_difference(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95 % range over rounds of a - b (the same rounds): a tie when it contains 0."""
    return spread(np.asarray(a) - np.asarray(b))


def sense_table(vectors_of: dict, examples: Sequence[SenseExample], words: Sequence[str],
                n_support: int = 3, repeats: int = 200, seed: int = 0,
                classify: Callable | None = None) -> dict:
    """{method: {word: per-round accuracies (repeats,)}}, all methods on the same rounds (see
    :func:`sense_rounds`)."""
    table = {}
    for name, vec in vectors_of.items():
        table[name] = {}
        for w in words:
            exs = [e for e in examples if e.word == w]
            table[name][w] = sense_rounds(vec(exs), [e.sense for e in exs], n_support, repeats,
                                          seed, classify)
    return table


def sense_table_text(table: dict, words: Sequence[str], short: dict) -> str:
    """A sense table as text: a row per word and their mean, a column per method, each cell the
    mean accuracy (%) and [2.5 %, 97.5 %] of the draws."""
    rows = [" " * 10 + "".join(f"{short[k]:>13s}" for k in table)]
    for w in list(words) + [f"mean of {len(words)}"]:
        cells = [spread(np.mean([row[v] for v in words], axis=0) if w not in words else row[w])
                 for row in table.values()]
        rows.append(f"{w:10s}" + "".join(f"{100 * m:>4.0f} [{100 * lo:2.0f},{100 * hi:3.0f}]"
                                         for m, lo, hi in cells))
    return "\n".join(rows)


def layer_table(model: TinyBert, tok: BPETokenizer, examples: Sequence[SenseExample],
                words: Sequence[str], n_support: int = 3, repeats: int = 200,
                seed: int = 0, classify: Callable | None = None) -> dict:
    """{word: [per-round accuracies of layer 0 (the embeddings), 1, ..., n_layers]}."""
    out = {}
    for w in words:
        exs = [e for e in examples if e.word == w]
        senses = [e.sense for e in exs]
        out[w] = [sense_rounds(example_vectors(model, tok, exs, layer), senses, n_support,
                               repeats, seed, classify)
                  for layer in range(model.cfg.n_layers + 1)]
    return out



# ---------------------------------------------------------------- fine-tuning (section 5)
FINETUNE_STYLE = {"fine-tuned": (COLOURS["vermillion"], LINESTYLES[0], MARKERS[0]),
                  "frozen": (COLOURS["blue"], LINESTYLES[1], MARKERS[1]),
                  "static": (COLOURS["green"], LINESTYLES[2], MARKERS[2])}
FINETUNE_LABEL = {"fine-tuned": "fine-tuned encoder + head",
                  "frozen": "frozen encoder features + log. regression",
                  "static": "static skip-gram mean + log. regression"}


def finetune_table(results: FinetuneResults) -> str:
    """The shipped test accuracies as a text table: per size and method, mean [min, max]."""
    head = f"{'articles':>9s}" + "".join(f"{m + ' (mean [min, max])':>30s}" for m in METHODS)
    rows = [head]
    for i, n in enumerate(results.sizes):
        cells = ""
        for m in METHODS:
            a = 100 * results.test_acc[m][i]
            cells += f"{f'{a.mean():.1f} % [{a.min():.1f}, {a.max():.1f}]':>30s}"
        rows.append(f"{n:>9,d}" + cells)
    return "\n".join(rows)


def plot_finetune(results: FinetuneResults, live: dict | None = None, ax=None):
    """Test accuracy vs training-set size (log x), mean and min-max band per method; ``live``
    adds the live run as a star. Returns the axes."""
    if ax is None:
        _, ax = new_figure()
    x = np.asarray(results.sizes)
    for m in METHODS:
        a = 100 * results.test_acc[m]
        colour, ls, marker = FINETUNE_STYLE[m]
        ax.plot(x, a.mean(1), color=colour, ls=ls, marker=marker, label=FINETUNE_LABEL[m])
        ax.fill_between(x, a.min(1), a.max(1), color=colour, alpha=0.15)
    if live is not None:
        ax.plot([live["n"]], [100 * live["test_acc"]], "*", ms=14, color=BLACK,
                label=f"live fine-tuning, {live['steps']} steps")
    log_axis(ax, "x", ticks=results.sizes)
    set_labels(ax, "BBC News topics: test accuracy (mean of 3 seeds, band: min-max)",
               "training articles (log scale)", "test accuracy (%)")
    ax.legend(fontsize=8, loc="lower right")
    return ax


def static_answers(results: FinetuneResults, pretrain) -> dict:
    """{way: (sizes, seeds, n_test) bool}: the static method's answer on every test article,
    with lesson 07's vectors (``'lesson 07'``) or ``pretrain``'s (``'pre-training only'``)."""
    s = results.settings
    data = bbc_finetune_data(s["max_sents"], s["n_valid_per_topic"], s["valid_seed"])
    y = data.labels
    X07 = static_features(*static_vectors_of(load_model(s["static"])), data.docs)
    Xp = pretrain.features_of(data.doc_index)
    out = {k: np.zeros((len(results.sizes), len(results.seeds), len(data.test)), dtype=bool)
           for k in ("lesson 07", "pre-training only")}
    for i, n in enumerate(results.sizes):
        for j, seed in enumerate(results.seeds):
            idx = data.pool[training_subset(y[data.pool], int(n), int(seed))]
            pred07 = logreg_test_predictions(X07[idx], y[idx], X07[data.test],
                                             float(results.static_C[i, j]))
            out["lesson 07"][i, j] = pred07 == y[data.test]
            _, C, _ = choose_logreg({"static": (Xp[idx], Xp[data.valid])}, y[idx], y[data.valid],
                                    s["Cs"])
            pred = logreg_test_predictions(Xp[idx], y[idx], Xp[data.test], C)
            out["pre-training only"][i, j] = pred == y[data.test]
    return out


def live_finetune(shipped: ShippedMLM, results: FinetuneResults, steps: int = 20, n: int = 100,
                  seed: int = 0, progress: bool = True) -> dict:
    """Fine-tune the shipped encoder live on ``n`` articles for ``steps`` steps with the shipped
    recipe. Returns {'n', 'seed', 'steps', 'test_acc', 'losses', 'cpu_seconds'}."""
    s = dict(results.settings)
    if not 1 <= int(steps) <= 1000:
        raise ValueError(f"steps must be between 1 and 1,000, got {steps}")
    data = bbc_finetune_data(s["max_sents"], s["n_valid_per_topic"], s["valid_seed"])
    y_pool = data.labels[data.pool]
    idx = data.pool[training_subset(y_pool, int(n), int(seed))]
    tok = shipped.tok
    train_ids = encode_docs(tok, [data.docs[k] for k in idx], s["max_len"])
    test_ids = encode_docs(tok, [data.docs[k] for k in data.test], s["max_len"])
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        s.update(steps=int(steps), n_evals=1)
        r = finetune_run(shipped, train_ids, data.labels[idx], [], np.zeros(0, dtype=np.int64), s,
                         results.chosen["lr"], results.chosen["pooling"], int(seed),
                         len(data.topics), max_steps=int(steps), progress=progress,
                         desc="live fine-tuning")
        acc = classifier_accuracy(r["model"], tok, test_ids, data.labels[data.test])
    finally:
        torch.set_num_threads(before)
    return {"n": int(n), "seed": int(seed), "steps": int(steps), "test_acc": acc,
            "losses": r["losses"], "cpu_seconds": r["cpu_seconds"]}


def render_live_finetune(steps: int = 20, *, shipped: ShippedMLM, results: FinetuneResults):
    """Explorer: a live fine-tuning of ``steps`` steps on 100 articles, on the shipped curves."""
    live = live_finetune(shipped, results, steps)
    fig, ax = new_figure()
    plot_finetune(results, live, ax)
    i = results.sizes.index(live["n"])
    shipped_acc = results.test_acc["fine-tuned"][i]
    return fig, textwrap.fill(
        f"live run: {live['steps']} steps on {live['n']} articles, test accuracy "
        f"{live['test_acc']:.1%}, last training loss {live['losses'][-1]:.2f} nats; the shipped "
        f"runs at {live['n']} articles: {shipped_acc.mean():.1%} ({shipped_acc.min():.1%}-"
        f"{shipped_acc.max():.1%} over three subsets) after {results.steps[i].max()} steps, the "
        "best step chosen on validation", WIDTH)


# ------------------------------------------------------------ section 3: the live model, baselines
def encoder_scores(encoder: NumpyEncoder, batches: list) -> dict:
    """A NumPy encoder on masked-once batches: {'accuracy', 'nll' (nats), 'right', 'count'}."""
    return _blank_scores(lambda b: _encoder_predict(encoder, b), batches)


def _encoder_predict(encoder: NumpyEncoder, b):
    rows, cols = np.nonzero(b.labels != IGNORE)
    logits = encoder.mlm_logits(encoder.forward(b.inputs, b.attention_mask)[rows, cols])
    P = np.exp(logits - logits.max(1, keepdims=True))
    return P / P.sum(1, keepdims=True), b.labels[rows, cols], rows


def _blank_scores(predict, batches: list) -> dict:
    right, count, nll, n = [], [], 0.0, 0
    for b in batches:
        P, t, rows = predict(b)
        hits = np.zeros(len(b.labels), dtype=np.int64)
        np.add.at(hits, rows, P.argmax(1) == t)
        nll -= float(np.log(np.maximum(P[np.arange(len(t)), t], 1e-30)).sum())
        n += len(t)
        per = (b.labels != IGNORE).sum(1)
        right.append(hits[per > 0])
        count.append(per[per > 0])
    right, count = np.concatenate(right), np.concatenate(count)
    return {"accuracy": float(right.sum() / count.sum()), "nll": nll / n, "right": right,
            "count": count}


def paired_accuracy_difference(right_a: np.ndarray, right_b: np.ndarray, count: np.ndarray,
                               n_boot: int = 10_000, seed: int = 0) -> tuple[float, float, float]:
    """(difference, low, high): accuracy of a minus b on the same masked pieces, with the 95 %
    interval of a paired bootstrap over the sentences."""
    right_a, right_b, count = (np.asarray(x, dtype=np.float64) for x in (right_a, right_b, count))
    if not (right_a.shape == right_b.shape == count.shape) or right_a.ndim != 1:
        raise ValueError(f"right_a, right_b and count must be (n,) alike, got {right_a.shape}, "
                         f"{right_b.shape}, {count.shape}")
    idx = resamples(len(count), n_boot, seed)
    c = count[idx].sum(1)
    boot = (right_a[idx].sum(1) - right_b[idx].sum(1)) / c
    return float((right_a.sum() - right_b.sum()) / count.sum()), float(np.percentile(boot, 2.5)), \
        float(np.percentile(boot, 97.5))


def blank_examples(tok: BPETokenizer, sentences, n: int = 4, seed: int = 0, min_words: int = 8,
                   max_words: int = 14) -> list[tuple[tuple, int]]:
    """``n`` (words, position) pairs: seeded sentences of ``min_words``-``max_words`` words, each
    with one single-piece word (not the first)."""
    rng = make_rng(seed)
    pool = [tuple(x) for x in sentences if min_words <= len(x) <= max_words]
    out = []
    for k in rng.permutation(len(pool)):
        words = pool[int(k)]
        single = [i for i in range(1, len(words)) if len(tok.tokenize_word(words[i])) == 1]
        if single:
            out.append((words, int(rng.choice(single))))
        if len(out) == n:
            break
    return out


def blank_batch(tok: BPETokenizer, words, position: int, max_len: int = 64):
    """One sentence with word ``position`` hidden behind one [MASK]: a MaskedBatch (1, L)."""
    seq = encode_sentence(tok, words, max_len)
    _, owner = tok.encode_words(list(words))
    pieces = 1 + np.flatnonzero(owner == position)
    if len(pieces) == 0:
        raise ValueError(f"word {position} of the sentence is not among its first "
                         f"{max_len - 2} pieces")
    slot = int(pieces[0])
    inputs = np.concatenate([seq[:slot], [tok.mask_id], seq[slot + len(pieces):]])
    labels = np.full(len(inputs), IGNORE, dtype=np.int64)
    labels[slot] = seq[slot]
    return MaskedBatch(inputs[None], labels[None], np.ones((1, len(inputs)), dtype=bool))


def piece_text(piece: str) -> str:
    """A piece as a reader sees it: without its word-start marker, a continuation as '-ing'."""
    return piece if piece in SPECIALS else piece[1:] if piece.startswith("▁") else "-" + piece


def top_pieces(tok: BPETokenizer, p: np.ndarray, k: int = 3) -> str:
    """The ``k`` most probable pieces of the distribution ``p`` (V,), as 'piece p' text."""
    best = np.argsort(-p, kind="stable")[:k]
    return ", ".join(f"{piece_text(tok.itos[i])} {p[i]:.2f}" for i in best)


@torch.no_grad()
def tinybert_blank(model: TinyBert, batch) -> np.ndarray:
    """The shipped encoder's distribution (V,) at the one masked position of ``batch``."""
    x, y, att = batch_to_torch(batch, "cpu")
    sel = y != IGNORE
    return torch.softmax(model.mlm_logits(model(x, att)[sel]), -1)[0].numpy()


def encoder_blank(encoder: NumpyEncoder, batch) -> np.ndarray:
    """A NumPy encoder's distribution (V,) at the one masked position of ``batch``."""
    P, _, _ = _encoder_predict(encoder, batch)
    return P[0]


def masking_ablation(tok: BPETokenizer, train_seqs: list, E0: np.ndarray, replace,
                     valid_batches: list, steps: int = 300) -> dict:
    """Lesson 10 §3.3's encoder trained with ``replace`` (80/10/10) or all-[MASK] masking from
    the same start. Returns {rule: (share of blanks filled, share of pieces, none masked)}."""
    out, lengths = {}, [len(x) for x in train_seqs]
    for rule in ("[MASK] only", "80/10/10"):
        enc = NumpyEncoder(len(tok), 64, 1, 2, 128, 64, pad_id=tok.pad_id, dtype=np.float32)
        enc.E[...] = E0
        enc.P[...] = make_rng(1).normal(0, 0.1, enc.P.shape)
        opt, rng, queue = Adam(lr=1e-2), make_rng(0), []
        for k in range(1, steps + 1):
            if not queue:
                queue.extend(length_bucketed_batches(lengths, 64, rng))
            ids, att = pad_batch([train_seqs[i] for i in queue.pop()], tok.pad_id)
            chosen = (rng.random(ids.shape) < 0.15) & att & ~np.isin(ids, tok.special_ids)
            u = rng.random(ids.shape) * (rule == "80/10/10")         # u = 0: always [MASK]
            random_ids = rng.integers(len(tok.special_ids), len(tok), ids.shape)
            if chosen.any():
                enc.masked_lm_step(replace(ids, chosen, u, random_ids, tok.mask_id),
                                   np.where(chosen, ids, IGNORE), att)
                opt.lr = 1e-2 * min(1.0, k / 50)
                clip_global_norm(enc.grads, 1.0)
                opt.step(enc.params, enc.grads)
        right = seen = 0
        for b in valid_batches:
            ids = np.where(b.labels != IGNORE, b.labels, b.inputs)             # nothing masked
            ordinary = b.attention_mask & ~np.isin(ids, tok.special_ids)
            logits = enc.mlm_logits(enc.forward(ids, b.attention_mask)[ordinary])
            right += int((logits.argmax(1) == ids[ordinary]).sum())
            seen += int(ordinary.sum())
        out[rule] = (encoder_scores(enc, valid_batches)["accuracy"], right / seen)
    return out


# ------------------------------------------------------------ who did what to whom: the role probe
ROLE_NOUNS = ("man woman king police army team player company government child father mother "
              "friend leader minister judge manager director president").split()
ROLE_VERBS = ("saw met helped killed followed called told asked beat hit found paid joined "
              "warned").split()
ROLE_ADJECTIVES = "old young new local former".split()


def role_sentences(tok: BPETokenizer, kv, n_pairs: int = 160, seed: int = 0) -> tuple:
    """Minimal pairs for the agent/patient probe (lesson 10 §4.4): (sentences, positions,
    is_agent, group); "the X that V the Y" against "the X that the Y V", the same words and
    X's position, so static vectors and position are at chance."""
    missing = [w for w in ROLE_NOUNS + ROLE_VERBS + ROLE_ADJECTIVES + ["the", "that"]
               if w not in kv or len(tok.tokenize_word(w)) != 1]
    if missing:
        raise ValueError("role_sentences: these words are not one piece of the tokeniser or not in "
                         f"the static vocabulary: {missing}")
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for i, a in enumerate(ROLE_NOUNS) for b in ROLE_NOUNS[i + 1:]]
    pairs = [pairs[k] for k in rng.permutation(len(pairs))[:n_pairs]]
    sentences, positions, is_agent, group = [], [], [], []
    for g, (a, b) in enumerate(pairs):
        verb = ROLE_VERBS[rng.integers(len(ROLE_VERBS))]
        for x, y in ((a, b), (b, a)):
            pre = ["the"]
            if rng.random() >= 0.5:
                pre.append(ROLE_ADJECTIVES[rng.integers(len(ROLE_ADJECTIVES))])
            for words, agent in ((pre + [x, "that", verb, "the", y], 1),
                                 (pre + [x, "that", "the", y, verb], 0)):
                sentences.append(words)
                positions.append(len(pre))
                is_agent.append(agent)
                group.append(g)
    return sentences, np.array(positions), np.array(is_agent), np.array(group)


def role_features(model: TinyBert, tok: BPETokenizer, kv, sentences, positions) -> dict:
    """{method: (n, d) vectors of the target words}: the encoder's layers, the untrained encoder,
    static vectors of the word, its context and offsets -2..2, and its position."""
    out = {f"encoder layer {k}": word_vectors(model, tok, sentences, positions, k)
           for k in range(1, model.cfg.n_layers + 1)}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        untrained = TinyBert(model.cfg, tok.pad_id).eval()
        out["encoder untrained"] = word_vectors(untrained, tok, sentences, positions, -1)
    zero = np.zeros(kv.vector_size)
    pairs = list(zip(sentences, positions))
    out["static: the word's own vector"] = np.array([kv[s[p]] for s, p in pairs])
    out["static: mean of the context"] = np.array(
        [np.mean([kv[w] for i, w in enumerate(s) if i != p], 0) for s, p in pairs])
    out["position alone"] = np.eye(max(len(s) for s in sentences))[positions]
    out["static: words at offsets ±1, ±2"] = np.array(
        [np.concatenate([kv[s[p + o]] if 0 <= p + o < len(s) else zero for o in (-2, -1, 1, 2)])
         for s, p in pairs])
    return out


def role_probe(features: dict, is_agent, group, classify, splits: int = 5, seed: int = 0) -> dict:
    """{method: (splits x held-out items,) 1.0 where ``classify`` named the role right}; each
    split holds out a quarter of the noun pairs."""
    labels = np.where(np.asarray(is_agent) == 1, "agent", "patient")
    groups = np.unique(group)
    out = {name: [] for name in features}
    for k in range(splits):
        order = np.random.default_rng(seed + k).permutation(groups)
        held = np.isin(group, order[:len(groups) // 4])
        for name, X in features.items():
            X = X - X[~held].mean(0)
            guess = [classify(q, X[~held], labels[~held]) for q in X[held]]
            out[name].append(np.array(guess) == labels[held])
    return {name: np.concatenate(v).astype(float) for name, v in out.items()}
