"""What a notebook calls first: ``run = attnbook.start(notebook, profile=profile, seed=seed)``.

:class:`Run` is the notebook's one door to the cache (``run.cached``, ``run.sweep``), the ledger
(``run.record``) and the figures (``run.savefig``). The runner passes its run id, options and
deadline through the ``ATTNBOOK_*`` variables below; by hand they default to an interactive run
that reads the cache. Exploratory runs (``-p``), time budgets and checkpoints behave as
CONTRIBUTING.md says: :class:`BudgetExhausted` derives from ``BaseException`` so that no
``except Exception`` in a notebook swallows it, and once raised :meth:`Run.record` raises it
again (no verdict from part of a sweep).
"""

import functools
import inspect
import json
import os
import random
import re
import time
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .. import __version__, paths
from ..device import default_device, describe_device
from ..errors import AttnbookError, ParameterError
from . import claims as _claims
from . import display as _display
from . import history as _history
from .checkpoints import (
    MIN_SLICE_S,
    BudgetExhausted,
    Checkpoint,
    Finished,
    checkpoint_dir,
    unit_key,
)
from .executors import compile_toolchain, default_executor, deterministic_kernels
from .profiles import RESERVED, chapter_spec, load_spec, rule_error
from .provenance import function_modules, provenance
from .readers import loads
from .store import NotStored, ResultStore, config_key, total_wall

__all__ = ["Run", "start", "check_interactive_parameters", "seed_everything",
           "BudgetExhausted", "deadline", "source_provenance"]

ENV_RUN_ID = "ATTNBOOK_RUN_ID"
ENV_RECOMPUTE = "ATTNBOOK_RECOMPUTE"
ENV_READONLY = "ATTNBOOK_READONLY"  # write nothing (cache, ledger): validation re-executions
ENV_THREADS = "ATTNBOOK_THREADS"  # torch CPU threads; 1 is fastest for small models on a busy CPU
ENV_OVERRIDES = "ATTNBOOK_OVERRIDES"  # JSON: parameters the runner changed from the profile's
ENV_SHOWN = "ATTNBOOK_SHOWN"  # JSON: the profile `run --profile largest` chose, and why not larger
ENV_CACHE_ONLY = "ATTNBOOK_CACHE_ONLY"  # compute nothing: a result not stored is an error
ENV_DEADLINE = "ATTNBOOK_DEADLINE"  # seconds since the epoch (attnbook run --time-budget)
ENV_BUDGET_REPORT = "ATTNBOOK_BUDGET_REPORT"  # file a stopped sweep appends what is missing to
ENV_WORK_REPORT = "ATTNBOOK_WORK_REPORT"  # file each table and sweep appends what it computed to
ENV_SOURCE = "ATTNBOOK_SOURCE"  # JSON {commit, dirty, diff_sha256}: the commit of a copy of the
# tree that has no git (checked against its file hashes)


def deadline() -> float | None:
    """The run's deadline (seconds since the epoch) from ``ATTNBOOK_DEADLINE``, or None."""
    text = os.environ.get(ENV_DEADLINE, "")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value != value:
        raise ParameterError(ENV_DEADLINE, text, "seconds since the epoch")
    return value


def _env_json(name: str, valid, what: str):
    """The JSON value of environment variable ``name`` (None when unset), else a
    :class:`ParameterError` saying it should be ``what``."""
    text = os.environ.get(name, "")
    if not text:
        return None
    try:
        value = loads(text)
    except json.JSONDecodeError:
        value = None
    if not valid(value):
        raise ParameterError(name, text, what)
    return value


def _append_json(env: str, line: dict) -> None:
    """Append ``line`` to the file environment variable ``env`` names, if any."""
    path = os.environ.get(env, "")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(line, sort_keys=True) + "\n")


def _stop(store: ResultStore, message: str, report: dict | None = None):
    """Raise :class:`BudgetExhausted`, remembered by the run's store so no verdict follows."""
    store.budget_stop = store.budget_stop or message
    if report is not None:
        _append_json(ENV_BUDGET_REPORT, report)
    raise BudgetExhausted(message)


