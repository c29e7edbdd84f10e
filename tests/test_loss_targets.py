"""Every loss rejects targets outside its domain, naming them, and an empty batch
(issue 13, defects 3 and 7).

Before the fix ``SigmoidCrossEntropy`` took labels -1/+1 and returned a loss of -2.49, a
negative target id silently picked a class from the end of the vocabulary in the NumPy MLM
loss and the unigram baselines, and ``SoftmaxCrossEntropy`` on an empty batch returned nan
with two RuntimeWarnings.
"""
import warnings

import numpy as np
import pytest

from helpers.lib.layers import SigmoidCrossEntropy, SoftmaxCrossEntropy
from helpers.lib.ngram import KneserNeyLM


@pytest.fixture(autouse=True)
def warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # "no nan, no warnings": a RuntimeWarning fails the test
        yield


def test_sigmoid_cross_entropy_rejects_labels_other_than_0_and_1():
    scores = np.array([[2.0, -1.0, 0.5], [0.3, 1.5, -2.0]])
    labels = np.array([[1, -1, 1], [-1, 1, -1]])           # the issue's -1/+1 labels gave -2.49
    with pytest.raises(ValueError, match=r"labels must be 0 or 1 \(binary cross-entropy\), got -1 at index "
                                         r"\(0, 1\), -1 at index \(1, 0\), -1 at index \(1, 2\) \(3 of 6 labels\); "
                                         r"for labels -1/\+1 pass \(labels \+ 1\) / 2"):
        SigmoidCrossEntropy().forward(scores, labels)
    for bad in (0.5, 2.0, np.nan):
        with pytest.raises(ValueError, match="labels must be 0 or 1"):
            SigmoidCrossEntropy().forward(np.zeros(2), np.array([1.0, bad]))
    loss = SigmoidCrossEntropy().forward(scores, (labels + 1) / 2)     # the fix the message suggests
    assert loss > 0


def test_softmax_cross_entropy_names_the_targets_outside_the_classes():
    logits = np.zeros((5, 3))
    with pytest.raises(ValueError, match=r"^SoftmaxCrossEntropy: targets must be class ids in \[0, 3\), "
                                         r"got 3 at index 1, -1 at index 3 \(2 of 5 targets\)$"):
        SoftmaxCrossEntropy().forward(logits, np.array([0, 3, 2, -1, 1]))
    with pytest.raises(TypeError, match="targets must be integer class ids, got dtype float64"):
        SoftmaxCrossEntropy().forward(logits, np.array([0.0, 1, 2, 1, 0]))


def test_the_message_lists_three_offending_values_then_the_count():
    from helpers.lib.layers import check_class_ids
    with pytest.raises(ValueError, match=r"got 5 at index 0, 6 at index 1, 7 at index 2, \.\.\. \(5 of 6 ids\)"):
        check_class_ids(np.array([5, 6, 7, 8, 9, 0]), 5, "f", "ids")


@pytest.mark.parametrize("loss, args", [
    (SoftmaxCrossEntropy(), (np.zeros((0, 3)), np.zeros(0, int))),
    (SigmoidCrossEntropy(), (np.zeros((0, 4)), np.zeros((0, 4)))),
], ids=["softmax", "sigmoid"])
def test_an_empty_batch_is_an_error_not_nan(loss, args):
    with pytest.raises(ValueError, match=r"the batch is empty .*a mean loss over no examples is undefined"):
        loss.forward(*args)


def test_kneser_ney_checks_its_ids():
    lm = KneserNeyLM(2, 3).fit(np.array([0, 1, 2, 1]))
    with pytest.raises(ValueError, match=r"KneserNeyLM.mean_nll: ids must be class ids in \[0, 3\), got 5 at index 2"):
        lm.mean_nll(np.array([0, 1, 5]))                       # used to score id 5 as if it were a word
