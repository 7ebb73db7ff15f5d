"""Sweeps on a Slurm cluster: :class:`SlurmExecutor`, an executor built on submitit.

It submits the units a sweep still lacks as one job array and yields each result as its job
finishes, for :meth:`~attnbook.book.notebook.Sweep.run` to store at once (usage: CONTRIBUTING.md,
"A cluster"). The folder keeps each job's pickles and logs; failed runs are reported after the
others by one :class:`SweepJobError` naming a configuration and its log; stopping the consumer
cancels the unfinished jobs. ``cluster="local"`` or ``"debug"`` runs the array on this machine.
submitit is imported only when an executor is built.
"""

import contextlib
import numbers
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import AttnbookError, check_int, require

__all__ = ["SlurmExecutor", "SweepJobError", "CLUSTERS"]

CLUSTERS = ("slurm", "local", "debug")
_DEVICES = ("auto", "cpu", "cuda")


class SweepJobError(AttnbookError):
    """Runs of a job array failed; ``failures`` lists (config, error line, log path) each."""

    def __init__(self, failures: list[tuple[dict, str, str]], total: int):
        self.failures = failures
        config, error, log = failures[0]
        more = f"; {len(failures) - 1} more failed (logs in the same folder)" \
            if len(failures) > 1 else ""
        super().__init__(f"{len(failures)} of {total} runs failed (the others finished): "
                         f"config {config!r} raised {error} (log: {log}){more}")


def _run_config(fn: Callable, config, device: str) -> tuple[str, object, float]:
    """What each array task runs: ``fn(config)`` timed; an error comes back as ("error",
    "Type: message", seconds), its traceback in the job's log."""
    from ..device import ENV_DEVICE, default_device

    if device != "auto":
        os.environ[ENV_DEVICE] = device
    default_device()  # a node without the asked-for device fails here, in its log
    t0 = time.perf_counter()
    try:
        result = fn(config)
    except Exception as e:  # reported by the submitting side, with the log path
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()
        line = " ".join(f"{type(e).__name__}: {e}".split())
        return "error", line, time.perf_counter() - t0
    return "ok", result, time.perf_counter() - t0


