"""Failure marks: what a what-if takes out of service, as text ("spines.sw:1", "ib-ndr:2%"), as a
record (`Failure`), as `settings["failures"]` entries, merged one per target, and in the design's
own words (`failure_words`).

A failure names an item, a link or a link medium, and how many of its physical copies fail: all
of them, a count ("1 of 16 spines": `spines.sw:1`) or a percentage ("2 % of the NDR optics":
`ib-ndr:2%`). The design's `settings["failures"]` holds them (`{"target": ID, "copies": N}` or
`{"target": ID, "percent": P}`; neither means every copy); the CLI adds `--fail ID[:copies]`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from designer.model.catalog import Catalog
from designer.model.design import MAX_TOTAL_COPIES, Design


_FAILURE_TEXT = re.compile(
    r"^(?P<target>[A-Za-z0-9][A-Za-z0-9_.:-]*?)(?::(?P<amount>[0-9]+(?:\.[0-9]+)?)(?P<percent>%)?)?$")


@dataclass(frozen=True)
class Failure:
    """`target` out of service: every copy (copies and percent None), `copies` of them, or
    `percent` of them (at least one)."""

    target: str
    copies: int | None = None
    percent: float | None = None

    def text(self) -> str:
        if self.copies is not None:
            return f"{self.target}:{self.copies}"
        if self.percent is not None:
            return f"{self.target}:{self.percent:g}%"
        return self.target

    def setting(self) -> dict:
        """The entry of `settings["failures"]`."""
        out: dict = {"target": self.target}
        if self.copies is not None:
            out["copies"] = self.copies
        if self.percent is not None:
            out["percent"] = self.percent
        return out

    def failed_of(self, total: int) -> int:
        """How many of `total` physical copies fail."""
        if self.copies is not None:
            return min(total, self.copies)
        if self.percent is not None:
            return min(total, max(1, round(total * self.percent / 100)))
        return total


def parse_failure(text: str) -> Failure:
    """"ID", "ID:3" or "ID:2%" (the CLI's --fail); a bad text raises ValueError saying what fits."""
    match = _FAILURE_TEXT.match(text.strip())
    if match is None:
        raise ValueError(f"expected ID, ID:COPIES or ID:PERCENT% (like spines.sw:1 or ib-ndr:2%), got '{text}'")
    amount = match.group("amount")
    if amount is None:
        return Failure(match.group("target"))
    if match.group("percent"):
        percent = float(amount)
        if not 0 < percent <= 100:
            raise ValueError(f"a percentage of copies is above 0 and at most 100, got '{text}'")
        return Failure(match.group("target"), percent=percent)
    # Digits are counted before converting: Python refuses to convert thousands of them.
    digits = amount.lstrip("0")
    if "." in amount or len(digits) > len(str(MAX_TOTAL_COPIES)) or not 1 <= int(amount) <= MAX_TOTAL_COPIES:
        raise ValueError(f"a count of copies is a whole number from 1 to {MAX_TOTAL_COPIES:,}, got '{text}'")
    return Failure(match.group("target"), copies=int(amount))


def failures_of(design: Design) -> list[Failure]:
    """The failures a design's settings mark."""
    return [Failure(entry["target"], entry.get("copies"), entry.get("percent"))
            for entry in design.settings.get("failures") or ()]


def failed_targets(design: Design) -> set[str]:
    """Ids of the items and links a design marks failed (whole or in part)."""
    return {entry["target"] for entry in design.settings.get("failures") or ()}


@dataclass(frozen=True)
class MediumFailure:
    """Some of a link medium's physical links out of service, from every mark of it: the marks'
    counts add up (two of 50 % are every link), each counted over the links of it left when it
    applies (`_Degrader.apply`: after the failures of every copy), capped at all of them."""

    target: str
    marks: tuple[Failure, ...]

    def text(self) -> str:
        return ", ".join(mark.text() for mark in self.marks)

    def failed_of(self, total: int) -> int:
        """How many of `total` physical links fail."""
        return min(total, sum(mark.failed_of(total) for mark in self.marks))


def medium_links(design: Design, medium: str) -> int:
    """Physical links of `medium` in the design, over all its links: the pool a count or a share
    of the medium is taken from."""
    return sum(design.link_copies(link).instances for link in design.links.values() if link.medium == medium)


def merged_failures(design: Design, catalog: Catalog,
                    failures: list[Failure]) -> tuple[list[Failure | MediumFailure], list[str]]:
    """The failures to apply, one per item, link or link medium, and notes on what they asked for.

    Marks of one target add up (one copy marked twice is two copies; a mark of every copy wins),
    capped at the copies there are; a medium's copies are its physical links over all its links
    (`medium_links`): marks adding up to all of them (50 % twice) fail the medium, exactly as its
    mark of every copy does, fewer are one `MediumFailure`. Failures of every copy come first: a
    failure of something inside one of them finds it gone, and no copy split out by a partial
    failure (`su:f1`) is left standing by a later failure of the whole. One pass over the marks,
    and one over the links per medium marked.
    Notes: a count above the copies there are, a medium no link of the design uses."""
    notes: list[str] = []
    by_target: dict[str, list[Failure]] = {}
    for failure in failures:
        by_target.setdefault(failure.target, []).append(failure)
    whole: list[Failure] = []
    partial: list[Failure | MediumFailure] = []
    for target, marks in by_target.items():
        every = any(m.copies is None and m.percent is None for m in marks)
        noun = "copies"
        if target in design.items:
            total = design.multiplicity(target)
        elif target in design.links:
            total = design.link_copies(design.links[target]).instances
        elif target in catalog and catalog[target].kind == "medium":
            total, noun = medium_links(design, target), "physical links"
            if not total:  # nothing to fail; the CLI refuses such a mark, a file's is only noted
                notes.append(f"no link of the design uses medium '{target}': nothing of it failed")
                continue
        else:
            (whole if every else partial).extend(marks)  # `_Degrader.apply` says what is unknown
            continue
        asked = sum(m.copies for m in marks if m.copies is not None)
        if not every and asked > total:
            notes.append(f"{asked:,} {noun} of '{target}' marked failed, the design has {total:,}: every copy failed")
        failed = total if every else min(total, sum(m.failed_of(total) for m in marks))
        if failed >= total:
            whole.append(Failure(target))
        elif target in design.items or target in design.links:
            partial.append(Failure(target, copies=failed))
        else:
            # Counted again over the links left when it applies: a switch failed with it takes
            # its links first, and 5 % is then 5 % of the rest.
            partial.append(MediumFailure(target, tuple(marks)))
    return whole + partial, notes


def failure_words(design: Design, catalog: Catalog, text: str) -> str:
    """A what-if's failure as the engine writes it ("spines.sw:1", "ib-ndr:2%") in the design's
    own words: "1 of 16 × Spine", "2% of every InfiniBand NDR link"; the text itself when it
    names nothing in the design (a result older than the last edit)."""
    try:
        failure = parse_failure(text)
    except ValueError:
        return text
    target = failure.target
    if target in design.items:
        name, total = design.items[target].label, design.multiplicity(target)
    elif target in design.links:
        link = design.links[target]
        ends = (design.items.get(link.a), design.items.get(link.b))
        name = "link " + " — ".join(end.label if end else "?" for end in ends)
        total = design.link_copies(link).instances
    else:
        part = catalog.get(target)
        if part is None:
            return text
        share = f"{failure.percent:g}%" if failure.percent is not None else failure.copies or "all"
        return f"{share} of every {part.name} link"
    failed = failure.failed_of(total)
    if failed >= total:
        return f"all {total:,} × {name}" if total > 1 else name
    return f"{failed:,} of {total:,} × {name}"