def _restop(store: ResultStore, e: BudgetExhausted, message: str, report: dict):
    """A checkpointed unit stopped itself (``e``): say what is left, unless already said."""
    if store.budget_stop:
        raise e
    _stop(store, f"{e}; {message}", report)


def report_work(kind: str, name: str, computed: int, total: int) -> None:
    """Append what a table or sweep computed (``computed`` of ``total`` units, the others read
    from the cache) to the file ``ATTNBOOK_WORK_REPORT`` names, if any."""
    _append_json(ENV_WORK_REPORT, {"kind": kind, "name": name, "computed": int(computed),
                                   "total": int(total)})


def source_provenance(info: dict) -> dict:
    """``info`` with the commit of ``ATTNBOOK_SOURCE`` where git could not tell it (a copy of
    the tree without git, checked against the files of that commit first)."""
    if info.get("commit") not in (None, "unknown"):
        return info
    state = _env_json(ENV_SOURCE, lambda s: isinstance(s, dict) and isinstance(
        s.get("commit"), str), "a JSON object with a commit")
    if state is None:
        return info
    info = {**info, "commit": state["commit"], "dirty": bool(state.get("dirty"))}
    if state.get("diff_sha256"):
        info["diff_sha256"] = state["diff_sha256"]
    else:
        info.pop("diff_sha256", None)
    return info


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch, and ask torch for deterministic kernels."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    deterministic_kernels()


