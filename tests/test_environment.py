"""requirements-lock.txt and environment.yml describe the same environment."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _pins(lines):
    return {re.split("==", x)[0].lower().replace("_", "-"): x.split("==")[1]
            for x in lines if "==" in x}


def test_lock_and_environment_agree():
    lock = _pins(x.strip() for x in (ROOT / "requirements-lock.txt").read_text().splitlines()
                 if not x.startswith("#"))
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert _pins(pip) == lock
    assert "python=3.11" in env["dependencies"]


def test_lock_pins_every_direct_dependency_and_the_cpu_torch():
    lock = _pins((ROOT / "requirements-lock.txt").read_text().splitlines())
    direct = [re.split(r"[<>=\[]", x.strip())[0].lower()
              for x in (ROOT / "requirements.in").read_text().splitlines()
              if x.strip() and not x.startswith("#")]
    missing = [d for d in direct if d.replace("_", "-") not in lock]
    assert not missing, f"direct dependencies without a pin: {missing}"
    assert lock["torch"] == "2.13.0"
    assert lock["jupyter-book"].startswith("1.")
