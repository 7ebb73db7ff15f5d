"""The runner: execute notebooks with papermill at a profile, record each run in a manifest.

``python -m attnbook run [NOTEBOOK...] --profile {ci,cpu,full} [-p NAME VALUE ...]``

* Everything is checked first (notebook names, profile, parameter names, types, finiteness
  and ranges, a parameter given twice, and the rules that link parameters, from each
  notebook's ``.yml``); a bad input is one line on stderr and exit code 2, and nothing is
  executed, written or deleted. A notebook's own checks are a second line only.
* Executed notebooks go to ``build/executed/<stem>.ipynb``, never over the sources; a failed
  one goes to ``build/failed/<stem>.ipynb`` and its stale executed copy is removed.
* Figures are written to a scratch folder and moved into ``figures/`` only when the run
  succeeds. An exploratory run (parameters changed with ``-p``) keeps its results, figures
  and executed notebook under ``build/explore/<stem>-<profile>-<key>/``, never beside the
  committed results, in ``figures/`` or in the book's ``build/executed/``.
* Interrupted (Ctrl-C), the running kernel is shut down, its scratch files are removed, and
  the manifest records the run as ``interrupted``; finished sweep configurations are kept.
* Each run appends one JSON line to ``build/manifest.jsonl``: notebook, profile, parameters,
  the parameters changed from the profile's, commit, device, library versions, start time,
  wall time, status and error.
* A run with parameters changed from its profile's (``-p``) records no verdict in the ledger
  (see :mod:`attnbook.book.notebook`): a ledger entry always means the profile as defined.
* Warnings a notebook printed (``...: SomeWarning: message`` on stderr) are listed in its
  manifest entry and in the log: the HTML book does not show stderr.
* A failing notebook is recorded and the others still run; the exit code is non-zero at the
  end if any failed (2 if a notebook rejected its parameters, 1 otherwise).
"""

import json
import os
import re
import shutil
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..errors import AttnbookError, ParameterError
from .notebook import ENV_OVERRIDES, ENV_RECOMPUTE, ENV_RUN_ID
from .profiles import NotebookSpec, load_spec, parse_value
from .provenance import now_iso, provenance
from .store import dumps

__all__ = ["available_notebooks", "plan", "execute", "UsageError"]


class UsageError(AttnbookError):
    """Bad command-line input: exit code 2, one line, nothing run."""


@dataclass
class Job:
    spec: NotebookSpec
    profile: str
    parameters: dict
    overrides: dict = field(default_factory=dict)  # values that differ from the profile's
    notes: list = field(default_factory=list)  # parameters that followed a -p value (rules)

    def explore_dir(self, build: Path | None = None) -> Path | None:
        """Where an exploratory run keeps its results and figures (None: not exploratory):
        ``build/explore/<stem>-<profile>-<hash of the changed values>/``."""
        if not self.overrides:
            return None
        from .store import config_key

        return (Path(build) / "explore" if build else paths.EXPLORE) / \
            f"{self.spec.stem}-{self.profile}-{config_key(self.overrides)}"


def _toc_order() -> list[str]:
    """Notebook stems in the order _toc.yml lists their executed copies."""
    import re

    toc = paths.ROOT / "_toc.yml"
    text = toc.read_text() if toc.exists() else ""
    return re.findall(r"build/executed/([A-Za-z0-9_.-]+)", text)


def available_notebooks(notebooks_dir: Path | None = None) -> dict[str, Path]:
    """Notebook stems -> paths, in the order the book reads them (_toc.yml), then the rest."""
    d = Path(notebooks_dir or paths.NOTEBOOKS)
    found = {p.stem: p for p in sorted(d.glob("*.ipynb"))}
    order = [s for s in _toc_order() if s in found] + [s for s in found if s not in _toc_order()]
    return {s: found[s] for s in order}