@dataclass
class Run:
    """One execution of one notebook at one profile."""

    notebook: str
    profile: str
    seed: int
    device: torch.device
    run_id: str
    recompute: bool
    info: dict = field(default_factory=dict)  # provenance: commit, device, versions, time
    readonly: bool = False
    overrides: dict = field(default_factory=dict)  # parameters changed from the profile's
    cache_only: bool = False  # draw every result from the cache; computing one is an error
    _verdicts: list = field(default_factory=list, repr=False)  # shown when the cell ends

    def __post_init__(self):
        self._t0 = time.monotonic()  # a figure's provenance says how long into the run it came
        self.store = ResultStore(self.notebook, self.profile, recompute=self.recompute,
                                 readonly=self.readonly, cache_only=self.cache_only,
                                 provenance={"run_id": self.run_id, **self.info})

    # -- cache ---------------------------------------------------------------------------
    def cached(self, name: str | tuple[str, ...], params: dict, compute, *,
               checkpoint: bool = False, code=None):
        """A table computed once per (profile, params) and re-read after (ResultStore.cached).

        With a tuple of names, ``compute()`` returns a dict of those tables, each stored under
        its own name, and a dict is returned; ``compute`` runs at most once. ``checkpoint=True``:
        ``compute(checkpoint)`` gets the table's :class:`Checkpoint`, deleted once it is stored.
        ``code``: the library function ``compute`` runs (a notebook's lambda around it), or a
        tuple of those it chains, whose import closure is then the record's and the checkpoint's
        fingerprint; without it, every module loaded counts, so a change to one the computation
        never runs makes it stale.
        """
        label = name if isinstance(name, str) else "+".join(name)
        modules = _code_modules(f"table {label!r}", code) if code is not None else None
        ckpt = self.checkpoint(label, params, modules) if checkpoint else None
        if ckpt is not None:
            compute = functools.partial(ckpt.run, compute)
        compute = _within_budget(self.store, compute, f"table {name!r}",
                                 checkpointed=checkpoint)
        earlier = (lambda: ckpt.earlier) if ckpt is not None else None
        ran = []

        def counted(compute=compute):  # a unit counts as computed once it returns
            out = compute()
            ran.append(True)
            return out

        try:
            if isinstance(name, str):
                out = self.store.cached(name, params, counted, earlier, modules)
            else:
                out = self._cached_tables(tuple(name), params, counted, earlier, modules)
            if ckpt is not None:
                ckpt.clear()
            return out
        except NotStored as e:  # a migration of a chapter stored only up to here
            _stop(self.store, str(e), {"table": label, "not_stored": True})
        finally:
            report_work("table", label, 1 if ran else 0, 1)

    def _cached_tables(self, names, params, compute, earlier, modules=None):
        """:meth:`cached` for a tuple of names: one computation that yields several tables."""
        computed = {}

        def table(n):
            def one():
                if not computed:
                    out = compute()
                    if not isinstance(out, dict) or set(out) != set(names):
                        raise AttnbookError(f"compute for {names} must return a dict with "
                                            f"exactly the keys {names}")
                    computed.update(out)
                return computed[n]
            return one

        return {n: self.store.cached(n, params, table(n), earlier, modules) for n in names}

    def checkpoint(self, name: str, params: dict, modules=None) -> Checkpoint:
        """The checkpoint of the cached table ``name`` for ``params`` (none saved read-only);
        ``modules``: the code it can run (None: every module loaded)."""
        folder = checkpoint_dir(self.store.dir, name)
        return Checkpoint(None if self.readonly else folder / f"{unit_key(params)}.pt",
                          deadline=deadline(), label=f"table {name!r}", modules=modules)

    def stored_sweep(self, name: str, profile: str, notebook: str | None = None):
        """What sweep ``name`` of this chapter (or of ``notebook``) has stored at another
        ``profile`` (committed, intact and current; nothing computed); empty when nothing."""
        if profile not in _claims.PROFILES:
            raise ParameterError("profile", profile, ", ".join(_claims.PROFILES))
        if notebook is not None and not (paths.NOTEBOOKS / f"{notebook}.ipynb").is_file():
            raise ParameterError("notebook", notebook, "a chapter of the book (notebooks/<stem>)")
        other = ResultStore(notebook or self.notebook, profile, readonly=True, cache_only=True,
                            root=paths.COMMITTED_RESULTS)
        return other.stored(name)

    def profile_parameters(self, profile: str) -> dict:
        """Every parameter of this chapter at another ``profile`` (defaults and its .yml)."""
        return load_spec(paths.NOTEBOOKS / f"{self.notebook}.ipynb").effective(profile)

    def require_compiler(self, name: str, value) -> None:
        """Refuse parameter ``name`` in one line (:class:`ParameterError`) where it turns
        ``torch.compile`` on and this machine has no compiler for the kernels it builds
        (:func:`~attnbook.book.executors.compile_toolchain`), before anything is computed. A
        run that only draws stored results (``cache_only``: the book at ``long`` and ``full``)
        compiles nothing and passes."""
        missing = compile_toolchain(self.device.type) if value and not self.cache_only else ""
        if missing:
            raise ParameterError(name, value, f"false, since torch.compile needs {missing} "
                                 "and none is found", problem="cannot run here")

    def partly(self, why: str) -> None:
        """End the chapter here, recorded as ``partly run`` (exit code 75): what ran is stored,
        nothing after runs, no verdict is recorded; ``why`` says what is still to come."""
        _stop(self.store, f"{self.notebook} at {self.profile} stops here: {why}",
              {"stopped": why})

    def sweep(self, name: str) -> "Sweep":
        """A resumable per-configuration cache for the sweep called ``name``."""
        return Sweep(self.store, name)

    # -- ledger ----------------------------------------------------------------------------
    def record(self, claim_id: str, reproduced: bool | None, measured: str, *,
               part: str | None = None, details: dict | None = None, seeds=None,
               decide_seeds=None, resamples: dict | None = None,
               resample_kind: str = "bootstrap") -> str:
        """Record a claim's verdict in the ledger and print its line; the stability rule
        (``seeds`` with ``decide_seeds(kept)``, or ``resamples``) as CONTRIBUTING.md says."""
        if self.store.budget_stop:  # the notebook went on after a budget stop
            raise BudgetExhausted(f"{claim_id} not recorded: {self.store.budget_stop}")
        if reproduced is not None and not (isinstance(reproduced, str)
                                           and reproduced == _claims.NOT_TESTABLE):
            reproduced = bool(reproduced)
        stable = None
        if seeds is not None:
            seeds = sorted(set(seeds))
            short = _claims.seed_rule(seeds)
            if short and reproduced is not None:
                measured = (f"{short} (on these the criterion says "
                            f"{_claims.status_word(reproduced)}): {measured}")
                reproduced = _claims.NOT_TESTABLE
            elif not short and decide_seeds is not None:
                resamples = {f"without seed {s}": decide_seeds([k for k in seeds if k != s])
                             for s in seeds}
                resample_kind = "leave one seed out"
        if resamples is not None and reproduced is not None \
                and reproduced != _claims.NOT_TESTABLE:
            stable = _claims.stability(reproduced, resamples, resample_kind)
        if self.readonly or self.overrides or self.store.migrating:
            _claims.check_claim_id(claim_id)  # a migration records nothing: it re-records after
        else:  # computed_by: where the cached numbers were computed (a GPU, for a laptop re-draw)
            spec = chapter_spec(self.notebook)  # parameters: what the profile set (stale_modules)
            values = ({"parameters": spec.effective(self.profile)}
                      if spec is not None and spec.has_profile(self.profile) else {})
            _claims.record(claim_id, reproduced, measured, profile=self.profile,
                           notebook=self.notebook, part=part, details=details, stable=stable,
                           run={"run_id": self.run_id, "seed": self.seed, **self.info,
                                "computed_by": list(self.store.sources), **values})
        line = _claims.verdict_line(claim_id, self.profile, reproduced, measured, part, stable)
        if self.overrides:
            line += (f" [not recorded in the ledger: parameters changed from profile "
                     f"{self.profile}: {self.changed()}]")
        if stable:
            measured = f"{measured}; {_claims.stability_text(stable)}"
        if not self._show_verdict_later(claim_id, part, reproduced, measured, line, stable):
            print(line)
        return line

    def _show_verdict_later(self, claim_id, part, reproduced, measured, line,
                            stable=None) -> bool:
        """In a kernel, keep the verdict for :meth:`show_verdicts`; outside one, False."""
        from IPython import get_ipython

        from .plotting import in_kernel

        if not in_kernel():
            return False
        if not getattr(self, "_verdict_hook", False):
            get_ipython().events.register("post_run_cell", self.show_verdicts)
            self._verdict_hook = True
        self._verdicts.append({"id": claim_id, "part": part, "line": line,
                               "status": _claims.status_word(reproduced, stable),
                               "measured": str(measured)})
        return True

    def show_verdicts(self, result=None) -> None:
        """When a cell ends: one coloured admonition per claim recorded since the last call,
        whose plain text is its verdict lines (what nbval compares)."""
        from IPython.display import display

        pending, self._verdicts[:] = list(self._verdicts), []
        if not pending:
            return
        ledger = _claims.load_ledger().set_index("id")
        note = ""
        if self.overrides:
            note = (f"*Not recorded in the ledger: parameters changed from profile "
                    f"`{self.profile}`: {_display.escape(self.changed())}.*")
        for claim_id in dict.fromkeys(v["id"] for v in pending):
            mine = [v for v in pending if v["id"] == claim_id]
            row = ledger.loc[claim_id]
            text = _display.verdict_markdown(
                claim_id, self.profile, mine, paper=row["paper_value"],
                criterion=row["criterion"], source=row["source"], note=note)
            display({"text/plain": "\n".join(v["line"] for v in mine), "text/markdown": text},
                    raw=True)

    def changed(self) -> str:
        """The parameters changed from the profile's, as ``name=value, ...`` ('' if none)."""
        return ", ".join(f"{k}={v!r}" for k, v in sorted(self.overrides.items()))

    def criteria_fixed(self, *claim_ids: str) -> str:
        """When each claim's criterion was last changed, among the runs it decides
        (:func:`attnbook.book.history.fixed_sentence`), one clause per claim."""
        return "; ".join(
            f"{c}: {_history.NO_HISTORY}" if (s := _history.fixed_sentence(c)) ==
            _history.NO_HISTORY else f"{c}'s criterion was {s}" for c in claim_ids) + "."

    def ledger(self, *claim_ids: str):
        """This chapter's claims as the ledger stands (every profile's committed results), one
        block per claim shown as a cell's result; ``.frame`` holds the rows."""
        table = _claims.status_table(parts=True)
        return _display.LedgerView(table[table["id"].isin(claim_ids)], list(claim_ids),
                                   _display.shown_profiles(table))

    # -- figures ---------------------------------------------------------------------------
    def savefig(self, fig, name: str, source: str = "", *, caption: str | None = None,
                claims=(), data=None):
        """Save ``fig`` as figures/<name>.png and .pdf with its provenance, caption, claims
        and plotted ``data`` (figures/<name>.csv), as CONTRIBUTING.md's "Writing a chapter"
        says; its metadata records ``phone_text_px`` and ``overlapping_labels``. Returns None.
        """
        from . import plotting

        claims = [claims] if isinstance(claims, str) else list(claims or ())
        for cid in claims:
            _claims.check_claim_id(cid)
        footer = f"{source} · profile {self.profile}".strip(" ·")
        if self.overrides:
            footer += f" (changed: {self.changed()})"
        points = plotting.smallest_text_pt(fig)  # the figure's own text, not the footer
        overlaps = [list(pair) for pair in plotting.overlapping_labels(fig)]
        png = plotting.save_figure(fig, name, footer=footer, data=data)
        phone_px = (None if points is None else round(
            plotting.phone_text_px(points, plotting.png_width_in(png), fig.dpi), 1))
        sources = self.store.sources
        plotting.figure_output(fig, png, {
            "name": name, "caption": caption or source or name, "source": source,
            "claims": claims, "notebook": self.notebook, "profile": self.profile,
            "profile_changes": _profile_changes(self.notebook, self.profile),
            "overrides": dict(self.overrides), "run_id": self.run_id, "seed": self.seed,
            "commit": self.info.get("commit", ""), "dirty": bool(self.info.get("dirty")),
            "device": self.info.get("device", ""),
            "computed_by": sorted({s.get("device") or "" for s in sources} - {""}),
            "computed_at": sorted({s.get("commit") or "" for s in sources} - {""}),
            "elapsed_s": round(time.monotonic() - self._t0, 1),
            "data": f"{name}.csv" if data is not None else "", "png": f"{name}.png",
            "phone_text_px": phone_px, "phone_content_px": plotting.PHONE_CONTENT_PX,
            "overlapping_labels": overlaps})


