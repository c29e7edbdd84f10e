"""Contextual vectors of word occurrences from a trained encoder, and word senses told apart by
the nearest sense centroid (lesson 10)."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch

from helpers.infra.seeding import choose_device
from helpers.lib.bert import TinyBert
from helpers.lib.bpe import BPETokenizer
from helpers.lib.checks import check_whole
from helpers.lib.encoder_numpy import NumpyEncoder
from helpers.lib.mlm import encode_sentence, pad_batch
from helpers.lib.text import check_token_lists, check_tokens, tokenize


def _target_batch(tok: BPETokenizer, sentences: Sequence[Sequence[str]], positions: Sequence[int],
                  max_len: int, caller: str) -> tuple[np.ndarray, np.ndarray, list]:
    """``[CLS] pieces [SEP]`` of every sentence, padded: (ids, attention mask, target spans)."""
    if len(sentences) != len(positions):
        raise ValueError(f"{len(sentences)} sentences but {len(positions)} positions")
    seqs, spans = [], []
    for words, pos in zip(sentences, positions, strict=True):
        pos = check_whole(pos, "a position", caller)
        if not 0 <= pos < len(words):
            raise ValueError(f"position {pos} is outside a sentence of {len(words)} words")
        _, owner = tok.encode_words(list(words))
        span = np.flatnonzero(owner == pos) + 1  # +1 for [CLS]
        if span.max() >= max_len - 1:
            raise ValueError(f"word {words[pos]!r} lies beyond max_len={max_len} pieces")
        seqs.append(encode_sentence(tok, words, max_len))
        spans.append(span)
    ids, att = pad_batch(seqs, tok.pad_id)
    return ids, att, spans


@torch.no_grad()
def word_vectors(model: TinyBert, tok: BPETokenizer, sentences: Sequence[Sequence[str]],
                 positions: Sequence[int], layer: int = -1, device: str = "cpu") -> np.ndarray:
    """Contextual vectors (n, d) of word ``positions[k]`` of ``sentences[k]``: the mean of its
    pieces' vectors at ``layer`` (0 = embeddings, -1 = the output) (lesson 10 §4)."""
    check_token_lists(sentences, "sentences", "word_vectors")
    n_layers = model.cfg.n_layers
    layer = check_whole(layer, "layer", "word_vectors")
    if not -(n_layers + 1) <= layer <= n_layers:
        raise ValueError(f"layer must be in [-{n_layers + 1}, {n_layers}], got {layer}")
    ids, att, spans = _target_batch(tok, sentences, positions, model.cfg.max_len, "word_vectors")
    dev = choose_device(device)
    model.eval()
    hidden, _ = model.to(dev).layers_and_attention(torch.as_tensor(ids, device=dev),
                                                   torch.as_tensor(att, device=dev))
    h = hidden[layer].float().cpu().numpy()
    return np.stack([h[k, span].mean(0) for k, span in enumerate(spans)])


def numpy_word_vectors(encoder: NumpyEncoder, tok: BPETokenizer,
                       sentences: Sequence[Sequence[str]], positions: Sequence[int]) -> np.ndarray:
    """:func:`word_vectors` at the final layer of a NumPy encoder, (n, d) (lesson 10 §3.3)."""
    check_token_lists(sentences, "sentences", "numpy_word_vectors")
    ids, att, spans = _target_batch(tok, sentences, positions, encoder.max_len,
                                    "numpy_word_vectors")
    h = np.asarray(encoder.forward(ids, att), dtype=np.float32)
    return np.stack([h[k, span].mean(0) for k, span in enumerate(spans)])


def find_word(words: Sequence[str], word: str, occurrence: int = 0) -> int:
    """Position of the ``occurrence``-th (0-based) ``word`` in ``words`` (lesson 10 §4)."""
    check_tokens(words, "words", "find_word")
    occurrence = check_whole(occurrence, "occurrence", "find_word", minimum=0)
    hits = [i for i, w in enumerate(words) if w == word]
    if len(hits) <= occurrence:
        raise ValueError(f"the word {word!r} occurs {len(hits)} time(s) in the sentence "
                         f"{' '.join(words)!r}; occurrence {occurrence} was asked for")
    return hits[occurrence]


def contextual_vector(model: TinyBert, tok: BPETokenizer, sentence: str, word: str,
                      occurrence: int = 0, layer: int = -1, device: str = "cpu") -> np.ndarray:
    """The contextual vector (d,) float32 of ``word`` in the text ``sentence``; lesson 10 §4."""
    words = tokenize(sentence)
    position = find_word(words, word.lower(), occurrence)
    return word_vectors(model, tok, [words], [position], layer, device)[0]


def _unit(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    n = np.linalg.norm(X, axis=-1, keepdims=True)
    return X / np.where(n == 0, 1, n)


def nearest_sense(query: np.ndarray, support: np.ndarray,
                  support_senses: Sequence[str]) -> tuple[str, dict]:
    """The sense of ``query`` (d,) whose centroid of ``support`` (n, d) is nearest by cosine, and
    {sense: cosine}; ties go to the alphabetically first sense (lesson 10 §4)."""
    support, senses = np.asarray(support), np.asarray(support_senses)
    if support.ndim != 2 or support.shape[0] != len(senses) or query.shape != (support.shape[1],):
        raise ValueError(f"expected query (d,), support (n, d) and n senses; got {query.shape}, "
                         f"{support.shape} and {len(senses)}")
    q = _unit(query)
    scores = {s: float(_unit(_unit(support[senses == s]).mean(0)) @ q)
              for s in sorted(set(senses))}
    best = max(scores, key=lambda s: (round(scores[s], 12), -sorted(scores).index(s)))
    return best, scores


def nearest_sense_accuracy(X: np.ndarray, senses: Sequence[str], n_support: int,
                           rng: np.random.Generator, repeats: int = 200,
                           classify: Callable | None = None) -> dict:
    """Few-shot word-sense classification by the nearest sense centroid (lesson 10 §4): in each of
    ``repeats`` rounds, ``n_support`` examples per sense are labelled and the rest classified, all
    at once by :func:`nearest_sense`'s rule, or query by query with ``classify(query (d,),
    support (n, d), senses (n,)) -> sense``. Returns {'accuracy', 'std', 'n_queries',
    'per_round' (repeats,)}."""
    X = np.asarray(X, dtype=np.float64)
    senses = np.asarray(senses)
    labels = sorted(set(senses.tolist()))
    if any(np.sum(senses == s) <= n_support for s in labels):
        raise ValueError(f"every sense needs more than n_support={n_support} examples")
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    U = X / np.where(norms == 0, 1, norms)
    truth = np.array([labels.index(s) for s in senses])
    accs = np.empty(repeats)
    for r in range(repeats):
        sup = [rng.choice(np.flatnonzero(senses == s), n_support, replace=False) for s in labels]
        qry = np.setdiff1d(np.arange(len(senses)), np.concatenate(sup))
        if classify is not None:
            every = np.concatenate(sup)
            guess = [classify(X[i], X[every], senses[every]) for i in qry]
            accs[r] = np.mean(np.asarray(guess) == senses[qry])
            continue
        C = np.stack([U[i].mean(0) for i in sup])
        C /= np.where((n := np.linalg.norm(C, axis=1, keepdims=True)) == 0, 1, n)
        scores = np.round(U[qry] @ C.T, 12)          # ties to the first sense, as nearest_sense
        accs[r] = np.mean(np.argmax(scores, axis=1) == truth[qry])
    return {"accuracy": float(np.mean(accs)), "std": float(np.std(accs)),
            "n_queries": int(len(qry)), "per_round": accs}
