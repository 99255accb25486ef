"""The colour table moved below canvas and ui, to `designer.style.colors`; this name stays so that
code written against the old place (tests, user scripts) keeps working."""

from designer.style.colors import *  # noqa: F403
