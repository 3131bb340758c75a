"""Several files written all or none (the three reports of a run: a reader
never finds a new ``report.md`` beside an old ``results.csv``)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_set"]


def write_set(files: dict[Path, str]) -> None:
    """Write several files all or none: each to a temporary file beside it,
    flushed to disk, then renamed over the old one; the old ones are kept
    (hard links) until every rename is done, and put back if one fails.  A
    failed write leaves the previous files intact and no temporary."""
    tmps: list[tuple[Path, Path]] = []
    backups: dict[Path, Path] = {}
    done: list[Path] = []
    try:
        for path, text in files.items():
            if path.is_dir():
                raise IsADirectoryError(21, "is a folder", str(path))
            tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
            tmps.append((tmp, path))
            with open(tmp, "w", encoding="utf-8", errors="backslashreplace", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        for _, path in tmps:
            if path.exists():
                bak = path.with_name(f".{path.name}.old-{os.getpid()}")
                bak.unlink(missing_ok=True)
                os.link(path, bak)
                backups[path] = bak
        for tmp, path in tmps:
            os.replace(tmp, path)
            done.append(path)
    except BaseException as e:
        for path in done:  # put the previous set back
            if path in backups:
                try:
                    os.replace(backups.pop(path), path)
                except OSError:
                    pass
        for tmp, _ in tmps:
            tmp.unlink(missing_ok=True)
        if not isinstance(e, OSError):
            raise
        where = next(iter(files)).parent if files else "?"
        raise OSError(
            f"cannot write the report to {where}: {e.strerror or e}"
            + (f" ({e.filename})" if getattr(e, "filename", None) else "")
            + "; the previous report files there are unchanged"
        ) from None
    finally:
        for bak in backups.values():
            try:
                bak.unlink(missing_ok=True)
            except OSError:
                pass
