"""flashlab from Python: simulated SSDs and storage systems, in-process.

Every call runs the same Rust code as the ``flashlab`` command (no subprocess) and releases
the GIL while it simulates, so threads and Dask workers run simulations side by side.

>>> import flashlab
>>> result = flashlab.run("jobs/randread-4k-qd32.fio", device="tiny-test-1gb")
>>> result["jobs"][0]["read"]["iops"] > 0
True
"""

from __future__ import annotations

import io
import json
import numbers
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native

__all__ = ["run", "devices", "sweep_points", "run_point", "sweep", "table_csv", "__version__"]
__version__: str = _native.__version__


Overrides = Union[Mapping[str, Any], Iterable[Tuple[str, Any]], None]


def run(
    job: "os.PathLike[str] | str",
    device: Optional[str] = None,
    set: Overrides = None,
    seed: int = 1,
    job_name: Optional[str] = None,
) -> Dict[str, Any]:
    """Run a fio job file, or job-file text, on a simulated drive or system.

    Args:
        job: a fio job file's path (``"jobs/x.fio"``, a ``pathlib.Path``) or its text (text
            has a newline or a ``[section]``); ``${NAME}`` reads the environment, as fio does.
        device: a preset name (see :func:`devices`) or a device/system TOML file; default:
            flashlab's default drive.
        set: device key overrides, as ``--set KEY=VALUE``: ``{"capacity.spare_factor": 0.2}``
            or ``[("capacity.spare_factor", 0.2)]``.
        seed: the master seed, a whole number; the same inputs and seed give the same result.
        job_name: the name messages and ``include`` paths use (default: the path, or
            ``<job>`` for text).

    Returns:
        fio's JSON document as a dict (``result["jobs"][0]["read"]["iops"]``), with the
        device's counters under ``result["flashlab"]``.

    Raises:
        FileNotFoundError: ``job`` names a file that does not exist.
        TypeError: an argument of the wrong type (``seed="x"``, ``set=3``).
        ValueError: the job, the device or an override is wrong.
        RuntimeError: the input is fine but the run failed.
    """
    text, name = _job_text(job)
    overrides = _overrides(set)
    seed = _seed(seed)
    return json.loads(_native.run_json(text, device, overrides, seed, job_name or name))


def _job_text(job: Any) -> Tuple[str, str]:
    """The job's text and the name its messages use: a path is read, text is itself."""
    if isinstance(job, os.PathLike):
        path = os.fspath(job)
    elif isinstance(job, str):
        # Job text has a line break or a section; a path has neither.
        if "\n" in job or "[" in job:
            return job, "<job>"
        path = job
    else:
        raise TypeError(f"job: expected a path or fio job-file text, got {type(job).__name__}")
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"job file {path!r} not found (give a fio job file's path or its text)"
        )
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def _overrides(set: Overrides) -> List[Tuple[str, str]]:
    """``set=`` as ``(key, value)`` text pairs: a mapping or pairs."""
    if set is None:
        return []
    if isinstance(set, Mapping):
        items = list(set.items())
    elif isinstance(set, (str, bytes)):
        raise TypeError(
            "set: expected a mapping of device keys to values, e.g. "
            '{"capacity.spare_factor": 0.2}, or (key, value) pairs'
        )
    else:
        items = []
        for pair in set:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(
                    f"set: {pair!r} is not a (key, value) pair; expected e.g. "
                    '[("capacity.spare_factor", 0.2)] or {"capacity.spare_factor": 0.2}'
                )
            items.append((pair[0], pair[1]))
    for key, _ in items:
        if not isinstance(key, str):
            raise TypeError(f"set: the key {key!r} is not text; keys are dotted device keys")
    return [(k, _value_text(v)) for k, v in items]


def _seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed: expected a whole number such as 1, got {seed!r}")
    if not 0 <= int(seed) < 2**64:
        raise ValueError(f"seed: {seed} is out of range; expected 0 to 2**64 - 1")
    return int(seed)


def _plan_path(plan: Any) -> str:
    """The plan's absolute path; a missing plan is FileNotFoundError."""
    if not isinstance(plan, (str, os.PathLike)):
        raise TypeError(f"plan: expected a sweep plan's path, got {type(plan).__name__}")
    path = os.path.abspath(os.fspath(plan))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"sweep plan {os.fspath(plan)!r} not found")
    return path


