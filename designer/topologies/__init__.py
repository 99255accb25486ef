"""Topology generators (Qt-free): each returns a Design built from catalogue parts."""

from designer.topologies import dragonfly, multi_plane, nvl72, rail_only  # noqa: F401  (each registers its template)
from designer.topologies.base import TopologyError
from designer.topologies.generators import GENERATORS, generate

__all__ = ["GENERATORS", "generate", "TopologyError"]
