"""Diagrams of lesson 03 (LSTM gates).

The lesson's notation, with row vectors as in its code: gates f_t, i_t, o_t and the candidate C̃_t
on [h_{t−1}, x_t] W + b; C_t = f_t ⊙ C_{t−1} + i_t ⊙ C̃_t, h_t = o_t ⊙ tanh(C_t). The GRU in
PyTorch's form (section 5): r_t, z_t, n_t = tanh(x_t W_{x,n} + b_n + r_t ⊙ (h_{t−1} W_{h,n} +
b_hn)), h_t = (1 − z_t) ⊙ n_t + z_t ⊙ h_{t−1}."""

from tools.diagrams.style import OP
from tools.diagrams.svg import SMALL_SIZE, Drawing

LESSON = 3

_R = 14          # radius of the ⊙ and + nodes


def _dot(d: Drawing, x: float, y: float, color: str = "black") -> None:
    """A junction dot where a line splits in two."""
    d.circle(x, y, 3.5, fill=color, stroke=color, stroke_width=1)


def lstm_cell() -> Drawing:
    """The LSTM cell: the gates σ, σ, tanh, σ on [h_{t−1}, x_t], the element-wise ⊙ and +, the
    additive cell path C_{t−1} → C_t, and h_t = o_t ⊙ tanh(C_t)."""
    d = Drawing(
        900, 700,
        title="The LSTM cell: forget, input and output gates, the candidate, and the additive "
              "cell path",
        desc=("The cell state runs straight across the top from C_{t-1} to C_t, touched only by "
              "an element-wise product with the forget gate f_t and a sum with i_t times the "
              "candidate. Below, the concatenation of h_{t-1} and x_t feeds four layers: sigma "
              "(forget), sigma (input), tanh (candidate), sigma (output). The output h_t is o_t "
              "times tanh(C_t)."))
    y_c, y_gate, y_bus = 110, 320, 410
    d.rect(120, 60, 610, 390, fill="white", stroke="grey", stroke_width=1.5, rx=18)
    d.text(140, 78, "LSTM cell, step t", anchor="start", size=SMALL_SIZE, color="grey_dark",
           plain=True)

    # the cell path: highlighted, thick, straight through
    d.line((30, y_c), (860, y_c), color="yellow", width=16)
    d.arrow((30, y_c), (860, y_c), width=3.5, head=14)
    d.text(40, y_c - 24, "C_{t−1}", anchor="start", bold=True)
    d.text(855, y_c - 24, "C_t", anchor="end", bold=True)
    d.text(560, y_c - 26, "cell path: only ⊙ f_t and + on the way", size=SMALL_SIZE,
           color="grey_dark")
    mul_f = d.circle(250, y_c, _R, "⊙")
    add = d.circle(420, y_c, _R, "+")

    # [h_{t−1}, x_t]: h enters from the left, x from below, one bus feeds the four layers
    d.line((30, y_bus), (560, y_bus), width=2)
    d.text(40, y_bus - 16, "h_{t−1}", anchor="start", bold=True)
    d.line((175, 500), (175, y_bus), width=2)
    _dot(d, 175, y_bus)
    d.text(175, 515, "x_t", bold=True)
    d.text(40, y_bus + 18, "[h_{t−1}, x_t]", size=SMALL_SIZE, anchor="start")

    gates = [("σ", 250, "forget"), ("σ", 340, "input"), ("tanh", 420, "candidate"),
             ("σ", 540, "output")]
    for fn, x, role in gates:
        g = d.box(x, y_gate, 56 if fn == "tanh" else 44, 36, fn, fill=OP)
        d.arrow((x, y_bus), (x, g.y + g.h))
        _dot(d, x, y_bus)
        d.text(x + 6, y_gate + 42, role, size=SMALL_SIZE, color="grey_dark", anchor="start",
               plain=True)

    # forget: f_t ⊙ C_{t−1}
    d.arrow((250, y_gate - 18), mul_f.bottom, label="f_t", label_dx=14, label_dy=30,
            label_anchor="start", label_size=15)
    # input: i_t ⊙ C̃_t, added to the cell
    mul_i = d.circle(420, 215, _R, "⊙")
    d.elbow((340, y_gate - 18), mul_i.left, first="v", label="i_t", label_dx=14, label_dy=0,
            label_anchor="start", label_size=15)
    d.arrow((420, y_gate - 18), mul_i.bottom, label="C̃_t", label_dx=14, label_dy=0,
            label_anchor="start", label_size=15)
    d.arrow(mul_i.top, add.bottom)
    # output: h_t = o_t ⊙ tanh(C_t)
    tanh_c = d.box(620, 185, 56, 32, "tanh", fill=OP)
    d.arrow((620, y_c), tanh_c.top)
    _dot(d, 620, y_c)
    mul_o = d.circle(620, 260, _R, "⊙")
    d.arrow(tanh_c.bottom, mul_o.top)
    d.elbow((540, y_gate - 18), mul_o.left, first="v", label="o_t", label_dx=14, label_dy=0,
            label_anchor="start", label_size=15)
    d.arrow_path([mul_o.right, (680, 260), (680, y_bus), (860, y_bus)], width=2)
    d.text(855, y_bus - 16, "h_t", anchor="end", bold=True)
    d.text(790, y_bus + 18, "to the output and step t+1", size=SMALL_SIZE, color="grey_dark",
           plain=True)

    # the equations, in the lesson's form
    eq = [("f_t = σ([h_{t−1}, x_t] W_f + b_f)", "forget gate: how much of C_{t−1} to keep"),
          ("i_t = σ([h_{t−1}, x_t] W_i + b_i)", "input gate: how much new information to write"),
          ("C̃_t = tanh([h_{t−1}, x_t] W_C + b_C)", "candidate: the new information"),
          ("C_t = f_t ⊙ C_{t−1} + i_t ⊙ C̃_t", "update: forget, then add"),
          ("o_t = σ([h_{t−1}, x_t] W_o + b_o)", "output gate: how much to read out"),
          ("h_t = o_t ⊙ tanh(C_t)", "the new hidden state")]
    for k, (formula, note) in enumerate(eq):
        d.text(40, 560 + 23 * k, formula, anchor="start", size=SMALL_SIZE)
        d.text(360, 560 + 23 * k, note, anchor="start", size=SMALL_SIZE, color="grey_dark")
    return d