def check_interactive_parameters(notebook: str, profile: str, namespace: dict) -> None:
    """A chapter run by hand checks the parameters it holds as the runner would: each value
    that differs from the profile's against its range, then the ``.yml``'s rules on the whole
    set (a one-line :class:`ParameterError`). Nothing to check without a ``.yml``."""
    spec = chapter_spec(notebook)
    if spec is None or not spec.has_profile(profile):
        return
    planned = {**spec.defaults, **(spec.profiles.get(profile) or {})}
    held = {k: namespace[k] for k in spec.defaults if k in namespace and k not in RESERVED}
    changed = {k: v for k, v in held.items() if v != planned.get(k)}
    for name, value in changed.items():
        spec.check(name, value)
    full = {**planned, **held}
    for rule in spec.rules:
        if not rule.holds(full):
            raise rule_error(rule, full, changed)


def _profile_changes(notebook: str, profile: str) -> dict:
    """What ``profile`` changes from the notebook's parameters cell ({} when unknown)."""
    spec = chapter_spec(notebook)
    if spec is None:
        return {}
    return {k: v for k, v in (spec.profiles.get(profile) or {}).items() if k != "profile"}


@dataclass
class Sweep:
    """Per-configuration cache of one sweep; :meth:`run` is the book's one resumable loop."""

    store: ResultStore
    name: str

    def run(self, fn, configs, *, executor=None, groups=None, desc: str | None = None,
            progress: bool = True, checkpoint: bool = False, code=None):
        """Compute ``fn`` for every configuration not yet stored; return all as one frame.

        ``configs``: distinct flat JSON-able dicts. Without ``groups``, ``fn(config)`` returns
        one result dict; with ``groups`` (it splits the missing configurations into lists
        computed together), ``fn(group)`` returns one per configuration, in order. Each result
        is stored as its unit finishes. ``executor`` decides where units run (default: here,
        with a progress bar). ``checkpoint=True``: ``fn(unit, checkpoint)`` also gets the
        unit's :class:`Checkpoint` (see :mod:`attnbook.book.checkpoints`). ``code``: the
        library function a notebook's ``fn`` runs, as for :meth:`Run.cached`.
        """
        configs = list(configs)
        modules = (function_modules(fn) if code is None  # the code a unit can run: its
                   else _code_modules(f"sweep {self.name!r}", code))  # record's fingerprint
        if len({config_key(c) for c in configs}) != len(configs):
            raise ParameterError("configs", len(configs),
                                 "distinct configurations (duplicates found)")
        absent = self._never_stored(configs)
        todo = self.missing([c for c in configs if config_key(c) not in absent])
        if not todo:
            report_work("sweep", self.name, 0, len(configs))
            self._end_of_stored(absent, configs)
            return self.frame(configs)
        self.store.refuse_to_compute(f"sweep {self.name!r} ({len(todo)} of {len(configs)} "
                                     "configurations)")
        executor = executor or default_executor(progress=progress, desc=desc or self.name,
                                                unit="run" if groups is None else "group")
        units = todo if groups is None else [list(g) for g in groups(todo)]
        budget = _SweepBudget(self, configs, todo, units, grouped=groups is not None,
                              checkpointed=checkpoint)
        budget.check()
        if checkpoint:  # and its checkpoints' (None, a notebook's function: every module)
            fn = _Checkpointed(fn, None if self.store.readonly else
                               checkpoint_dir(self.store.dir, self.name), deadline(),
                               f"sweep {self.name!r} " + ("group" if groups else "unit"),
                               modules)
        work = executor.map(fn, units)
        try:
            for unit, results, wall_s in work:
                earlier = []
                if checkpoint:  # the sittings before the one that finished it
                    results, earlier = results.value, results.earlier
                if groups is None:
                    unit, results = [unit], [results]
                results = list(results)
                if len(results) != len(unit):
                    raise AttnbookError(f"sweep {self.name!r}: {len(results)} results for a "
                                        f"group of {len(unit)} configurations")
                mates = [config_key(c) for c in unit] if groups is not None else None
                for config, result in zip(unit, results, strict=True):
                    self.put(config, result, round(wall_s, 3), earlier, modules, mates)
                if checkpoint:
                    fn.clear(unit if groups is not None else unit[0])
                budget.finished(unit, total_wall(wall_s, earlier))
        except BudgetExhausted as e:  # a checkpoint stopped a unit inside
            _restop(self.store, e, f"sweep {self.name!r} has {budget.missing} of "
                    f"{budget.total} configurations not computed: run again to resume",
                    budget.report(checkpointed=True))
        finally:
            close = getattr(work, "close", None)
            if close is not None:
                close()  # a generator stopped by the budget computes nothing more
            report_work("sweep", self.name, len(todo) - budget.missing, len(configs))
        self._end_of_stored(absent, configs)
        return self.frame(configs)

    def _never_stored(self, configs) -> set:
        """In a migration, the keys of ``configs`` never stored (a sweep a budget stopped)."""
        if not self.store.migrating:
            return set()
        return {config_key(c) for c in configs
                if not self.store._path(self.name, c).exists()}

    def _end_of_stored(self, absent: set, configs) -> None:
        """End a migration's pass where the sweep's stored results end (after its sample)."""
        if absent:
            _stop(self.store, f"sweep {self.name!r} has {len(absent)} of {len(configs)} "
                  "configurations never stored: a migration recomputes only its sample of the "
                  "stored ones, and the chapter's pass ends here",
                  {"sweep": self.name, "missing": len(absent), "not_stored": True})

    def missing(self, configs):
        return self.store.missing(self.name, configs)

    def put(self, config, result, wall_s=None, earlier=None, modules=None, stacked_with=None):
        self.store.put(self.name, config, result, wall_s, earlier, modules, stacked_with)

    def frame(self, configs):
        return self.store.frame(self.name, configs)


