"""The Qt-free model: parts catalogue, design, lint rules."""

from designer.model.catalog import Catalog, Part, default_catalog, load_catalog
from designer.model.design import Design, Item, Link
from designer.model.errors import CatalogError, DesignerError, DesignError
from designer.model.lint import Finding, lint

__all__ = [
    "Catalog", "Part", "default_catalog", "load_catalog", "Design", "Item", "Link",
    "CatalogError", "DesignError", "DesignerError", "Finding", "lint",
]
