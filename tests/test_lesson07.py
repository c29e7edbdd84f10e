"""Lesson 07: its measurements (helpers.lessons.lesson07: the pair statistics agree with the
trainers' pair generator, the subsampling formulas, the timing, the shipped scores' reproduction),
the functions its live training runs (helpers.lib.sgns: the gradients against PyTorch and finite
differences, the sparse scatter against np.add.at, the SGD step against the course's layers), the
live run's bookkeeping and the challenge's scoreboard, the student edition's order (no exercise's
answer printed above it) and the shipped skip-grams' schedule (the last epoch kept)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.lessons.lesson07 import (
    keep_probability_paper,
    pair_statistics,
    shipped_scores,
    time_output_layers,
)
from helpers.lib.word2vec import keep_probabilities, prepare_corpus, skipgram_pairs


def _toy_corpus(n_sentences=300, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(40)]
    p = 1.0 / np.arange(1, 41)
    p /= p.sum()
    sentences = [list(rng.choice(words, size=rng.integers(2, 15), p=p)) for _ in range(n_sentences)]
    return prepare_corpus(sentences, min_count=1)


@pytest.mark.parametrize("dynamic", [True, False])
@pytest.mark.parametrize("sample", [0.0, 1e-2])
def test_pair_statistics_count_what_the_pair_generator_builds(dynamic, sample):
    corpus = _toy_corpus()
    stats = pair_statistics(corpus, sample, dynamic=dynamic, window=3, seeds=(4, 5), top=3)
    top = np.argsort(-corpus.vocab.counts)[:3]
    for i, seed in enumerate((4, 5)):
        rng = np.random.default_rng(seed)
        kept = rng.random(len(corpus.ids)) < keep_probabilities(corpus.vocab.counts, sample)[corpus.ids]
        c, o = skipgram_pairs(corpus.ids[kept], corpus.sentence[kept], 3, rng, dynamic=dynamic)
        assert stats["tokens"][i] == kept.sum()
        assert stats["pairs"][i] == len(c)
        assert stats["top_share"][i] == pytest.approx(np.isin(o, top).mean())
    assert sum(stats["by_distance"]) == pytest.approx(1.0)


def test_fixed_window_pairs_every_neighbour_and_the_dynamic_one_fewer():
    corpus = _toy_corpus()
    fixed = pair_statistics(corpus, 0.0, dynamic=False, window=2, seeds=(0,))
    dynamic = pair_statistics(corpus, 0.0, dynamic=True, window=2, seeds=(0,))
    sent = corpus.sentence
    expected = 2 * sum(int((sent[d:] == sent[:-d]).sum()) for d in (1, 2))
    assert fixed["pairs"] == [expected]
    assert dynamic["pairs"][0] < expected
    # CBOW examples: tokens with a neighbour in their sentence
    alone = np.bincount(sent) == 1
    assert fixed["cbow_examples"] == [len(sent) - int(alone.sum())]


def test_keep_probabilities_paper_and_code():
    counts = np.array([1000.0, 100.0, 10.0, 1.0])
    f = counts / counts.sum()
    t = 1e-2
    paper = keep_probability_paper(counts, t)
    np.testing.assert_allclose(paper, np.minimum(1, np.sqrt(t / f)))
    code = keep_probabilities(counts, t)
    np.testing.assert_allclose(code, np.minimum(1, (np.sqrt(f / t) + 1) * t / f))
    assert np.all(code >= paper)


def test_timing_rows_have_every_layer():
    rows = time_output_layers([50, 200], dim=8, batch=16, repeats=1)
    assert [r["vocab_size"] for r in rows] == [50, 200]
    for r in rows:
        assert all(r[k] > 0 for k in ("softmax", "ns_rows", "ns_dense", "hs")) and r["hs_mean_depth"] >= 1


def test_shipped_scores_reproduce_the_recorded_wordsim():
    from helpers.course.word_vectors import load_word_vectors  # noqa: PLC0415 (loads a shipped model)
    row = shipped_scores({"gensim CBOW": load_word_vectors("gensim-cbow")})["gensim CBOW"]
    assert row["wordsim_now"] == pytest.approx(row["wordsim"].estimate, abs=5e-4)
    assert row["queen_rank"] >= 1 and row["best_epoch"] <= row["epochs_run"]


def test_paired_difference_is_zero_for_the_same_vectors_and_matches_spearman():
    from scipy.stats import spearmanr  # noqa: PLC0415

    from helpers.lessons.lesson07 import paired_difference, similarity_items  # noqa: PLC0415

    corpus = _toy_corpus()
    rng = np.random.default_rng(0)
    words = corpus.vocab.itos
    pairs = [(words[i], words[j], float(rng.random())) for i, j in rng.integers(0, len(words), (60, 2)) if i != j]
    pairs.append(("unknown-word", words[0], 1.0))              # skipped, as similarity_correlation does
    A, B = rng.standard_normal((len(words), 5)), rng.standard_normal((len(words), 5))
    same = paired_difference(A, A, corpus.vocab, pairs, n_boot=200)
    assert same.estimate == 0 and same.low == 0 and same.high == 0
    d = paired_difference(A, B, corpus.vocab, pairs, n_boot=200)
    a, gold = similarity_items(A, corpus.vocab, pairs)
    b, _ = similarity_items(B, corpus.vocab, pairs)
    assert len(gold) == len(pairs) - 1
    assert d.estimate == pytest.approx(spearmanr(a, gold).statistic - spearmanr(b, gold).statistic)
    assert d.low <= d.estimate <= d.high


def test_paired_differences_equal_one_paired_difference_per_pair():
    from helpers.lessons.lesson07 import paired_difference, paired_differences  # noqa: PLC0415

    corpus = _toy_corpus()
    rng = np.random.default_rng(1)
    words = corpus.vocab.itos
    pairs = [(words[i], words[j], float(rng.integers(0, 5))) for i, j in rng.integers(0, len(words), (50, 2)) if i != j]
    vectors = {name: rng.standard_normal((len(words), 6)) for name in "ABC"}
    table = paired_differences(vectors, corpus.vocab, pairs, n_boot=300, seed=3)
    assert list(table) == [("A", "B"), ("A", "C"), ("B", "C")]
    for (a, b), d in table.items():
        assert d == paired_difference(vectors[a], vectors[b], corpus.vocab, pairs, n_boot=300, seed=3)
    with pytest.raises(ValueError, match="two sets"):
        paired_differences({"A": vectors["A"]}, corpus.vocab, pairs)




# ----------------------------------------------------------------------------- the one tie rule
def test_call_difference_is_the_course_s_one_tie_rule():
    from helpers.lessons.lesson07 import call_difference  # noqa: PLC0415
    from helpers.lib.metrics import Interval  # noqa: PLC0415

    def iv(low, high):
        return Interval((low + high) / 2, low, high, 0.95, 100, 1000)

    assert call_difference(iv(0.001, 0.2)) == "ahead" and call_difference(iv(-0.2, -0.001)) == "behind"
    for low, high in ((-0.05, 0.08), (0.0, 0.1), (-0.1, 0.0)):       # an interval that contains 0 is a tie
        assert call_difference(iv(low, high)) == "tie"


# ----------------------------------------------------------------------------- helpers.lib.sgns: what the live run trains
def _batch(seed=0, B=6, d=4, k=3, V=9, scale=0.8):
    rng = np.random.default_rng(seed)
    W, C = rng.standard_normal((V, d)) * scale, rng.standard_normal((V, d)) * scale
    return W, C, rng.integers(0, V, B), rng.integers(0, V, B), rng.integers(0, V, (B, k))


def test_the_batch_gradients_match_pytorch_and_finite_differences():
    import torch  # noqa: PLC0415

    from helpers.lib.gradcheck import numerical_gradient, relative_error  # noqa: PLC0415
    from helpers.lib.sgns import ns_loss_and_gradients  # noqa: PLC0415

    W, C, c, o, neg = _batch()
    v, u, U = W[c], C[o], C[neg]
    loss, dv, du, dU = ns_loss_and_gradients(v, u, U)
    vt, ut, Ut = (torch.tensor(x, requires_grad=True) for x in (v, u, U))
    s_o, s_n = (ut * vt).sum(1), (Ut * vt[:, None]).sum(2)
    lt = torch.nn.functional.softplus(-s_o) + torch.nn.functional.softplus(s_n).sum(1)
    lt.sum().backward()
    np.testing.assert_allclose(loss, lt.detach().numpy(), rtol=1e-12)
    for mine, ref in ((dv, vt.grad), (du, ut.grad), (dU, Ut.grad)):
        np.testing.assert_allclose(mine, ref.numpy(), rtol=1e-10, atol=1e-12)
    num = numerical_gradient(lambda: float(ns_loss_and_gradients(v, u, U)[0].sum()), v)
    assert relative_error(dv, num) < 1e-7
    # stable for scores of ±800, and float32 in, float32 out
    big = ns_loss_and_gradients(np.array([[40.0, 0.0]]), np.array([[-20.0, 0.0]]), np.array([[[20.0, 0.0]]]))
    assert np.all(np.isfinite(big[0])) and big[0][0] == pytest.approx(1600.0)
    assert ns_loss_and_gradients(v.astype(np.float32), u.astype(np.float32), U.astype(np.float32))[1].dtype == np.float32
    with pytest.raises(ValueError, match="U_neg"):
        ns_loss_and_gradients(v, u, U[:, :, :2])


def test_scatter_rows_sums_what_np_add_at_adds():
    from helpers.lib.sgns import scatter_rows  # noqa: PLC0415

    rng = np.random.default_rng(2)
    ids, g = rng.integers(0, 12, 50), rng.standard_normal((50, 3))
    rows, summed = scatter_rows(ids, g, 15)
    dense = np.zeros((15, 3))
    np.add.at(dense, ids, g)
    assert np.array_equal(rows, np.unique(ids))
    np.testing.assert_allclose(summed, dense[rows], rtol=1e-12)
    assert not dense[np.setdiff1d(np.arange(15), rows)].any()
    with pytest.raises(IndexError, match="ids"):
        scatter_rows(np.array([0, 15]), np.ones((2, 3)), 15)


def test_the_sgd_step_is_the_course_layers_update():
    """One step of helpers.lib.sgns.sgd_step = SkipGramNS's forward and backward (summed over the
    batch) and an SGD update of the same rows, with repeated ids."""
    from helpers.lib.negative_sampling import NoiseSampler, SkipGramNS  # noqa: PLC0415
    from helpers.lib.sgns import ns_loss_and_gradients, sgd_step  # noqa: PLC0415

    W, C, c, o, neg = _batch(seed=4, B=8)
    c[:3] = 2                                                   # a centre used three times
    neg[0, :] = o[1]                                            # a context word also drawn as noise
    layer = SkipGramNS(9, 4, NoiseSampler(np.ones(9)), k=3, rng=np.random.default_rng(0))
    layer.params[0][...], layer.params[1][...] = W, C
    loss = layer.forward(c, o, neg)
    layer.backward()
    lr = 0.05
    W_ref, C_ref = W - lr * len(c) * layer.grads[0], C - lr * len(c) * layer.grads[1]   # the mean's gradient x B = the sum
    got_loss, W_new, C_new = sgd_step(W.copy(), C.copy(), c, o, neg, lr, ns_loss_and_gradients)
    assert got_loss == pytest.approx(loss, rel=1e-12)
    np.testing.assert_allclose(W_new, W_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(C_new, C_ref, rtol=1e-10, atol=1e-12)


def test_the_step_checker_refuses_the_course_s_step_and_accepts_a_student_s():
    from helpers.exercises import PASSED  # noqa: PLC0415
    from helpers.exercises.lesson07 import _step_reference, check_sgd_step  # noqa: PLC0415
    from helpers.lib.sgns import sgd_step  # noqa: PLC0415

    def through_the_course(W, C, centers, contexts, negatives, lr, gradients):
        return sgd_step(W, C, centers, contexts, negatives, lr, gradients)

    assert check_sgd_step.run_checks(sgd_step).status == PASSED                                # it would pass ...
    assert not check_sgd_step(through_the_course)                                              # ... and is refused
    assert not check_sgd_step(_step_reference)                                                 # the checker's own answer too


def test_the_gradient_checker_refuses_a_composition_of_sgns_pair_gradients():
    """sgns_pair_gradients (lesson 06) computes the same gradients with counts 1 and 0: an answer
    built from it passes every check, so the checker must refuse it by name."""
    from helpers.exercises.lesson07 import check_ns_gradients  # noqa: PLC0415
    from helpers.lib.negative_sampling import sgns_pair_gradients  # noqa: PLC0415

    def composed(v, u_o, U_neg):
        B, k, d = U_neg.shape
        dv_o, du_o = sgns_pair_gradients(v, u_o, np.ones(B), np.zeros(B))
        dv_n, dU = sgns_pair_gradients(np.repeat(v, k, 0), U_neg.reshape(B * k, d), np.zeros(B * k), np.ones(B * k))
        s_o, s_n = np.einsum("bd,bd->b", u_o, v), np.einsum("bkd,bd->bk", U_neg, v)
        loss = np.logaddexp(0, -s_o) + np.logaddexp(0, s_n).sum(1)
        return loss, dv_o + dv_n.reshape(B, k, d).sum(1), du_o, dU.reshape(B, k, d)

    assert check_ns_gradients.run_checks(composed)
    result = check_ns_gradients(composed)
    assert not result and "course's own" in result.message


# ----------------------------------------------------------------------------- the live run's bookkeeping
def test_similarity_training_plans_its_steps_and_reads_higher_as_better():
    import matplotlib  # noqa: PLC0415
    matplotlib.use("Agg")
    from helpers.lessons.lesson07 import SimilarityTraining  # noqa: PLC0415
    from tools.figure_checks import figure_problems  # noqa: PLC0415

    planned, state = [], {"rho": 0.0}

    def step():
        state["rho"] += 0.01
        return 3.0 - state["rho"]

    run = SimilarityTraining(step, lambda: state["rho"], eval_every=10, baselines={"count-based": 0.25},
                             plan=planned.append)
    run.train(20, progress=False)
    assert planned == [20] and run.steps == 20 and run.rho == pytest.approx(0.2)
    assert "below every baseline" in run.summary()
    run.train(10, progress=False)
    assert planned == [20, 10] and "above count-based" in run.summary()
    assert run.curve.step == [0, 10, 20, 30]
    assert figure_problems(run.figure()) == []


def test_frequent_neighbours_leave_out_the_rare_words():
    from helpers.lessons.lesson07 import frequent_neighbours  # noqa: PLC0415

    corpus = _toy_corpus()
    vocab = corpus.vocab
    rng = np.random.default_rng(0)
    W = rng.standard_normal((len(vocab), 4))
    floor = int(np.median(vocab.counts))
    got = frequent_neighbours(W, vocab, vocab.itos[0], k=5, min_count=floor)
    assert got and all(vocab.counts[vocab.index(w)] >= floor for w, _ in got)
    assert len(frequent_neighbours(W, vocab, vocab.itos[0], k=5, min_count=1)) == 5


# ----------------------------------------------------------------------------- the shipped skip-grams' schedule
@pytest.mark.parametrize("name", ["torch-skipgram", "numpy-skipgram"])
def test_the_shipped_course_skip_grams_are_their_schedules_last_epoch(name):
    """The shipped vectors are the last epoch of the whole schedule, and by then their neighbour
    lists hold fewer rare words than at the schedule's midpoint (the lesson's claim)."""
    from helpers.course.word_vectors import load_word_vectors  # noqa: PLC0415

    m = load_word_vectors(name).metadata
    assert m["best_epoch"] == m["epochs_run"] == m["settings"]["max_epochs"]
    rare = m["curve"]["rare_neighbours"]
    assert len(rare) == m["epochs_run"] and rare[-1] < rare[len(rare) // 2] < max(rare)


# ----------------------------------------------------------------------------- the student edition's order
def _lesson_cells():
    import json  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415
    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "07_word2vec.ipynb").read_text(encoding="utf-8"))
    return [(c["cell_type"], "".join(c["source"]), c.get("metadata", {}).get("tags", [])) for c in nb["cells"]]


@pytest.mark.parametrize("checker, answers", [
    ("check_embedding_backward", ["np.add.at(", "Embedding.backward", "show_source(Embedding"]),
    ("check_ns_gradients", ["logaddexp", "ns_loss_and_gradients(", "show_source(sgns"]),
    ("check_sgd_step", ["sgns.sgd_step(", "show_source(sgns", "np.add.at(W"]),
    ("check_noise_distribution", ["unigram_noise("]),
])
def test_no_exercise_s_answer_is_printed_above_it(checker, answers):
    """The course's version of what an exercise asks for appears only after the exercise (lesson
    07's embedding backward used to be printed, with np.add.at, in the cell above Exercise 1)."""
    cells = _lesson_cells()
    at = next(i for i, (kind, src, tags) in enumerate(cells) if "exercise" in tags and f"{checker}(" in src)
    above = "\n".join(src for kind, src, _ in cells[:at] if kind == "code")
    for answer in answers:
        assert answer not in above, f"{answer!r} is in a code cell above the exercise of {checker}"


