"""Self-tests of the suite. They import reference/ and cts/ directly and run
pytest in subprocesses where they need the plugin's end-to-end behaviour."""
