"""The executable-book machinery: everything that turns the science modules into a book.

Nothing here knows any paper. The science modules (``attnbook.<object>``) never import this
package; a notebook is where the two meet.

* :mod:`~attnbook.book.notebook`: what a chapter calls (``start``, ``Run``, ``Sweep``);
* :mod:`~attnbook.book.pilot`: a chapter's pilot section (its units at each profile, the
  profiles that have run on its axes, the standard figure, the stop after it);
* :mod:`~attnbook.book.profiles`: the profiles and each notebook's parameters and ranges;
* :mod:`~attnbook.book.runner` and :mod:`~attnbook.book.cli`: ``python -m attnbook run``,
  papermill execution and the manifest; :mod:`~attnbook.book.plan`: ``python -m attnbook
  plan``, what a profile costs per chapter;
* :mod:`~attnbook.book.store`: the result cache; :mod:`~attnbook.book.executors`: where the
  configurations of a sweep are computed;
* :mod:`~attnbook.book.claims` and :mod:`~attnbook.book.report`: the claims ledger and the
  generated book pages;
* :mod:`~attnbook.book.provenance`, :mod:`~attnbook.book.plotting`,
  :mod:`~attnbook.book.mathjax_local`: provenance, figure files, the book's own MathJax.

The modules form three wings, each importing only its own and those before it (``tests/
test_layout.py`` keeps it so): **run time**, what a notebook calls while it runs
(``notebook``, ``store``, ``claims``, ``provenance``, ``checkpoints``, ``executors``, and the
``profiles`` and ``display`` it reads its parameters and shows its tables with, with
``plotting``, ``history``, ``readers``, ``text``); **pages**, what the book shows of what was
stored (``report``, ``figures``, ``shown``, ``publish``, ``sites``, ``page_scripts``,
``mathjax_local``, and ``pilot``, which draws the profiles that have run beside a pilot);
**commands**, what runs the notebooks (``cli``, ``plan``, ``runner``, ``slurm``, ``migrate``).
``attnbook`` and ``Run`` load the run-time wing only.

Shared with the science modules: :mod:`attnbook.errors`, :mod:`attnbook.progress`,
:mod:`attnbook.device` and :mod:`attnbook.paths`.
"""