def test_the_live_training_runs_the_student_s_pieces():
    cells = _lesson_cells()
    setup = next(src for kind, src, _ in cells if kind == "code" and "def train_step" in src)
    for result, mine in (("noise_result", "noise_distribution"), ("gradients_result", "ns_gradients"),
                         ("step_result", "sgd_step")):
        assert f"your_or_reference({result}, {mine}," in setup
    assert "step_fn(W, C," in setup and "gradients)" in setup and "noise(vocab.counts" in setup


def test_the_softmax_figure_is_used_and_its_footer_names_the_timing_section():
    """figures/07_softmax_vs_negative_sampling.svg was referenced by no notebook, and its footer sent
    the reader to the wrong section for the timing: the lesson now shows it, and the section the
    footer names is the one whose header announces the timing."""
    import re  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    root = Path(__file__).resolve().parents[1]
    svg = (root / "notebooks" / "figures" / "07_softmax_vs_negative_sampling.svg").read_text(encoding="utf-8")
    cells = _lesson_cells()
    assert any("figures/07_softmax_vs_negative_sampling.svg" in src for kind, src, _ in cells if kind == "markdown")
    footer = re.sub(r"<[^>]+>", "", svg)                  # the text without its italic spans
    named = re.search(r"times both as \|V\| grows\s*\(section (\d+)\)", footer)
    assert named, "the footer names the section that times the output layers"
    header = next(line for kind, src, _ in cells if kind == "markdown" for line in src.splitlines()
                  if line.startswith(f"## {named.group(1)} ·"))
    assert "cost of the three output layers" in header


