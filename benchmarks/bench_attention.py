"""Benchmark: the course's NumPy attention forward vs PyTorch's, for several sequence lengths.

Times helpers.lib.attention.scaled_dot_product_attention (NumPy, float32) against
torch.nn.functional.scaled_dot_product_attention (float32, CPU) on the same causal
self-attention problem — batch 4, 4 heads of width 64 — for T = 128 ... 2048, in one run.
Prints the seconds, the NumPy/torch ratio, the growth factor per doubling of T (quadratic
cost gives 4) and the fitted exponent of time ~ T^k, with the largest output difference
as the quality number.

Both libraries get the same number of threads (``--threads``, 1 by default).

Run:  python benchmarks/bench_attention.py [--threads N] [--lengths 128 256 ...]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F
from threadpoolctl import threadpool_limits

from helpers.lib.attention import causal_mask, scaled_dot_product_attention


def best_of(f, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[128, 256, 512, 1024, 2048])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-head", type=int, default=64)
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads for both torch and NumPy's BLAS "
        "(1 by default: fair, and stable on a busy machine)",
    )
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    threadpool_limits(args.threads)  # NumPy's BLAS gets the same number of threads as torch
    print(
        f"causal self-attention, batch {args.batch}, {args.heads} heads of width {args.d_head}, "
        f"float32; torch {torch.__version__}; {args.threads} thread(s) each; best of {args.repeats}"
    )
    print(
        f"{'T':>6} {'NumPy s':>9} {'torch s':>9} {'NumPy/torch':>12} {'NumPy ×/2T':>11} "
        f"{'torch ×/2T':>11} {'max |diff|':>11}"
    )
    rows = []
    for T in args.lengths:
        rng = np.random.default_rng(T)
        Q, K, V = (
            rng.standard_normal((args.batch, args.heads, T, args.d_head)).astype(np.float32)
            for _ in range(3)
        )
        tQ, tK, tV = (torch.from_numpy(a) for a in (Q, K, V))
        mask = causal_mask(T)
        ours, _ = scaled_dot_product_attention(Q, K, V, mask)
        theirs = F.scaled_dot_product_attention(tQ, tK, tV, is_causal=True).numpy()
        diff = float(np.abs(ours - theirs).max())
        t_np = best_of(
            lambda Q=Q, K=K, V=V, mask=mask: scaled_dot_product_attention(Q, K, V, mask),
            args.repeats,
        )
        t_pt = best_of(
            lambda tQ=tQ, tK=tK, tV=tV: F.scaled_dot_product_attention(tQ, tK, tV, is_causal=True),
            args.repeats,
        )
        g_np = f"{t_np / rows[-1][1]:.1f}" if rows else "-"
        g_pt = f"{t_pt / rows[-1][2]:.1f}" if rows else "-"
        rows.append((T, t_np, t_pt))
        print(
            f"{T:>6} {t_np:>9.4f} {t_pt:>9.4f} {t_np / t_pt:>12.1f} {g_np:>11} {g_pt:>11} "
            f"{diff:>11.1e}",
            flush=True,
        )
        assert diff < 1e-4, f"NumPy and torch attention disagree by {diff} at T={T}"
    if len(rows) >= 3:
        T_arr, np_t, pt_t = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
        big = (
            T_arr >= T_arr[len(T_arr) // 2]
        )  # fit on the larger lengths, where overheads matter least
        k_np = np.polyfit(np.log(T_arr[big]), np.log(np_t[big]), 1)[0]
        k_pt = np.polyfit(np.log(T_arr[big]), np.log(pt_t[big]), 1)[0]
        print(
            f"fitted growth time ~ T^k over T >= {int(T_arr[big][0])}: NumPy k = {k_np:.2f}, torch "
            f"k = {k_pt:.2f} (2 = quadratic: the T×T score matrix)"
        )


if __name__ == "__main__":
    main()
