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

__all__ = [
    "run",
    "suite",
    "suite_options",
    "SuiteResult",
    "devices",
    "sweep_points",
    "run_point",
    "sweep",
    "table_csv",
    "__version__",
]
__version__: str = _native.__version__


Overrides = Union[Mapping[str, Any], Iterable[Tuple[str, Any]], None]


def run(
    job: "os.PathLike[str] | str",
    device: Optional[str] = None,
    set: Overrides = None,
    seed: int = 1,
    job_name: Optional[str] = None,
    untimed: Optional[Sequence[str]] = None,
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
        untimed: names of preconditioning jobs to run without the timing model, as
            ``flashlab run --untimed`` (docs/fio.md): they reach the same drive state at the
            speed of the mapping and are listed under ``result["flashlab"]["untimed_jobs"]``
            instead of among the results; a job or drive that does not allow it is a
            ValueError with the reason.

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
    untimed_jobs = _job_names("untimed", untimed)
    return json.loads(
        _native.run_json(text, device, overrides, seed, job_name or name, untimed_jobs)
    )


class SuiteResult(dict):
    """A suite's JSON report as a dict (what ``flashlab suite NAME --output-format json``
    prints: ``result["devices"][0]["results"]``), with its tidy table as :attr:`table`."""

    def __init__(self, report: Dict[str, Any], tidy_csv: str) -> None:
        super().__init__(report)
        self.tidy_csv: str = tidy_csv

    @property
    def table(self) -> "pandas.DataFrame":  # noqa: F821
        """The tidy table (``--output-format tidy-csv``) as a pandas DataFrame: one row per
        device and result, a column per axis (queue depth, block size, percentile, step...)
        and ``value`` a number."""
        import pandas as pd

        frame = pd.read_csv(io.StringIO(self.tidy_csv))
        return frame


def suite(
    name: str,
    device: "str | Sequence[str] | None" = None,
    set: Overrides = None,
    state_cache: "os.PathLike[str] | str | bool" = True,
    **options: Any,
) -> SuiteResult:
    """Run a built-in suite, as ``flashlab suite NAME --device D --option value ...`` does.

    Args:
        name: the suite (``"qos"``, ``"wsat"``, ...; ``flashlab suite --help`` lists them).
        device: a preset or a device/system TOML file, or a list of them (run side by side);
            default: the suite's default device.
        set: device key overrides of every drive, as ``--set``: a dict or (key, value) pairs.
        state_cache: where preconditioned drives are kept and reused, as the command's
            ``--state-cache DIR``; ``True`` (default): the command's default directory
            (``$XDG_CACHE_HOME/flashlab/states``, else ``~/.cache/flashlab/states``);
            ``False``: precondition every time. Never changes a result.
        **options: the suite's options by their long names, ``_`` for ``-``:
            ``runtime="50ms"``, ``depths=[1, 8, 32]`` (a list is comma-separated),
            ``max_rounds=5``, ``seed=7``; a flag takes ``True``/``False``. An option the suite
            does not read, or a value it refuses, is an error naming the option.

    Returns:
        a :class:`SuiteResult`: the JSON report as a dict, its tidy table as ``.table``.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: the suite, an option, the device or a key is wrong (the command's
            message).
        RuntimeError: the input is fine but the run failed.
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a suite's name, got {type(name).__name__}")
    if device is None:
        devices: List[str] = []
    elif isinstance(device, (str, os.PathLike)):
        devices = [os.fspath(device)]
    else:
        devices = [os.fspath(d) for d in device]
    pairs = [(key, _option_text(key, value)) for key, value in options.items()]
    report, tidy = _native.suite_run(
        name, devices, _overrides(set), pairs, _state_cache_dir(state_cache)
    )
    return SuiteResult(json.loads(report), tidy)


def suite_options(name: str) -> List[Dict[str, Optional[str]]]:
    """The options :func:`suite` takes for suite ``name``, read from the same definitions as
    ``flashlab suite NAME --help``: a list of dicts with ``option`` (the keyword, ``_`` for
    ``-``), ``value`` (the form of its value, ``None`` for a flag), ``default`` (as the command
    line spells it, or ``None``), ``help`` and ``scope`` (``"every"`` suite takes it, the
    suite's ``"own"``, or ``"shared"`` with other suites).

    Raises:
        TypeError: ``name`` is not text.
        ValueError: no suite is called ``name`` (the message names the nearest).
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a suite's name, got {type(name).__name__}")
    return [
        {"option": option, "value": value, "default": default, "help": text, "scope": scope}
        for option, value, default, text, scope in _native.suite_options(name)
    ]


def _option_text(key: str, value: Any) -> str:
    """A suite option's value as the command line spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, numbers.Number)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return ",".join(_option_text(key, v) for v in value)
    raise TypeError(
        f"{key}: expected text, a number, a boolean or a list of them, got {type(value).__name__}"
    )


def _state_cache_dir(state_cache: Any) -> Optional[str]:
    """The precondition cache's directory: ``True`` is the command's default one."""
    if state_cache is False or state_cache is None:
        return None
    if state_cache is True:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        if os.path.isabs(xdg):
            base = xdg
        elif os.path.isabs(os.environ.get("HOME", "")):
            base = os.path.join(os.environ["HOME"], ".cache")
        else:
            return None
        return os.path.join(base, "flashlab", "states")
    if isinstance(state_cache, (str, os.PathLike)):
        return os.fspath(state_cache)
    raise TypeError(
        f"state_cache: expected True, False or a directory, got {type(state_cache).__name__}"
    )


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


def _job_names(argument: str, names: Optional[Sequence[str]]) -> List[str]:
    """A list of job names: one name or a sequence of names."""
    if names is None:
        return []
    if isinstance(names, str):
        names = [names]
    elif isinstance(names, bytes) or not isinstance(names, Iterable):
        raise TypeError(
            f"{argument}: expected a job's name or a list of names, got {type(names).__name__}"
        )
    names = list(names)
    for name in names:
        if not isinstance(name, str) or not name:
            raise TypeError(f"{argument}: {name!r} is not a job's name; expected e.g. [\"fill\"]")
    return names


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


def sweep_points(plan: "os.PathLike[str] | str") -> List[Dict[str, Union[int, float, str]]]:
    """A sweep plan's points, checked: one ``{axis: value}`` dict per point, in index order.

    An axis whose every value is a number (spare factor, queue depth) gives numbers (whole
    ones as ``int``), as the columns of :func:`sweep`'s table do; others (``"4KiB"``,
    ``"tlc"``) give text.

    Raises ValueError naming the plan's line when the plan or a value in it is wrong.
    """
    points = [dict(settings) for settings in _native.sweep_points(_plan_path(plan))]
    axes = list(points[0]) if points else []
    for axis in axes:
        typed = _typed_values([point[axis] for point in points])
        for point, value in zip(points, typed):
            point[axis] = value
    return points


def _typed_values(values: List[str]) -> List[Union[int, float, str]]:
    """An axis' values as numbers when every one is (whole numbers as int), else as text:
    the rule :func:`sweep` applies to its table's axis columns."""
    try:
        floats = [float(v) for v in values]
    except ValueError:
        return list(values)
    if any(f != f or f in (float("inf"), float("-inf")) for f in floats):
        return list(values)
    if all(f == int(f) for f in floats) and not any(c in v for v in values for c in ".eE"):
        return [int(v) for v in values]
    return floats


def run_point(
    plan: "os.PathLike[str] | str",
    index: int,
    state_cache: "os.PathLike[str] | str | bool" = True,
) -> Dict[str, Any]:
    """Run point ``index`` of a plan: the document ``flashlab sweep --point`` writes.
    ``state_cache`` as in :func:`suite` (a plan's ``[precondition]`` keeps its drives there)."""
    return json.loads(
        _native.sweep_run_point(_plan_path(plan), int(index), _state_cache_dir(state_cache))
    )


def _run_point_text(plan: str, index: int, state_cache: Optional[str] = None) -> str:
    # What a Dask worker runs: text travels between processes more cheaply than dicts.
    from flashlab import _native as native

    return native.sweep_run_point(plan, index, state_cache)


def sweep(
    plan: "os.PathLike[str] | str",
    client: Any = None,
    points: Optional[Sequence[int]] = None,
    outdir: "os.PathLike[str] | str | None" = None,
    jobs: int = 1,
    state_cache: "os.PathLike[str] | str | bool" = True,
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
        state_cache: where a plan with ``[precondition]`` keeps its preconditioned drives,
            as in :func:`suite` (on a cluster, a directory every worker sees); never
            changes the table.
    """
    import pandas as pd

    plan_path = _plan_path(plan)
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1:
        raise ValueError(f"jobs: expected a whole number of at least 1, got {jobs!r}")
    cache = _state_cache_dir(state_cache)
    count = len(_native.sweep_points(plan_path))
    indexes = list(range(count)) if points is None else [int(p) for p in points]
    if client is None and jobs > 1:
        with ThreadPoolExecutor(max_workers=int(jobs)) as pool:
            texts = list(
                pool.map(lambda i: _native.sweep_run_point(plan_path, i, cache), indexes)
            )
    elif client is None:
        texts = [_native.sweep_run_point(plan_path, i, cache) for i in indexes]
    else:
        futures = client.map(
            _run_point_text,
            [plan_path] * len(indexes),
            indexes,
            [cache] * len(indexes),
            pure=False,
        )
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

