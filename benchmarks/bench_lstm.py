"""NumPy LSTM (helpers.lib.recurrent.lstm_forward, lstm_bptt) vs torch.nn.LSTM on the CPU, same run.

Forward + backward of one layer, batch 32, 35 steps, input 128, hidden 128, float32,
weights copied so both compute the same numbers (checked before timing).
Prints the median time of each and their ratio (target: NumPy within 3x of PyTorch).

Both run with the same number of CPU threads (default: 1 and then 2; threadpoolctl limits
NumPy's BLAS, torch.set_num_threads limits PyTorch), and the timed calls alternate so
that a busy machine slows both alike.

Run:  python benchmarks/bench_lstm.py [--repeats 30] [--threads 1 2]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from helpers.lib.recurrent import lstm_bptt, lstm_forward


def median_seconds(fns, repeats: int) -> list[float]:
    """Median wall time of each function; the calls are interleaved (a, b, a, b, ...) so a
    busy machine slows both alike."""
    times = [[] for _ in fns]
    for fn in fns:
        fn()  # warm-up
    for _ in range(repeats):
        for fn, ts in zip(fns, times, strict=True):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [float(np.median(ts)) for ts in times]


def main(B=32, T=35, D=128, H=128, repeats=30, threads=1):
    """Time both with ``threads`` CPU threads each (NumPy's BLAS and torch alike)."""
    torch.set_num_threads(threads)
    with threadpool_limits(limits=threads, user_api="blas"):
        return _run(B, T, D, H, repeats)


def _run(B, T, D, H, repeats):
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    ref = torch.nn.LSTM(D, H, batch_first=True)
    Wx, Wh = ref.weight_ih_l0.detach().numpy().T.copy(), ref.weight_hh_l0.detach().numpy().T.copy()
    b = (ref.bias_ih_l0 + ref.bias_hh_l0).detach().numpy()
    xs = rng.standard_normal((B, T, D)).astype(np.float32)
    dhs = rng.standard_normal((B, T, H)).astype(np.float32)
    zeros = np.zeros((B, H), np.float32)
    xt, dht = torch.tensor(xs, requires_grad=True), torch.tensor(dhs)

    def run_numpy():
        _, _, caches = lstm_forward(xs, zeros, zeros, Wx, Wh, b)
        return lstm_bptt(dhs, caches, Wx, Wh)

    def run_torch():
        xt.grad = None
        ref.zero_grad(set_to_none=True)
        out, _ = ref(xt)
        out.backward(dht)
        return xt.grad

    # same computation first, then time it
    dxs, _, _, _, dWh, _ = run_numpy()
    np.testing.assert_allclose(dxs, run_torch().numpy(), rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(dWh, ref.weight_hh_l0.grad.numpy().T, rtol=1e-3, atol=1e-4)

    t_np, t_torch = median_seconds([run_numpy, run_torch], repeats)
    print(f"LSTM forward+backward, batch {B}, {T} steps, input {D}, hidden {H}, float32, "
          f"{torch.get_num_threads()} CPU thread(s) each")
    print(f"{'implementation':<26}{'median ms':>10}")
    print(f"{'NumPy lstm_forward+bptt':<26}{t_np * 1e3:>10.2f}")
    print(f"{'torch.nn.LSTM (CPU)':<26}{t_torch * 1e3:>10.2f}")
    ratio = t_np / t_torch
    print(
        f"ratio NumPy / torch: {ratio:.2f}x  ({'within' if ratio <= 3 else 'OUTSIDE'} the 3x "
        "target)"
    )
    return ratio


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    a = ap.parse_args()
    for n in a.threads:
        main(repeats=a.repeats, threads=n)