def _code_modules(what: str, code) -> list[str]:
    """The import closure of ``code``, the library function a table or sweep names as the one
    its unit runs, or a tuple of them where a notebook's function chains several (the union of
    their closures): its fingerprint. Anything else, a notebook's function, is refused."""
    modules = set()
    for fn in code if isinstance(code, tuple) and code else (code,):
        closure = function_modules(fn)
        if closure is None:
            raise AttnbookError(f"{what}: code must be a function of the attnbook library or "
                                f"a tuple of them, not {getattr(fn, '__qualname__', fn)!r}")
        modules.update(closure)
    return sorted(modules)


def _within_budget(store: ResultStore, compute, what: str, checkpointed: bool = False):
    """``compute``, checking first that the deadline has not passed (a table is one unit;
    ``checkpointed``: one that stops itself before the deadline)."""
    def guarded():
        end = deadline()
        if end is not None and time.time() + (MIN_SLICE_S if checkpointed else 0) >= end:
            _stop(store, f"time budget spent before {what} was computed", {"table": what})
        try:
            return compute()
        except BudgetExhausted as e:
            _restop(store, e, "run again to resume", {"table": what, "checkpointed": True})
    return guarded


@dataclass
class _Checkpointed:
    """``fn(unit, checkpoint)`` as the ``fn(unit)`` an executor maps (picklable, for Slurm)."""

    fn: object
    folder: Path | None  # None: save nothing (a read-only run)
    deadline: float | None
    label: str
    modules: list[str] | None = None  # the code a unit can run (None: every module loaded)

    def checkpoint(self, unit) -> Checkpoint:
        path = None if self.folder is None else self.folder / f"{unit_key(unit)}.pt"
        return Checkpoint(path, deadline=self.deadline, label=self.label, modules=self.modules)

    def __call__(self, unit):
        ckpt = self.checkpoint(unit)
        return Finished(ckpt.run(self.fn, unit), ckpt.earlier)

    def clear(self, unit) -> None:
        self.checkpoint(unit).clear()


