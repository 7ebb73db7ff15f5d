"""The runner: ``python -m attnbook run``: check everything, execute notebooks with papermill at
a profile, record each run in ``build/manifest.jsonl``.

What it checks, where it writes (``build/executed/``, ``build/failed/``, ``build/explore/``,
``figures/`` through a scratch folder), interruptions, warnings, exit codes and time budgets:
CONTRIBUTING.md, *Running notebooks* and *Time budgets*.
"""

import contextlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..errors import AttnbookError, ParameterError
from .claims import PROFILES
from .notebook import (
    ENV_BUDGET_REPORT,
    ENV_CACHE_ONLY,
    ENV_DEADLINE,
    ENV_OVERRIDES,
    ENV_RECOMPUTE,
    ENV_RUN_ID,
    ENV_SHOWN,
    ENV_WORK_REPORT,
    source_provenance,
)
from .profiles import NotebookSpec, load_spec, parse_value
from .provenance import now_iso, provenance
from .publish import toc_order
from .readers import loads
from .report import work_text
from .shown import FALLBACK, LARGEST, choose
from .store import config_key, dumps
from .text import clip, quoted

__all__ = ["available_notebooks", "plan", "execute", "UsageError", "EXIT_BUDGET", "exit_code"]

EXIT_BUDGET = 75  # the time budget ran out: what finished is stored, run again to resume
PARTLY_RUN, NOT_STARTED = "partly run", "not started"  # statuses of a run stopped by its budget
BUDGET_STOP = "BudgetExhausted"  # the exception a sweep raises at its deadline


class UsageError(AttnbookError):
    """Bad command-line input: exit code 2, one line, nothing run."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is (``python -m attnbook run`` then exits 143)."""


# set for one purpose by the book itself, never for a run: `make nbval` re-executes notebooks
# under pytest writing nothing (READONLY); a migration names its sample (MIGRATE)
_NOT_FOR_A_RUN = {"ATTNBOOK_READONLY": "writes nothing: `make nbval` sets it for its pytest "
                                       "re-execution only, and a run under it would record "
                                       "nothing",
                  "ATTNBOOK_MIGRATE": "is set by `python -m attnbook migrate` for its own runs"}


def check_environment(command: str | None = None) -> None:
    """Check the variables a kernel reads before any starts (:class:`UsageError` if one is
    bad); with ``command`` (``run``, ``report``, ...) also ``ATTNBOOK_ROOT`` (an existing
    folder, writable for the commands that write) and, for a run, the variables the book sets
    only for its own purposes."""
    text = os.environ.get("ATTNBOOK_ROOT", "")
    if command is not None and text:
        if not Path(text).is_dir():
            raise UsageError(f"environment variable ATTNBOOK_ROOT = {quoted(text)}: allowed an "
                             "existing folder (a checkout of the book), or unset")
        if command in ("run", "report", "migrate"):  # the commands that write
            root = Path(text)
            bad = [p for p in [root, *(root / d for d in ("build", "status", "data", "figures"))]
                   if p.exists() and not os.access(p, os.W_OK | os.X_OK)]
            if bad:
                raise UsageError(f"environment variable ATTNBOOK_ROOT = {quoted(text)}: {bad[0]} "
                                 f"is not writable, and {command} writes there (allowed: a "
                                 "folder this user may write in)")
    if command in ("run", "migrate"):
        for name, why in _NOT_FOR_A_RUN.items():
            text = os.environ.get(name, "")
            if text:
                raise UsageError(f"environment variable {name} = {quoted(text)} {why}: unset it "
                                 f"(allowed: unset, for {command})")
    source = os.environ.get("ATTNBOOK_SOURCE", "")
    if source:
        try:
            state = loads(source, max_bytes=4096)
        except ValueError:
            state = None
        if not isinstance(state, dict) or not isinstance(state.get("commit"), str):
            raise UsageError(f"environment variable ATTNBOOK_SOURCE = {quoted(source)}: allowed a "
                             "JSON object with a commit (tools/device.py check-source prints "
                             "it), or unset")
    for name in ("ATTNBOOK_THREADS", "ATTNBOOK_WORKERS"):
        text = os.environ.get(name, "").strip()
        if text and (not re.fullmatch(r"[0-9]{1,5}", text) or not 1 <= int(text) <= 4096):
            raise UsageError(f"environment variable {name} = {quoted(text)}: allowed an "
                             "integer 1 <= value <= 4096 (or unset)")
    device = os.environ.get("ATTNBOOK_DEVICE", "").strip()
    if device:
        from ..device import pick_device

        try:
            pick_device(device)
        except (AttnbookError, RuntimeError) as e:
            why = f"allowed {e.allowed}" if isinstance(e, ParameterError) else \
                (str(e).splitlines() or ["not a device here"])[0]
            raise UsageError(f"environment variable ATTNBOOK_DEVICE = {quoted(device)}: {why}") \
                from None


