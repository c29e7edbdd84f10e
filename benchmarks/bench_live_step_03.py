"""One training step of lesson 03's live models, NumPy against PyTorch, same run.

Lesson 03 trains its character LSTM language model (``helpers.lib.recurrent.NumpyLM``, kind
'lstm': embedding 64 -> LSTM 128, one ``lstm_step`` and one hand-written ``lstm_step_backward``
per character -> linear over the 84 characters -> softmax cross-entropy) beside lesson 02's RNN,
each step a batch of 32 windows of 64 characters, clipping at 1 and an Adam step. Each is timed
against the same model in PyTorch (``nn.LSTM`` / ``nn.RNN``) on the same batch, float32, one
thread, interleaved (:func:`benchmarks.step_timing.compare_steps`); the two start from the same
weights, checked before timing. Target: NumPy at most 2x PyTorch.

Run:  python benchmarks/bench_live_step_03.py [--repeats 30]
"""
from __future__ import annotations

import argparse

from bench_live_step_02 import steps  # the same construction, for either kind
from step_timing import compare_steps


def main(repeats: int = 30) -> list[dict]:
    rows = []
    for kind, name in (("lstm", "LSTM"), ("rnn", "RNN")):
        numpy_step, torch_step = steps(kind)
        rows.append(
            compare_steps(
                f"lesson 03, character {name} LM (batch 32 x 64, H 128), one training step",
                numpy_step,
                torch_step,
                repeats=repeats,
            )
        )
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    main(parser.parse_args().repeats)
