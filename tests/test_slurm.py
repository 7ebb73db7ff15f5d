"""The submitit executor, run without a cluster (submitit's local and debug executors)."""

import os
import sys
import time

import pytest

submitit = pytest.importorskip("submitit")
import cloudpickle  # noqa: E402  (a dependency of submitit)

from attnbook.book.notebook import Sweep  # noqa: E402
from attnbook.book.slurm import SlurmExecutor, SweepJobError  # noqa: E402
from attnbook.book.store import ResultStore  # noqa: E402
from attnbook.device import default_device  # noqa: E402
from attnbook.errors import AttnbookError, ParameterError  # noqa: E402

# the local executor's processes import this module's functions by value, not by name
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def square(config):
    time.sleep(config.get("sleep", 0.0))
    return {"y": config["x"] ** 2, "device": str(default_device())}


def fails_on_two(config):
    if config["x"] == 2:
        raise ValueError("x = 2 is not allowed\nsecond line")
    return {"y": config["x"] ** 2}


def test_debug_cluster_returns_every_config_with_its_result(tmp_path):
    ex = SlurmExecutor(tmp_path / "jobs", cluster="debug", poll_s=0.01)
    configs = [{"x": i} for i in range(5)]
    out = list(ex.map(square, configs))
    assert sorted(c["x"] for c, _, _ in out) == list(range(5))
    assert all(r["y"] == c["x"] ** 2 and r["device"] in ("cpu", "cuda") for c, r, _ in out)
    assert all(isinstance(w, float) and w >= 0 for _, _, w in out)
    assert list(ex.map(square, [])) == []


def test_local_cluster_yields_results_as_jobs_finish(tmp_path, monkeypatch):
    # a job that dies without a result (as a killed Slurm job does) is reported after the
    # others; submitit waits 15 s for a late result file by default, not needed here
    monkeypatch.setattr(submitit.local.local.LocalJob, "_results_timeout_s", 0)
    ex = SlurmExecutor(tmp_path / "jobs", cluster="local", timeout_min=2, device="cpu",
                       poll_s=0.05)
    configs = [{"x": 0, "sleep": 3.0}, {"x": 1}, {"x": 2, "exit": True}]
    t0 = time.perf_counter()
    order = []
    with pytest.raises(SweepJobError) as e:
        for config, result, wall_s in ex.map(square_or_exit, configs):
            order.append((config["x"], time.perf_counter() - t0))
            assert result == {"y": config["x"] ** 2, "device": "cpu"}
            assert wall_s >= config.get("sleep", 0.0)
    assert [x for x, _ in order] == [1, 0]  # the quick run first, though submitted second
    assert order[1][1] - order[0][1] > 1.0  # and it came while the slow one still ran
    msg = str(e.value)
    assert msg.startswith("1 of 3 runs failed") and "{'x': 2, 'exit': True}" in msg
    assert "UncompletedJobError" in msg and "has not produced any output" in msg
    assert "\n" not in msg
    assert len(list((tmp_path / "jobs").glob("*_log.out"))) == 3  # one log per task


def square_or_exit(config):
    if config.get("exit"):
        os._exit(3)  # the process dies: no result, no Python error
    return square(config)


def test_failing_config_is_named_after_the_others_were_yielded(tmp_path):
    ex = SlurmExecutor(tmp_path / "jobs", cluster="debug", poll_s=0.01)
    got = []
    with pytest.raises(SweepJobError) as e:
        for config, result, _ in ex.map(fails_on_two, [{"x": i} for i in range(4)]):
            got.append((config["x"], result["y"]))
    assert sorted(got) == [(0, 0), (1, 1), (3, 9)]
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("1 of 4 runs failed")
    assert "{'x': 2}" in msg and "ValueError: x = 2 is not allowed second line" in msg
    assert f"log: {tmp_path / 'jobs'}" in msg and msg.rstrip(")").endswith("_log.err")
    assert isinstance(e.value, AttnbookError) and e.value.failures[0][0] == {"x": 2}


def test_interrupted_sweep_stores_the_successes_and_resumes_with_the_rest(tmp_path):
    sweep = Sweep(ResultStore("nb", "ci", root=tmp_path / "store"), "s")
    configs = [{"x": i} for i in range(4)]
    with pytest.raises(SweepJobError, match=r"config \{'x': 2\}"):
        sweep.run(fails_on_two, configs,
                  executor=SlurmExecutor(tmp_path / "jobs", cluster="debug", poll_s=0.01))
    assert sweep.missing(configs) == [{"x": 2}]  # the three successes were stored
    df = sweep.run(square, configs,
                   executor=SlurmExecutor(tmp_path / "jobs", cluster="debug", poll_s=0.01))
    assert df["y"].tolist() == [0, 1, 4, 9]