class SlurmExecutor:
    """Runs sweep configurations as one Slurm job array via submitit. The parameters pass to
    sbatch (``max_parallel``: the array's ``%`` limit; ``slurm``: further sbatch parameters as
    submitit names them, e.g. account, qos); ``device`` is resolved on the node.

    >>> SlurmExecutor(folder="build/slurm", cluster="k8s")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnbook.errors.ParameterError: parameter cluster = 'k8s' is out of range: allowed slurm, ...
    """

    def __init__(self, folder: str | Path, *, partition: str | None = None,
                 timeout_min: int = 60, gpus_per_node: int = 0, cpus_per_task: int = 1,
                 mem_gb: float | None = None, job_name: str = "attnbook",
                 max_parallel: int | None = None, slurm: dict | None = None,
                 cluster: str = "slurm", device: str = "auto", poll_s: float = 10.0):
        require(cluster in CLUSTERS, "cluster", cluster, "slurm, local or debug")
        require(isinstance(folder, (str, Path)) and str(folder) != "", "folder", folder,
               "a folder path for the jobs' pickles and logs")
        require(partition is None or (isinstance(partition, str) and partition != ""),
               "partition", partition, "a Slurm partition name or None (the default one)")
        check_int("timeout_min", timeout_min, 1, allowed="an integer number of minutes > 0")
        check_int("gpus_per_node", gpus_per_node, 0, allowed="an integer >= 0")
        check_int("cpus_per_task", cpus_per_task, 1, allowed="an integer >= 1")
        require(mem_gb is None or (isinstance(mem_gb, numbers.Real) and not isinstance(
            mem_gb, bool) and mem_gb > 0), "mem_gb", mem_gb, "a number of GB > 0 or None")
        require(isinstance(job_name, str) and job_name.strip() != "" and "\n" not in job_name,
               "job_name", job_name, "a non-empty one-line name")
        if max_parallel is not None:
            check_int("max_parallel", max_parallel, 1, allowed="an integer >= 1 or None (no limit)")
        require(device in _DEVICES, "device", device, "auto, cpu or cuda")
        require(isinstance(poll_s, numbers.Real) and not isinstance(poll_s, bool) and poll_s > 0,
               "poll_s", poll_s, "a number of seconds > 0")
        slurm = {} if slurm is None else slurm
        require(isinstance(slurm, dict), "slurm", slurm, "a dict of sbatch parameters")
        try:
            import submitit
            from submitit.slurm.slurm import _get_default_parameters
        except ImportError:
            raise AttnbookError("SlurmExecutor needs submitit: pip install submitit "
                                "(pinned in requirements-lock.txt)") from None
        known = set(_get_default_parameters())
        ours = {"job_name", "partition", "time", "gpus_per_node", "cpus_per_task", "mem",
                "array_parallelism"}
        bad = sorted(k for k in slurm if k not in known or k in ours)
        require(not bad, "slurm", bad, "further sbatch parameters known to submitit, other than "
               "those with their own argument (e.g. account, qos, constraint, exclude, setup)")

        self.folder, self.cluster, self.device, self.poll_s = Path(folder), cluster, device, \
            float(poll_s)
        self.slurm_parameters = {"job_name": job_name, "partition": partition,
                                 "time": timeout_min, "gpus_per_node": gpus_per_node,
                                 "cpus_per_task": cpus_per_task,
                                 "mem": None if mem_gb is None else (
                                     f"{int(mem_gb)}GB" if mem_gb == int(mem_gb)
                                     else f"{int(mem_gb * 1024)}MB"),
                                 "array_parallelism": max_parallel, **slurm}
        self.slurm_parameters = {k: v for k, v in self.slurm_parameters.items() if v is not None}
        try:
            ex = submitit.AutoExecutor(folder=self.folder, cluster=cluster)
        except RuntimeError as e:
            raise AttnbookError(f"cluster = {cluster!r} cannot be used here ({e}); "
                                "cluster='local' or 'debug' runs the array on this machine") \
                from None
        ex.update_parameters(name=job_name, timeout_min=timeout_min,
                             gpus_per_node=gpus_per_node,
                             cpus_per_task=cpus_per_task, mem_gb=mem_gb,
                             slurm_partition=partition, slurm_array_parallelism=max_parallel,
                             **{f"slurm_{k}": v for k, v in slurm.items()})
        self._executor = ex

    def __repr__(self) -> str:
        return f"SlurmExecutor(folder={str(self.folder)!r}, cluster={self.cluster!r}, " \
               f"{self.slurm_parameters})"

    def map(self, fn: Callable, configs: list[dict]) -> Iterator[tuple[dict, dict, float]]:
        """Submit ``configs`` as one array; yield (config, result, the run's seconds on the
        node) as each ends; failed runs raise one :class:`SweepJobError` after."""
        configs = list(configs)
        if not configs:
            return
        bad = [c for c in configs if not isinstance(c, dict)]
        require(not bad, "configs", bad[:1], "a list of configuration dicts")
        n = len(configs)
        try:
            jobs = self._executor.map_array(_run_config, [fn] * n, configs, [self.device] * n)
        except Exception as e:  # pickling the function, or sbatch refusing the array
            raise AttnbookError(f"submitting {n} runs of {getattr(fn, '__name__', fn)!r} "
                                f"failed: {' '.join(str(e).split())[:300]}") from None
        from submitit.helpers import as_completed

        config_of = {id(job): c for job, c in zip(jobs, configs, strict=True)}  # not yet done
        failures = []
        try:
            for job in as_completed(jobs, poll_frequency=self.poll_s):
                config, log = config_of.pop(id(job)), str(job.paths.stderr)
                try:
                    status, value, wall_s = job.result()
                except Exception as e:  # killed, timed out, out of memory, node failure
                    lines = [x.strip() for x in str(e).splitlines() if x.strip().strip("-")][:2]
                    failures.append((config, f"{type(e).__name__}: {' '.join(lines)}", log))
                    continue
                if status == "ok":
                    yield config, value, wall_s
                else:
                    failures.append((config, value, log))
        finally:
            for job in jobs:  # the consumer stopped early: free the cluster
                if id(job) in config_of:
                    with contextlib.suppress(Exception):
                        job.cancel(check=False)
        if failures:
            raise SweepJobError(failures, n)
