"""Lesson 10's committed outputs say what the prose says of them: the student's live encoder above
the left bigram on held-out text, counting shared pieces above the trained NSP head, the word
senses (the encoder ahead on the paired sentences, the static context mean on the first set, its
unknown words counted), and the static row of section 5 recomputed without the test articles'
text. (Printed line widths: tests/notebooks/test_html_export.py.)"""
import re

from tests.lesson_text import NOTEBOOKS, code_cells, load, output_text, source

NB = load(next(p for p in NOTEBOOKS if p.name.startswith("10_")))
TEXT = "\n".join(output_text(c) for c in code_cells(NB) if "show_source(" not in source(c))


def test_the_live_encoder_beats_the_left_bigram_on_the_test_blanks():
    acc = {name: float(v) for name, v in re.findall(
        r"(?m)^(unigram \(always 'the'\)|bigram, left neighbour|bigram, both neighbours"
        r"|your encoder|TinyBert \(shipped\)) +([\d.]+)% +\[", TEXT)}
    assert len(acc) == 5, acc
    assert acc["bigram, left neighbour"] < acc["your encoder"] < acc["TinyBert (shipped)"]
    assert acc["TinyBert (shipped)"] > acc["bigram, both neighbours"]
    low = re.search(r"your encoder - bigram \(left neighbour\), the same blanks: [+-][\d.]+ points "
                    r"\[([+-][\d.]+),", TEXT)
    assert low and float(low.group(1)) > 0
    live = re.search(r"after ([\d,]+) steps \((\d+) CPU-s\): validation accuracy ([\d.]+)%", TEXT)
    assert live and int(live.group(1).replace(",", "")) == 1500   # the CPU-s vary with the load


def test_counting_shared_pieces_beats_the_nsp_head():
    value = {k: float(re.search(re.escape(k) + r" +([\d.]+)%", TEXT).group(1)) for k in (
        "shared pieces (no model)", "classifier on the MLM-only encoder, trained alone",
        "the NSP head of the MLM + NSP encoder")}
    assert value["shared pieces (no model)"] > value["the NSP head of the MLM + NSP encoder"] > \
        value["classifier on the MLM-only encoder, trained alone"]


def test_the_static_row_without_the_test_text_ties_at_every_size():
    rows = re.findall(r"n = +([\d,]+): lesson 07's vectors ([\d.]+)%, pre-training only "
                      r"([\d.]+)%, difference ([+-][\d.]+) \[([+-][\d.]+), ([+-][\d.]+)\] points",
                      TEXT)
    assert [r[0] for r in rows] == ["25", "100", "400", "1,500"]
    assert all(float(lo) <= 0 <= float(hi) for *_, lo, hi in rows)
    block = re.search(r"fine-tuned minus static, the same 188 test articles .*:\n"
                      r"((?: +n=.*\n){4})", TEXT).group(1)
    cells = re.findall(r"n=([\d,]+) +([+-][\d.]+) \[ *([+-][\d.]+), +([+-][\d.]+)\] +"
                       r"(win|tie|loss)", block)
    assert [c[0] for c in cells] == ["25", "100", "400", "1,500"]
    # the prose: fine-tuning beats the static average with 25 and 100 articles, then ties
    assert [c[4] for c in cells] == ["win", "win", "tie", "tie"]


def test_the_encoder_wins_on_the_paired_senses_and_the_static_mean_on_the_first_set():
    pairs = re.search(r"the final layer minus each, .*:\n  static: mean word2vec of context +"
                      r"([+-][\d.]+) \[([+-][\d.]+), ([+-][\d.]+)\]", TEXT)
    assert pairs and float(pairs.group(2)) > 0              # the paired sentences: the encoder
    first = re.search(r"the first set, final layer minus the static context mean: ([+-][\d.]+) "
                      r"\[([+-][\d.]+), ([+-][\d.]+)\]", TEXT)
    assert first and float(first.group(1)) < 0      # the first set: the static mean, on average
    missing = re.search(r"context words without a static vector, left out of the mean: "
                        r"(\d+) of ([\d,]+)", TEXT)
    assert missing and 0 < int(missing.group(1)) < int(missing.group(2).replace(",", ""))