def test_slurm_parameters_pass_through_to_sbatch(tmp_path):
    from submitit.slurm.slurm import _make_sbatch_string

    ex = SlurmExecutor(tmp_path / "jobs", partition="gpu", timeout_min=90, gpus_per_node=1,
                       cpus_per_task=8, mem_gb=32, job_name="wies2021", max_parallel=4,
                       slurm={"account": "proj", "constraint": "a100"}, cluster="debug")
    assert ex.slurm_parameters == dict(job_name="wies2021", partition="gpu", time=90,
                                       gpus_per_node=1, cpus_per_task=8, mem="32GB",
                                       array_parallelism=4, account="proj", constraint="a100")
    script = _make_sbatch_string("python run.py", tmp_path / "jobs", map_count=10,
                                 **ex.slurm_parameters)
    for line in ("--partition=gpu", "--time=90", "--gpus-per-node=1", "--cpus-per-task=8",
                 "--mem=32GB", "--job-name=wies2021", "--array=0-9%4", "--account=proj",
                 "--constraint=a100"):
        assert f"#SBATCH {line}" in script


@pytest.mark.parametrize("kwargs, name", [
    (dict(cluster="k8s"), "cluster"),
    (dict(partition=""), "partition"),
    (dict(timeout_min=0), "timeout_min"),
    (dict(timeout_min=1.5), "timeout_min"),
    (dict(gpus_per_node=-1), "gpus_per_node"),
    (dict(cpus_per_task=0), "cpus_per_task"),
    (dict(mem_gb="lots"), "mem_gb"),
    (dict(max_parallel=0), "max_parallel"),
    (dict(job_name=""), "job_name"),
    (dict(device="tpu"), "device"),
    (dict(poll_s=0), "poll_s"),
    (dict(slurm={"partitions": "gpu"}), "slurm"),  # unknown to sbatch / submitit
    (dict(slurm={"time": 5}), "slurm"),  # has its own argument
])
def test_bad_parameters_fail_early_in_one_line(tmp_path, kwargs, name):
    with pytest.raises(ParameterError) as e:
        SlurmExecutor(tmp_path / "jobs", **{"cluster": "debug", **kwargs})
    assert e.value.name == name and "\n" not in str(e.value)
    assert not (tmp_path / "jobs").exists()  # nothing created before the check


def test_bad_configs_and_no_cluster_fail_in_one_line(tmp_path):
    ex = SlurmExecutor(tmp_path / "jobs", cluster="debug")
    with pytest.raises(ParameterError, match="parameter configs"):
        list(ex.map(square, [{"x": 1}, 3]))
    if submitit.SlurmExecutor.affinity() <= 0:  # this machine has no Slurm
        with pytest.raises(AttnbookError) as e:
            SlurmExecutor(tmp_path / "slurm", cluster="slurm")
        assert "\n" not in str(e.value) and "cluster='local' or 'debug'" in str(e.value)


def saves_then_dies_once(config, checkpoint):
    """A job killed at its time limit after saving step 3; the next job goes on from there."""
    saved = checkpoint.load()
    if saved is None:
        checkpoint.save(3, {"partial": config["x"] * 10})
        raise TimeoutError("killed at the time limit")
    return {"y": saved["partial"] + 1, "resumed_at": checkpoint.resumed_step}


def test_checkpointed_jobs_resume_from_the_checkpoint_their_last_job_saved(tmp_path):
    sweep = Sweep(ResultStore("nb", "ci", root=tmp_path / "store"), "s")
    configs = [{"x": 1}, {"x": 2}]
    ex = SlurmExecutor(tmp_path / "jobs", cluster="debug", poll_s=0.01)
    with pytest.raises(SweepJobError):
        sweep.run(saves_then_dies_once, configs, executor=ex, checkpoint=True)
    folder = tmp_path / "store" / ".checkpoints" / "nb" / "ci" / "s"
    assert len(list(folder.glob("*.pt"))) == 2
    df = sweep.run(saves_then_dies_once, configs, executor=ex, checkpoint=True)
    assert df["y"].tolist() == [11, 21] and df["resumed_at"].tolist() == [3, 3]
    assert not list(folder.glob("*.pt"))  # deleted once stored