class _SweepBudget:
    """The deadline check of one :meth:`Sweep.run`: before each unit, whether the longest unit
    seen so far (this run, or stored by an earlier one) still fits before the deadline."""

    def __init__(self, sweep: Sweep, configs, todo, units, grouped: bool,
                 checkpointed: bool = False):
        self.sweep, self.total, self.grouped = sweep, len(configs), grouped
        self.checkpointed = checkpointed  # units stop themselves: a minute left is enough
        self.units_left, self.missing = len(units), len(todo)
        self.deadline = deadline()
        self.longest = 0.0
        if self.deadline is not None:  # what earlier runs of this sweep took per unit
            todo_keys = {config_key(c) for c in todo}
            walls = [(sweep.store._usable(sweep.store._path(sweep.name, c)) or {}).get("wall_s")
                     for c in configs if config_key(c) not in todo_keys]
            self.longest = max([0.0] + [float(w) for w in walls if isinstance(w, (int, float))])

    def finished(self, unit: list, wall_s: float) -> None:
        """One unit (its configurations) is stored; check before the next one."""
        self.units_left -= 1
        self.missing -= len(unit)
        self.longest = max(self.longest, float(wall_s))
        self.check()

    def check(self) -> None:
        if self.deadline is None or self.units_left <= 0:
            return
        need = min(self.longest, MIN_SLICE_S) if self.checkpointed else self.longest
        if time.time() + need <= self.deadline:
            return
        kind = ("group" if self.grouped else "unit") + ("s" if self.units_left != 1 else "")
        _stop(self.sweep.store,
              f"time budget: sweep {self.sweep.name!r} stopped with {self.missing} of "
              f"{self.total} configurations not computed ({self.units_left} {kind}; the "
              f"finished ones are stored): run again to resume", self.report())

    def report(self, **extra) -> dict:
        """What the sweep still lacks, for the runner's ``build/time-budget.json``."""
        return {"sweep": self.sweep.name, "configurations": self.total,
                "missing": self.missing, "units_missing": self.units_left,
                "longest_unit_s": round(self.longest, 3),
                "seconds_left": round(self.deadline - time.time(), 3)
                if self.deadline is not None else None, **extra}


