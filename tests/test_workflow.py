"""The deployment workflow and the Makefile cannot drift apart: every `make` target the
workflow calls exists, and the workflow publishes what `make publish-check` built and checked."""

import re
import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def _targets() -> dict[str, str]:
    """Makefile targets -> their recipe text."""
    text = (ROOT / "Makefile").read_text()
    found, name = {}, None
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)\s*:(?![=:])", line)
        if m:
            name = m[1]
            found[name] = ""
        elif name and line.startswith("\t"):
            found[name] += line + "\n"
        elif line.strip() and not line.startswith("#"):
            name = None
    return found


def _make_calls(script: str) -> list[str]:
    """The targets named by each `make ...` (or `$(MAKE) ...`) command line in a script."""
    calls = []
    for line in script.replace("\\\n", " ").splitlines():
        for m in re.finditer(r"(?:^\s*|[;&|]\s*)(?:make|\$\(MAKE\))\s+([^;&|#]*)", line):
            calls += [w for w in shlex.split(m[1]) if "=" not in w and not w.startswith("-")]
    return calls


def _steps() -> list[dict]:
    wf = yaml.safe_load(WORKFLOW.read_text())
    return [s for job in wf["jobs"].values() for s in job.get("steps", [])]


def test_every_make_target_the_workflow_calls_exists():
    targets = _targets()
    runs = [s["run"] for s in _steps() if "run" in s]
    called = [t for r in runs for t in _make_calls(r)]
    assert "venv" in called and "publish-check" in called
    missing = [t for t in called if t not in targets]
    assert not missing, f"the workflow calls make targets the Makefile lacks: {missing}"
    # and so does publish-check itself, which ends with the browser test
    inner = _make_calls(targets["publish-check"])
    assert [t for t in inner if t not in targets] == []
    assert inner[-1] == "browser" and "book-ci" in inner
    assert "--cache-only" in targets["publish-check"], "the workflow must never compute"


def test_workflow_fails_on_errors_and_warnings_and_publishes_the_checked_book():
    for step in _steps():
        if "run" in step:
            assert step["run"].lstrip().startswith("set -eo pipefail"), step.get("name")
    html = _targets()["html"]
    assert "--warningiserror" in html and "--nitpick" in html and "--keep-going" in html
    uses = {s["uses"].split("@")[0]: s for s in _steps() if "uses" in s}
    for action, step in uses.items():
        assert re.fullmatch(r"v\d+", step["uses"].split("@")[1]), f"{action}: pin a major"
    assert {"actions/upload-pages-artifact", "actions/deploy-pages"} <= set(uses)
    html_dir = re.search(r"^HTML\s*:=\s*(\S+)", (ROOT / "Makefile").read_text(), re.M)[1]
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == html_dir


def test_make_test_ends_with_the_browser_test():
    test = re.search(r"^test:(.*)$", (ROOT / "Makefile").read_text(), re.M)[1].split()
    assert test[-2:] == ["book-ci", "browser"]


def _make(*args, env=None):
    import os
    import subprocess

    return subprocess.run(["make", "-s", "-o", ".venv/.installed", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


def _ours(stderr: str) -> list[str]:
    """stderr without make's own 'make: *** ... Error 2' line (``make[1]: ***`` when the
    test itself runs under make, as in make test)."""
    return [line for line in stderr.splitlines()
            if not re.match(r"make(\[\d+\])?: \*\*\*", line)]


def test_serve_announces_only_the_port_it_serves_and_refuses_a_bad_one(tmp_path):
    """PORT=99999 once announced 99999 and served elsewhere; PORT= announced an empty port; a
    port in use ended in a traceback. Each is now one line and exit code 2."""
    import socket
    import subprocess
    import sys

    for port in ("99999", "", "0", "80a", "8000; echo hi"):
        r = _make("serve", f"PORT={port}")
        assert r.returncode == 2, (port, r.stdout, r.stderr)
        (line,) = _ours(r.stderr)
        assert "allowed a whole number 1 <= PORT <= 65535" in line and "serving" not in r.stdout
    (tmp_path / "index.html").write_text("<p>book</p>")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run([sys.executable, str(ROOT / "tools" / "serve.py"), str(tmp_path),
                            str(port)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and f"port {port} on 127.0.0.1 cannot be used" in r.stderr


def test_pdf_without_tex_live_says_so_in_one_line():
    import shutil

    if shutil.which("xelatex") and shutil.which("latexmk"):
        import pytest

        pytest.skip("TeX Live is installed here")
    r = _make("pdf")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    (line,) = _ours(r.stderr)
    assert "no xelatex/latexmk (TeX Live" in line
