"""Command line: ``python -m attnbook {run,plan,claims,params,report,stale,migrate}``.

Exit codes: 0 done; 1 a notebook failed; 2 bad input (nothing ran) or a notebook rejected its
parameters; 75 (``run --time-budget``) the budget ran out first: what finished is stored, the
same command resumes; 130 interrupted (Ctrl-C); 143 terminated (SIGTERM), cleaned up as an
interruption.
"""

import argparse
import json
import logging
import math
import os
import signal
import sys
import time

from .. import paths
from ..device import default_device
from ..errors import AttnbookError
from . import report, runner
from .claims import PROFILES, UNRUN, damaged_entries, notebook_claims, status_table
from .costs import check_costs, cost_table, format_table
from .migrate import migrate, migrated_results
from .profiles import load_spec
from .provenance import git_state
from .publish import publish_chapters
from .sites import counted
from .store import stored_results, why_not_current
from .text import clip, quoted

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="attnbook", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="execute notebooks with papermill at a profile")
    r.add_argument("notebooks", nargs="*", metavar="NOTEBOOK",
                   help="notebook stems or paths (default: all, in book order)")
    r.add_argument("--profile", default="cpu",
                   help="ci, cpu (default), long, full, or largest: each chapter at the "
                        "largest of full and long whose results are complete and current "
                        "(drawn from data/results, nothing computed), cpu otherwise")
    r.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                   metavar=("NAME", "VALUE"), help="override one parameter for this run")
    r.add_argument("--recompute", action="store_true",
                   help="ignore cached results under data/results and compute again")
    r.add_argument("--cache-only", action="store_true",
                   help="compute nothing: draw every result from data/results; a missing one "
                        "fails its notebook (building the book where nothing may train)")
    r.add_argument("--time-budget", type=str, default=None, metavar="SECONDS",
                   help="stop before this many seconds have passed: no sweep unit starts that "
                        "would not finish in time, finished ones are kept, a notebook stopped "
                        "so is 'partly run' (no verdict), and the exit code is 75; the same "
                        "command then resumes")
    r.add_argument("--no-cost-check", action="store_true",
                   help="run even where the .yml's estimate of a run with changed parameters "
                        "exceeds the machine's memory, or an hour at a profile meant to take "
                        "minutes")

    pl = sub.add_parser("plan", help="per chapter at a profile: sweep configurations, stored "
                                     "results, estimated cost and where it runs (cpu or gpu)")
    pl.add_argument("notebooks", nargs="*", metavar="NOTEBOOK",
                    help="notebook stems (default: all, in book order)")
    pl.add_argument("--profile", default="full", help="ci, cpu, long or full (default)")
    pl.add_argument("--json", action="store_true", help="machine-readable output")

    c = sub.add_parser("claims", help="print the claims ledger: paper vs measured, per profile")
    c.add_argument("--profile", default=None, help="only this profile (ci, cpu, long or full)")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--parts", action="store_true", help="also list the parts of each claim")

    pa = sub.add_parser("params", help="list a notebook's parameters, ranges and profiles")
    pa.add_argument("notebook")

    sub.add_parser("report", help="write the generated book pages (status, execution report) "
                   "and link the executed notebooks under chapters/<work>/")

    st = sub.add_parser("stale", help="list stored results and ledger entries whose library "
                                      "code has changed since they were computed, or that are "
                                      "damaged")
    st.add_argument("--profile", default=None, help="only this profile (ci, cpu, long or full)")

    mg = sub.add_parser("migrate", help="re-stamp a chapter's stale results with the current "
                                        "code after recomputing a sample that agrees with them")
    mg.add_argument("notebook")
    mg.add_argument("--profile", required=True, help="cpu, long or full")
    mg.add_argument("--seed", type=int, default=None,
                    help="the sample's seed (default: drawn, and recorded)")
    return p


