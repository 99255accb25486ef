"""Where the shipped resources (catalogue, examples, icons) live.

From a source checkout or an editable install they are the repository's top-level `resources/`;
a wheel or a PyInstaller bundle carries a copy inside the package as `designer/resources/`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def resources_dir() -> Path:
    override = os.environ.get("CLUSTER_DESIGNER_RESOURCES")
    if override:
        return Path(override)
    bundle = getattr(sys, "_MEIPASS", None)
    candidates = [Path(bundle) / "resources"] if bundle else []
    candidates += [_PACKAGE_DIR / "resources", _PACKAGE_DIR.parent / "resources"]
    for candidate in candidates:
        if (candidate / "catalog").is_dir():
            return candidate
    raise FileNotFoundError(
        "Cluster Designer's resources folder (catalog/, examples/) was not found; looked in "
        + ", ".join(str(c) for c in candidates)
    )


def catalog_dir() -> Path:
    return resources_dir() / "catalog"


def examples_dir() -> Path:
    return resources_dir() / "examples"


def icons_dir() -> Path:
    return resources_dir() / "icons"


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cluster-designer"