def gru_cell() -> Drawing:
    """The GRU cell in PyTorch's form: reset and update gates, the candidate n_t, and the
    interpolation h_t = (1 − z_t) ⊙ n_t + z_t ⊙ h_{t−1} (two gates, no separate cell)."""
    d = Drawing(
        900, 720,
        title="The GRU cell: reset gate, update gate, candidate and interpolation",
        desc=("The previous state h_{t-1} runs across the top; it is scaled by the update gate "
              "z_t and added to (1 - z_t) times the candidate n_t to give h_t. The reset gate r_t "
              "and the update gate z_t are sigmoid layers on [h_{t-1}, x_t]; the candidate is "
              "tanh of x_t W_x,n + b_n plus r_t times (h_{t-1} W_h,n + b_hn)."))
    y_h, y_gate, y_bus = 90, 350, 430
    d.rect(120, 45, 700, 445, fill="white", stroke="grey", stroke_width=1.5, rx=18)
    d.text(140, 62, "GRU cell, step t", anchor="start", size=SMALL_SIZE, color="grey_dark",
           plain=True)

    # the state path across the top: z_t ⊙ h_{t−1}, then + (1 − z_t) ⊙ n_t
    d.line((30, y_h), (870, y_h), color="yellow", width=16)
    d.arrow((30, y_h), (870, y_h), width=3.5, head=14)
    d.text(40, y_h - 24, "h_{t−1}", anchor="start", bold=True)
    d.text(865, y_h - 24, "h_t", anchor="end", bold=True)
    mul_z = d.circle(600, y_h, _R, "⊙")
    add = d.circle(800, y_h, _R, "+")

    # inputs: h_{t−1} drops down at the left, x_t comes from below
    d.line((80, y_h), (80, 470), width=2)
    _dot(d, 80, y_h)
    d.line((80, y_bus), (320, y_bus), width=2)
    _dot(d, 80, y_bus)
    d.arrow_path([(80, 470), (460, 470), (460, 418)], width=2)
    d.line((175, 560), (175, y_bus), width=2)
    _dot(d, 175, y_bus)
    d.arrow_path([(175, 520), (620, 520), (620, 417)], width=2)
    _dot(d, 175, 520)
    d.text(175, 578, "x_t", bold=True)
    d.text(200, y_bus + 18, "[h_{t−1}, x_t]", size=SMALL_SIZE, anchor="start")

    r = d.box(230, y_gate, 44, 36, "σ", fill=OP)
    z = d.box(320, y_gate, 44, 36, "σ", fill=OP)
    for g, role in ((r, "reset"), (z, "update")):
        d.arrow((g.cx, y_bus), g.bottom)
        _dot(d, g.cx, y_bus)
        d.text(g.cx + 6, y_gate + 40, role, size=SMALL_SIZE, color="grey_dark", anchor="start",
               plain=True)

    # the candidate n_t = tanh(x_t W_{x,n} + b_n + r_t ⊙ (h_{t−1} W_{h,n} + b_hn))
    hn = d.box(460, 400, None, 34, "h_{t−1} W_{h,n} + b_{hn}", fill="white", size=SMALL_SIZE)
    xin = d.box(620, 400, None, 34, "x_t W_{x,n} + b_n", fill="white", size=SMALL_SIZE)
    mul_r = d.circle(460, 290, _R, "⊙")
    d.arrow(hn.top, mul_r.bottom)
    d.elbow(r.top, mul_r.left, first="v", label="r_t", label_at=1, label_dy=-12,
            label_size=15, label_color="black")
    add_n = d.circle(560, 290, _R, "+")
    d.arrow(mul_r.right, add_n.left)
    d.elbow(xin.top, add_n.bottom, first="v")
    tanh_n = d.box(560, 215, 56, 32, "tanh", fill=OP)
    d.arrow(add_n.top, tanh_n.bottom)

    # update: z_t scales h_{t−1}; 1 − z_t scales n_t
    d.arrow_path([z.top, (320, 160), (600, 160), mul_z.bottom], label="z_t", label_at=1,
                 label_dx=-60, label_dy=-12, label_size=15, label_color="black")
    _dot(d, 600, 160)
    one_minus = d.box(740, 160, 46, 30, "1 −", fill="white", size=SMALL_SIZE)
    d.arrow((600, 160), one_minus.left)
    mul_n = d.circle(740, 215, _R, "⊙")
    d.arrow(one_minus.bottom, mul_n.top)
    d.arrow(tanh_n.right, mul_n.left, label="n_t", label_dy=-12, label_size=15,
            label_color="black")
    d.arrow_path([mul_n.right, (800, 215), add.bottom])

    eq = [("r_t = σ(x_t W_{x,r} + h_{t−1} W_{h,r} + b_r)", "reset gate"),
          ("z_t = σ(x_t W_{x,z} + h_{t−1} W_{h,z} + b_z)", "update gate"),
          ("n_t = tanh(x_t W_{x,n} + b_n + r_t ⊙ (h_{t−1} W_{h,n} + b_{hn}))", "candidate"),
          ("h_t = (1 − z_t) ⊙ n_t + z_t ⊙ h_{t−1}", "interpolation: an additive path again")]
    for k, (formula, note) in enumerate(eq):
        d.text(40, 610 + 24 * k, formula, anchor="start", size=SMALL_SIZE)
        d.text(520, 610 + 24 * k, note, anchor="start", size=SMALL_SIZE, color="grey_dark",
               plain=True)
    return d


FIGURES = (lstm_cell, gru_cell)

# where each figure belongs in the lesson (a suggestion for the lesson's authors)
PLACES = {
    lstm_cell: "section “Idea: a memory cell with gates”",
    gru_cell: "section “The GRU: two gates, no cell”",
}
