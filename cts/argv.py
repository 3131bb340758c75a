"""pytest command lines as lists of arguments: the value(s) of an option,
an option removed (``python -m cts sweep`` reads and rewrites its shards'
arguments; a resume command drops ``--run-id``).  Pure functions, below
every layer."""

from __future__ import annotations

__all__ = ["option_value", "option_values", "without"]


def option_value(args: list[str], name: str) -> str | None:
    """The value of ``--name X`` / ``--name=X`` in pytest arguments (the last)."""
    val = None
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            val = args[i + 1]
        elif a.startswith(name + "="):
            val = a.split("=", 1)[1]
    return val


def option_values(args: list[str], name: str) -> list[str]:
    """Every value of ``--name X`` / ``--name=X`` in pytest arguments."""
    vals = []
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            vals.append(args[i + 1])
        elif a.startswith(name + "="):
            vals.append(a.split("=", 1)[1])
    return vals


def without(args: list[str], names: tuple[str, ...]) -> list[str]:
    """``args`` less every ``--name X`` / ``--name=X`` of ``names``."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in names:
            skip = True
        elif not a.startswith(tuple(f"{n}=" for n in names)):
            out.append(a)
    return out
