"""The executable-book machinery: everything that turns the science modules into a book.

Nothing here knows any paper; the science modules never import this package (CONTRIBUTING.md
lists the modules). They form three wings, each importing only its own and those before it
(``tests/test_layout.py``): **run time**, what a notebook calls while it runs (``notebook``,
``store``, ``claims``, ``provenance``, ``checkpoints``, ``executors``, ``profiles``,
``display``, ``plotting``, ``history``, ``readers``, ``text``); **pages**, what the book shows
of what was stored (``report``, ``figures``, ``shown``, ``publish``, ``sites``,
``page_scripts``, ``mathjax_local``, ``pilot``); **commands**, what runs the notebooks
(``cli``, ``costs``, ``runner``, ``slurm``, ``migrate``). ``attnbook`` and ``Run`` load the
run-time wing only.
"""
