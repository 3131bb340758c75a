"""The record of a run and what is made of it: the journal (``journal``),
markdown / CSV (``markdown``) and HTML (``html``) reports, expectation files
(``expectations``) and standalone repro bundles (``repro`` and the bundle's
own runner ``repro_runner``, which imports nothing of the suite).

Used by the pytest layer while a sweep runs and by ``python -m cts report |
repro`` afterwards; nothing here imports pytest.
"""
