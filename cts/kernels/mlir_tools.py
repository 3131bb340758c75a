"""Upstream MLIR's tools (``mlir-opt``, ``mlir-translate``; Debian package
``mlir-22-tools``) as the suite's compiler for the MLIR family: verify a
text, lower it to SPIR-V for Vulkan or to PTX for CUDA (specs/mlir-lowering.md).

Tools are looked up in ``$CTS_MLIR_TOOLS`` (a folder; only there when it is
set), then on ``PATH`` (``mlir-opt`` or ``mlir-opt-22``), then in
``/usr/lib/llvm-22/bin``.  A missing tool is a :class:`MlirToolError` (a
harness error naming the package), never a device verdict.

The suite checks its own text before it blames anyone (``check_text``: the
same mlir-opt parses and verifies it with no pass): an op, or an enum value
of an op, that this version does not have is :class:`cts.errors.Unsupported`
naming the version (a skip); any other parse or verifier error is
:class:`MlirTextError`, a harness error (the suite wrote invalid MLIR).  Only
a text that verifies and that a lowering then refuses or crashes on is a
:class:`cts.errors.ToolchainError` naming the tool, its version and its
message: a verdict on the compiler, apart from the device's.

Lowered binaries are cached on disk (``$CTS_CACHE_DIR/mlir``, else
``$XDG_CACHE_HOME/cts/mlir`` or ``~/.cache/cts/mlir``) under the SHA-256 of
the tool version, the pipeline and the text, with the findings about them,
so a repeated sweep does not run the tools again.

Pipelines (recorded in reports, :data:`SPIRV_PIPELINE`, :data:`PTX_PIPELINE`):

* SPIR-V: ``convert-gpu-to-spirv`` then, on the ``spirv.module``,
  ``spirv-lower-abi-attrs, spirv-update-vce``; the ``spirv.module`` is cut
  out of the output (``mlir-translate`` does not register the gpu dialect)
  and serialized with ``mlir-translate --serialize-spirv --no-implicit-module``.
* PTX: ``convert-gpu-to-nvvm, reconcile-unrealized-casts`` on the gpu.module,
  then ``gpu-module-to-binary{format=isa}``; the PTX is the assembly string
  of the ``gpu.binary`` (MLIR string escapes undone).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from cts.errors import HarnessError, ToolchainError, Unsupported

__all__ = [
    "MlirToolError",
    "MlirTextError",
    "check_text",
    "PACKAGE",
    "SPIRV_PIPELINE",
    "PTX_PIPELINE",
    "tool_path",
    "tool_version",
    "run_tool",
    "verify",
    "verify_funcs",
    "to_spirv",
    "to_ptx",
    "ptx_findings",
    "lower_funcs",
    "spirv_findings",
    "cache_dir",
]

PACKAGE = "mlir-22-tools"
DEBIAN_BIN = "/usr/lib/llvm-22/bin"
SPIRV_PIPELINE = "builtin.module(convert-gpu-to-spirv,spirv.module(spirv-lower-abi-attrs,spirv-update-vce))"
PTX_PIPELINE = "builtin.module(gpu.module(convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa})"
TIMEOUT_S = 300
_HOW = (
    f"install the Debian package {PACKAGE} (apt-get install {PACKAGE}; tools in {DEBIAN_BIN}), or on "
    "Debian 12 run `bash scripts/mlir-tools.sh DIR` and set CTS_MLIR_TOOLS=DIR/bin"
)


class MlirToolError(HarnessError):
    """mlir-opt / mlir-translate missing or not starting (a harness error)."""


class MlirTextError(HarnessError):
    """The suite's own MLIR text fails the verifier of the mlir-opt that
    lowers it (an operand type the op's definition excludes, ...): a
    harness error, never the tool's or the device's."""


# the parser's words for a text using what this version of the dialects does not have: an
# unknown op, or an enum value (e.g. an MMAElementwiseOp) the version does not list
_VERSION_LACKS = re.compile(
    r"custom op '[^']+' is unknown|unregistered operation|expected ::mlir::[\w:]+ to be one of|"
    r"Dialect `\w+' not found"
)

# gpu.subgroup_mma_extract_thread_local / insert_thread_local on a signed or unsigned matrix (si8 / ui8):
# the op requires its scalar to equal the matrix's element type *and* to be a signless integer or a
# float, so no text of the op exists for such a matrix in this version (measured: the signless
# scalar fails "value type matches element type", the signed one "must be Integer or Float")
_NO_TEXT_EXISTS = re.compile(
    r"subgroup_mma_(extract|insert)_thread_local' op \S+ #\d+ must be Integer or Float, but got '[su]i"
)


def check_text(text: str) -> None:
    """Parse and verify the suite's text with the mlir-opt that will lower
    it (no pass): Unsupported when it uses an op or op variant this version
    lacks (the skip names the version), MlirTextError for any other error
    (the suite's text is invalid); None when it verifies."""
    r = _raw("mlir-opt", [], text)
    if r.returncode == 0:
        return
    first = _first_error(r.stderr, r.returncode)
    if r.returncode < 0 or r.returncode > 128 or "Stack dump:" in r.stderr:  # the parser crashed: the tool's
        raise ToolchainError(f"{tool_version()}: mlir-opt (parse and verify only) {first}")
    if _NO_TEXT_EXISTS.search(r.stderr):
        raise Unsupported(
            f"not expressible in {tool_version()}: the thread-local op's scalar must equal the matrix's signed "
            f"element type and be signless at once, so no valid text exists: {first}"
        )
    if _VERSION_LACKS.search(r.stderr):
        raise Unsupported(f"{tool_version()} does not have what the case's MLIR text uses: {first}")
    raise MlirTextError(
        f"the suite's MLIR text fails the verifier of {tool_version()} (a harness error, not the tool's and "
        f"not the device's): {first}"
    )


def _candidates(name: str) -> list[Path]:
    folder = os.environ.get("CTS_MLIR_TOOLS")
    if folder:
        return [Path(folder) / name]
    out = [Path(p) for p in (shutil.which(name), shutil.which(f"{name}-22")) if p]
    return out + [Path(DEBIAN_BIN) / name]


@cache
def tool_path(name: str) -> str:
    for p in _candidates(name):
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    where = (
        f"$CTS_MLIR_TOOLS={os.environ['CTS_MLIR_TOOLS']}"
        if os.environ.get("CTS_MLIR_TOOLS")
        else (f"PATH and {DEBIAN_BIN}")
    )
    raise MlirToolError(f"host tool {name} not found (searched {where}): {_HOW}")


@cache
def tool_version() -> str:
    """``mlir-opt 22.1.8`` (what reports and toolchain verdicts name); in
    carried mode, the version the carried cache was made with."""
    if carried():
        try:
            return (cache_dir() / "TOOL").read_text().strip()
        except OSError:
            raise MlirToolError(
                f"CTS_MLIR_CARRIED is set but {cache_dir()} holds no carried lowering"
            ) from None
    try:
        r = subprocess.run([tool_path("mlir-opt"), "--version"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise MlirToolError(f"mlir-opt does not start: {e}: {_HOW}") from None
    m = re.search(r"LLVM version (\S+)", r.stdout + r.stderr)
    if r.returncode or not m:
        raise MlirToolError(f"mlir-opt --version failed: {(r.stderr or r.stdout).strip()[:300]}")
    return f"mlir-opt {m.group(1)}"


def run_tool(name: str, args: list[str], text: str) -> str:
    """Run a tool on ``text`` (stdin); its refusal is a ToolchainError."""
    try:
        r = subprocess.run(
            [tool_path(name), *args, "-"], input=text, capture_output=True, text=True, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"{tool_version()}: {name} {' '.join(args)} ran past {TIMEOUT_S} s") from None
    except OSError as e:
        raise MlirToolError(f"{name} does not start: {e}: {_HOW}") from None
    if r.returncode:
        raise ToolchainError(
            f"{tool_version()}: {name} {' '.join(args)} refused: {_first_error(r.stderr, r.returncode)}"
        )
    return r.stdout


SIGNALS = {4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV"}


def _first_error(stderr: str, returncode: int = 1) -> str:
    """The first ``error:`` line without the stdin location prefix; for a
    crash (a signal: the tool's stack dump), the signal and the assertion
    or fatal message where the build prints one."""
    for line in stderr.splitlines():
        if "error:" in line and "LLVM ERROR" not in line:
            return re.sub(r"^<stdin>:\d+:\d+: ", "", line.strip())[:400]
    sig = -returncode if returncode < 0 else returncode - 128 if returncode > 128 else 0
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    said = [ln for ln in lines if "Assertion" in ln or "LLVM ERROR" in ln or "UNREACHABLE" in ln]
    if sig or "Stack dump:" in stderr:
        what = SIGNALS.get(sig, f"signal {sig}") if sig else "a crash"
        return f"crashed ({what}, exit {returncode})" + (f": {said[0][:300]}" if said else "")
    return (lines[0] if lines else "(no message)")[:400]


def verify(text: str) -> None:
    """Parse and verify (mlir-opt with no pass): ``check_text``."""
    check_text(text)


def verify_funcs(funcs: dict[str, str], wrap) -> dict[str, str]:
    """Verify many gpu.funcs in few mlir-opt runs: ``wrap(list of func
    texts) -> module text``.  Returns {name: first error} of those refused."""
    return lower_funcs(funcs, wrap, None)[1]


def lower_funcs(funcs: dict[str, str], wrap, pipeline: str | None) -> tuple[str, dict[str, str]]:
    """Run ``pipeline`` (None: parse and verify only) on many gpu.funcs at
    once; (the outputs of the runs that succeeded, {name: first error} of
    the functions refused).  A refused function is found by its error's
    line and left out, and the rest run again; an error that names no
    function (a crash of the tool) halves the batch until it does."""
    refused: dict[str, str] = {}
    outs: list[str] = []
    args = [f"--pass-pipeline={pipeline}"] if pipeline else []
    stack = [list(funcs)]
    while stack:
        names = stack.pop()
        if not names:
            continue
        text = wrap([funcs[n] for n in names])
        r = _raw("mlir-opt", args, text)
        if r.returncode == 0:
            outs.append(r.stdout)
            continue
        found = _culprits(text, r.stderr, names)
        if found:
            refused.update(found)
            stack.append([n for n in names if n not in found])
        elif len(names) == 1:
            refused[names[0]] = _first_error(r.stderr, r.returncode)
        else:
            stack += [names[: len(names) // 2], names[len(names) // 2 :]]
    return "\n".join(outs), refused


def _raw(name: str, args: list[str], text: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            [tool_path(name), *args, "-"], input=text, capture_output=True, text=True, timeout=TIMEOUT_S
        )
    except OSError as e:
        raise MlirToolError(f"{name} does not start: {e}: {_HOW}") from None


def _culprits(text: str, stderr: str, names: list[str]) -> dict[str, str]:
    """{function: its first error} for every error line of ``stderr`` (the
    function whose body holds the line)."""
    starts = [
        (i, f.group(1))
        for i, ln in enumerate(text.splitlines(), 1)
        if (f := re.match(r"\s*gpu\.func @(\w+)\(", ln))
    ]
    out: dict[str, str] = {}
    for m in re.finditer(r"<stdin>:(\d+):\d+: error: (.*)", stderr):
        line = int(m.group(1))
        owner = next((n for i, n in reversed(starts) if i <= line), None)
        if owner in names and owner not in out:
            out[owner] = "error: " + m.group(2).strip()[:400]
    return out


# ------------------------------------------------------------------ cache
def carried() -> bool:
    """``CTS_MLIR_CARRIED=1``: a machine without the tools (the GPU machine
    has no package registry) runs what the cache carried to it holds
    (made by scripts/mlir_prelower.py), and nothing else."""
    return os.environ.get("CTS_MLIR_CARRIED", "") not in ("", "0")


def cache_dir() -> Path:
    base = os.environ.get("CTS_CACHE_DIR")
    if base:
        return Path(base) / "mlir"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "cts" / "mlir"


CACHE_FORMAT = 4  # bump when what is stored beside a binary (its findings) changes


def _key(kind: str, pipeline: str, text: str) -> str:
    h = hashlib.sha256(f"{CACHE_FORMAT}|{tool_version()}|{kind}|{pipeline}\n".encode())
    h.update(text.encode())
    return h.hexdigest()


def _cached(key: str, suffix: str) -> tuple[bytes, dict] | None:
    """(binary, meta) of a text lowered before; a refusal of it is raised
    again (a ToolchainError, as the tool said it); None: not lowered yet,
    which in carried mode is a harness error (nothing can lower it here)."""
    d = cache_dir()
    try:
        meta = json.loads((d / f"{key}.json").read_text())
        if meta.get("refused"):
            raise _REFUSALS.get(meta.get("as", "toolchain"), ToolchainError)(meta["refused"])
        return (d / f"{key}{suffix}").read_bytes(), meta
    except (OSError, ValueError):
        if carried():
            raise MlirToolError(
                f"CTS_MLIR_CARRIED: the carried cache {d} has no lowering of this text (made for another "
                "device or seed?): lower it where mlir-opt is (scripts/mlir_prelower.py)"
            ) from None
        return None


_REFUSALS = {"toolchain": ToolchainError, "unsupported": Unsupported, "text": MlirTextError}


def _refusing(key: str, suffix: str, fn):
    """fn() with its refusal (ToolchainError, or what ``check_text`` said of
    the suite's text) kept in the cache beside where its binary would be."""
    try:
        return fn()
    except (ToolchainError, Unsupported, MlirTextError) as e:
        kind = next(k for k, cls in _REFUSALS.items() if type(e) is cls)
        if f"ran past {TIMEOUT_S} s" not in str(e):  # a timeout may not happen again: not kept
            _store(key, suffix, None, {"tool": tool_version(), "refused": str(e), "as": kind})
        raise


def _store(key: str, suffix: str, blob: bytes | None, meta: dict) -> None:
    """Keep meta (and the binary, unless None) under ``key``; the first
    store writes the tool's version (TOOL) for carried mode."""
    d = cache_dir()
    files = [(f"{key}{suffix}", blob)] if blob is not None else []
    try:
        d.mkdir(parents=True, exist_ok=True)
        if not (d / "TOOL").exists():
            files.append(("TOOL", tool_version().encode()))
        for name, data in (*files, (f"{key}.json", json.dumps(meta).encode())):
            fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, d / name)
    except OSError:  # a read-only cache is no error: the next run lowers again
        pass


# --------------------------------------------------------------- lowering
def _cut(text: str, head: str) -> str:
    """The op starting with ``head`` at two spaces of indent, up to its
    closing brace at the same indent, dedented."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("  " + head)), None)
    if start is None:
        raise ToolchainError(f"{tool_version()}: the lowering produced no {head.strip()}")
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == "  }")
    return "\n".join(ln[2:] for ln in lines[start : end + 1]) + "\n"


def to_spirv(text: str, val_env: str = "vulkan1.3") -> tuple[bytes, dict]:
    """(SPIR-V binary, meta) of a gpu.module text for Vulkan.  meta:
    ``findings`` (what spirv-val says about the module as produced: the
    suite runs it anyway and reports them), ``tool``, ``pipeline``."""
    key = _key("spirv", f"{SPIRV_PIPELINE}|{val_env}", text)
    hit = _cached(key, ".spv")
    if hit is not None:
        return hit
    _refusing(key, ".spv", lambda: check_text(text))  # the suite's own text first
    lowered = _refusing(
        key, ".spv", lambda: run_tool("mlir-opt", [f"--pass-pipeline={SPIRV_PIPELINE}"], text)
    )
    spv_mod = _cut(lowered, "spirv.module ")
    with tempfile.TemporaryDirectory(prefix="cts-mlir-") as tmp:
        out = Path(tmp) / "m.spv"
        args = ["--serialize-spirv", "--no-implicit-module", "-o", str(out)]
        _refusing(key, ".spv", lambda: run_tool("mlir-translate", args, spv_mod))
        blob = out.read_bytes()
        findings = spirv_findings(out, val_env, text)
    meta = {"tool": tool_version(), "pipeline": SPIRV_PIPELINE, "findings": findings}
    _store(key, ".spv", blob, meta)
    return blob, meta


# (what the module uses, what it then needs, the words of the finding): the pitfalls of the
# upstream lowering measured in specs/mlir-lowering.md and by this suite
_NEEDS = (
    (
        "OpCapability CooperativeMatrixKHR",
        "OpCapability VulkanMemoryModel",
        "Shader + CooperativeMatrixKHR without the VulkanMemoryModel capability (the lowering writes "
        "OpMemoryModel GLSL450; spirv-update-vce drops the capability the target env offered)",
    ),
    (
        "OpCapability GroupNonUniformRotateKHR",
        'OpExtension "SPV_KHR_subgroup_rotate"',
        "GroupNonUniformRotateKHR without OpExtension SPV_KHR_subgroup_rotate (spirv-update-vce drops it)",
    ),
    (
        "BuiltIn SubgroupLocalInvocationId",
        "OpCapability GroupNonUniform",
        "BuiltIn SubgroupLocalInvocationId (gpu.lane_id) without the GroupNonUniform capability "
        "(spirv-update-vce drops it)",
    ),
)


def spirv_findings(path: Path, val_env: str, source: str = "") -> list[str]:
    """What is wrong with a module the toolchain produced (empty: nothing
    known): the known pitfalls found in its disassembly (also where
    spirv-val accepts the module; ``source``: the MLIR text it came from),
    then spirv-val's own first message."""
    from cts.kernels.spirv_tools import tool_path as spirv_tool

    dis = subprocess.run(
        [spirv_tool("spirv-dis"), "--raw-id", str(path)], capture_output=True, text=True
    ).stdout
    out = [words for uses, needs, words in _NEEDS if uses in dis and needs not in dis]
    if re.search(r"OpTypeInt 8 1\b", dis) and re.search(
        r"OpCooperativeMatrixMulAddKHR( %\d+){4}\s*$", dis, re.M
    ):
        out.append(
            "OpCooperativeMatrixMulAddKHR on si8 matrices without MatrixASignedComponentsKHR / "
            "MatrixBSignedComponentsKHR (convert-gpu-to-spirv drops the signedness of gpu.subgroup_mma_compute's "
            "si8 operands: SPIR-V multiplies them as unsigned)"
        )
    if re.search(r"memref<[^>]*xbf16", source) and not re.search(r"OpTypeFloat 16\b", dis):
        out.append(
            "memref of bf16 lowered to an array of 32-bit float words (no 16-bit type in the module: "
            "convert-gpu-to-spirv maps bf16 to f32) that memref.load / store still index by bf16 element: "
            "each access moves a word holding two bf16 elements"
        )
    r = subprocess.run(
        [spirv_tool("spirv-val"), "--target-env", val_env, str(path)], capture_output=True, text=True
    )
    if r.returncode:
        msg = " ".join((r.stderr or r.stdout).split())
        msg = re.sub(r"^error: line \d+: ", "", msg)
        out.append(f"spirv-val --target-env {val_env} rejects the module as produced: {msg[:240]}")
    return out


_BYTES = {
    "f16": 2,
    "bf16": 2,
    "f32": 4,
    "f64": 8,
    "si8": 1,
    "ui8": 1,
    "i8": 1,
    "i32": 4,
    "si32": 4,
    "ui32": 4,
}


def ptx_findings(text: str, ptx: str) -> list[str]:
    """What is wrong with the PTX the toolchain produced for ``text`` (empty:
    nothing known): the lowering pitfalls of convert-gpu-to-nvvm measured by
    this suite, each shown from the text and the PTX alone."""
    out = []
    for m in re.finditer(
        r"subgroup_mma_(load|store)_matrix[^\n]*leadDimension = (\d+)[^\n]*memref<[^>]*?x(\w+)>", text
    ):
        kind, lead, elem = m.group(1), int(m.group(2)), m.group(3)
        size = lead * _BYTES.get(elem, 4)
        if size % 16:
            out.append(
                f"gpu.subgroup_mma_{kind}_matrix with leadDimension {lead} ({elem}: {size} bytes) lowered to "
                f"wmma.{kind} with that ldm: the PTX ISA (wmma.{kind}) requires ldm a multiple of 16 bytes; "
                "convert-gpu-to-nvvm neither refuses nor handles it"
            )
            break
    for op, cmp, fn in (("maxf", "gt", "maximumf"), ("minf", "lt", "minimumf")):
        if re.search(rf"subgroup_mma_elementwise {op}\b", text) and re.search(rf"setp\.{cmp}\.f(32|64)", ptx):
            if not re.search(rf"\b{op[:3]}\.(NaN\.)?f(32|64)", ptx):
                out.append(
                    f"gpu.subgroup_mma_elementwise {op} lowered to setp.{cmp} + selp (and a NaN check): -0 and +0 "
                    f"compare equal there, so the result of a (+0, -0) pair is the second operand; arith.{fn}, "
                    "which the op is defined by, orders -0 < +0"
                )
    return out


def to_ptx(text: str) -> str:
    """PTX of a gpu.module text with an #nvvm.target."""
    key = _key("ptx", PTX_PIPELINE, text)
    hit = _cached(key, ".ptx")
    if hit is not None:
        return hit[0].decode()
    _refusing(key, ".ptx", lambda: check_text(text))  # the suite's own text first
    lowered = _refusing(key, ".ptx", lambda: run_tool("mlir-opt", [f"--pass-pipeline={PTX_PIPELINE}"], text))
    ptx = ptx_of(lowered)
    _store(key, ".ptx", ptx.encode(), {"tool": tool_version(), "pipeline": PTX_PIPELINE})
    return ptx


def ptx_of(lowered: str) -> str:
    """The assembly string of the first object of a ``gpu.binary``."""
    m = re.search(r'assembly = "((?:[^"\\]|\\.)*)"', lowered)
    if not m:
        raise ToolchainError(f"{tool_version()}: gpu-module-to-binary produced no PTX assembly")
    return _unescape(m.group(1))


def _unescape(s: str) -> str:
    """MLIR string escapes: ``\\XX`` (two hex digits), ``\\\\``, ``\\"``."""
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            nxt = s[i + 1]
            if nxt in '\\"':
                out.append(ord(nxt))
                i += 2
                continue
            out.append(int(s[i + 1 : i + 3], 16))
            i += 3
            continue
        out += s[i].encode()
        i += 1
    return out.decode()
