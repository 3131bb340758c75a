"""The one judge of every family (ground layer): one result type
(:class:`CaseResult`), one enumeration of rules (:class:`Rule`, which the
reports read), one exact comparison (:mod:`cts.judge.exact`), one float MMA
verdict whose family differences are named parameters
(:mod:`cts.judge.mma`), sentinel fills of output buffers
(:mod:`cts.judge.sentinel`) and the execution environment's float rules
(:mod:`cts.judge.env`).  Bounds and their derivations live in
``reference/tolerance.py``."""

from cts.judge.exact import as_bits, exact_verdict, same_bits_or_nan, same_value
from cts.judge.mma import EXACT_TIERS, MmaRules, judge_mma_float
from cts.judge.verdict import MAX_REPORTED, NEVER_WRITTEN, CaseResult, Mismatch, Rule, Verdict, compare

__all__ = [
    "CaseResult",
    "EXACT_TIERS",
    "MAX_REPORTED",
    "NEVER_WRITTEN",
    "Mismatch",
    "MmaRules",
    "Rule",
    "Verdict",
    "as_bits",
    "compare",
    "exact_verdict",
    "judge_mma_float",
    "same_bits_or_nan",
    "same_value",
]
