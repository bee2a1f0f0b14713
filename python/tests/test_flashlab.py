"""The Python package against the command: the same runs, suites and sweep tables, locally
and on a Dask LocalCluster of two workers."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import flashlab

ROOT = Path(__file__).resolve().parents[2]
FLASHLAB = os.environ.get("FLASHLAB_BIN", str(ROOT / "target" / "release" / "flashlab"))

JOB = """[global]
ioengine=libaio
direct=1
time_based=1
runtime=${RUNTIME}
[randwrite]
rw=randwrite
bs=4k
iodepth=${QD}
size=128m
"""

PLAN = """job = "rw.fio"
device = "tiny-test-1gb"
[env]
RUNTIME = "20ms"
[axes]
"set.capacity.spare_factor" = [0.1, 0.2, 0.3]
"set.ftl.iu" = ["4KiB", "16KiB"]
"set.nand.cell" = ["tlc", "qlc"]
env.QD = [1, 4, 16, 32]
"""


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([FLASHLAB, *args], capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("plan")
    (d / "rw.fio").write_text(JOB)
    (d / "plan.toml").write_text(PLAN)
    return d / "plan.toml"


@pytest.fixture(scope="module")
def cli_points(plan: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli")
    done = cli("sweep", str(plan), "-j", "2", "--outdir", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def cli_table(cli_points: Path) -> str:
    table = cli("sweep", "collect", str(cli_points))
    assert table.returncode == 0, table.stderr
    return table.stdout


def test_run_is_the_commands_run():
    job = (ROOT / "jobs" / "randread-4k-qd32.fio").read_text()
    result = flashlab.run(job, device="tiny-test-1gb", job_name="jobs/randread-4k-qd32.fio")
    done = cli("run", str(ROOT / "jobs" / "randread-4k-qd32.fio"), "--device", "tiny-test-1gb",
               "--output-format", "json")
    assert done.returncode == 0, done.stderr
    expected = json.loads(done.stdout)
    assert result["jobs"][0]["read"]["iops"] == expected["jobs"][0]["read"]["iops"] > 0
    assert result["jobs"][0]["read"]["clat_ns"] == expected["jobs"][0]["read"]["clat_ns"]


def test_run_takes_overrides_and_refuses_bad_input():
    job = "[w]\nrw=randwrite\nbs=4k\nsize=8m\n"
    a = flashlab.run(job, device="tiny-test-1gb", set={"controller.command_overhead": "50us"})
    b = flashlab.run(job, device="tiny-test-1gb")
    assert a["jobs"][0]["write"]["iops"] != b["jobs"][0]["write"]["iops"]
    with pytest.raises(ValueError, match="no_such_key"):
        flashlab.run(job, device="tiny-test-1gb", set={"nand.no_such_key": 1})
    with pytest.raises(ValueError, match="nope"):
        flashlab.run(job, device="nope")
    # A prefix of a preset, or a typo of one, names it; the list has the systems too.
    with pytest.raises(ValueError, match=r"did you mean samsung-pm981a-256gb\?.*systems"):
        flashlab.run(job, device="samsung-pm981")
    with pytest.raises(ValueError, match=r"did you mean tiny-test-1gb\?"):
        flashlab.run(job, device="tiny-tset-1gb")


def test_run_preconditions_untimed_as_the_command_does(tmp_path: Path):
    job = ("[global]\ndirect=1\nsize=100%\n[fill]\nrw=write\nbs=128k\niodepth=32\n"
           "[rand-read-4k]\nstonewall\nrw=randread\nbs=4k\niodepth=32\n"
           "time_based=1\nruntime=200ms\n")
    (tmp_path / "f.fio").write_text(job)
    result = flashlab.run(job, device="tiny-test-1gb", untimed=["fill"])
    done = cli("run", str(tmp_path / "f.fio"), "--device", "tiny-test-1gb", "--untimed", "fill",
               "--output-format", "json")
    assert done.returncode == 0, done.stderr
    expected = json.loads(done.stdout)
    assert [j["jobname"] for j in result["jobs"]] == ["rand-read-4k"]
    assert [j["jobname"] for j in result["flashlab"]["untimed_jobs"]] == ["fill"]
    assert result["jobs"][0]["read"]["total_ios"] == expected["jobs"][0]["read"]["total_ios"] > 0
    # One name alone is a list of one.
    assert flashlab.run(job, device="tiny-test-1gb", untimed="fill")["jobs"] == result["jobs"]
    with pytest.raises(ValueError, match="job 'rand-read-4k'.*it reads"):
        flashlab.run(job, device="tiny-test-1gb", untimed=["rand-read-4k"])
    with pytest.raises(TypeError, match="untimed: expected a job's name or a list of names"):
        flashlab.run(job, device="tiny-test-1gb", untimed=3)


def test_run_carries_the_commands_provenance(tmp_path: Path):
    job = "[r]\nrw=randread\nbs=4k\nsize=4m\nio_size=1m\n"
    (tmp_path / "r.fio").write_text(job)
    result = flashlab.run(job, device="tiny-test-1gb", set={"capacity.spare_factor": 0.2})
    done = cli("run", str(tmp_path / "r.fio"), "--device", "tiny-test-1gb", "--set",
               "capacity.spare_factor=0.2", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    expected = json.loads(done.stdout)["flashlab"]["provenance"]
    assert result["flashlab"]["provenance"] == expected
    assert result["flashlab"]["provenance"]["overrides"] == ["capacity.spare_factor=0.2"]


def test_devices_lists_drives_and_systems():
    kinds = {d["kind"] for d in flashlab.devices()}
    assert kinds == {"drive", "system"}
    assert any(d["name"] == "tiny-test-1gb" for d in flashlab.devices())


def test_local_sweep_is_the_commands_table(plan: Path, cli_table: str):
    frame = flashlab.sweep(plan)
    expected = pd.read_csv(__import__("io").StringIO(cli_table), dtype=str, keep_default_na=False)
    assert list(frame.columns) == list(expected.columns)
    assert len(frame) == len(expected) and len(frame["point"].unique()) == 48
    assert (frame["value"].to_numpy() == expected["value"].astype(float).to_numpy()).all()
    points = flashlab.sweep_points(plan)
    assert len(points) == 48 and points[5]["env.QD"] == 4
    # Each axis typed as the table's column is: numbers where it has numbers.
    for axis in points[0]:
        values = [p[axis] for p in points]
        if pd.api.types.is_numeric_dtype(frame[axis]):
            assert all(isinstance(v, (int, float)) for v in values), axis
            assert set(values) == set(frame[axis].unique()), axis
        else:
            assert all(isinstance(v, str) for v in values), axis


def test_dask_local_cluster_gives_the_same_table(plan: Path, cli_table: str):
    distributed = pytest.importorskip("distributed") if not os.environ.get("CI") else __import__("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        futures = client.map(flashlab._run_point_text, [str(plan.resolve())] * 48, range(48),
                             pure=False)
        texts = client.gather(futures)
        assert flashlab.table_csv(texts) == cli_table
        frame = flashlab.sweep(plan, client=client)
    assert len(frame["point"].unique()) == 48


def test_bad_plan_names_its_line(tmp_path: Path):
    (tmp_path / "rw.fio").write_text(JOB)
    bad = tmp_path / "bad.toml"
    bad.write_text('job = "rw.fio"\n[axes]\nenv.QD = []\n')
    with pytest.raises(ValueError, match="line 3"):
        flashlab.sweep_points(bad)


def test_run_takes_a_path_or_text_and_says_what_is_wrong(tmp_path: Path):
    path = ROOT / "jobs" / "randread-4k-qd32.fio"
    by_path = flashlab.run(str(path), device="tiny-test-1gb")
    by_text = flashlab.run(path.read_text(), device="tiny-test-1gb")
    assert by_path["jobs"][0]["read"]["iops"] == by_text["jobs"][0]["read"]["iops"] > 0
    assert flashlab.run(path, device="tiny-test-1gb")["jobs"] == by_path["jobs"]
    with pytest.raises(FileNotFoundError, match="jobs/nope.fio"):
        flashlab.run("jobs/nope.fio")
    job = "[w]\nrw=randwrite\nbs=4k\nsize=8m\n"
    with pytest.raises(TypeError, match="seed"):
        flashlab.run(job, device="tiny-test-1gb", seed="x")
    with pytest.raises(ValueError, match="pair"):
        flashlab.run(job, device="tiny-test-1gb", set=[("controller.command_overhead",)])
    with pytest.raises(TypeError, match="set"):
        flashlab.run(job, device="tiny-test-1gb", set="capacity.spare_factor=0.2")
    pairs = flashlab.run(job, device="tiny-test-1gb", set=[("controller.command_overhead", "50us")])
    mapping = flashlab.run(job, device="tiny-test-1gb", set={"controller.command_overhead": "50us"})
    assert pairs["jobs"] == mapping["jobs"]
    with pytest.raises(FileNotFoundError, match="no-plan.toml"):
        flashlab.sweep(tmp_path / "no-plan.toml")
    with pytest.raises(FileNotFoundError):
        flashlab.sweep_points(tmp_path / "no-plan.toml")


def test_sweep_runs_points_on_threads_with_numeric_axes(
    plan: Path, cli_points: Path, cli_table: str, tmp_path: Path
):
    frame = flashlab.sweep(plan, jobs=2)
    assert str(frame["env.QD"].dtype) == "int64"
    assert str(frame["set.capacity.spare_factor"].dtype) == "float64"
    assert not pd.api.types.is_numeric_dtype(frame["set.ftl.iu"])
    # The same table as the command's, read as pandas reads a CSV.
    expected = pd.read_csv(__import__("io").StringIO(cli_table))
    assert (frame["env.QD"].to_numpy() == expected["env.QD"].to_numpy()).all()
    assert (frame["value"].to_numpy() == expected["value"].to_numpy()).all()
    # Parquet from the command types the axes the same way.
    pq = tmp_path / "t.parquet"
    done = cli("sweep", "collect", str(cli_points), "--parquet", str(pq))
    assert done.returncode == 0, done.stderr
    table = pd.read_parquet(pq)
    assert str(table["env.QD"].dtype) == "int64"
    assert str(table["set.capacity.spare_factor"].dtype) == "float64"
    assert (table["value"].to_numpy() == frame["value"].to_numpy()).all()


def test_the_pages_first_example_reads_a_filled_drive(tmp_path: Path):
    """docs/python.md's first example measures what a user would: a filled PM981a's random
    read near its published ~140K IOPS, where the job alone on a new drive reads at the
    controller's command ceiling, as the page says."""
    page = (ROOT / "docs" / "python.md").read_text()
    script = page.split("```python\n")[1].split("```")[0]
    (tmp_path / "first_example.py").write_text(script)
    done = subprocess.run([sys.executable, str(tmp_path / "first_example.py")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    iops = float(done.stdout.split()[0])
    assert 100_000 < iops < 200_000, iops
    assert "500,000 IOPS on the PM981a" in page
    ceiling = flashlab.run(ROOT / "jobs" / "randread-4k-qd32.fio", device="samsung-pm981a-256gb")
    assert round(ceiling["jobs"][0]["read"]["iops"]) == 500_000


def test_the_docs_dask_snippet_runs_as_a_script(plan: Path):
    if not os.environ.get("CI"):
        pytest.importorskip("distributed")
    doc = (ROOT / "docs" / "python.md").read_text()
    blocks = doc.split("```python\n")[1:]
    script = next(b.split("```")[0] for b in blocks if "LocalCluster" in b)
    (plan.parent / "dask_sweep.py").write_text(script)
    done = subprocess.run([sys.executable, "dask_sweep.py"], cwd=plan.parent,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), "the script printed no table"


def test_suite_is_the_commands_suite(tmp_path: Path):
    result = flashlab.suite("qos", device="tiny-test-1gb", runtime="30ms", depths=[1, 8],
                            state_cache=tmp_path / "cache")
    done = cli("suite", "qos", "--device", "tiny-test-1gb", "--runtime", "30ms",
               "--depths", "1,8", "--output-format", "json", "--state-cache",
               str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr
    expected = json.loads(done.stdout)
    assert result["devices"] == expected["devices"]
    assert result["options"] == expected["options"]
    assert list(result)[0] == "flashlab"
    # The tidy table: the command's tidy CSV, read as pandas reads it.
    tidy = cli("suite", "qos", "--device", "tiny-test-1gb", "--runtime", "30ms",
               "--depths", "1,8", "--output-format", "tidy-csv", "--state-cache",
               str(tmp_path / "cache"))
    assert tidy.returncode == 0, tidy.stderr
    assert result.tidy_csv == tidy.stdout
    table = result.table
    assert pd.api.types.is_numeric_dtype(table["value"]) and len(table) > 4
    assert pd.api.types.is_numeric_dtype(table["queue_depth"])
    assert sorted(table["queue_depth"].dropna().unique()) == [1, 8]


def test_suite_refuses_bad_options_naming_them(tmp_path: Path):
    with pytest.raises(ValueError, match="unknown option 'no_such' for suite qos"):
        flashlab.suite("qos", device="tiny-test-1gb", no_such=1, state_cache=False)
    with pytest.raises(ValueError, match=r"^depths 'x': not a whole number"):
        flashlab.suite("qos", device="tiny-test-1gb", depths=[1, "x"], state_cache=False)
    with pytest.raises(ValueError, match="^runtime does not apply to suite wsat"):
        flashlab.suite("wsat", device="tiny-test-1gb", runtime="1s", state_cache=False)
    with pytest.raises(ValueError, match=r"unknown suite 'four-corner' \(did you mean four-corners\?\)"):
        flashlab.suite("four-corner", state_cache=False)
    # Options in Python's spelling, with the nearest one for a typo.
    with pytest.raises(ValueError, match=r"unknown option 'max_round' for suite wsat \(did you mean max_rounds\?\)"):
        flashlab.suite("wsat", device="tiny-test-1gb", max_round=2, state_cache=False)
    with pytest.raises(ValueError) as refused:
        flashlab.suite("wsat", device="tiny-test-1gb", max_round=2, state_cache=False)
    assert "max-rounds" not in str(refused.value) and "max_rounds" in str(refused.value)
    # A value that does not parse: the option in Python's spelling, then its form.
    with pytest.raises(
        ValueError,
        match=r"^max_rounds 'x': not a whole number; expected rounds before giving up",
    ):
        flashlab.suite("wsat", device="tiny-test-1gb", max_rounds="x", state_cache=False)
    with pytest.raises(ValueError, match=r"did you mean tiny-test-1gb\?"):
        flashlab.suite("qos", device="tiny-tset-1gb", runtime="30ms", state_cache=False)
    with pytest.raises(ValueError, match="nope"):
        flashlab.suite("qos", device="nope", runtime="30ms", state_cache=False)
    with pytest.raises(TypeError, match="depths"):
        flashlab.suite("qos", device="tiny-test-1gb", depths={1: 2}, state_cache=False)


def test_suite_options_are_the_commands_definitions():
    """The options a suite takes, as ``flashlab suite NAME --help`` lists them: each suite's
    table lists every option its help lists, and the docs' keyword arguments are in it."""
    qos = {row["option"]: row for row in flashlab.suite_options("qos")}
    assert qos["rwmixread"]["default"] == "70" and qos["rwmixread"]["scope"] == "own"
    assert qos["depths"]["scope"] == "shared" and qos["seed"]["scope"] == "every"
    assert qos["depths"]["help"].startswith("Queue depths")
    assert "write_multiple" not in qos
    wsat = {row["option"] for row in flashlab.suite_options("wsat")}
    assert "write_multiple" in wsat and "runtime" not in wsat and "max_rounds" in wsat
    for name in ("qos", "wsat", "cache-passes"):
        help_text = cli("suite", name, "--help").stdout
        for row in flashlab.suite_options(name):
            flag = "--" + row["option"].replace("_", "-")
            # A valued option is followed by its value name, a switch by the line's end.
            assert re.search(re.escape(flag) + r"[ \n]", help_text), (name, row["option"])
    with pytest.raises(ValueError, match=r"did you mean four-corners\?"):
        flashlab.suite_options("four-corner")
    with pytest.raises(TypeError):
        flashlab.suite_options(3)
    # Every keyword the Python page passes to flashlab.suite is an option of that suite.
    page = (ROOT / "docs" / "python.md").read_text()
    calls = re.findall(r'flashlab\.suite\(\s*"([a-z-]+)"([^)]*)\)', page)
    assert calls
    for name, args in calls:
        takes = {row["option"] for row in flashlab.suite_options(name)}
        for keyword in re.findall(r"\b([a-z_]+)=", args):
            if keyword not in ("device", "set", "state_cache"):
                assert keyword in takes, (name, keyword)


PRECONDITIONED_PLAN = """job = "rw.fio"
device = "tiny-test-1gb"
[precondition]
max-rounds = 8
[axes]
"set.capacity.spare_factor" = [0.1, 0.3]
"""

PRECONDITIONED_JOB = "[w]\nrw=randwrite\nbs=4k\niodepth=32\nio_size=32m\n"


def test_sweep_from_preconditioned_drives_is_the_commands(tmp_path: Path):
    (tmp_path / "rw.fio").write_text(PRECONDITIONED_JOB)
    (tmp_path / "plan.toml").write_text(PRECONDITIONED_PLAN)
    done = cli("sweep", str(tmp_path / "plan.toml"), "--outdir", str(tmp_path / "out"),
               "--no-state-cache")
    assert done.returncode == 0, done.stderr
    expected = cli("sweep", "collect", str(tmp_path / "out"))
    assert expected.returncode == 0, expected.stderr
    frame = flashlab.sweep(tmp_path / "plan.toml", jobs=2, state_cache=tmp_path / "cache")
    assert any((tmp_path / "cache").iterdir())
    texts = [json.dumps(flashlab.run_point(tmp_path / "plan.toml", i,
                                           state_cache=tmp_path / "cache")) for i in range(2)]
    assert flashlab.table_csv(texts) == expected.stdout
    wa = frame[frame.measure == "run_write_amplification"].set_index(
        "set.capacity.spare_factor")["value"]
    assert wa[0.1] > wa[0.3] > 1.0


def test_suite_refused_for_its_slice_runs_on_one_that_keeps_the_figures(tmp_path: Path):
    # transfer-sweep writes its 64 MiB region 5 times: too much for half of the tiny drive,
    # so the suite runs again on the whole drive, as the command does.
    args = dict(size="64MiB", max_bs="8k")
    result = flashlab.suite("transfer-sweep", device="tiny-test-1gb",
                            set={"sim.scale": 0.5}, state_cache=False, **args)
    note = result["devices"][0]["scale"]
    assert "no capacity cut" in note and "sim.scale=1" in note, note
    done = cli("suite", "transfer-sweep", "--device", "tiny-test-1gb", "--set", "sim.scale=0.5",
               "--size", "64MiB", "--max-bs", "8k", "--no-state-cache", "--output-format",
               "tidy-csv")
    assert done.returncode == 0, done.stderr
    assert "no capacity cut" in done.stderr
    assert result.tidy_csv == done.stdout


PRECONDITION_ONCE_PLAN = """job = "rw.fio"
device = "tiny-test-1gb"
[precondition]
max-rounds = 8
[axes]
env.QD = [1, 32]
"""

PRECONDITION_ONCE_JOB = "[w]\nrw=randwrite\nbs=4k\niodepth=${QD}\nio_size=32m\n"


def test_sweep_threads_precondition_a_shared_drive_once(tmp_path: Path, capfd):
    # Both points start from the same preconditioned drive: with two threads and a cold
    # cache, one preconditions and the other waits and loads its entries.
    (tmp_path / "rw.fio").write_text(PRECONDITION_ONCE_JOB)
    (tmp_path / "plan.toml").write_text(PRECONDITION_ONCE_PLAN)
    cache = tmp_path / "cache"
    frame = flashlab.sweep(tmp_path / "plan.toml", jobs=2, state_cache=cache)
    err = capfd.readouterr().err
    # The cache holds entries and, beside each, the lock file processes share.
    entries = len(list(cache.glob("*.state")))
    loads = err.count("preconditioning from the state cache")
    assert entries > 0 and loads == entries, err
    cold = flashlab.sweep(tmp_path / "plan.toml", state_cache=False)
    pd.testing.assert_frame_equal(frame, cold)
