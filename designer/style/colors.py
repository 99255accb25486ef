"""Every colour the app shows, in one place: the canvas and the plots read the same table, so a
tier, a kind of part or a level of utilization looks the same wherever it appears.

Colours are hex strings (pyqtgraph and style sheets take them as they are; the canvas wraps them
in QColor). Series colours follow Okabe & Ito's palette, which stays distinguishable for
colour-blind readers and in greyscale print.
"""

from __future__ import annotations

# Network tiers, as the engine names them (`designer.engine.network`: scale-up, scale-out, host).
TIER = {
    "scale-up": "#7B1FA2",
    "scale-out": "#1565C0",
    "host": "#00897B",
}
UNKNOWN_TIER = "#78909C"

# Kinds of item on the canvas: (fill, border).
KIND = {
    "rack": ("#F1F3F5", "#546E7A"),
    "server": ("#E8F1FB", "#1E6FC7"),
    "group": ("#FAF5FC", "#8E24AA"),
    "accelerator": ("#E3F4D7", "#3D8B1F"),
    "cpu": ("#FFF1E0", "#D9730D"),
    "nic": ("#DFF5F7", "#00838F"),
    "switch": ("#ECE6F7", "#5E35B1"),
}
GROUP_BADGE = KIND["group"][1]
BADGE_TEXT = "#FFFFFF"

# Okabe–Ito, for series that have no colour of their own.
SERIES = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]

# Collective algorithms, as the engine names them.
ALGORITHM = {
    "ring": "#0072B2",
    "tree": "#D55E00",
    "hierarchical": "#009E73",
    "nvls": "#CC79A7",
    "sharp": "#E69F00",
    "torus": "#56B4E9",
}

# Where a training step's time goes, and a GPU's time split.
STEP_PART = {
    "compute": "#0072B2",
    "exposed_tp": "#E69F00",
    "exposed_pp": "#CC79A7",
    "exposed_dp": "#D55E00",
    "bubble": "#999999",
    "exposed_cp": "#56B4E9",
    "exposed_ep": "#009E73",
    "exposed_memory": "#F0E442",
}
GPU_TIME = {"compute": "#0072B2", "communication": "#D55E00", "idle": "#BBBBBB"}

# What a design costs: capital by category, yearly cost by component (the Cost tab).
COST_CATEGORY = {
    "accelerators_and_servers": "#0072B2",
    "scale_up_network": "#56B4E9",
    "scale_out_network": "#009E73",
    "cables_and_optics": "#E69F00",
    "storage": "#CC79A7",
    "racks_and_facility": "#999999",
}
YEARLY_COST = {
    "it_depreciation": "#0072B2",
    "facility_depreciation": "#999999",
    "electricity": "#D55E00",
    "colocation": "#CC79A7",
}

# States.
SELECTION = "#FF6D00"
# The Pareto front on a sweep's scatter: a dark violet, far from every SERIES colour a point may have
# (the selection's orange is next to two of them).
PARETO = "#4B0082"
BOTTLENECK = "#D50000"
ERROR = "#B00020"
FAILED = "#C62828"  # a part marked failed in a what-if: struck through in this colour
WARNING = "#9A6700"  # a figure that leaves something out (unpriced parts)
GOOD = "#1B7F3B"
TEXT = "#1F2328"
DIM_TEXT = "#57606A"
CANVAS_BACKGROUND = "#FFFFFF"
LEGEND_BORDER = "#C0C6CC"


def utilization_rgb(u: float) -> tuple[float, float, float]:
    """Green (idle) → amber (half) → red (saturated), as RGB fractions, for a utilization 0..1."""
    u = max(0.0, min(1.0, float(u)))
    if u < 0.5:
        t = u / 0.5
        return (0.18 + t * (0.95 - 0.18), 0.65 + t * (0.77 - 0.65), 0.25 * (1 - t) + 0.1 * t)
    t = (u - 0.5) / 0.5
    return (0.95 - t * 0.1, 0.77 - t * 0.62, 0.1 + t * 0.05)


def utilization_hex(u: float) -> str:
    r, g, b = utilization_rgb(u)
    return f"#{round(r * 255):02X}{round(g * 255):02X}{round(b * 255):02X}"


def tier_color(tier: str | None) -> str:
    return TIER.get(tier or "", UNKNOWN_TIER)
