"""flashlab from Python: simulated SSDs and storage systems, in-process.

Every call runs the same Rust code as the ``flashlab`` command (no subprocess) and releases
the GIL while it simulates, so threads and Dask workers run simulations side by side.

>>> import flashlab
>>> result = flashlab.run(open("jobs/randread-4k-qd32.fio").read(), device="tiny-test-1gb")
>>> result["jobs"][0]["read"]["iops"] > 0
True
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence

from . import _native

__all__ = ["run", "devices", "sweep_points", "run_point", "sweep", "table_csv", "__version__"]
__version__: str = _native.__version__


def run(
    job: str,
    device: Optional[str] = None,
    set: Optional[Mapping[str, Any]] = None,
    seed: int = 1,
    job_name: str = "<job>",
) -> Dict[str, Any]:
    """Run fio job-file text on a simulated drive or system.

    Args:
        job: the text of a fio job file (``${NAME}`` reads the environment, as fio does).
        device: a preset name (see :func:`devices`) or a device/system TOML file; default:
            flashlab's default drive.
        set: device key overrides, as ``--set KEY=VALUE``: ``{"capacity.spare_factor": 0.2}``.
        seed: the master seed; the same inputs and seed give the same result.
        job_name: the name messages and ``include`` paths use for the job text.

    Returns:
        fio's JSON document as a dict (``result["jobs"][0]["read"]["iops"]``), with the
        device's counters under ``result["flashlab"]``.

    Raises:
        ValueError: the job, the device or an override is wrong.
        RuntimeError: the input is fine but the run failed.
    """
    overrides = [(str(k), _value_text(v)) for k, v in (set or {}).items()]
    return json.loads(_native.run_json(job, device, overrides, int(seed), job_name))


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
    return [dict(settings) for settings in _native.sweep_points(os.fspath(plan))]


def run_point(plan: "os.PathLike[str] | str", index: int) -> Dict[str, Any]:
    """Run point ``index`` of a plan: the document ``flashlab sweep --point`` writes."""
    return json.loads(_native.sweep_run_point(os.fspath(plan), int(index)))


def _run_point_text(plan: str, index: int) -> str:
    # What a Dask worker runs: text travels between processes more cheaply than dicts.
    from flashlab import _native as native

    return native.sweep_run_point(plan, index)


def sweep(
    plan: "os.PathLike[str] | str",
    client: Any = None,
    points: Optional[Sequence[int]] = None,
    outdir: "os.PathLike[str] | str | None" = None,
) -> "pandas.DataFrame":  # noqa: F821
    """Run a sweep plan and return its tidy table as a pandas DataFrame.

    One row per point × job × measure, with the columns ``point``, every axis, ``job``,
    ``measure``, ``unit`` and ``value``: the table ``flashlab sweep collect`` writes.

    Args:
        plan: the plan file (TOML; see docs/sweeps.md).
        client: a ``dask.distributed.Client``: the points are mapped over its workers (each
            needs this package installed and the plan's files at the same path). Without
            one, the points run here, one after another.
        points: run only these point indexes (default: all).
        outdir: also write each point's result there as ``point-NNNNNN.json``, as
            ``flashlab sweep --outdir`` does.
    """
    import pandas as pd

    plan_path = os.path.abspath(os.fspath(plan))
    count = len(_native.sweep_points(plan_path))
    indexes = list(range(count)) if points is None else [int(p) for p in points]
    if client is None:
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
    return frame


def table_csv(point_results: Sequence[str]) -> str:
    """The tidy table of point results (JSON texts) as CSV, byte for byte what
    ``flashlab sweep collect`` writes for the same results."""
    return _native.sweep_table_csv(list(point_results))


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

