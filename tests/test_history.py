"""When a criterion was fixed, read from git, beside the runs it decides (attnbook.book.history)."""

import json
import os
import shutil
import subprocess

import pytest

from attnbook.book import history

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

ROW = "id,criterion,thresholds\nX-1,{words},a={a}\nX-2,other,b=1\n"
CODE = '@criterion("X-1")\ndef x1(v, *, a):\n    """{doc}"""\n    return v <= a\n'


def _commit(root, when, message, *, a=1, words="at most a", doc="Doc.", other="other"):
    (root / "data" / "claims").mkdir(parents=True, exist_ok=True)
    (root / "src" / "attnbook" / "criteria").mkdir(parents=True, exist_ok=True)
    (root / "data" / "claims" / "w.csv").write_text(
        ROW.format(words=words, a=a).replace("X-2,other", f"X-2,{other}"))
    (root / "src" / "attnbook" / "criteria" / "w.py").write_text(CODE.format(doc=doc))
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=root, check=True, env=env)


def _entry(root, profile, trained, status="not reproduced"):
    path = root / "data" / "claims" / "results" / profile / "X-1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": "X-1", "status": status, "run": {
        "time": "2026-12-01T00:00:00+00:00", "computed_by": [{"time": t} for t in trained]}}))


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    _commit(tmp_path, "2026-11-20T10:00:00+00:00", "first criterion")
    _commit(tmp_path, "2026-11-25T12:00:00+00:00", "amended", a=2)
    _commit(tmp_path, "2026-11-26T09:00:00+00:00", "docstring only", a=2, doc="Better words.")
    _commit(tmp_path, "2026-11-27T09:00:00+00:00", "another claim's row", a=2,
            doc="Better words.", other="changed")
    return tmp_path


def test_the_last_change_is_the_one_that_changed_the_criterion(repo):
    """Neither a docstring edit nor another claim's row counts; a threshold change does."""
    change = history.criterion_change("X-1", repo)
    assert change["date"] == "2026-11-25" and change["subject"] == "amended"
    assert change["what"] == "its words and numbers"
    assert "uncommitted" not in change


def test_the_words_of_the_row_count_as_well_as_its_numbers(repo):
    _commit(repo, "2026-11-28T09:00:00+00:00", "words", a=2, doc="Better words.",
            other="changed", words="no more than a")
    assert history.criterion_change("X-1", repo)["subject"] == "words"


def test_the_sentence_places_the_change_among_the_runs(repo):
    _entry(repo, "cpu", ["2026-11-23T17:00:00+00:00"])
    _entry(repo, "long", ["2026-11-25T20:00:00+00:00", "2026-11-26T02:00:00+00:00"],
           status="not run")
    text = history.fixed_sentence("X-1", repo)
    commit = history.criterion_change("X-1", repo)["commit"]
    assert text == (f"last changed on 2026-11-25 (commit {commit}: its words and numbers), "
                    "after the cpu run "
                    "(2026-11-23) and before the long run (pilot only, 2026-11-25 to "
                    "2026-11-26)")


def test_a_run_that_straddles_the_change_is_said_to(repo):
    _entry(repo, "cpu", ["2026-11-24T17:00:00+00:00", "2026-11-26T17:00:00+00:00"])
    assert history.fixed_sentence("X-1", repo).endswith(
        "during the cpu run (2026-11-24 to 2026-11-26)")


def test_no_run_yet_and_an_uncommitted_change_are_said(repo):
    assert history.fixed_sentence("X-1", repo).endswith("no committed run decides it yet")
    (repo / "data" / "claims" / "w.csv").write_text(ROW.format(words="at most a", a=3))
    assert "changed since in this working copy" in history.fixed_sentence("X-1", repo)


def test_a_copy_without_git_history_says_so(repo, tmp_path_factory):
    copy = tmp_path_factory.mktemp("tarball") / "book"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    assert history.criterion_change("X-1", copy) is None
    assert history.fixed_sentence("X-1", copy) == history.NO_HISTORY
    assert history.fixed_sentence("X-9", repo) == history.NO_HISTORY  # no such claim


def test_a_change_to_a_helper_the_criterion_reads_counts(repo):
    """The criterion's code includes the package's helpers it calls (a guard in the package's
    ``__init__``): changing one re-dates it, changing one it does not call does not."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    crit = repo / "src" / "attnbook" / "criteria"

    def commit(when, message, helper, other):
        (crit / "w.py").write_text('from . import guard\n' + CODE.format(doc="Better words.")
                                   .replace("return v <= a", "return guard(v) and v <= a"))
        (crit / "__init__.py").write_text(f"def guard(v):\n    return {helper}\n\n\n"
                                          f"def other(v):\n    return {other}\n")
        stamp = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env={**env, **stamp})
        subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True,
                       env={**env, **stamp})

    commit("2026-11-28T09:00:00+00:00", "a guard", "v == v", "1")
    commit("2026-11-29T09:00:00+00:00", "another helper", "v == v", "2")
    assert history.criterion_change("X-1", repo)["subject"] == "a guard"
    commit("2026-11-30T09:00:00+00:00", "the guard", "v > 0", "2")
    assert history.criterion_change("X-1", repo)["subject"] == "the guard"


def test_a_change_to_the_stability_rule_counts_for_claims_from_trained_models(repo):
    """For a claim decided from trained models or random draws (the ledger's evidence), the
    stability rule in book/claims.py is part of its criterion: a weaker rule re-dates it, a
    reworded docstring does not, and a claim decided from computation keeps its date."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    rule = repo / "src" / "attnbook" / "book" / "claims.py"
    rule.parent.mkdir(parents=True)

    def commit(when, message, seeds, doc="Doc."):
        (repo / "data" / "claims" / "w.csv").write_text(
            "id,criterion,thresholds,evidence\nX-1,at most a,a=2,trained models\n"
            "X-2,changed,b=1,computation\n")
        rule.write_text(f"MIN_SEEDS = {seeds}\n\n\ndef seed_rule(seeds):\n    \"\"\"{doc}\"\"\"\n"
                        "    return len(seeds) >= MIN_SEEDS\n")
        stamp = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env={**env, **stamp})
        subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True,
                       env={**env, **stamp})

    commit("2026-11-28T09:00:00+00:00", "the rule", 3)
    assert history.criterion_change("X-1", repo)["subject"] == "the rule"
    commit("2026-11-29T09:00:00+00:00", "its docstring", 3, doc="Other words.")
    assert history.criterion_change("X-1", repo)["subject"] == "the rule"
    commit("2026-11-30T09:00:00+00:00", "fewer seeds", 2, doc="Other words.")
    change = history.criterion_change("X-1", repo)
    assert (change["subject"], change["what"]) == ("fewer seeds", "the stability rule")
    assert "(commit " + change["commit"] + ": the stability rule)" in history.fixed_sentence(
        "X-1", repo)
    assert history.criterion_change("X-2", repo)["subject"] == "another claim's row"