@dataclass
class Job:
    spec: NotebookSpec
    profile: str
    parameters: dict
    overrides: dict = field(default_factory=dict)  # values that differ from the profile's
    notes: list = field(default_factory=list)  # parameters that followed a -p value (rules)
    shown: dict | None = None  # --profile largest: the profile chosen and why not the larger
    cache_only: bool = False  # draw every result, compute nothing (a chapter shown at long/full)

    def explore_dir(self, build: Path) -> Path | None:
        """Where an exploratory run keeps its results and figures (None: not exploratory):
        ``build/explore/<stem>-<profile>-<hash of the changed values>/``."""
        if not self.overrides:
            return None
        return Path(build, "explore", f"{self.spec.stem}-{self.profile}-"
                    f"{config_key(self.overrides)}")


def available_notebooks(notebooks_dir: Path | None = None) -> dict[str, Path]:
    """Notebook stems -> paths, in the order the book reads them (_toc.yml), then the rest."""
    d = Path(notebooks_dir or paths.NOTEBOOKS)
    found = {p.stem: p for p in sorted(d.glob("*.ipynb"))}
    toc = [s for s in toc_order() if s in found]
    return {s: found[s] for s in dict.fromkeys(toc + list(found))}


def resolve_notebook(name: str, available: dict[str, Path]) -> str:
    """The stem of the book's notebook ``name`` names: a stem (with or without ``.ipynb``), or
    a path to one of ``available``'s files; never a path cut down to its stem."""
    listing = f"available {', '.join(available)}"
    if "/" not in name and os.sep not in name:
        stem = name.removesuffix(".ipynb")
        if stem not in available:
            raise UsageError(f"unknown notebook {quoted(name)}: {listing}")
        return stem
    path = Path(name)
    if path.suffix != ".ipynb":
        path = path.with_name(path.name + ".ipynb")
    stem = path.stem
    if not path.is_file():
        raise UsageError(f"notebook path {quoted(name)}: no such file ({path}); give a stem "
                         f"or the path of a notebook of the book: {listing}")
    if stem not in available or path.resolve() != available[stem].resolve():
        raise UsageError(f"notebook path {quoted(name)} is not a notebook of the book (those "
                         f"are under {Path(next(iter(available.values()))).parent}): {listing}")
    return stem


