"""Finishing an interrupted update of agent runs from what the corpus holds.

Every command that writes the runs of a corpus (compile, add, forget, cite record)
ends the same way. Its pages go in first, each claimed in the journal before it is
created; nothing published names them yet. Then it saves a commit record,
``.wikitrace/runs.pending``: corpus.json as it is about to be, the manifest's data,
the manifest entries of every page it wrote or kept, and the few small pages given
whole (insight pages whose usage counts change). corpus.json's text goes beside the
record, as it will be published (``runs.pending-corpus.json``, written before the record):
escaping megabytes of JSON into a JSON string cost more than the rest of an add. ``complete`` then writes those
pages, the indexes and the prompt index (rendered from that corpus.json), the search
files (from the pages on disk), corpus.json, removes what is no longer owned, saves
the manifest and deletes the record.

So a command killed at any point is finished by the next command of the corpus,
whatever it is, with no input file: ``recover`` completes a saved record (the same
``complete``), or, when the kill came before it, removes the pages the journal
claimed (no index names them; the same command run again writes them anew).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

PENDING = "runs.pending"
PENDING_CORPUS = "runs.pending-corpus.json"  # corpus.json's text of the saved record, as it will be published
IndexBuilder = Callable[[list, list, Any], bytes]  # (runs, insights, corpus.json region) -> prompt index bytes


@dataclass
class Pending:
    command: str  # the command that saved it, for `wikitrace check`
    data: dict  # the manifest's data once the update is done
    output: dict  # rel -> manifest entry of every file written or kept before the record
    pages: dict = field(default_factory=dict)  # rel -> text: small pages written by ``complete``
    corpus_json: str | bytes | list | None = None  # corpus.json once done (or its bytes in pieces); None: the indexes do not change
    templates: str | None = None  # the templates folder the indexes are rendered with
    # on disk only: the bytes of corpus_json, saved in PENDING_CORPUS (None: given inline, as
    # records of earlier versions hold it)
    corpus_json_size: int | None = None
    # on disk only: the manifest's paths the update no longer has; ``output`` then holds only the
    # entries that differ from the manifest's (None: ``output`` is whole, as earlier records hold it)
    removed: list[str] | None = None


def path(root: Path) -> Path:
    from .publish import STATE

    return Path(root) / STATE / PENDING


def corpus_path(root: Path) -> Path:
    from .publish import STATE

    return Path(root) / STATE / PENDING_CORPUS


def load(root: Path) -> Pending | None:
    """The saved record, or None. A record that cannot be read is a build killed while
    saving it (the rename never happened, so this cannot be) or a damaged state folder:
    treated as no record, and the journal's claims are rolled back instead. So is a record
    whose corpus.json text is not beside it with the size it gives (it is written first,
    and removed only after the record)."""
    try:
        raw = json.loads(path(root).read_bytes())
        record = Pending(**raw)
        if record.corpus_json is None and record.corpus_json_size is not None:
            data = corpus_path(root).read_bytes()
            if len(data) != record.corpus_json_size:
                return None
            record.corpus_json, record.corpus_json_size = data.decode("utf-8"), None
        return record
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError):
        return None


def save(pub, pending: Pending) -> None:
    """The commit point: from here on the update is finished by ``complete``."""
    from ..fsio import write_atomic

    pending.output = dict(pub.output)
    fields = dict(vars(pending))  # the fields as they are: asdict would deep-copy every entry
    # Only what changed against the manifest, which stays on disk until ``complete`` replaces
    # it: an add keeps tens of thousands of entries, and saving them all again cost more than
    # the rest of its record. An entry a check refreshed in memory (a page's new inode after
    # git checkout) is left out with the others: recovered, it is checked again by its hash.
    before = pub.manifest.files
    fields["output"] = {rel: entry for rel, entry in pending.output.items() if before.get(rel) != entry}
    fields["removed"] = [rel for rel in before if rel not in pending.output]
    fields.pop(_DIGEST, None)
    fields.pop(_DATA_TEXT, None)
    # the data as the manifest writes it (``complete`` saves it there too): dumped once for both
    data_text = json.dumps(pending.data, separators=(",", ":"))
    fields["data"] = _Dumped(data_text)
    if pending.corpus_json is not None:
        # corpus.json's text first, as bytes beside the record (not escaped into it); the
        # record, renamed into place after it, is what makes the update complete-able
        import hashlib

        pieces = _pieces(pending.corpus_json)
        digest = hashlib.sha256()
        write_atomic(corpus_path(pub.root), _hashed(pieces, digest), mode=0o644, binary=True)
        fields["corpus_json"], fields["corpus_json_size"] = None, sum(len(piece) for piece in pieces)
        setattr(pending, _DIGEST, digest.hexdigest())  # ``complete`` need not hash tens of megabytes again
        del pieces
    # Written field by field (the same bytes as one dump), so no string of everything is held.
    write_atomic(path(pub.root), _record_chunks(fields), mode=0o644)
    setattr(pending, _DATA_TEXT, data_text)


_DIGEST = "_corpus_json_sha256"  # set on a record by ``save``, never saved with it
_DATA_TEXT = "_data_text"  # likewise: its data as ``save`` dumped it


class _Dumped(str):
    """A field's JSON text, made already: written as it is."""


