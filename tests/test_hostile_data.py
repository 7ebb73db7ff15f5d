"""Files the book receives, written to break it: a deeply nested JSON as a ledger entry, a
stored result or build/time-budget.json; a notebook that is not JSON; a fingerprint naming a
path. ``stale``, ``claims``, ``report`` and ``plan`` survive any single damaged file and name
it."""


import pytest

from attnbook.book.cli import main

DEEP = "[" * 100000 + "]" * 100000


@pytest.fixture
def project(cli_sandbox):
    """The sandbox as the CLI's project (conftest.cli_sandbox)."""
    return cli_sandbox


def _no_traceback(capsys):
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "RecursionError" not in err, err[-2000:]
    return out, err


@pytest.mark.parametrize("where", ["ledger entry", "result record", "table record",
                                   "time budget"])
def test_a_deeply_nested_json_is_named_not_a_recursion_error(project, capsys, where):
    path = {"ledger entry": "data/claims/results/cpu/L-Lem1.json",
            "result record": "data/results/a_ok/cpu/s/0123456789abcdef.json",
            "table record": "data/results/a_ok/cpu/t-0123456789abcdef.json",
            "time budget": "build/time-budget.json"}[where]
    f = project / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(DEEP)
    if where == "table record":
        f.with_suffix(".csv").write_text("a\n1\n")
    assert main(["stale"]) == 0
    out, err = _no_traceback(capsys)
    if where != "time budget":
        assert f"{f.name}" in out and "nested deeper than" in out, out
    assert main(["claims"]) == 0
    out, err = _no_traceback(capsys)
    if where == "ledger entry":
        assert "1 has a damaged ledger entry" in err
    assert main(["plan", "--profile", "cpu"]) == 0
    out, err = _no_traceback(capsys)
    if where == "time budget":
        assert "time-budget.json: left out, cannot be read as JSON" in err
    assert main(["report"]) == 0
    _no_traceback(capsys)
    page = (project / "status" / "execution_report.md").read_text()
    if where in ("result record", "table record"):
        assert "**1 damaged**" in page


def test_a_notebook_that_is_not_json_is_named_by_claims_stale_and_refused_by_run(project,
                                                                                capsys):
    (project / "notebooks" / "zz_broken.ipynb").write_text("not a notebook {")
    (project / "notebooks" / "zz_deep.ipynb").write_text(DEEP)
    from attnbook.book import readers

    for argv in (["claims"], ["stale"]):
        readers._NAMED.clear()  # named once per process: each command is one
        assert main(argv) == 0
        out, err = _no_traceback(capsys)
        assert "zz_broken.ipynb: not a notebook" in err and "zz_deep.ipynb" in err
    assert main(["run", "zz_broken", "--profile", "ci"]) == 2
    out, err = _no_traceback(capsys)
    assert err.count("\n") == 1 and "zz_broken.ipynb" in err
    assert not (project / "build").exists()


def test_a_fingerprint_names_only_modules_of_the_package(tmp_path):
    """A fingerprint is read, never followed: a name that is not an attnbook module (a path
    outside the package, a relative climb) counts as changed, and its file is never parsed."""
    from attnbook.book import provenance

    outside = tmp_path / "evil.py"
    outside.write_text("x = 1\n")
    parsed = []
    real = provenance.source_hash
    provenance.source_hash = lambda source: parsed.append(source) or real(source)
    try:
        provenance._hash_file.cache_clear()
        names = [f"attnbook.{outside.with_suffix('')}", "attnbook./etc/passwd",
                 "attnbook....x", "attnbook.book.../../x", "os", "attnbook.errors\x00"]
        changed = provenance.changed_modules({n: "0" * 12 for n in names})
    finally:
        provenance.source_hash = real
    assert changed == sorted(names)
    assert parsed == []
    assert provenance._source_path(f"attnbook.{outside.with_suffix('')}") is None


def test_params_into_a_closed_pipe_is_quiet(project):
    """``params ... | head -1``: the reader has gone before the output is written."""
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-m", "attnbook", "params", "a_ok"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # as head does once it has its line
    err = p.stderr.read().decode()
    p.wait()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


