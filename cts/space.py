"""A small declarative case-space builder (combine / expand / filter).

Modelled on the idea of the WebGPU CTS parameter builder: a space is an
immutable sequence of parameter dicts built from axes; ``expand`` adds
dependent axes, ``filter`` removes invalid points.  Ids are built from an
explicit, ordered list of id parts so they stay stable across versions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["Space", "space", "P"]


class P(dict):
    """A parameter point; attribute access for readability in lambdas."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass(frozen=True)
class Space:
    _points: tuple[MappingProxyType, ...] = (MappingProxyType({}),)

    def __iter__(self) -> Iterator[P]:
        return (P(p) for p in self._points)

    def __len__(self) -> int:
        return len(self._points)

    def combine(self, name: str, values: Iterable[Any]) -> Space:
        vals = tuple(values)
        return Space(tuple(MappingProxyType({**p, name: v}) for p in self._points for v in vals))

    def expand(self, name: str, fn: Callable[[P], Iterable[Any]]) -> Space:
        out = []
        for p in self._points:
            for v in fn(P(p)):
                out.append(MappingProxyType({**p, name: v}))
        return Space(tuple(out))

    def expand_many(self, fn: Callable[[P], Iterable[dict]]) -> Space:
        """Expand several dependent axes at once (fn yields dicts)."""
        out = []
        for p in self._points:
            for d in fn(P(p)):
                clash = set(d) & set(p)
                if clash:
                    raise ValueError(f"axes defined twice: {sorted(clash)}")
                out.append(MappingProxyType({**p, **d}))
        return Space(tuple(out))

    def filter(self, pred: Callable[[P], bool]) -> Space:
        return Space(tuple(p for p in self._points if pred(P(p))))

    def points(self) -> list[P]:
        return list(self)


def space() -> Space:
    return Space()
