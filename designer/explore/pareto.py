"""The Pareto front of a sweep's points on two figures: the points no other point beats on both."""

from __future__ import annotations


def pareto_front(points: list[tuple[float, float]], x_better: int = -1, y_better: int = -1) -> list[int]:
    """Indices of the points on the front, in order of x. `x_better`/`y_better`: +1 when larger is
    better, -1 (also for 0, a figure with no better side) when smaller is."""
    sx = 1.0 if x_better > 0 else -1.0
    sy = 1.0 if y_better > 0 else -1.0
    # Best x first (ties: best y first); a point is on the front if its y beats every y before it.
    order = sorted(range(len(points)), key=lambda i: (-sx * points[i][0], -sy * points[i][1]))
    front, best_y = [], None
    for i in order:
        y = sy * points[i][1]
        if best_y is None or y > best_y:
            front.append(i)
            best_y = y
    return sorted(front, key=lambda i: points[i][0])