@pytest.mark.parametrize("delay", [0.3, 0.8, 1.5])
def test_ctrl_c_while_the_command_line_loads_is_one_line(delay):
    """Ctrl-C in the first seconds, before a run installs its own handler, once gave a
    35-line KeyboardInterrupt traceback."""
    import signal
    import subprocess
    import sys
    import time

    p = subprocess.Popen([sys.executable, "-m", "attnbook", "claims"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert "Traceback" not in err, err
    # 130, or ended by the signal itself (a shell reads both as 128 + 2): under heavy load the
    # interpreter has once ended so after the one line, which is what this test holds
    ended = (0, 130, -signal.SIGINT)
    assert p.returncode in ended and len(err.strip().splitlines()) <= 1, (p.returncode, err)


_SWALLOWS = """
import os, signal, sys, time
import importlib.util
import attnbook.__main__ as entry


class Swallowing:  # loads the command line as torch's C start-up loads numpy
    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name == "attnbook.book.cli" else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except BaseException:
            pass
        module.main = lambda: print("went on") or 0


sys.meta_path.insert(0, Swallowing())
sys.exit(entry.console())
"""


def test_ctrl_c_that_an_import_swallows_still_ends_the_command_at_once():
    """Ctrl-C while torch's C start-up imported numpy was swallowed there: numpy stayed
    half-imported and ``claims`` then failed with a traceback about ``numpy.matrix`` (6 of 42
    starts interrupted 0.2-0.6 s in). Here the module the command line loads swallows every
    exception as that C code did: the command must still end at once, with its one line."""
    import signal
    import subprocess
    import sys

    from attnbook.__main__ import INTERRUPTED

    p = subprocess.run([sys.executable, "-c", _SWALLOWS], capture_output=True, text=True,
                       timeout=60, preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                    signal.SIG_DFL))
    assert (p.returncode, p.stderr, p.stdout) == (130, INTERRUPTED + "\n", ""), p


def test_ctrl_c_in_a_command_other_than_run_does_not_speak_of_a_run(monkeypatch, capsys):
    from attnbook.book import cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_claims", interrupted)
    assert main(["claims"]) == 130
    assert capsys.readouterr().err == "attnbook: interrupted (claims)\n"


def test_an_interrupt_a_finalizer_swallowed_is_delivered_again(monkeypatch):
    """Ctrl-C that landed in a library's ``__del__`` (simpleeval's, as ``claims`` loaded) was
    printed as "Exception ignored in ... Traceback" and the command went on to its end."""
    import signal
    import sys
    import time

    from attnbook.__main__ import _interrupt_again

    monkeypatch.setattr(sys, "unraisablehook", _interrupt_again)

    class Finalizer:
        def __del__(self):
            raise KeyboardInterrupt

    # Python's own Ctrl-C handler, also where the tests were started with SIGINT ignored (a
    # job started with & from a script): the interrupt is then sent to a handler that raises
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            Finalizer()  # collected at once: the interrupt is swallowed there, then sent again
            for _ in range(2000):
                time.sleep(0.001)
    finally:
        signal.signal(signal.SIGINT, before)


def test_other_errors_in_finalizers_keep_pythons_report():
    from types import SimpleNamespace

    from attnbook.__main__ import _interrupt_again

    seen = []
    unraisable = SimpleNamespace(exc_type=ValueError, exc_value=ValueError("x"))
    _interrupt_again(unraisable, default=seen.append)
    assert seen == [unraisable]


def test_a_file_that_cannot_be_written_is_one_line(project, capsys, monkeypatch):
    """An OSError while a command writes (a full disk, a folder made read-only after the
    check) is one line naming the file, exit code 1, never a traceback."""
    from attnbook.book import report

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", str(project / "status" / "x.md"))

    monkeypatch.setattr(report, "write_pages", full)
    assert main(["report"]) == 1
    out, err = _no_traceback(capsys)
    assert err.count("\n") == 1 and "status/x.md: No space left on device" in err
