"""Every shipped example is lint-clean, or its description says why not: each warning's text
(after the item's own name) appears in the description, in a sentence where lint is named, so
a user opening the example reads why the Lint tab is not empty."""

import re
from pathlib import Path

import pytest

from designer.io.files import load_design
from designer.model.catalog import load_catalog
from designer.model.lint import lint

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "resources" / "examples").glob("*.cluster.json"))


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(include_user=False)


def _sentences_naming_lint(description: str) -> list[str]:
    text = re.sub(r"\s+", " ", description)
    return [s for s in re.split(r"(?<=[.;])\s", text) if "lint" in s.lower()]


def _unexplained(design, catalog) -> list[str]:
    """The lint findings (as the engine reports them: with every link's copies) the design's
    description does not explain."""
    findings = lint(design, catalog, design.all_link_copies(design.chains()))
    sentences = _sentences_naming_lint(design.description or "")
    unexplained = []
    for finding in findings:
        item = design.items.get(finding.item)
        message = finding.message
        if item is not None and message.startswith(item.label):
            message = message[len(item.label):]
        what = message.strip(" :,")  # the warning's own words, not the item's name
        if finding.severity == "error" or not any(what in s for s in sentences):
            unexplained.append(f"{finding.severity} {finding.item}: {finding.message}")
    return unexplained


def test_there_are_examples():
    assert len(EXAMPLES) >= 19  # the gallery as shipped


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name.removesuffix(".cluster.json"))
def test_example_is_lint_clean_or_explains_its_warnings(path, catalog):
    design = load_design(path, catalog)
    assert _unexplained(design, catalog) == []


def test_a_warning_the_description_does_not_name_is_caught(catalog):
    """The check above can fail: the Dojo cabinets' warning, with the sentence that explains it
    taken out of the description, is reported."""
    path = next(p for p in EXAMPLES if p.name.startswith("tesla-dojo-exapod"))
    design = load_design(path, catalog)
    assert _unexplained(design, catalog) == []
    design.description = design.description.replace("lint warns", "one notes")
    left = _unexplained(design, catalog)
    assert len(left) == 10 and all("over its 120 kW power budget" in line for line in left), left
