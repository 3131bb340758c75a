"""The numerics fingerprint: how a device rounds, fuses and orders a float
multiply-accumulate (the specs leave it implementation-defined).

* ``probes``: the hand-designed experiments (``Target``, ``Prober``, one
  function per property) and the float-MMA target table;
* ``model``: inference of a device model from the findings, its replay;
* ``intel`` / ``vk``: the abstract ``mma(A, B, C) -> D`` of a target through
  the Intel built-ins (any backend) or a Vulkan cooperative-matrix runner;
* ``report``: ``fingerprint.md`` and the report section; ``cli``: ``python -m
  cts numerics``.

The ``model`` tier that turns a fingerprint into a check is in the pytest
layer (``cts.plugin.numerics``).
"""