def _hashed(pieces: list, digest):
    """The pieces, each hashed into ``digest`` as it goes by to be written."""
    for piece in pieces:
        digest.update(piece)
        yield piece


def _pieces(text: str | bytes | list) -> list:
    """corpus.json's bytes as pieces to write one after another."""
    return text if isinstance(text, list) else [text if isinstance(text, bytes) else text.encode("utf-8")]


def _put_corpus_json(pub, pieces: list, hexdigest: str | None = None) -> None:
    """corpus.json into place: the copy ``save`` wrote beside the record holds these very bytes
    (``load`` read them from there), so it is given the published name too rather than written
    again; a record without that copy (an earlier version's) writes the bytes. ``hexdigest``:
    their sha256, when ``save`` hashed them on the way to that copy."""
    if hexdigest is None:
        import hashlib

        digest = hashlib.sha256()
        for piece in pieces:
            digest.update(piece)
        hexdigest = digest.hexdigest()
    saved = corpus_path(pub.root)
    try:
        same = saved.stat().st_size == sum(len(piece) for piece in pieces)
    except OSError:
        same = False
    if same:
        pub.claim(["corpus.json"])
        try:
            pub.output["corpus.json"] = pub.writer.put_link("corpus.json", str(saved), hexdigest)
            return
        except OSError:  # no second name on this file system: written after all
            pass
    pub.write_stream("corpus.json", pieces)


_SLICE = 1 << 20  # characters of a field written at a time


def _record_chunks(fields: dict):
    """``json.dumps(fields, separators=(",", ":"), ensure_ascii=False) + "\\n"``, a field at a time (a
    field given as ``_Dumped`` text is that text: the same value when read back)."""
    for k, (name, value) in enumerate(fields.items()):
        yield ("{" if k == 0 else ",") + json.dumps(name) + ":"
        text = value if isinstance(value, _Dumped) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        # in slices, so the file's encoder never holds a UTF-8 copy of the whole text
        for at in range(0, len(text), _SLICE):
            yield text[at:at + _SLICE]
    yield "}\n" if fields else "{}\n"


def _published_run_indexes(pub) -> dict[str, str]:
    """raw/_index.md and compilation/_index.md as the corpus holds them, each only when its
    bytes are the ones the manifest notes (a page edited by hand is written anew)."""
    import hashlib

    pages = {}
    for rel in ("raw/_index.md", "compilation/_index.md"):
        entry = pub.manifest.files.get(rel)
        if entry is None or pub.verify(rel) != "ok":
            continue
        try:
            data = (pub.root / rel).read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == entry[0]:
            pages[rel] = data.decode("utf-8", errors="replace")
    return pages


def complete(pub, pending: Pending, prompt_index: bytes | IndexBuilder, data: dict | None = None,
             kept_runs: int = 0, tallies: dict | None = None) -> list[str]:
    """Write what the record names, then finish the publisher (removals, manifest) and
    drop the record. ``prompt_index``: the bytes of the prompt index when the caller has
    them already, else the function that makes them from corpus.json's runs, insights
    and byte region (``agent.index.prompt_index_bytes``: the agent layer owns that
    format, so the caller hands it down). ``data``: the corpus.json the caller dumped
    into the record, as the dict it dumped (spares parsing megabytes again); None: read
    from the record. ``kept_runs``: the first runs of ``data`` are the published corpus's,
    all of them, with their entries unchanged (an add of new runs): the run indexes' rows
    of those are taken from the published pages. ``tallies``: the gather's pattern counts by task
    type (pattern_tally.PatternTally.counted), read by the insight index. Returns the removed paths."""
    from .search_files import update_search_files

    root = pub.root
    for rel, entry in _whole_output(pub, pending).items():
        pub.output.setdefault(rel, entry)
    for rel, text in sorted(pending.pages.items()):
        pub.write(rel, text.encode("utf-8"))
    text = pending.corpus_json
    if text is not None:
        from . import documents
        from .corpus_json import dump_bytes
        from .update import PROMPT_INDEX

        data = json.loads(text if isinstance(text, (str, bytes)) else b"".join(text)) if data is None else data
        runs, insights = data["runs"], data["insights"]
        templates = Path(pending.templates) if pending.templates and Path(pending.templates).is_dir() else None
        mount = str(data.get("mount_path") or "/work/corpus")
        dialogue = (root / "dialogue" / "_index.md").is_file()  # dialogue memory beside the runs: the root page links it
        published = _published_run_indexes(pub) if kept_runs else None
        for rel, page in documents.render_indexes(runs, insights, mount, templates, dialogue, published,
                                                  kept_runs, tallies).items():
            pub.write(rel, page.encode("utf-8"))
        if callable(prompt_index):
            prompt_index = prompt_index(runs, insights, dump_bytes(data)[1])
        pub.write(PROMPT_INDEX, prompt_index)
    if pending.pages or text is not None:  # grep's shards: only those whose files changed are written
        update_search_files(pub, root)
    if text is not None:
        from .index_pair import note_pair

        _put_corpus_json(pub, _pieces(text), getattr(pending, _DIGEST, None))
        note_pair(root)  # both in place: a prompt that finds them so need not hash corpus.json
    removed = pub.finish(pending.data, getattr(pending, _DATA_TEXT, None))
    if text is not None:  # the next add loads corpus.json's entries from here (kept_corpus.py)
        from . import kept_corpus

        published = pub.manifest.files.get("corpus.json")
        kept_corpus.save(root, data, published[0] if published else None)
    from ..fsio import before_replace

    before_replace()
    _drop(root)
    return removed