def plan(names, profile: str, raw_overrides=(), notebooks_dir: Path | None = None) -> list[Job]:
    """Resolve and check everything before running anything; raise UsageError if bad.
    ``profile`` :data:`attnbook.book.shown.LARGEST`: each chapter at the largest profile whose
    results are complete and current (:mod:`attnbook.book.shown`)."""

    if profile == LARGEST:
        if raw_overrides:
            raise UsageError(f"-p {raw_overrides[0][0]}: parameters are changed for one named "
                             f"profile; --profile {LARGEST} picks a profile per chapter")
        return _plan_largest(names, notebooks_dir)
    if profile not in PROFILES:
        raise UsageError(f"unknown profile {profile!r}: allowed {', '.join(PROFILES)}, or "
                         f"{LARGEST} (per chapter, the largest whose results are complete)")
    available = available_notebooks(notebooks_dir)
    if not available:
        raise UsageError(f"no notebooks found in {notebooks_dir or paths.NOTEBOOKS}")
    chosen = dict.fromkeys(resolve_notebook(name, available) for name in names or available)
    for i, (pname, _) in enumerate(raw_overrides):
        if any(n == pname for n, _ in raw_overrides[:i]):
            given = [t for n, t in raw_overrides if n == pname]
            raise UsageError(f"parameter {pname} is given {len(given)} times "
                             f"({', '.join(map(repr, given))}): give it once")
    jobs = []
    for stem in chosen:
        try:
            spec = load_spec(available[stem])
            if not spec.has_profile(profile):
                if not names:  # the whole book at an optional profile: the chapters that have it
                    continue
                has = ", ".join(p for p in PROFILES if spec.has_profile(p))
                raise UsageError(f"{stem}: profile {profile} is not defined for this chapter "
                                 f"(its .yml has {has})")
            overrides = {}
            for pname, text in raw_overrides:
                if pname not in spec.defaults:
                    spec.check(pname, text)  # raises: names the notebook and its parameters
                overrides[pname] = spec.absolute(pname, parse_value(pname, text,
                                                                    spec.defaults[pname]))
            defined = spec.effective(profile)
            notes = []
            params = spec.parameters(profile, overrides, notes)
            changed = {k: v for k, v in params.items() if k != "profile" and v != defined[k]}
            jobs.append(Job(spec, profile, params, changed, notes))
        except ParameterError as e:
            message = str(e)
            if isinstance(getattr(e, "value", None), (str, list, tuple)):  # the value, cut
                message = message.replace(repr(e.value), quoted(e.value), 1)
            raise UsageError(f"{stem}: {message}") from e
    return jobs


def _error_summary(exc: Exception, limit: int = 500) -> tuple[str, str]:
    """(exception name, one-line message) of a notebook failure: a message of several lines
    (a value with a newline in it) keeps them all, in order, joined by a visible ``\\n``."""
    ename = getattr(exc, "ename", type(exc).__name__)
    text = "\\n".join(x.rstrip() for x in str(getattr(exc, "evalue", exc)).strip().splitlines())
    return ename, clip(text, limit)


_WARNING = re.compile(r"^(?:(\S+?):(\d+): )?(\w*Warning): (.*)$")


def _cell_files(cells) -> dict[str, str]:
    """The file ipykernel runs each code cell from (``<hash of the source>.py``) -> ``cell N``
    (counting the source notebook's cells, markdown included, the injected one not)."""
    try:
        from ipykernel.compiler import get_tmp_hash_seed, murmur2_x86
    except ImportError:
        return {}
    out, n = {}, 0
    for cell in cells:
        injected = "injected-parameters" in cell.get("metadata", {}).get("tags", [])
        n += not injected
        if cell.get("cell_type") == "code":
            name = f"{murmur2_x86(cell.get('source', ''), get_tmp_hash_seed())}.py"
            out[name] = "injected parameters" if injected else f"cell {n}"
    return out


def printed_warnings(nb_path: Path) -> list[str]:
    """The Python warnings an executed notebook printed on stderr, as ``Category: message
    (where)``, in order, without repeats; ``where``: ``cell N, line L`` or ``file:line``."""
    import nbformat

    found = []
    cells = nbformat.read(nb_path, as_version=4).cells
    files = _cell_files(cells)
    for cell in cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") != "stream" or out.get("name") != "stderr":
                continue
            for line in out.get("text", "").splitlines():
                m = _WARNING.match(line.strip())
                if m:
                    name = Path(m[1]).name if m[1] else ""
                    where = (f" ({files[name]}, line {m[2]})" if name in files else
                             f" ({name}:{m[2]})" if name else "")
                    text = f"{m[3]}: {m[4]}{where}"
                    if text not in found:
                        found.append(text)
    return found


def hide_injected_parameters(nb_path: Path) -> None:
    """Tag the cell papermill injected (``injected-parameters``) ``remove-cell``, in place, so
    that the book leaves it out."""
    import nbformat

    nb = nbformat.read(nb_path, as_version=4)
    cells = [c for c in nb.cells if "injected-parameters" in c.get("metadata", {}).get("tags", [])
             and "remove-cell" not in c.metadata["tags"]]
    for cell in cells:
        cell.metadata["tags"] = [*cell.metadata["tags"], "remove-cell"]
    if cells:
        nbformat.write(nb, nb_path)


