"""helpers.lessons.lesson03: the agreement set and the long-range explorer."""
import pytest

from helpers.lessons import lesson03 as L
from helpers.lib.text import UNK, Vocab

WORDS = sorted({w for pair in L.AGREEMENT_NOUNS + L.AGREEMENT_VERBS for w in pair}
               | {w for f in L.AGREEMENT_FRAMES.values() for w in f.split() if w not in "SABC"})


def test_the_agreement_items():
    vocab = Vocab.build(WORDS + ["cat"], specials=(UNK, "<eos>"))
    items = L.agreement_items(vocab, per_subject=2)
    plural = {p[1] for p in L.AGREEMENT_NOUNS}
    for it in items:
        frame = L.AGREEMENT_FRAMES[it.distance].split()
        plural_subject = it.number == "pl"
        assert len(it.words) == len(frame) == it.distance + 2
        assert (it.words[1] in plural) == plural_subject
        nouns = [w for w, slot in zip(it.words, frame) if slot in "ABC"]
        same = it.attractors == "same"
        assert all((w in plural) == (plural_subject == same) for w in nouns)
    assert len(items) == 2 * 16 + 4 * (2 * 16 * 2 * 2)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        L.agreement_items(Vocab.build(["the", "man"], specials=(UNK, "<eos>")))


def test_the_long_range_explorer_trains_the_gru():
    first = L.render_long_range(steps=4, keep_bias=3.0)[1]
    assert "GRU: d=5" in L.render_long_range(steps=6, keep_bias=3.0)[1] != first
