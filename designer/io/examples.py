"""The built-in example designs: listing, the default one, names resolved to paths, one-line summaries.

The CLI (`examples`, `gui NAME`) and the app's example gallery both read this catalogue.
"""

from __future__ import annotations

from pathlib import Path

from designer.engine import inventory as inv
from designer.io.files import SUFFIX, load_design
from designer.model.catalog import Catalog, default_catalog
from designer.paths import examples_dir

DEFAULT_EXAMPLE = "nvidia-superpod-h100-4su"


def example_paths() -> list[Path]:
    return sorted(examples_dir().glob(f"*{SUFFIX}"))


def default_example_path() -> Path:
    return examples_dir() / f"{DEFAULT_EXAMPLE}{SUFFIX}"


def resolve_design_path(name: str) -> Path:
    """A path, or the name of a built-in example."""
    path = Path(name)
    if _exists(path) or path.suffix == ".json":
        return path
    candidate = examples_dir() / f"{name}{SUFFIX}"
    return candidate if _exists(candidate) else path


def _exists(path: Path) -> bool:
    """Whether there is something at `path`; a folder that cannot be searched or a name that
    cannot be a path is left to the reader, which refuses it with the reason."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def example_summaries(catalog: Catalog | None = None) -> list[dict]:
    """Name, size and one-line description of each built-in example (parts and counts only, so
    the list is quick to make)."""
    catalog = catalog or default_catalog()
    rows = []
    for path in example_paths():
        design = load_design(path, catalog)
        copies = inv.multiplicities(design)
        compute, memory = inv.compute_and_memory(design, catalog, copies)
        rows.append({
            "id": path.name[: -len(SUFFIX)], "path": str(path), "name": design.name,
            "description": design.description, "summary": first_sentence(design.description),
            "accelerators": inv.inventory(design, catalog, copies).accelerators,
            "bf16_pflops": compute.peak_tflops.get("bf16", 0) / 1000,
            "pooled_tib": memory.pooled_gib / 1024,
        })
    return rows


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]