def _ipc_kernel_manager(stderr: Path | None = None):
    """A kernel manager on local sockets (IPC), each kernel with its own short prefix (under the
    107-byte socket path limit): no TCP port, no warning about unencrypted TCP. ``stderr``:
    the kernel process's own log, so that a kernel shut down mid-reply by Ctrl-C does not
    print its socket errors over the runner's one line."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", os.path.join(tempfile.gettempdir(),
                                                 f"attnbook-kernel-{uuid.uuid4().hex[:12]}"))
            super().__init__(**kwargs)

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            if stderr is None or "stderr" in kw:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            with open(stderr, "ab") as log:  # the kernel keeps its own descriptor
                return await super()._async_launch_kernel(kernel_cmd, stderr=log, **kw)

    return IPCKernelManager


def _plan_largest(names, notebooks_dir: Path | None) -> list[Job]:
    """One job per chapter at the profile :func:`attnbook.book.shown.choose` picks."""
    base = plan(names, FALLBACK, (), notebooks_dir)
    choices = choose(j.spec for j in base)
    return [_shown_job(job.spec, choices[job.spec.stem]) for job in base]


def _shown_job(spec: NotebookSpec, shown: dict) -> Job:
    """The chapter at the profile ``shown`` chose; a larger one is drawn from its stored
    results."""
    p = shown["profile"]
    return Job(spec, p, spec.parameters(p), shown=shown, cache_only=p != FALLBACK)


def _fallback(job: Job, error: str) -> Job:
    """The job that shows ``job``'s chapter at the next profile, when its stored results at the
    profile chosen lack a result its current parameters ask for (``error``, a CacheMiss: its
    .yml changed and the run it asks for has not finished)."""
    missing = error.split(" (", 1)[0].removeprefix("CacheMiss: ")
    excluded = {**job.shown.get("excluded", {}),
                job.profile: f"its stored results lack {missing}, which its parameters ask for"}
    shown = choose([job.spec], {job.spec.stem: excluded})[job.spec.stem]
    return _shown_job(job.spec, {**shown, "excluded": excluded})


def execute(jobs: list[Job], *, recompute: bool = False, build_dir: Path | None = None,
            log=print, cache_only: bool = False, deadline: float | None = None) -> list[dict]:
    """Run the jobs one after another; return their manifest entries.

    ``cache_only``: every result a notebook asks for must be in the cache; a missing one fails
    the notebook instead of being computed (see :class:`attnbook.book.store.CacheMiss`).
    ``deadline`` (seconds since the epoch): sweeps start no unit that would not finish by
    then; a notebook stopped so is ``partly run`` and the jobs after it are returned as ``not
    started`` entries (not written to the manifest); ``build/time-budget.json`` lists both.
    """
    if recompute and cache_only:
        raise UsageError("--recompute and --cache-only exclude each other")
    jobs = list(jobs)  # a chapter shown at a profile its results do not cover gets a fallback
    check_environment()
    import papermill

    build = Path(build_dir or paths.BUILD)
    executed, failed, scratch = build / "executed", build / "failed", build / "tmp"
    for d in (executed, failed, scratch):
        d.mkdir(parents=True, exist_ok=True)
    clean_scratch(scratch)
    manifest = build / "manifest.jsonl"
    base = source_provenance(provenance())
    entries = []
    budget_file = build / "time-budget.json"
    if deadline is not None:
        budget_file.unlink(missing_ok=True)
    for i, job in enumerate(jobs, 1):
        stem = job.spec.stem
        if deadline is not None and (time.time() >= deadline or
                                     any(e["status"] == PARTLY_RUN for e in entries)):
            entries += [{"notebook": j.spec.stem, "profile": j.profile, "status": NOT_STARTED,
                         "overrides": j.overrides} for j in jobs[i - 1:]]
            log(f"      time budget spent: not started: "
                f"{', '.join(j.spec.stem for j in jobs[i - 1:])}")
            break
        run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        explore = job.explore_dir(build)
        # an exploratory run's executed copy stays with its results, out of the book
        out = (explore if explore else executed) / f"{stem}.ipynb"
        figs_dest = explore / "figures" if explore else paths.COMMITTED_FIGURES
        # in build/tmp while it runs; the .pid file says whose these are, while it is alive
        tmp, figs_tmp, report, kernel_log, work_report, owner = (
            scratch / f"{stem}.{run_id}.{suffix}" for suffix in
            ("ipynb", "figures", "budget.jsonl", "kernel.log", "work.jsonl", "pid"))
        owner.write_text(str(os.getpid()))
        log(f"[{i}/{len(jobs)}] {stem} · profile {job.profile} · "
            f"started {time.strftime('%H:%M:%S')}"
            + (" · the largest complete, drawn from stored results" if job.cache_only and
               job.shown else "")
            + (f" · exploratory, results and figures in {explore}" if explore else ""))
        for note in job.notes:
            log(f"      {note}")
        env = {ENV_RUN_ID: run_id,
               ENV_RECOMPUTE: "1" if recompute and not job.cache_only else "0",
               ENV_CACHE_ONLY: "1" if cache_only or job.cache_only else "",
               ENV_SHOWN: json.dumps(job.shown, sort_keys=True) if job.shown else "",
               ENV_OVERRIDES: json.dumps(job.overrides, sort_keys=True) if job.overrides else "",
               paths.ENV_FIGURES: str(figs_tmp),
               paths.ENV_RESULTS: str(explore / "results") if explore else "",
               ENV_DEADLINE: repr(deadline) if deadline is not None else "",
               ENV_BUDGET_REPORT: str(report), ENV_WORK_REPORT: str(work_report)}
        env_before = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        start, t0 = now_iso(), time.perf_counter()
        status, error, interrupted, missing = "ok", None, False, None
        try:
            papermill.execute_notebook(
                str(job.spec.path), str(tmp), parameters=job.parameters, kernel_name="python3",
                progress_bar=sys.stderr.isatty(), cwd=str(job.spec.path.parent),
                kernel_manager_class=_ipc_kernel_manager(kernel_log))
            hide_injected_parameters(tmp)
            out.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, out)
            _move_figures(figs_tmp, figs_dest)
        except KeyboardInterrupt as e:
            # papermill has shut the kernel down on its way out; nothing of this run is kept
            # but the sweep configurations it finished (stored as they finished). A second
            # Ctrl-C (or SIGTERM) waits until the manifest is written
            held = {}
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(ValueError):  # not the main thread
                    held[sig] = signal.signal(sig, signal.SIG_IGN)
            status, error, interrupted = "interrupted", type(e).__name__, e
            tmp.unlink(missing_ok=True)
        except Exception as e:  # noqa: BLE001 - any failure is recorded, the others still run
            ename, msg = _error_summary(e)
            status = "bad parameters" if ename == "ParameterError" else "failed"
            if ename == BUDGET_STOP:  # the time budget, or a chapter that stops itself
                status, missing = PARTLY_RUN, _read_report(report)
                _move_figures(figs_tmp, figs_dest)  # drawn before the stop: from whole sweeps
            error = f"{ename}: {msg}"
            if tmp.exists():
                os.replace(tmp, failed / f"{stem}.ipynb")
            if status != "bad parameters":
                out.unlink(missing_ok=True)  # never leave a stale success in the book
        finally:
            shutil.rmtree(figs_tmp, ignore_errors=True)  # a failed run's figures are not kept
            report.unlink(missing_ok=True)
            if status not in ("ok", "interrupted", PARTLY_RUN) and kernel_log.exists() \
                    and kernel_log.stat().st_size:  # a failure: what the kernel said is kept
                os.replace(kernel_log, failed / f"{stem}.kernel.log")
            kernel_log.unlink(missing_ok=True)
            work = work_done(work_report)
            work_report.unlink(missing_ok=True)
            owner.unlink(missing_ok=True)
            for k, v in env_before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        if status == "failed" and job.shown and job.cache_only and error.startswith("CacheMiss"):
            jobs.insert(i, fallback := _fallback(job, error))
            for f in (failed / f"{stem}.ipynb", failed / f"{stem}.kernel.log"):
                f.unlink(missing_ok=True)
            log(f"      {job.profile}: {fallback.shown['skipped'][job.profile]}; shown at "
                f"{fallback.profile} instead")
            continue
        wall = time.perf_counter() - t0
        written = out if status == "ok" else failed / f"{stem}.ipynb"
        warned = printed_warnings(written) if written.exists() and not interrupted else []
        entry = {"run_id": run_id, "notebook": stem, "profile": job.profile,
                 "parameters": job.parameters, "overrides": job.overrides,
                 "recompute": recompute, "start": start, "wall_s": round(wall, 2),
                 "status": status, "error": error, "warnings": warned,
                 "commit": base["commit"], "dirty": base.get("dirty", False),
                 "diff_sha256": base.get("diff_sha256"), "device": base["device"],
                 "versions": base["versions"]}
        optional = {"work": work, "explore_dir": explore and str(explore), "missing": missing,
                    "deadline": None if deadline is None else _utc(deadline)}
        entry.update({k: v for k, v in optional.items() if v is not None})
        with open(manifest, "a") as f:
            f.write(dumps(entry, sort_keys=True) + "\n")
        entries.append(entry)
        if interrupted:
            log(f"      interrupted after {wall:.1f} s")
            for sig, handler in held.items():
                signal.signal(sig, handler)
            raise interrupted
        log(f"      {status} in {wall:.1f} s" + (f" · {work_text(work, status)}" if work else "")
            + (f" · {error}" if error else "")
            + ("" if status == "ok" else f" · see {failed / (stem + '.ipynb')}"))
        for w in warned:
            log(f"      warning: {w}")
    if deadline is not None:
        _write_budget(budget_file, entries, deadline)
    return entries


_SCRATCH = re.compile(r"^(?P<run>.+\.\d{8}T\d{6}-[0-9a-f]{8})(\.|$)")  # <stem>.<run id>...


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True


def clean_scratch(scratch: Path) -> list[Path]:
    """Remove from ``build/tmp`` (and return) every scratch file or folder of a run whose
    ``<stem>.<run id>.pid`` is gone or names a process no longer alive (a SIGKILL, a machine
    that went down). A run writes that file before any other, so a live run's are kept."""
    if not scratch.is_dir():
        return []
    live = set()
    for lock in scratch.glob("*.pid"):
        try:
            pid = int(lock.read_text().strip())
        except (OSError, ValueError):
            continue
        if _alive(pid):
            live.add(lock.name[:-len(".pid")])
    removed = []
    for p in sorted(scratch.iterdir()):
        m = _SCRATCH.match(p.name)
        if not m or m["run"] in live:
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed.append(p)
    return removed


