"""The skeleton every mutation proof of the suite shares (tests/test_*mutations.py).

A family's cases run in-process on the emulator through the family's own runner: the
correct emulator must pass every case, and each named fault of the emulator (one at a
time) must make the cases it targets fail -- the fault's kill set.  ``kills`` prints the
fault -> killed cases table (``pytest tests/test_mutations.py -s`` shows it).  The tests
that read a whole kill table are marked ``e2e``: every fault runs every case of the family.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tabulate import tabulate

from cts.backends.base import CaseError
from cts.backends.emulator import EmulatorBackend


def faulty(fault: str) -> EmulatorBackend:
    """The emulator with one named fault."""
    return EmulatorBackend((fault,))


class Mutations:
    """One family's mutation proof.

    ``run(case, backend)`` runs a case and returns its result (``.verdict.passed``);
    ``name(case)`` is the case's name in kill sets (its id unless told); with
    ``errors_kill`` a per-case :class:`CaseError` (an unusable map, a broken kernel
    the emulator refuses) counts as a kill, otherwise it propagates.
    """

    def __init__(
        self,
        family: str,
        run: Callable,
        *,
        name: Callable = lambda c: c.id,
        errors_kill: bool = False,
    ):
        self.family = family
        self.run = run
        self.name = name
        self.errors_kill = errors_kill

    def fails(self, case, backend) -> bool:
        try:
            return not self.run(case, backend).verdict.passed
        except CaseError:
            if not self.errors_kill:
                raise
            return True

    def failing(self, backend, cases: Iterable) -> list[str]:
        """The names of the cases that fail on ``backend``, in case order."""
        return [self.name(c) for c in cases if self.fails(c, backend)]

    def assert_clean(self, cases: Iterable, backend=None) -> None:
        """The correct emulator (or a legal device) fails no case."""
        failed = self.failing(backend or EmulatorBackend(), cases)
        assert failed == [], f"{self.family}: a correct device failed {len(failed)} cases: {failed[:5]}"

    def kills(
        self, faults: Iterable[str], cases: Iterable, backend: Callable = faulty
    ) -> dict[str, list[str]]:
        """fault -> the names of the cases it makes fail (all of ``cases`` run for each)."""
        cases = list(cases)
        table = {f: self.failing(backend(f), cases) for f in faults}
        rows = [[f, f"{len(v)} / {len(cases)}", ", ".join(v[:2])] for f, v in table.items()]
        print("\n" + tabulate(rows, headers=["fault", "cases failed", "e.g."], tablefmt="github"))
        return table

    def first_kills(
        self, faults: Iterable[str], cases_of: Callable[[str], Iterable]
    ) -> dict[str, str | None]:
        """fault -> the first of ``cases_of(fault)`` it makes fail (None: not caught); stops
        at the first, for families whose cases are slow to run."""
        table = {}
        for f in faults:
            be = faulty(f)
            table[f] = next((self.name(c) for c in cases_of(f) if self.fails(c, be)), None)
        rows = [[f, table[f] or "NOT CAUGHT"] for f in table]
        print("\n" + tabulate(rows, headers=["fault", "first catching case"], tablefmt="github"))
        return table

    def assert_killed(self, table: dict, fault: str) -> None:
        assert table[fault], f"fault {fault!r} was not caught by any {self.family} case"


def assert_kills_only(
    killed: Iterable[str], fault: str, allowed: Callable[[str], bool], must: Iterable[str] = ()
):
    """A fault of one axis: killed by cases of that axis only (``allowed``), and by each of
    ``must`` (the cases that target it)."""
    killed = list(killed)
    assert killed, f"{fault} not caught"
    stray = [i for i in killed if not allowed(i)]
    assert not stray, f"{fault} caught by cases outside its axis: {stray[:5]}"
    missed = [i for i in must if i not in killed]
    assert not missed, f"{fault} not caught by {missed}"