def start(notebook: str, profile: str = "cpu", seed: int = 0, device: str | None = None) -> Run:
    """Begin a notebook run: check the profile, seed everything, pick the device, print a header.

    >>> run = start("doctest_example", profile="ci")  # doctest: +ELLIPSIS
    attnbook ... · doctest_example · profile ci · seed 0 · cpu: ...
    """
    if profile not in _claims.PROFILES:
        raise ParameterError("profile", profile, ", ".join(_claims.PROFILES))
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", notebook):
        raise AttnbookError(f"notebook name {notebook!r} must be a file stem "
                            "(letters, digits, _.-)")
    if not isinstance(seed, int) or seed < 0:
        raise ParameterError("seed", seed, "an integer >= 0")
    if not os.environ.get(ENV_RUN_ID):  # by hand (Jupyter): the runner checked them otherwise
        frame = inspect.currentframe()
        check_interactive_parameters(notebook, profile, frame.f_back.f_globals if frame and
                                     frame.f_back else {})
    seed_everything(seed)
    _display.install_formatters()  # tables and dicts left as a cell's result: tables in the book
    # tqdm.auto without ipywidgets warns once, which would end up in every executed notebook
    warnings.filterwarnings("ignore", message="IProgress not found", module="tqdm")
    threads = os.environ.get(ENV_THREADS, "")
    if threads:
        if not threads.isdigit() or int(threads) < 1:
            raise ParameterError(ENV_THREADS, threads, "an integer >= 1")
        torch.set_num_threads(int(threads))
    dev = default_device(device)
    run_id = os.environ.get(ENV_RUN_ID) or (f"interactive-{time.strftime('%Y%m%dT%H%M%S')}-"
                                            f"{uuid.uuid4().hex[:6]}")
    flag = {e: os.environ.get(e, "") == "1" for e in (ENV_RECOMPUTE, ENV_READONLY,
                                                       ENV_CACHE_ONLY)}
    overrides = _env_json(ENV_OVERRIDES, lambda v: isinstance(v, dict),
                          "a JSON object of parameter values") or {}
    run = Run(notebook, profile, seed, dev, run_id, flag[ENV_RECOMPUTE],
              source_provenance(provenance(dev)), flag[ENV_READONLY], overrides,
              flag[ENV_CACHE_ONLY])
    print(f"attnbook {__version__} · {notebook} · profile {profile} · seed {seed} · "
          f"{describe_device(dev)}" + (f" · changed: {run.changed()}" if overrides else ""))
    _show_choice(profile)
    return run


def _show_choice(profile: str) -> None:
    """The note on which profile the book shows, when ``run --profile largest`` chose it."""
    shown = _env_json(ENV_SHOWN, lambda s: isinstance(s, dict) and s.get("profile") == profile,
                      f"a JSON object whose profile is {profile!r}")
    if shown is not None:
        from IPython.display import Markdown, display

        display(Markdown(_display.banner(shown)))