def work_done(path: Path) -> dict | None:
    """What a run computed, from the lines its tables and sweeps appended to ``path``:
    ``{"computed": k, "total": n}`` units, None when it used none."""
    lines = _read_report(path)
    if not lines:
        return None
    return {"computed": sum(int(x.get("computed", 0)) for x in lines),
            "total": sum(int(x.get("total", 0)) for x in lines)}


def _read_report(path: Path) -> list[dict]:
    """The JSON lines a notebook appended to ``path`` (what a stopped sweep lacks, what a table
    or sweep computed), leaving out any that are not JSON."""
    out = []
    for line in path.read_text().splitlines() if path.exists() else []:
        with contextlib.suppress(ValueError):
            out.append(loads(line))
    return out


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _write_budget(path: Path, entries: list[dict], deadline: float) -> None:
    """``build/time-budget.json``: per notebook of a budgeted run, its status and what is
    still missing."""
    rows = [{k: e[k] for k in ("notebook", "profile", "status", "missing", "run_id")
             if k in e} for e in entries]
    complete = all(e["status"] not in (PARTLY_RUN, NOT_STARTED) for e in entries)
    text = dumps({"deadline": _utc(deadline),
                  "complete": complete, "notebooks": rows}, indent=1, sort_keys=True)
    path.write_text(text + "\n")


def _move_figures(src: Path, dest: Path) -> None:
    """Move a successful run's figures from its scratch folder into place."""
    if not src.is_dir():
        return
    dest.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        if f.is_file():
            os.replace(f, dest / f.name)


def exit_code(entries: list[dict]) -> int:
    """0 if all ran, 2 if any notebook rejected its parameters, else 1 if any failed, else
    :data:`EXIT_BUDGET` (75) if the time budget stopped the run before everything was done."""
    statuses = {e["status"] for e in entries}
    if statuses <= {"ok"}:
        return 0
    if "bad parameters" in statuses:
        return 2
    if statuses <= {"ok", PARTLY_RUN, NOT_STARTED}:
        return EXIT_BUDGET
    return 1