# ----------------------------------------------------------------------------- the measured tricks
def test_the_tricks_table_figure_and_comparisons():
    from helpers.course.models import load_model  # noqa: PLC0415
    from helpers.lessons.lesson07 import (  # noqa: PLC0415
        plot_tricks,
        tricks_comparisons,
        tricks_table,
    )

    shipped = load_model("wv_tricks")
    table = tricks_table(shipped)
    assert list(table) == shipped.variants
    for row in table.values():
        for key in ("cpu", "wordsim", "simlex", "analogy", "valid_wordsim"):
            lo_mean_hi = row[key]
            assert lo_mean_hi[1] <= lo_mean_hi[0] <= lo_mean_hi[2], key
    assert table["no_subsampling"]["words_per_epoch"] > table["shipped"]["words_per_epoch"]
    fig = plot_tricks(shipped)
    assert len(fig.axes) == 3 and "CPU seconds" in fig.axes[0].get_xlabel()
    # one line and one end marker per run on the curves, one marker per run on the analogy panel
    assert len(fig.axes[0].lines) == 2 * 9 and len(fig.axes[2].lines) == 9
    comps = tricks_comparisons(shipped, n_boot=200)
    assert set(comps) == {(m, o) for m in ("wordsim", "simlex", "analogy")
                          for o in ("no_subsampling", "fixed_window")}