def _run(args) -> int:
    runner.check_environment("run")
    budget = _time_budget(args.time_budget)
    deadline = time.time() + budget if budget is not None else None
    jobs = runner.plan(args.notebooks, args.profile, args.parameter)
    if args.recompute and args.cache_only:
        raise runner.UsageError("--recompute and --cache-only exclude each other")
    if not args.no_cost_check and not args.cache_only:  # --cache-only computes nothing
        check_costs(jobs, device=_device() if any(j.overrides for j in jobs) else "cpu",
                    budgeted=budget is not None)
    # chapters whose .yml says their full profile runs on a CPU (cost: full: where: cpu) get no
    # warning; the others, and those that say nothing, are sized for a GPU
    gpu = [j.spec.stem for j in jobs if not j.overrides
           and j.spec.cost.get("full", {}).get("where") != "cpu"]
    if args.profile == "full" and gpu and _device() == "cpu" and not args.cache_only:
        redo = [r for r in stored_results(profile="full")
                if r["notebook"] in gpu and (r["problem"] or r["changed"])]
        print(f"note: profile full is sized for one GPU (about an hour per notebook) at "
              f"{', '.join(gpu)}, and this machine has none; their results not already under "
              "data/results/<notebook>/full/ are computed on the CPU and can take many hours. "
              "Committed full results are re-drawn without recomputing"
              + (f", except {len(redo)} that are stale or damaged and are recomputed like "
                 f"missing ones (python -m attnbook stale --profile full lists them)."
                 if redo else "."), file=sys.stderr)
    if any(not j.overrides for j in jobs):
        state = git_state()
        if state.get("dirty"):
            print(f"note: the tree has uncommitted changes: results stored by this run are "
                  f"recorded as dirty (diff {state['diff_sha256']}) on {state['commit']}; "
                  f"commit first for results that a commit reproduces", file=sys.stderr)
    entries = runner.execute(jobs, recompute=args.recompute, cache_only=args.cache_only,
                      deadline=deadline)
    failed = [e["notebook"] for e in entries
              if e["status"] not in ("ok", runner.PARTLY_RUN, runner.NOT_STARTED)]
    done = sum(e["status"] == "ok" for e in entries)
    print(f"{done}/{len(entries)} notebooks ran at profile {args.profile}"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    partly = [e for e in entries if e["status"] == runner.PARTLY_RUN]
    waiting = [e["notebook"] for e in entries if e["status"] == runner.NOT_STARTED]
    if partly or waiting:
        what = [f"{e['notebook']} partly run ("
                + ", ".join(f"sweep {m['sweep']}: {m['missing']} of {m['configurations']} "
                            f"configurations missing" if "sweep" in m else
                            f"stopped: {m['stopped']}" if "stopped" in m else
                            f"{m.get('table')} missing" for m in e.get("missing") or []) + ")"
                for e in partly]
        if waiting:
            what.append("not started: " + ", ".join(waiting))
        stopped_itself = all("stopped" in m for e in partly for m in e.get("missing") or [{}])
        spent = budget is not None and (waiting or not stopped_itself)
        print((f"time budget of {budget:g} s spent: " if spent else "")
              + "; ".join(what)
              + ("; no verdict after the stop was recorded" + ("" if stopped_itself else
                                                                 " from an incomplete sweep")
                 if partly else "")
              + (". Run the same command again to resume (build/time-budget.json lists what "
                 "is missing)" if spent else ""))
    return runner.exit_code(entries)


MIN_BUDGET_S, MAX_BUDGET_S = 1.0, 1e7  # --time-budget: a second to about four months


def _time_budget(text: str | None) -> float | None:
    """``--time-budget`` in seconds (a finite number > 0), or None."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or not MIN_BUDGET_S <= value <= MAX_BUDGET_S:
        raise runner.UsageError(f"--time-budget {quoted(text)}: allowed a number of seconds "
                                f"{MIN_BUDGET_S:g} <= SECONDS <= {MAX_BUDGET_S:g} (a kernel "
                                "takes seconds to start: a shorter budget can never fit a unit)")
    return value


def _plan(args) -> int:
    rows = cost_table(runner.plan(args.notebooks, args.profile))
    print(json.dumps(rows, indent=1) if args.json else format_table(rows, args.profile))
    return 0


def _device() -> str:
    """The device a notebook run will pick (see :func:`attnbook.device.default_device`)."""
    return default_device().type


def _left_aligned(frame, limit: int = 60) -> str:
    """``frame`` as text, its columns left-aligned as text reads, each cell cut to
    ``limit`` characters (the whole text: --json, or the book's claims page).

    >>> import pandas as pd
    >>> print(_left_aligned(pd.DataFrame({"id": ["B-NN", "L-Lem1"], "status": ["a", "bc"]})))
    id     status
    B-NN   a
    L-Lem1 bc
    """
    text = frame.astype(str)
    widths = {c: min(limit, max([len(c), *text[c].str.len()])) for c in text}
    out = text.to_string(index=False, justify="left", max_colwidth=limit,
                         formatters={c: lambda s, w=widths[c]: s.ljust(w) for c in text})
    return "\n".join(line.rstrip() for line in out.splitlines())


def _claims(args) -> int:
    table = status_table(args.profile, parts=args.parts)  # rejects an unknown profile
    cols = ["id", "part", "profile", "status", "stability", "paper_value", "measured",
            "notebook", "commit", "kind", "type", "source", "device", "time", "stale", "damaged"]
    ran = ~table["status"].isin(UNRUN)
    stale = ran & (table["stale"].fillna("") != "")
    damaged = table["damaged"].fillna("") != ""
    whole = table["part"].isna()  # --parts adds a row per part: the counts are per claim
    if args.json:  # "stale": the changed modules ('' when current); "damaged": the bad files
        print(json.dumps(table[cols].fillna("").to_dict(orient="records"), indent=1))
    else:
        shown = table.assign(status=table["status"]
                             + stale.map({True: " (stale)", False: ""})
                             + damaged.map({True: " (damaged entry)", False: ""}))
        print(_left_aligned(shown[cols[:7]].fillna("")))
    n_stale, n_damaged = int((stale & whole).sum()), int((damaged & whole).sum())
    if n_stale or n_damaged:
        print(f"{counted(n_stale, 'verdict')} {'is' if n_stale == 1 else 'are'} stale (computed "
              "by code, or decided by a criterion or under profile values, that has changed "
              f"since), {n_damaged} {'has' if n_damaged == 1 else 'have'} a damaged ledger "
              "entry: python -m attnbook stale lists them", file=sys.stderr)
    return 0


def _params(args) -> int:
    available = runner.available_notebooks()
    stem = runner.resolve_notebook(args.notebook, available)
    spec = load_spec(available[stem])
    print(f"{stem}: parameter = default (cpu) | allowed | " + " | ".join(PROFILES))
    for name, default in spec.defaults.items():
        rule = spec.allowed.get(name, {})
        per = [repr((spec.profiles.get(p) or {}).get(name, default)) if name != "profile"
               else p for p in PROFILES]
        print(f"  {name} = {default!r} | {rule or '-'} | " + " | ".join(per))
    for rule in spec.rules:
        print(f"  rule: {rule.check}" + (f"  ({rule.message})" if rule.message else ""))
    return 0


def _stale(args) -> int:
    """List stale or damaged stored results and stale ledger entries (one per line)."""

    if args.profile is not None and args.profile not in PROFILES:
        raise runner.UsageError(f"unknown profile {args.profile!r}: allowed "
                                f"{', '.join(PROFILES)}")

    def rel(path):
        return path.relative_to(paths.ROOT) if path.is_relative_to(paths.ROOT) else path

    def lines():
        for r in stored_results(profile=args.profile):
            if r["problem"] or r["changed"]:
                yield (f"{r['notebook']}\t{r['profile']}\t{rel(r['path'])}\t"
                       f"{why_not_current(r['problem'], r['changed'])}")
        table = status_table(args.profile)
        for _, row in table[table["stale"] != ""].iterrows():
            yield (f"{row['notebook']}\t{row['profile']}\tledger {row['id']}\t"
                   f"{why_not_current(None, row['stale'].split(', '))}")
        chapters = {}  # claim id -> the stem of the chapter that records it
        for nb in sorted(paths.NOTEBOOKS.glob("*.ipynb")):
            for cid in notebook_claims(nb):
                chapters.setdefault(cid, nb.stem)
        for d in damaged_entries(args.profile):
            yield (f"{chapters.get(d['id'], '?')}\t{d['profile']}\t{rel(d['path'])}\tdamaged "
                   f"ledger entry: {d['problem']}")

    n = 0
    for line in lines():
        n += 1
        print(line)
    print(f"{n} stale or damaged" + (f" at profile {args.profile}" if args.profile else ""),
          file=sys.stderr)
    moved: dict = {}
    for r in migrated_results(profile=args.profile):
        m = r["migrated"]
        key = (r["notebook"], r["profile"], m.get("from_commit"), m.get("checked_at"))
        moved.setdefault(key, [0, m])[0] += 1
    for (nb, prof, old, at), (count, m) in moved.items():
        print(f"{nb}\t{prof}\t{counted(count, 'result')} current by migration "
              f"from {old} (checked at {at} on {len(m.get('sampled', []))} recomputed, largest "
              f"difference {m.get('largest_difference', 0):.3g})", file=sys.stderr)
    return 0


def _migrate(args) -> int:
    if args.profile not in ("cpu", "long", "full"):
        raise runner.UsageError(f"--profile {args.profile!r}: allowed cpu, long or full (ci "
                                "results are not committed)")
    runner.check_environment("migrate")
    return migrate(args.notebook, args.profile, seed=args.seed)


def _report(args) -> int:
    runner.check_environment("report")
    for path in report.write_pages():
        print(f"wrote {path}")
    print(f"linked {len(publish_chapters())} executed notebooks under chapters/")
    return 0


def _split_values(argv: list[str]) -> tuple[list[str], list[tuple[str, str]] | None]:
    """``run``'s arguments with every ``-p NAME VALUE`` taken out (argparse reads a VALUE
    such as ``-1e-3`` or ``-inf`` as an option), and ``--profile``/``--time-budget`` joined
    to a value that starts with ``-``; the pairs taken out (None: not ``run``)."""
    if not argv or argv[0] != "run":
        return argv, None
    out, pairs, i = [], [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            out += argv[i:]
            break
        if a in ("-p", "--parameter") and i + 2 < len(argv):
            pairs.append((argv[i + 1], argv[i + 2]))
            i += 3
        elif a in ("--profile", "--time-budget") and i + 1 < len(argv) \
                and argv[i + 1].startswith("-") and argv[i + 1] not in ("-p", "--parameter"):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
        else:
            out.append(a)
            i += 1
    return out, pairs


EXIT_PIPE = 141  # the reader of the output went away (`... | head -1`): 128 + SIGPIPE


def main(argv=None) -> int:
    """The command line; a reader that stops reading (``params ... | head -1``) ends it
    quietly with :data:`EXIT_PIPE`."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, not at exit, where a closed pipe would print a traceback
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # what is still buffered goes nowhere
        return EXIT_PIPE
    except KeyboardInterrupt:  # before a run's own handler is in place: nothing ran yet
        print("attnbook: interrupted before anything ran", file=sys.stderr)
        return 130


def _main(argv=None) -> int:
    argv, pairs = _split_values(list(sys.argv[1:] if argv is None else argv))
    args = _parser().parse_args(argv)
    if pairs is not None:
        args.parameter = [list(p) for p in pairs] + list(args.parameter or [])
    commands = {"run": _guarded_run, "plan": _plan, "claims": _claims, "params": _params,
                "stale": _stale, "migrate": _migrate, "report": _report}
    try:
        return commands[args.command](args)
    except AttnbookError as e:
        print("attnbook: error: " + clip(" ".join(str(e).splitlines()), 1000), file=sys.stderr)
        return 2
    except OSError as e:  # a file or folder that cannot be written or read (a full disk)
        if isinstance(e, BrokenPipeError):
            raise
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        print("attnbook: error: " + clip(" ".join((where + (e.strerror or str(e))).splitlines()),
                                         1000), file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        what = "terminated (SIGTERM)" if isinstance(e, runner.Terminated) else "interrupted"
        print(f"attnbook: {what}" + (": the kernel was shut down and the run recorded as "
                                     "interrupted in build/manifest.jsonl; finished sweep "
                                     "configurations are kept" if args.command == "run" else
                                     f" ({args.command})"),
              file=sys.stderr)
        return 143 if isinstance(e, runner.Terminated) else 130


_STOPPING = [False]  # set from the first Ctrl-C or SIGTERM of a run on


def _quiet(record) -> bool:
    """A logging filter that drops every record once a stop has begun: what papermill, nbclient
    and asyncio log while the interrupted kernel goes down ("Kernel died while waiting for
    execute reply", a cell task's DeadKernelError at exit) is the stop itself, which the one
    line of :func:`main` reports."""
    return not _STOPPING[0]


def _guarded_run(args) -> int:
    """:func:`_run` with SIGTERM turned into :class:`~attnbook.book.runner.Terminated` (an
    interruption): the kernel is shut down, scratch files removed, the manifest written, and
    what the notebook machinery logs from then on dropped (:func:`_quiet`)."""
    def stopper(exc):
        def stop(signum, frame):
            _STOPPING[0] = True
            raise exc()
        return stop

    try:
        before = signal.signal(signal.SIGTERM, stopper(runner.Terminated))
        # a SIGINT that the shell made ignored (a background job) stays ignored
        before_int = signal.getsignal(signal.SIGINT)
        if before_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, stopper(KeyboardInterrupt))
    except ValueError:  # not the main thread: leave the signals as they are
        return _run(args)
    _STOPPING[0] = False
    for name in ("papermill", "asyncio", "traitlets"):
        logging.getLogger(name).addFilter(_quiet)
    try:
        return _run(args)
    finally:
        signal.signal(signal.SIGTERM, before)
        signal.signal(signal.SIGINT, before_int)
        # the filters stay: a cell task's error is logged when the event loop is collected, at
        # exit, after this function has returned
