"""Diagrams of lesson 01 (feed-forward networks).

The lesson's notation: inputs are rows, a layer computes ``z = x W + b``; softmax outputs ``p``,
the cross-entropy loss ``L = −log p_y`` for the true class ``y``.
"""

import numpy as np

from helpers.exercises.lesson01 import GRAPH, check_hidden_backward, check_mlp_backward
from tools.diagrams.style import DATA, GRAD, LOSS, OP, PARAM
from tools.diagrams.svg import SMALL_SIZE, Drawing, fmt

LESSON = 1


def _vec(a) -> str:
    if isinstance(a, str):                     # a blank the student fills in
        return a
    return "[" + ", ".join(fmt(x) for x in np.ravel(a)) + "]"


def _assign(d: Drawing, x: float, y: float, name: str, value, color: str = "black",
            line: float = 19) -> float:
    """Write ``name = value`` at ``x`` (left end), one matrix row per line, the rows aligned
    after the ``=``; returns the height of the next free line."""
    head = d.text(x, y, f"{name} = ", anchor="start", size=SMALL_SIZE, color=color)
    rows = [value] if isinstance(value, str) else np.atleast_2d(value)
    for i, row in enumerate(rows):
        d.text(head.x + head.w, y + i * line, _vec(row), anchor="start", size=SMALL_SIZE,
               color=color)
    return y + len(rows) * line


BLANK = ("dh", "dz1", "dx", "dW1", "db1")      # the step of the lesson's Exercise 1, and below it


def worked_example() -> dict:
    """Every value and gradient of the lesson's tiny network (``GRAPH`` of its checkers), from the
    checkers' reference code; the gradients of ``BLANK`` are left for the student."""
    v = {"x": GRAPH["X"], "y": int(GRAPH["y"][0])}
    v.update({k: GRAPH[k] for k in ("W1", "b1", "W2", "b2")})
    v["z1"] = v["x"] @ v["W1"] + v["b1"]
    v["h"] = np.tanh(v["z1"])
    v["z2"] = v["h"] @ v["W2"] + v["b2"]
    v["p"] = np.exp(v["z2"]) / np.exp(v["z2"]).sum()
    onehot = np.eye(3)[[v["y"]]]
    v["dp"], v["dz2"] = -onehot / v["p"], v["p"] - onehot
    v["L"], grads = check_mlp_backward.reference(*GRAPH.values())
    v.update(zip(("dx", "dW1", "db1", "dW2", "db2"), grads, strict=True))
    v["dh"], v["dz1"] = check_hidden_backward.reference(v["dz2"], v["W2"], v["h"])
    return v


