"""The independent model of the specs: element types, register images, the
exact reference, tolerance rules and input tiers.  No pytest, no device code,
no imports from ``cts``."""