def plan(names, profile: str, raw_overrides=(), notebooks_dir: Path | None = None) -> list[Job]:
    """Resolve and check everything before running anything; raise UsageError if bad."""
    from .claims import PROFILES

    if profile not in PROFILES:
        raise UsageError(f"unknown profile {profile!r}: allowed {', '.join(PROFILES)}")
    available = available_notebooks(notebooks_dir)
    if not available:
        raise UsageError(f"no notebooks found in {notebooks_dir or paths.NOTEBOOKS}")
    chosen = []
    for name in names or list(available):
        stem = Path(name).stem if name.endswith(".ipynb") else Path(name).name
        if stem not in available:
            raise UsageError(f"unknown notebook {name!r}: available {', '.join(available)}")
        if stem not in chosen:
            chosen.append(stem)
    seen = set()
    for pname, _ in raw_overrides:
        if pname in seen:
            given = [t for n, t in raw_overrides if n == pname]
            raise UsageError(f"parameter {pname} is given {len(given)} times "
                             f"({', '.join(map(repr, given))}): give it once")
        seen.add(pname)
    jobs = []
    for stem in chosen:
        try:
            spec = load_spec(available[stem])
            overrides = {}
            for pname, text in raw_overrides:
                if pname not in spec.defaults:
                    spec.check(pname, text)  # raises: names the notebook and its parameters
                overrides[pname] = parse_value(pname, text, spec.defaults[pname])
            defined = {**spec.defaults, **spec.parameters(profile)}
            notes = []
            params = spec.parameters(profile, overrides, notes)
            changed = {k: v for k, v in params.items()
                       if k != "profile" and v != defined[k]}
            jobs.append(Job(spec, profile, params, changed, notes))
        except ParameterError as e:
            raise UsageError(f"{stem}: {e}") from e
    return jobs


def _error_summary(exc: Exception) -> tuple[str, str]:
    """(exception name, one-line message) of a notebook failure."""
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = str(getattr(exc, "evalue", exc)).strip().splitlines()
    return ename, (evalue[-1] if evalue else "")


_WARNING = re.compile(r"^(?:(\S+?):(\d+): )?(\w*Warning): (.*)$")


def printed_warnings(nb_path: Path) -> list[str]:
    """The Python warnings an executed notebook printed on stderr, as ``Category: message
    (file:line)``, in order, without repeats."""
    import nbformat

    found = []
    for cell in nbformat.read(nb_path, as_version=4).cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") != "stream" or out.get("name") != "stderr":
                continue
            for line in out.get("text", "").splitlines():
                m = _WARNING.match(line.strip())
                if m:
                    where = f" ({Path(m[1]).name}:{m[2]})" if m[1] else ""
                    text = f"{m[3]}: {m[4]}{where}"
                    if text not in found:
                        found.append(text)
    return found


def _ipc_kernel_manager():
    """A kernel manager on local sockets (IPC) rather than TCP ports: no port is opened, and
    the kernel has no reason to warn about unencrypted TCP. Each kernel gets its own socket
    prefix in the temporary folder (short, so under the 107-byte socket path limit)."""
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", os.path.join(tempfile.gettempdir(),
                                                 f"attnbook-kernel-{uuid.uuid4().hex[:12]}"))
            super().__init__(**kwargs)

    return IPCKernelManager