def mlp_graph() -> Drawing:
    """The MLP's computational graph with the forward values and the backward gradients of a
    tiny worked example (x → Linear → tanh → Linear → softmax → cross-entropy); the gradients at
    h and below are question marks, the step the lesson's student fills in."""
    v = worked_example()
    shown = {k: ("?" if k in BLANK else v[k]) for k in v}
    d = Drawing(
        900, 860,
        title="Computational graph of a two-layer MLP with forward values and backward gradients",
        desc=("A column of operations from the input x at the top to the loss L at the bottom: "
              "Linear, tanh, Linear, softmax, cross-entropy. Left of each arrow the forward value "
              "flowing down, right of it the gradient of the loss flowing up (dashed), with the "
              "rule that computes it. The parameters W1, b1, W2, b2 enter from the right, their "
              "gradients leave to the right."))
    cx = 270                                  # the column of operations
    rows = {"x": 110, "lin1": 220, "tanh": 340, "lin2": 460, "soft": 580, "ce": 700, "L": 810}
    d.text(20, 22, "forward: values flow down (solid)", anchor="start", bold=True)
    d.text(20, 44, "backward: gradients ∂L/∂· flow up (dashed)", anchor="start", bold=True,
           color=GRAD)
    d.text(880, 22, "a worked example: 2 inputs, 2 tanh units, 3 classes", anchor="end",
           size=SMALL_SIZE, color="grey_dark", plain=True)
    d.text(880, 42, "(numbers rounded to 2 decimals)", anchor="end", size=SMALL_SIZE,
           color="grey_dark")
    d.text(cx - 22, 78, "value", anchor="end", size=SMALL_SIZE, color="grey_dark", bold=True)
    d.text(cx + 22, 78, "gradient", anchor="start", size=SMALL_SIZE, color=GRAD, bold=True)

    boxes = {
        "x": d.box(cx, rows["x"], 120, 34, "input x", fill=DATA),
        "lin1": d.box(cx, rows["lin1"], 214, 38, "Linear: z_1 = x W_1 + b_1", fill=OP),
        "tanh": d.box(cx, rows["tanh"], 214, 38, "tanh: h = tanh(z_1)", fill=OP),
        "lin2": d.box(cx, rows["lin2"], 214, 38, "Linear: z_2 = h W_2 + b_2", fill=OP),
        "soft": d.box(cx, rows["soft"], 214, 38, "softmax: p = softmax(z_2)", fill=OP),
        "ce": d.box(cx, rows["ce"], 214, 38, "cross-entropy: −log p_y", fill=LOSS),
    }
    d.text(cx, rows["L"], f"L = {fmt(v['L'], 3)}", bold=True)

    # edges: (from, to, forward value, gradient rule, gradient value)
    edges = [
        ("x", "lin1", f"x = {_vec(v['x'])}", "∂L/∂x = ∂L/∂z_1 W_1^⊤", shown["dx"]),
        ("lin1", "tanh", f"z_1 = {_vec(v['z1'])}", "∂L/∂z_1 = ?", shown["dz1"]),
        ("tanh", "lin2", f"h = {_vec(v['h'])}", "∂L/∂h = ?", shown["dh"]),
        ("lin2", "soft", f"z_2 = {_vec(v['z2'])}", "∂L/∂z_2 = p − onehot(y)", shown["dz2"]),
        ("soft", "ce", f"p = {_vec(v['p'])}", "∂L/∂p = −1/p_y at y, else 0", shown["dp"]),
    ]
    for a, b, forward, rule, grad in edges:
        top, bottom = boxes[a].y + boxes[a].h, boxes[b].y
        mid = (top + bottom) / 2
        d.arrow((cx - 10, top), (cx - 10, bottom))
        d.arrow((cx + 10, bottom), (cx + 10, top), color=GRAD, dashed=True)
        d.text(cx - 22, mid, forward, anchor="end", size=SMALL_SIZE)
        d.text(cx + 22, mid - 10, rule, anchor="start", size=SMALL_SIZE, color=GRAD)
        d.text(cx + 22, mid + 10, "= " + _vec(grad), anchor="start", size=SMALL_SIZE, color=GRAD)
    top = boxes["ce"].y + boxes["ce"].h
    d.arrow((cx - 10, top), (cx - 10, rows["L"] - 12))
    d.arrow((cx + 10, rows["L"] - 12), (cx + 10, top), color=GRAD, dashed=True)
    d.text(cx + 22, (top + rows["L"] - 12) / 2, "∂L/∂L = 1", anchor="start", size=SMALL_SIZE,
           color=GRAD)

    # the true class enters the loss from the left
    t = d.box(84, rows["ce"], 116, 34, "y = class 1", fill=DATA)
    d.text(84, rows["ce"] + 32, "onehot(y) = [1, 0, 0]", size=SMALL_SIZE, color="grey_dark")
    d.arrow(t.right, boxes["ce"].left)

    # parameters: a card with the values; the gradients, with their rule, below it
    def params(row, layer, weight, bias, x_name):
        x0, y0 = 590, rows[row] - 64
        n = len(v[weight])
        card = d.rect(x0, y0, 280, 18 + 19 * (n + 1), fill=PARAM, rx=7)
        y = _assign(d, x0 + 12, y0 + 18, weight[0] + "_" + weight[1], v[weight])
        _assign(d, x0 + 12, y, bias[0] + "_" + bias[1], v[bias])
        gy = card.y + card.h + 18
        w_name, b_name = weight[0] + "_" + weight[1], bias[0] + "_" + bias[1]
        z_name = "z_" + weight[1]
        d.text(x0 + 12, gy, f"∂L/∂{w_name} = {x_name}^⊤ ∂L/∂{z_name}", anchor="start",
               size=SMALL_SIZE, color=GRAD)
        y = _assign(d, x0 + 32, gy + 20, "", shown["d" + weight], color=GRAD)
        _assign(d, x0 + 12, y, f"∂L/∂{b_name}", shown["d" + bias], color=GRAD)
        box = boxes[layer]
        d.arrow((x0, rows[row] - 8), (box.x + box.w, rows[row] - 8))
        d.arrow((box.x + box.w, rows[row] + 8), (x0 - 4, gy), color=GRAD, dashed=True)

    params("lin1", "lin1", "W1", "b1", "x")
    params("lin2", "lin2", "W2", "b2", "h")
    return d


FIGURES = (mlp_graph,)

# where each figure belongs in the lesson (a suggestion for the lesson's authors)
PLACES = {
    mlp_graph: "section “Build it: an MLP with a hand-written backward pass”",
}
