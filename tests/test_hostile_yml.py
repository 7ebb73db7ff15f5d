"""A chapter's .yml or a -p value written to break the runner: every one is one line naming the
file (and the rule or estimate), exit code 2, nothing written, before any kernel starts, in
``run``, ``params`` and ``plan`` alike."""

import pytest

from attnbook.book.cli import main

BASE = "allowed:\n  seed: {min: 0, max: 1000000}\n  k: {min: 1, max: 5}\nprofiles:\n  ci: {k: 1}\n"
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [" + ", ".join([f"*{p}"] * 9) + "]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True))
ALIAS_BOMB = "[" + ", ".join(["&a [x, x, x, x, x, x, x, x, x]"] + [
    f"&{c} [" + ", ".join([f"*{p}"] * 9) + "]"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)]) + "]"


def _rule(check: str) -> str:
    return BASE + f"rules:\n  - check: {check!r}\n"


def _estimate(key: str, expr: str) -> str:
    return BASE + f"estimate:\n  {key}: {expr!r}\n"


CASES = {  # name: (the .yml's text or bytes, what the line must name besides the .yml)
    "float overflow": (_rule("10.0 ** 400 > k"), "rule 1"),
    "comb overflow": (_rule("comb(10 ** 1000, 2) > k"), "rule 1"),
    "division by zero": (_rule("1 / 0 < k"), "rule 1"),
    "text against number": (_rule("'a' < k"), "rule 1"),
    "list times float": (_rule("len([0] * 1.5) < k"), "rule 1"),
    "log of zero": (_rule("log2(0) < k"), "rule 1"),
    "max of nothing": (_rule("max([]) < k"), "rule 1"),
    "unary minuses": (_rule("-" * 20000 + "k < 9"), "rule 1"),
    "bytes by length": (_rule("len(b'x' * 10 ** 8) > k"), "rule 1"),
    "bytes by bits": (_rule("len(b'x' * 10 ** 10) > k"), "rule 1"),
    "missing threshold": (_rule("k < threshold('L-Lem1', 'nope')"), "rule 1"),
    "unknown claim": (_rule("k < threshold('X-none', 'n')"), "rule 1"),
    "not yaml": ("allowed: [unclosed\n", "cannot be read"),
    "a yaml list": ("- 1\n- 2\n", "allowed a YAML mapping"),
    "python tag": (BASE + "cost: !!python/object:os.system {}\n", "cannot be read"),
    "min is text": (BASE.replace("min: 1,", 'min: "a",'), "min = 'a'"),
    "not utf-8": (BASE.encode() + b"# \xff\xfe\n", "cannot be read"),
    "alias bomb": (BASE + BOMB, "expands to more than"),
    "deep nesting": (BASE + "x: " + "[" * 5000 + "]" * 5000 + "\n", "cannot be read"),
    "estimate overflow": (_estimate("memory_gb", "10.0 ** 400"), "estimate memory_gb"),
    "estimate text": (_estimate("work", "'a'"), "estimate work"),
    "estimate infinite": (_estimate("memory_gb", "1e308 * 10"), "estimate memory_gb"),
    "estimate complex": (_estimate("work", "1j"), "estimate work"),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["run", "params", "plan"])
def test_a_hostile_yml_is_one_line_naming_it(sandbox, capsys, monkeypatch, case, command):
    import attnbook.paths as paths

    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", sandbox / "build")
    text, named = CASES[case]
    yml = sandbox / "notebooks" / "a_ok.yml"
    yml.write_bytes(text if isinstance(text, bytes) else text.encode())
    argv = {"run": ["run", "a_ok", "--profile", "ci", "-p", "k", "2"],
            "params": ["params", "a_ok"], "plan": ["plan", "a_ok", "--profile", "ci"]}[command]
    code = main(argv)
    out = capsys.readouterr()
    assert code == 2, (out.out[-500:], out.err[-2000:])
    assert out.err.count("\n") == 1 and "Traceback" not in out.err, out.err[-2000:]
    assert "a_ok.yml" in out.err and named in out.err, out.err
    assert len(out.err) < 1500
    assert not (sandbox / "build").exists()


@pytest.mark.parametrize("value, named", [
    (ALIAS_BOMB, "has the wrong type"),
    ("[" * 100000 + "]" * 100000, "has the wrong type"),
    ("[" + "1, " * 60000 + "1]", "has the wrong type"),
])
def test_a_hostile_list_value_is_refused_at_once(sandbox, capsys, monkeypatch, value, named):
    """A YAML alias bomb or a deep list in a -p value: refused in one short line, within a
    second, as the wrong type, its value cut."""
    import time

    import attnbook.paths as paths
    from attnbook.book.profiles import parse_value

    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    t0 = time.perf_counter()
    with pytest.raises(Exception) as err:
        parse_value("ks", value, [1, 2])
    assert time.perf_counter() - t0 < 2
    assert named in str(err.value) and len(str(err.value)) < 1500
