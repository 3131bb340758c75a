"""Self-tests of the suite. They import reference/ and cts/ directly and run
pytest in subprocesses where they need the plugin's end-to-end behaviour."""


def pytest_configure(config):
    # self-tests must not touch the reports of the last conformance sweep
    if hasattr(config.option, "no_report"):
        config.option.no_report = True
