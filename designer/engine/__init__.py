"""The Qt-free evaluation engine: pure functions from a design snapshot to an immutable Result."""

from designer.engine.evaluate import evaluate
from designer.engine.result import Result

__all__ = ["evaluate", "Result"]
