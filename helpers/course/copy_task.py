"""Lesson 04's copy task, where attention wins at this scale: a Transformer and an LSTM of about
the same size learn to copy a sequence of random symbols; the Transformer looks each symbol up,
the LSTM has to carry it in its state."""
from __future__ import annotations

import time

import torch
import torch.nn.functional as F
from torch import nn

from helpers.infra.seeding import torch_generator
from helpers.lib.transformer import LSTMLM, DecoderLM, TransformerConfig


def copy_batch(n: int, length: int, n_symbols: int, generator: torch.Generator):
    """``n`` copy problems: ``length`` random symbols (1 .. n_symbols), the separator 0, then the
    same symbols again. Returns (x, y), (n, 2·length): x the sequence without its last symbol, y
    the next symbol at every position, −100 (ignored) where it is not part of the copy."""
    s = torch.randint(1, n_symbols + 1, (n, length), generator=generator)
    seq = torch.cat([s, torch.zeros(n, 1, dtype=torch.long), s], 1)
    x, y = seq[:, :-1], seq[:, 1:].clone()
    y[:, :length] = -100
    return x, y


def copy_model(name: str, n_symbols: int, max_length: int, d: int = 32, hidden: int = 66,
               seed: int = 0):
    """The model ``name`` of the copy task: "Transformer", 2 blocks of width d with 2 heads and
    learned positions, or "LSTM", ``hidden`` units on embeddings of width d: about the same number
    of parameters (28,625 and 28,083 for 16 symbols and copies of up to 32)."""
    if name == "Transformer":
        cfg = TransformerConfig(n_symbols + 1, d_model=d, n_heads=2, n_layers=2,
                                max_len=2 * max_length)
        return DecoderLM(cfg, seed=seed)
    if name == "LSTM":
        return LSTMLM(n_symbols + 1, emb_dim=d, hidden=hidden, seed=seed)
    raise ValueError(f"name must be 'Transformer' or 'LSTM', got {name!r}")


def copy_experiment(lengths=(4, 8, 16, 32), steps=None, n_symbols: int = 16, batch: int = 32,
                    lr: float = 3e-3, n_test: int = 200, seed: int = 0) -> dict:
    """Train each model of :func:`copy_model` from scratch for every copy length (its own steps,
    ``steps = {"Transformer": 150, "LSTM": 300}``: an LSTM step is about half as costly, so both get
    about the same CPU time), with the same batches; then the per-symbol accuracy of the copy on
    ``n_test`` fresh problems (teacher forcing, the argmax at every copy position). Returns
    {'lengths', 'accuracy': {model: [per length]}, 'params': {model: n}, 'steps', 'cpu_seconds':
    {model: total}, 'chance': 1 / n_symbols}."""
    steps = dict(steps or {"Transformer": 150, "LSTM": 300})
    out = {"lengths": list(lengths), "accuracy": {}, "params": {}, "steps": steps,
           "cpu_seconds": {}, "chance": 1 / n_symbols}
    for name in ("Transformer", "LSTM"):
        acc, cpu = [], 0.0
        for length in lengths:
            model = copy_model(name, n_symbols, max(lengths), seed=seed).train()
            out["params"][name] = sum(p.numel() for p in model.parameters())
            opt = torch.optim.Adam(model.parameters(), lr=lr)
            g = torch_generator(seed + length)
            t0 = time.process_time()
            for _ in range(steps[name]):
                x, y = copy_batch(batch, length, n_symbols, g)
                loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), ignore_index=-100)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
            cpu += time.process_time() - t0
            with torch.no_grad():
                x, y = copy_batch(n_test, length, n_symbols, torch_generator(10_000 + length))
                right = model.eval()(x).argmax(-1)[:, length:] == y[:, length:]
                acc.append(float(right.float().mean()))
        out["accuracy"][name], out["cpu_seconds"][name] = acc, cpu
    return out
