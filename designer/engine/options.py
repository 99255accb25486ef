"""Engine options beyond the design (collective sizes, workload, plan), from the command line.

The network and training sections of the engine add their options here; the CLI's `evaluate` and
`export` share them."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the engine's options to a sub-command."""


def from_arguments(args: argparse.Namespace, design) -> dict | None:
    """The workload the options describe, or None for the design's own settings."""
    return None
