"""Case spaces, one module per family: the tables of the public specifications
(each module names its sources) as data, and the frozen case dataclasses built from them with ``cts.space`` (ids, axes, spec rows, launch geometry).

Pure description: no backend, no kernel text, no pytest.  Kernels, backends
and run flows read these; the run flows are in ``cts.runs``.
"""
