"""Diagrams of lesson 02 (recurrent networks and backpropagation through time).

The lesson's notation (section 1), the same in its equations and its code: row vectors,
h_t = tanh(x_t W_x + h_{t−1} W_h + b), y_t = softmax(h_t W_y + b_y), L = Σ_t L_t.
"""

from tools.diagrams.style import DATA, GRAD, LOSS, OP, PARAM, STATE
from tools.diagrams.svg import SMALL_SIZE, Drawing

LESSON = 2


def rnn_unrolled() -> Drawing:
    """The simple RNN unrolled over four steps with its shared weights W_x, W_h, W_y, and the
    gradient paths of backpropagation through time, summed into ∂L/∂W_h."""
    d = Drawing(
        1000,
        700,
        title="An RNN unrolled over four time steps, with the gradient paths of BPTT",
        desc=(
            "Inputs x1 to x4 at the bottom feed hidden states h1 to h4 through the shared matrix "
            "Wx; each state feeds the next through Wh and an output y_t through Wy; each output "
            "has a loss L_t and the losses add up to L. Dashed arrows carry gradients back down "
            "from every loss and back through time from h4 to h1; the contributions of the four "
            "copies of Wh are summed into dL/dWh."
        ),
    )
    T = 4
    xs = [270 + 200 * t for t in range(T)]          # columns of steps 1..T
    y_top, y_loss, y_out, y_state, y_in, y_sum = 105, 190, 290, 410, 530, 612
    bw, bh = 74, 40

    d.text(22, 22, "forward (solid): the same W_x, W_h, W_y at every step", anchor="start")
    d.text(22, 44, "backward (dashed): gradients from every loss, back through time",
           anchor="start", color=GRAD)
    top = d.box((xs[0] + xs[-1]) / 2, y_top, 330, 40, "L = L_1 + L_2 + L_3 + L_4", fill=LOSS,
                bold=True)

    s0 = d.box(xs[0] - 200, y_state, bw, bh, "h_0", fill=STATE)
    d.text(s0.cx, y_state + 36, "initial state", size=SMALL_SIZE, color="grey_dark", plain=True)
    prev = s0
    for t, x in enumerate(xs, start=1):
        loss = d.box(x, y_loss, bw, bh, f"L_{t}", fill=LOSS)
        out = d.box(x, y_out, bw, bh, f"y_{t}", fill=OP)
        state = d.box(x, y_state, bw, bh, f"h_{t}", fill=STATE)
        inp = d.box(x, y_in, bw, bh, f"x_{t}", fill=DATA)
        # forward: up the column, and along the chain of states
        d.arrow((x - 9, inp.y), (x - 9, state.y + bh), label="W_x", label_dx=-22, label_dy=0,
                label_color="black")
        d.arrow((x - 9, state.y), (x - 9, out.y + bh), label="W_y", label_dx=-22, label_dy=0,
                label_color="black")
        d.arrow((x - 9, out.y), (x - 9, loss.y + bh))
        d.arrow((x, loss.y), (top.x + top.w * (t - 0.5) / T, top.y + top.h))
        d.arrow((prev.x + prev.w, y_state - 9), (state.x, y_state - 9), label="W_h",
                label_dy=-13, label_color="black")
        # backward: down the column, and back along the chain of states
        d.arrow((x + 9, loss.y + bh), (x + 9, out.y), color=GRAD, dashed=True)
        d.arrow((x + 9, out.y + bh), (x + 9, state.y), color=GRAD, dashed=True)
        d.arrow((state.x, y_state + 9), (prev.x + prev.w, y_state + 9), color=GRAD, dashed=True)
        prev = state

    # the two gradient paths that meet at h_2
    d.text(xs[1] + 17, (y_out + y_state) / 2, "from y_2", anchor="start", size=SMALL_SIZE,
           color=GRAD)
    d.text(xs[2] - 108, y_state + 26, "from h_3", anchor="end", size=SMALL_SIZE, color=GRAD)

    # each step's copy of W_h contributes a term; the terms add up
    total = d.box((xs[0] + xs[-1]) / 2 - 100, y_sum, 640, 42,
                  "∂L/∂W_h = Σ_t h_{t−1}^⊤ (∂L/∂a_t),   a_t = x_t W_x + h_{t−1} W_h + b",
                  fill=PARAM, size=SMALL_SIZE)
    for x in xs:
        gx = x - 100                                   # below the W_h arrow of this step
        d.arrow((gx, y_state + 9), (gx, total.y), color=GRAD, dashed=True, width=1.2, head=8)
    d.text_lines(total.x + total.w + 14, y_sum - 10,
                 ["one term per step:", "shared weights", "sum their gradients"],
                 anchor="start", size=SMALL_SIZE, color=GRAD, plain=True, line_height=18)
    d.text(22, 672, "at every state the two paths add:  ∂L/∂h_t = ∂L_t/∂h_t (from y_t)"
           "  +  (∂L/∂a_{t+1}) W_h^⊤ (from later steps)", anchor="start",
           size=SMALL_SIZE, color=GRAD)
    return d


FIGURES = (rnn_unrolled,)

# where each figure belongs in the lesson (a suggestion for the lesson's authors)
PLACES = {
    rnn_unrolled: "section “Build it: the RNN step and backpropagation through time”",
}
