"""Self-tests of the suite. They import reference/ and cts/ directly and run
pytest in subprocesses where they need the plugin's end-to-end behaviour."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent


def pytest_configure(config):
    # A self-test run must not touch the reports of the last conformance sweep.  Only a run of
    # self-tests: pytest also loads this file when a conformance run's arguments merely name the
    # checkout (`pytest cases --report-dir .` pre-parses "." as a path), and that run keeps its
    # report.
    if not hasattr(config.option, "no_report"):
        return
    args = [a.split("::")[0] for a in config.args] or ["."]
    if all(TESTS == Path(a).resolve() or TESTS in Path(a).resolve().parents for a in args):
        config.option.no_report = True


def vulkan_or_skip():
    """The ``vulkan`` package, or a skip naming why it cannot be used: not
    installed (ImportError) or installed without a Vulkan loader on the
    machine (the package raises OSError at import)."""
    import pytest

    try:
        import vulkan
    except ImportError:
        pytest.skip("the vulkan package is not installed")
    except OSError as e:
        pytest.skip(f"no Vulkan loader: {e}")
    return vulkan


def host_tool_or_skip(name: str) -> str:
    """The path of a SPIR-V / GLSL host tool, or a skip naming the package
    that brings it (cts.kernels.spirv_tools.PACKAGES: glslang comes with the
    optional ``vulkan`` extra, not with a bare install)."""
    import pytest

    from cts.kernels.spirv_tools import SpirvToolError, tool_path

    try:
        return tool_path(name)
    except SpirvToolError as e:
        pytest.skip(str(e))


def pytest_collection_modifyitems(config, items):
    # A driver test runs a whole sweep against a real driver prepared beside the system (.ci/run
    # prepares each, then runs `pytest tests -m driver -k <driver>` in its environment): a plain
    # `pytest tests` leaves them out, and only a -m expression naming "driver" selects them.
    if "driver" in (config.option.markexpr or ""):
        return
    keep = [i for i in items if i.get_closest_marker("driver") is None]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if i.get_closest_marker("driver") is not None])
        items[:] = keep