def execute(jobs: list[Job], *, recompute: bool = False, build_dir: Path | None = None,
            log=print) -> list[dict]:
    """Run the jobs one after another; return their manifest entries."""
    import papermill

    build = Path(build_dir or paths.BUILD)
    executed, failed, scratch = build / "executed", build / "failed", build / "tmp"
    for d in (executed, failed, scratch):
        d.mkdir(parents=True, exist_ok=True)
    manifest = build / "manifest.jsonl"
    base = provenance()
    kernel_manager = _ipc_kernel_manager()
    entries = []
    for i, job in enumerate(jobs, 1):
        stem = job.spec.stem
        run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        # written to build/tmp while it runs, moved into build/executed only when it succeeded
        explore = job.explore_dir(build)
        # an exploratory run's executed copy stays with its results, out of the book
        out = (explore if explore else executed) / f"{stem}.ipynb"
        tmp = scratch / f"{stem}.{run_id}.ipynb"
        figs_tmp = scratch / f"{stem}.{run_id}.figures"
        figs_dest = explore / "figures" if explore else paths.COMMITTED_FIGURES
        log(f"[{i}/{len(jobs)}] {stem} · profile {job.profile} · "
            f"started {time.strftime('%H:%M:%S')}"
            + (f" · exploratory, results and figures in {explore}" if explore else ""))
        for note in job.notes:
            log(f"      {note}")
        env = {ENV_RUN_ID: run_id, ENV_RECOMPUTE: "1" if recompute else "0",
               ENV_OVERRIDES: json.dumps(job.overrides, sort_keys=True) if job.overrides else "",
               paths.ENV_FIGURES: str(figs_tmp),
               paths.ENV_RESULTS: str(explore / "results") if explore else ""}
        env_before = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        start, t0 = now_iso(), time.perf_counter()
        status, error, interrupted = "ok", None, False
        try:
            papermill.execute_notebook(
                str(job.spec.path), str(tmp), parameters=job.parameters, kernel_name="python3",
                progress_bar=sys.stderr.isatty(), cwd=str(job.spec.path.parent),
                kernel_manager_class=kernel_manager)
            out.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, out)
            _move_figures(figs_tmp, figs_dest)
        except KeyboardInterrupt:
            # papermill has shut the kernel down on its way out; nothing of this run is kept
            # but the sweep configurations it finished (stored as they finished)
            status, error, interrupted = "interrupted", "KeyboardInterrupt", True
            tmp.unlink(missing_ok=True)
        except Exception as e:  # noqa: BLE001 - any failure is recorded, the others still run
            ename, msg = _error_summary(e)
            status = "bad parameters" if ename == "ParameterError" else "failed"
            error = f"{ename}: {msg}"
            if tmp.exists():
                os.replace(tmp, failed / f"{stem}.ipynb")
            if status == "failed":
                out.unlink(missing_ok=True)  # never leave a stale success in the book
        finally:
            shutil.rmtree(figs_tmp, ignore_errors=True)  # a failed run's figures are not kept
            for k, v in env_before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        wall = time.perf_counter() - t0
        written = out if status == "ok" else failed / f"{stem}.ipynb"
        warned = printed_warnings(written) if written.exists() and not interrupted else []
        entry = {"run_id": run_id, "notebook": stem, "profile": job.profile,
                 "parameters": job.parameters, "overrides": job.overrides,
                 "recompute": recompute, "start": start,
                 "wall_s": round(wall, 2), "status": status, "error": error,
                 "warnings": warned,
                 "commit": base["commit"], "dirty": base.get("dirty", False),
                 "diff_sha256": base.get("diff_sha256"), "device": base["device"],
                 "versions": base["versions"]}
        if explore:
            entry["explore_dir"] = str(explore)
        with open(manifest, "a") as f:
            f.write(dumps(entry, sort_keys=True) + "\n")
        entries.append(entry)
        if interrupted:
            log(f"      interrupted after {wall:.1f} s")
            raise KeyboardInterrupt
        log(f"      {status} in {wall:.1f} s" + (f" · {error}" if error else "")
            + ("" if status == "ok" else f" · see {failed / (stem + '.ipynb')}"))
        for w in warned:
            log(f"      warning: {w}")
    return entries


def _move_figures(src: Path, dest: Path) -> None:
    """Move a successful run's figures from its scratch folder into place."""
    if not src.is_dir():
        return
    dest.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        if f.is_file():
            os.replace(f, dest / f.name)


def exit_code(entries: list[dict]) -> int:
    """0 if all ran, 2 if any notebook rejected its parameters, else 1 if any failed."""
    statuses = {e["status"] for e in entries}
    if statuses <= {"ok"}:
        return 0
    return 2 if "bad parameters" in statuses else 1
