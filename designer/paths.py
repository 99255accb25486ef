"""Where the shipped resources (catalogue, examples, icons) live.

An installed wheel and the PyInstaller bundle carry them inside the package as
`designer/resources/`; a source checkout, and an editable install that runs from it, has them at
the repository's top-level `resources/`.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_RESOURCE_PLACES = (_PACKAGE_DIR / "resources", _PACKAGE_DIR.parent / "resources")


def resources_dir() -> Path:
    for candidate in _RESOURCE_PLACES:
        if (candidate / "catalog").is_dir():
            return candidate
    raise FileNotFoundError(
        "Cluster Designer's resources folder (catalog/, examples/) was not found; looked in "
        + ", ".join(str(c) for c in _RESOURCE_PLACES)
    )


def catalog_dir() -> Path:
    return resources_dir() / "catalog"


def examples_dir() -> Path:
    return resources_dir() / "examples"


def sweeps_dir() -> Path:
    """The shipped sweep files (`NAME.sweep.json`), where the Sweep window's Open starts."""
    return resources_dir() / "sweeps"


def icons_dir() -> Path:
    return resources_dir() / "icons"


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cluster-designer"


def reliability_file() -> Path:
    """Failure rates per part class and recovery assumptions (docs/goodput.md)."""
    return resources_dir() / "reliability" / "failure-rates.json"