def devices() -> List[Dict[str, str]]:
    """The presets: ``[{"name", "kind" ("drive" or "system"), "summary"}]``, drives first."""
    return [
        {"name": name, "kind": kind, "summary": summary}
        for name, kind, summary in _native.devices()
    ]


def sweep_points(plan: "os.PathLike[str] | str") -> List[Dict[str, str]]:
    """A sweep plan's points, checked: one ``{axis: value}`` dict per point, in index order.

    Raises ValueError naming the plan's line when the plan or a value in it is wrong.
    """
    return [dict(settings) for settings in _native.sweep_points(_plan_path(plan))]


def run_point(plan: "os.PathLike[str] | str", index: int) -> Dict[str, Any]:
    """Run point ``index`` of a plan: the document ``flashlab sweep --point`` writes."""
    return json.loads(_native.sweep_run_point(_plan_path(plan), int(index)))


def _run_point_text(plan: str, index: int) -> str:
    # What a Dask worker runs: text travels between processes more cheaply than dicts.
    from flashlab import _native as native

    return native.sweep_run_point(plan, index)


def sweep(
    plan: "os.PathLike[str] | str",
    client: Any = None,
    points: Optional[Sequence[int]] = None,
    outdir: "os.PathLike[str] | str | None" = None,
    jobs: int = 1,
) -> "pandas.DataFrame":  # noqa: F821
    """Run a sweep plan and return its tidy table as a pandas DataFrame.

    One row per point × job × measure, with the columns ``point``, every axis, ``job``,
    ``measure``, ``unit`` and ``value``: the table ``flashlab sweep collect`` writes. An axis
    whose every value is a number (spare factor, queue depth) is a numeric column; others
    (``"4KiB"``, ``"tlc"``) are text.

    Args:
        plan: the plan file (TOML; see docs/sweeps.md).
        client: a ``dask.distributed.Client``: the points are mapped over its workers (each
            needs this package installed and the plan's files at the same path). Without
            one, the points run here, ``jobs`` at a time.
        points: run only these point indexes (default: all).
        outdir: also write each point's result there as ``point-NNNNNN.json``, as
            ``flashlab sweep --outdir`` does.
        jobs: points run at once here without a client, on threads (the simulation
            releases the GIL), as ``flashlab sweep -j``; the table does not depend on it.
    """
    import pandas as pd

    plan_path = _plan_path(plan)
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1:
        raise ValueError(f"jobs: expected a whole number of at least 1, got {jobs!r}")
    count = len(_native.sweep_points(plan_path))
    indexes = list(range(count)) if points is None else [int(p) for p in points]
    if client is None and jobs > 1:
        with ThreadPoolExecutor(max_workers=int(jobs)) as pool:
            texts = list(pool.map(lambda i: _native.sweep_run_point(plan_path, i), indexes))
    elif client is None:
        texts = [_native.sweep_run_point(plan_path, i) for i in indexes]
    else:
        futures = client.map(_run_point_text, [plan_path] * len(indexes), indexes, pure=False)
        texts = client.gather(futures)
    if outdir is not None:
        os.makedirs(outdir, exist_ok=True)
        for index, text in zip(indexes, texts):
            with open(os.path.join(outdir, f"point-{index:06d}.json"), "w") as f:
                f.write(text + "\n")
    csv = table_csv(texts)
    frame = pd.read_csv(io.StringIO(csv), dtype=str, keep_default_na=False)
    frame["point"] = frame["point"].astype("int64")
    frame["value"] = frame["value"].astype("float64")
    # The axes are the columns between `point` and `job`.
    columns = list(frame.columns)
    for column in columns[1 : columns.index("job")]:
        frame[column] = _numeric_if_all(frame[column])
    return frame


def _numeric_if_all(column: "pandas.Series") -> "pandas.Series":  # noqa: F821
    """An axis column as numbers when every value is one (whole numbers as int64), else as
    it is."""
    import pandas as pd

    numbers_ = pd.to_numeric(column, errors="coerce")
    if numbers_.isna().any():
        return column
    if (numbers_ == numbers_.round()).all() and not column.str.contains(r"[.eE]").any():
        return numbers_.astype("int64")
    return numbers_.astype("float64")


def table_csv(point_results: Sequence[str]) -> str:
    """The tidy table of point results (JSON texts) as CSV, byte for byte what
    ``flashlab sweep collect`` writes for the same results."""
    return _native.sweep_table_csv(list(point_results))


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

