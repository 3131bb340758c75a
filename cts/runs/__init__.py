"""Run flows, one module per family: case -> operands (``reference.data``) ->
register images (``reference.layout``) -> a backend's ``run`` -> results ->
verdict (``reference.mma`` / ``reference.tolerance`` through ``cts.judge``).

A run flow is a plain function ``run_<family>(case, backend, seed, ...) ->
CaseResult``.  It drives a backend and reads the case spaces below it; it
knows nothing of pytest: whatever a run needs from the session (the coop
property table, the subgroup count, the tolerance profile) is an argument.
"""
