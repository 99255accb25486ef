"""Cluster Designer: plan GPU clusters and see what they can do.

From Python, with no Qt imported::

    from designer import load, evaluate
    result = evaluate(load("resources/examples/nvidia-superpod-h100-4su.cluster.json"))
    result.compute.peak_tflops["bf16"]
"""

from importlib import metadata as _metadata

from designer.engine import Result, evaluate
from designer.io.files import load_design as load
from designer.io.files import save_design as save
from designer.model import Catalog, Design, Item, Link, load_catalog

try:
    __version__ = _metadata.version("cluster-designer")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["load", "save", "evaluate", "Result", "Catalog", "Design", "Item", "Link", "load_catalog", "__version__"]
