"""Lesson 04 as committed: the student's functions run the lesson's models, and the committed
outputs show the live model working and the shipped weights agreeing in the student's code."""
import re

from tests.lesson_text import NOTEBOOKS, code_cells, load, output_text, source

NB = load(next(p for p in NOTEBOOKS if p.name.startswith("04_")))
CODE = "\n".join(source(c) for c in code_cells(NB))
YOURS = ("attention", "attention_backward", "mha_forward", "mha_backward", "layer_norm_backward")


def test_the_student_s_functions_run_the_models():
    for name in YOURS:
        result = name.replace("layer_norm_backward", "layer_norm")
        assert re.search(rf"your_or_reference\({result}_result, my_{name},", CODE), \
            f"my_{name} is not used once it passes"
    assert "yours = dict(attend=attention, attend_backward=attention_backward," in CODE
    assert 'yours["layer_norm"] = YourLayerNorm' in CODE
    for call in ("MultiHeadAttention(16, 4, make_rng(3), **yours)", "seed=0, **yours)",
                 "NumpyDecoderLM.from_torch(big.model, dtype=np.float32, **yours)",
                 "LiveTraining(train_step"):
        assert call in CODE, f"the lesson runs {call!r}"
    assert "your_work(EXERCISES)" in source(code_cells(NB)[-1])


def test_figures_are_drawn_by_checked_helpers_and_the_norm_runs_by_their_explorer():
    assert sum("render_norm_comparison" in source(c) and "Explorer(" in source(c)
               for c in code_cells(NB)) == 1
    assert not re.search(r"imshow\(|colorbar\(|plt\.(plot|bar|hist)\(", CODE), "a figure by hand"


def test_the_outputs_show_the_live_model_working_and_the_shipped_weights_agreeing():
    text = "\n".join(output_text(c) for c in code_cells(NB))
    live = re.search(r"your Transformer ([\d.]+) nats/char, Kneser-Ney trigram ([\d.]+), "
                     r"4-gram ([\d.]+)", text)
    assert live, "the lesson prints the live model's test loss beside the n-grams"
    ours, trigram, fourgram = map(float, live.groups())
    assert ours < trigram and fourgram < trigram
    steps = re.search(r"([\d,]+) steps in (\d+) CPU-seconds", text)
    assert steps and int(steps.group(1).replace(",", "")) == 1500 and int(steps.group(2)) <= 60
    shipped = re.search(r"PyTorch ([\d.]+), your NumPy code ([\d.]+) nats/char", text)
    assert shipped and shipped.group(1) == shipped.group(2), "the shipped weights, the same loss"
    assert "the lesson goes on with the course's attention until yours passes" in text   # stubs
