"""tools/spellcheck.py (`make lint`): what is prose, what is reported where, British spelling,
the project word list, and the course's own text being clean."""
import json
import os
from pathlib import Path

import pytest

from tools import spellcheck

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def checker():
    """The checker with the word list; skipped without the dictionary, except in CI."""
    try:
        folder = spellcheck.find_dictionary()
    except SystemExit:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no en_GB Hunspell dictionary ({spellcheck.HOW_TO_INSTALL_DICTIONARY})")
    return spellcheck.Checker(spellcheck.read_word_list(), folder)


def test_code_maths_urls_html_paths_identifiers_and_other_scripts_are_not_prose():
    text = ("Intro with `inline_code(x)` and $\\alpha_t$ and\n"
            "```python\nnot_prose = 1\n```\n"
            "$$\\mathrm{softmaxx}(z)$$ see https://example.org/x_y and "
            "[the docs](https://d.org/p)\n<details><summary>Solution</summary> "
            "data/README.md helpers.data *goverment*</details>\n"
            "input/output stays")
    assert spellcheck.prose_only(text).count("\n") == text.count("\n")   # line numbers kept
    kept = [w for _, w in spellcheck.words(text)]
    assert kept == ["Intro", "with", "and", "and", "see", "and", "the", "docs", "Solution",
                    "input", "output", "stays"]
    text = "word2vec LSTM RNNs x_t a β 한국어 naïve PyTorch's don't well-known"
    assert [w for _, w in spellcheck.words(text)] == ["naïve", "PyTorch", "don't", "well-known"]


def test_misspellings_are_reported_with_file_and_line(tmp_path, checker):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\nThe gradeint is checked.\nWe recieve `recieve_in_code` it.\n",
                    encoding="utf-8")
    findings, n_words = spellcheck.check([page], checker)
    assert [(f.where, f.word) for f in findings] == [("line 3", "gradeint"), ("line 4", "recieve")]
    assert "did you mean: " in findings[0].why and "gradient" in findings[0].why
    assert n_words == 8


def test_notebook_markdown_cells_are_checked_and_code_cells_are_not(tmp_path, checker):
    nb = {"cells": [{"cell_type": "code", "source": ["teh_code = 'teh'\n"], "metadata": {}},
                    {"cell_type": "markdown", "metadata": {},
                     "source": ["Fine text.\n", "A sentense here.\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "lesson.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    findings, _ = spellcheck.check([path], checker)
    assert [str(f).split(": ")[0] for f in findings] == [f"{path}, cell 2, line 2"]
    assert findings[0].word == "sentense"


def test_british_spelling_compounds_and_the_word_lists_capitals(checker):
    american = "American spelling: the course writes "
    for word in ("normalise", "colour", "prize", "size", "well-known", "softmax", "Softmax",
                 "PyTorch"):
        assert checker.problems(word) == [], word
    assert checker.problems("normalize") == [("normalize", american + "'normalise'")]
    assert checker.problems("optimizers")[0][1] == american + "'optimisers'"
    assert checker.problems("color") == [("color", american + "'colour'")]       # codespell
    assert checker.problems("colr")[0][1].startswith("unknown word")             # Hunspell
    assert [w for w, _ in checker.problems("well-knwon")] == ["knwon"]
    assert checker.problems("Pytorch") and checker.problems("pytorch")


def test_word_list_is_sorted_unique_and_holds_only_unknown_words(checker):
    words = spellcheck.read_word_list()
    assert words == sorted(words, key=str.lower), "keep tools/spelling_words.txt sorted"
    assert len(words) == len(set(words)), "a word is listed twice"
    known = [w for w in words if checker.hunspell.spell(w)]
    assert not known, f"the dictionary knows these; remove them from the word list: {known}"


def test_main_exit_status_and_how_to_add_a_word(tmp_path, capsys, checker):
    bad = tmp_path / "bad.md"
    bad.write_text("A mispelled word, and a zorblax.\n", encoding="utf-8")
    assert spellcheck.main([str(bad)]) == 1
    out = capsys.readouterr().out
    assert (f"{bad}, line 1: 'mispelled': misspelling (codespell): did you mean misspelled?"
            in out)
    assert f"{bad}, line 1: 'zorblax': unknown word" in out          # Hunspell's pass
    assert "add it on its own line to tools/spelling_words.txt" in out
    assert spellcheck.main([str(bad), "--unknown"]) == 1
    assert capsys.readouterr().out.split() == ["mispelled", "zorblax"]


def test_the_course_prose_is_clean(capsys, checker):
    status = spellcheck.main([])
    out = capsys.readouterr().out
    assert status == 0, out
    files = spellcheck.course_files()
    assert ROOT / "README.md" in files and ROOT / "data" / "README.md" in files
    assert any(p.suffix == ".ipynb" for p in files)


# ---------------------------------------------------------------- the first pass: codespell alone
@pytest.fixture
def no_dictionary(monkeypatch):
    """As on a computer without Hunspell's dictionary (plain macOS or Windows)."""
    monkeypatch.setattr(spellcheck, "DICTIONARY_DIRS", [])
    monkeypatch.setenv("DICPATH", "")


def test_codespell_finds_misspellings_and_american_spellings_without_a_dictionary(no_dictionary):
    c = spellcheck.Checker(spellcheck.read_word_list())
    assert c.hunspell is None and "en_GB is not installed" in c.skipped
    assert c.problem("recieve") == "misspelling (codespell): did you mean receive?"
    assert c.problem("Recieve").startswith("misspelling")
    assert c.problem("color") == "American spelling: the course writes 'colour'"
    assert c.problem("normalize") == "American spelling: the course writes 'normalise'"
    for word in ("colour", "normalise", "license", "practice", "program", "story", "softmax"):
        assert c.problem(word) is None, word
    assert c.problems("well-modeled") == [
        ("modeled", "American spelling: the course writes 'modelled'")]


def test_main_without_the_dictionary_runs_the_first_pass_and_says_so(tmp_path, capsys,
                                                                      no_dictionary):
    bad = tmp_path / "bad.md"
    bad.write_text("We recieve the color of the text.\n", encoding="utf-8")
    assert spellcheck.main([str(bad)]) == 1
    out = capsys.readouterr().out
    assert "'recieve': misspelling (codespell)" in out and "'color': American spelling" in out
    assert "the second pass (Hunspell) was skipped" in out
    good = tmp_path / "good.md"
    good.write_text("We receive the colour of the text.\n", encoding="utf-8")
    assert spellcheck.main([str(good)]) == 0
    assert "codespell only" in capsys.readouterr().out
