"""What the plugin modules share without importing each other: the stash
key of the session's harness, the stash key of the record of the journals
given to ``--resume``, and the option group of a sweep's shards.  The
package's ``__init__`` and the modules it registers (record, shard) all
import this module; it imports none of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    pass

__all__ = ["HARNESS", "RESUMED", "SWEEP_GROUP", "sweep_group"]

HARNESS = pytest.StashKey["Harness"]()
RESUMED = pytest.StashKey["Record"]()  # the merged record of the journals given to --resume


SWEEP_GROUP = "cts-sweep"


def sweep_group(parser: pytest.Parser):
    """The second option group: what ``python -m cts sweep`` sets for its
    shards and a CI job matrix sets by hand (``--shard``, ``--run-id``,
    ``--journal-only``, ``--shard-durations``), apart from the everyday
    options in ``pytest --help``."""
    return parser.getgroup(
        SWEEP_GROUP,
        "subgroup-matrix conformance suite: shards of a sweep (set by `python -m cts sweep`, or by a CI job "
        "matrix with `python -m cts report` merging)",
    )