def _whole_output(pub, pending: Pending) -> dict:
    """Every file the update wrote or kept: a record read back holds only the changes to the
    manifest (``removed``), which is the one it was saved against, or the one ``complete``
    saved already when the command was killed just before dropping the record (its
    entries then are the update's own, redone below as before)."""
    if pending.removed is None:
        return pending.output
    gone = set(pending.removed)
    whole = {rel: entry for rel, entry in pub.manifest.files.items() if entry is not None and rel not in gone}
    whole.update(pending.output)
    return whole


def _drop(root: Path) -> None:
    """The record, then its corpus.json text (a record never outlives its text)."""
    for done in (path(root), corpus_path(root)):
        try:
            os.unlink(done)
        except FileNotFoundError:
            pass


def recover(pub, prompt_index: IndexBuilder) -> str | None:
    """Finish what an interrupted command left (the caller holds the lock and made
    ``pub`` for kind ``runs``; ``prompt_index`` makes the prompt index, as for
    ``complete``). Returns a line saying what was done, or None."""
    pending = load(pub.root)
    if pending is not None:
        complete(pub, pending, prompt_index)
        _fresh(pub)
        return f"finished the interrupted `wikitrace {pending.command}` of this corpus"
    if corpus_path(pub.root).exists():  # saved by a command killed before its record, or unreadable
        _drop(pub.root)
    claimed = _claimed_since_manifest(pub)
    if claimed is None:
        return None
    pub.abandon(claimed)
    for rel in claimed:
        pub.manifest.files.pop(rel, None)
    pub.claimed_dirs.clear()
    os.ftruncate(pub._journal, 0)
    return (f"removed {len(claimed)} file(s) of an interrupted update that nothing listed yet"
            if claimed else None)


def _fresh(pub) -> None:
    """``pub`` as a new publisher would be after ``finish``: the manifest just saved, no output."""
    from .manifest import FileManifest

    pub.manifest = FileManifest.load(pub.manifest_path) or FileManifest()
    pub.output = {}
    pub.repaired = []  # shards the killed command left half-updated were rewritten: not damage
    pub.claimed_dirs = set()
    pub._journal = os.open(pub._journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)


def _claimed_since_manifest(pub) -> list[str] | None:
    """Paths (and folders) the journal claimed that the saved manifest does not hold:
    the new files of an update killed before its commit record. None: no claims."""
    from .manifest import FileManifest

    claims = pub._read_journal()
    if not claims:
        return None
    saved = FileManifest.load(pub.manifest_path)
    known = saved.files if saved is not None else {}
    return [rel for rel in dict.fromkeys(claims) if rel not in known]


def _claims(root: Path) -> bool:
    """Whether files claimed by an update that did not finish are on disk (a build that
    failed cleanly removed its own: its journal alone is nothing to finish)."""
    from .manifest import FileManifest
    from .publish import STATE

    try:
        text = (Path(root) / STATE / "runs.journal").read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return False
    claims = [rel for line in text.splitlines() for rel in line.split("\t") if rel and not rel.endswith("/")]
    if not claims:
        return False
    saved = FileManifest.load(Path(root) / STATE / "runs.json")
    known = saved.files if saved is not None else {}
    return any(rel not in known and os.path.lexists(Path(root) / rel) for rel in claims)


def running(root: Path) -> bool:
    """Whether a wikitrace command holds the corpus's build lock right now."""
    import fcntl

    from .publish import STATE

    try:
        fh = open(Path(root) / STATE / "lock", "rb")
    except OSError:
        return False
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
        return False


def describe(root: Path) -> list[str]:
    """`wikitrace check`'s lines about an unfinished update (none when there is none)."""
    root = Path(root)
    pending = load(root)
    if (pending is not None or _claims(root)) and running(root):
        return [f"{root}: another wikitrace command is writing this corpus now; check again when it is done"]
    if pending is not None:
        return [f"{root}: `wikitrace {pending.command}` was interrupted after its pages were written; the next "
                f"wikitrace compile, add, forget or cite record of this corpus finishes it first"]
    if _claims(root):
        return [f"{root}: an update of its runs was interrupted (or is running) before anything listed its new pages; "
                f"run the same command again to finish it (any other wikitrace compile, add, forget or cite record "
                f"removes those pages first)"]
    return []
