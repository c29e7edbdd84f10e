"""Roles of the colours in the course's diagrams, shared by every lesson module.

One meaning per colour across the whole course, so a student learns it once:
inputs and data are green, learned parameters orange, operations blue, losses purple;
forward arrows are solid black, gradients dashed vermilion.
"""

DATA = "green_light"        # inputs, tokens, targets
PARAM = "orange_light"      # learned parameters (W, b, embedding tables)
OP = "sky_light"            # operations and layers
LOSS = "purple_light"       # losses
STATE = "yellow_light"      # recurrent states, memory cells
NEUTRAL = "grey_light"      # masked, excluded or inactive parts
GRAD = "vermillion"         # gradients: dashed lines and their labels
