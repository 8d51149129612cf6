"""The prompt index: what ``wikitrace prompt`` needs, precomputed at compile time.

A one-off ``wikitrace prompt`` on a large corpus used to spend most of its time loading
the whole ``corpus.json`` and rebuilding the BM25 indexes (1-2 s at 10,000 runs). The
compiler now also writes ``index/prompt.bin`` (``write_prompt_index``, here), and the
prompt reads only the parts it touches (``index_reader.open_index``):

* BM25 postings of the run instructions and of the insight texts (sorted vocabulary,
  term start offsets, document numbers, term frequencies, document lengths), so a
  query is a handful of posting-list walks in plain Python (no numpy import);
* per run the insights it taught and its task's first trial, per insight its source
  count and side, which
  the budget's ranking reads (relevance.py);
* each insight rendered by the bundled ``agent/_insight.md.j2`` (with its ``Source:``
  line; the Insights Only text is the same bytes with one cut out), the display
  order, the task kinds, the insight ids and, per insight, the first insight that
  teaches the same lesson (lesson_key.py: the prompt shows a lesson once);
* the byte span of every run and insight entry inside ``corpus.json``, so the few runs
  a prompt lists (and insights it renders with overridden templates) are parsed alone.

File layout: one line of JSON (the header: stamps, counts, section table), zero padding
to a multiple of 8, then the sections, little-endian. Nothing in it depends on time or
on the machine, so the same inputs give the same bytes. When and why a reader ignores
the file (a stale corpus.json, other scoring, another template) is ``index_reader``'s
part.
"""

from __future__ import annotations

import hashlib
import json
import os
from array import array
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from .lesson_key import lesson_groups
from .corpusdata import InsightInfo, id_key, insight_from_entry, run_from_entry
from .index_reader import FORMAT, _LITTLE, PromptIndex, _version, open_index, scoring_stamp, template_stamp
from .similarity import tokenize
from ..corpus.corpus_json import region_pieces  # the one layout of corpus.json
from ..corpus.index_pair import INDEX_PATH


def _postings(texts: Sequence[str], prefix: dict[str, Any] | None = None) -> dict[str, Any]:
    """Posting lists by term (sorted), built with list appends and C-level extends:
    this runs on every compile, over every run and insight. ``prefix``: the postings
    of ``texts[:n]`` from the previous index (same texts, same order), merged instead
    of tokenizing those texts again."""
    lengths: list[int] = list(prefix["len"]) if prefix else []
    docs_by: dict[str, list[int]] = {}
    tfs_by: dict[str, list[int]] = {}
    for d in range(len(lengths), len(texts)):
        toks = tokenize(texts[d])
        lengths.append(len(toks))
        for t, c in Counter(toks).items():
            found = docs_by.get(t)
            if found is None:
                docs_by[t], tfs_by[t] = [d], [c]
            else:
                found.append(d)
                tfs_by[t].append(c)
    old_vocab = prefix["vocab"] if prefix else []
    old_at = {t: k for k, t in enumerate(old_vocab)}
    vocab = sorted(old_at.keys() | docs_by.keys())
    starts, docs, tfs = [0], [], []
    for t in vocab:
        k = old_at.get(t)
        if k is not None:  # earlier documents first: doc numbers stay ascending
            a, z = prefix["starts"][k], prefix["starts"][k + 1]
            docs.extend(prefix["docs"][a:z])
            tfs.extend(prefix["tf"][a:z])
        if t in docs_by:
            docs.extend(docs_by[t])
            tfs.extend(tfs_by[t])
        starts.append(len(docs))
    return {"vocab": "\n".join(vocab), "starts": starts, "docs": docs,
            "tf": tfs, "len": lengths}


def _previous_postings(old: "PromptIndex | None", prefix: str, n_new: int, ids: list[str],
                       carried: set[str] | frozenset) -> dict[str, Any] | None:
    """The previous index's postings for ``prefix`` when its documents are exactly the
    first ones of the new list (every one carried over unchanged, none dropped)."""
    if old is None:
        return None
    n_old = old.n_runs if prefix == "r_" else old.n_insights
    if not n_old or n_old > n_new or len(carried) != n_old or not all(i in carried for i in ids[:n_old]):
        return None
    vocab = old._text(prefix + "vocab")
    return {"vocab": vocab.split("\n") if vocab else [], "starts": old._ints(prefix + "starts"),
            "docs": old._ints(prefix + "docs"), "tf": old._ints(prefix + "tf"), "len": old._ints(prefix + "len")}


def _split_plain(wiki: str, plain: str) -> tuple[int, int] | None:
    """Byte offsets (a, b) with plain == wiki[:a] + wiki[b:] (UTF-8), or None."""
    w, p = wiki.encode("utf-8"), plain.encode("utf-8")
    if len(p) > len(w):
        return None
    lo, hi = 0, len(p)  # the longest common prefix, by bisection on slice equality
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if w[:mid] == p[:mid]:
            lo = mid
        else:
            hi = mid - 1
    a = lo
    tail = len(p) - a
    if w[len(w) - tail:] != p[a:]:
        return None
    return a, len(w) - tail


def _renders(ins_infos: list[InsightInfo], previous: Path | None,
             unchanged: set[str] | frozenset) -> tuple[list[str], list[str]]:
    """Each insight rendered with and without its source line, by the bundled template."""
    stored_wiki = stored_plain = None
    if previous is not None and unchanged:
        old = open_index(previous)
        if old is not None:
            wiki_t, plain_t = old.texts(True, None), old.texts(False, None)
            if wiki_t.stored and plain_t.stored:  # made with this same template and version
                stored_wiki, stored_plain, pos = wiki_t, plain_t, old.insight_pos
    if stored_wiki is None:
        return _render_pool(ins_infos, True), _render_pool(ins_infos, False)
    wiki: list[str | None] = [None] * len(ins_infos)
    plain: list[str | None] = [None] * len(ins_infos)
    fresh = []
    for k, info in enumerate(ins_infos):
        j = pos.get(info.id) if info.id in unchanged else None
        if j is None:
            fresh.append(k)
        else:
            wiki[k], plain[k] = stored_wiki.get(j), stored_plain.get(j)
    if fresh:
        picked = [ins_infos[k] for k in fresh]
        for k, w, p in zip(fresh, _render_pool(picked, True), _render_pool(picked, False)):
            wiki[k], plain[k] = w, p
    return wiki, plain  # type: ignore[return-value]


def _render_pool(insights: Sequence[InsightInfo], show_source: bool) -> list[str]:
    from .insight_text import render_insights

    return render_insights(None, insights, show_source)


def _taught_sections(run_infos: list, ins_infos: list[InsightInfo]) -> list[tuple[str, str, Any]]:
    """What the budget's ranking reads (relevance.taught_tables), as flat sections."""
    from .relevance import insight_cues, taught_tables

    taught, n_sources, sides, task_of = taught_tables(run_infos, ins_infos)
    starts = [0]
    for row in taught:
        starts.append(starts[-1] + len(row))
    return [("taught_starts", "I", starts), ("taught", "I", [j for row in taught for j in row]),
            ("ins_nsrc", "I", n_sources), ("ins_side", "I", sides), ("run_task", "I", task_of),
            ("ins_cues", "s", "\n".join(insight_cues(ins_infos)))]


def write_prompt_index(root: Path, runs: list[dict], insights: list[dict], **kw) -> list[str]:
    """Write ``index/prompt.bin`` into ``root`` (see ``prompt_index_bytes``). Returns the relative paths written."""
    path = Path(root) / INDEX_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(prompt_index_bytes(runs, insights, **kw))
    os.chmod(tmp, 0o444)  # a corpus file: read-only like every other
    os.replace(tmp, path)
    return [INDEX_PATH]


def prompt_index_bytes(runs: list[dict], insights: list[dict],
                       region: tuple[bytes | list, list[int], list[int]] | None = None,
                       previous: Path | None = None, unchanged: set[str] | frozenset = frozenset(),
                       unchanged_runs: set[str] | frozenset = frozenset()) -> bytes:
    """The bytes of ``index/prompt.bin`` for a corpus whose corpus.json will hold ``runs`` and
    ``insights`` (entries exactly as in corpus.json, any order).

    Call it before or after corpus.json is written; the index does not read it.
    ``region``: ``corpus_region`` or ``region_pieces`` of the sorted entries, when the
    caller already made it for corpus.json. ``previous``: the published corpus, whose
    index's renders of the ``unchanged`` insight ids (entries identical to the ones
    given) are taken instead of rendered again: adding one run to 10,000 need not
    render 20,000 insights twice. When every run (steps in ``unchanged_runs``) or
    every insight of the previous index is unchanged and first in id order, its BM25
    postings are extended rather than rebuilt. The bytes are those of a fresh index.
    """
    from ..corpus.layout import id_number

    runs = sorted(runs, key=lambda r: id_number(r["step"]))
    insights = sorted(insights, key=lambda i: id_number(i["id"]))
    region, run_spans, ins_spans = region if region is not None else region_pieces(runs, insights)
    pieces = region if isinstance(region, list) else [region]  # given whole or in pieces
    source = hashlib.sha256()
    for piece in pieces:
        source.update(piece)
    run_infos = [run_from_entry(r) for r in runs]
    ins_infos = [insight_from_entry(i) for i in insights]
    kinds = sorted({r.kind for r in run_infos} | {i.kind for i in ins_infos})
    kind_no = {k: n for n, k in enumerate(kinds)}

    wiki, plain = _renders(ins_infos, previous, unchanged)
    cuts: list[int] = []
    for w, p in zip(wiki, plain):
        cut = _split_plain(w, p)
        if cut is None:
            cuts = []
            break
        cuts += cut
    text_off, blob = [0], bytearray()
    for t in wiki:
        blob += t.encode("utf-8")
        text_off.append(len(blob))
    sections: list[tuple[str, str, Any]] = [
        ("run_spans", "I", run_spans), ("ins_spans", "I", ins_spans),
        ("run_kind", "I", [kind_no[r.kind] for r in run_infos]),
        ("ins_kind", "I", [kind_no[i.kind] for i in ins_infos]),
        ("ins_ids", "s", "\n".join(i.id for i in ins_infos)),
        ("display", "I", sorted(range(len(ins_infos)), key=lambda j: (ins_infos[j].kind, id_key(ins_infos[j].id)))),
        ("text", "s", bytes(blob)), ("text_off", "I", text_off),
        ("lesson", "I", lesson_groups(ins_infos)),
        *_taught_sections(run_infos, ins_infos),
    ]
    if cuts:
        sections.append(("cut", "I", cuts))
    else:  # the two variants differ by more than one cut: store both
        poff, pblob = [0], bytearray()
        for t in plain:
            pblob += t.encode("utf-8")
            poff.append(len(pblob))
        sections += [("plain_text", "s", bytes(pblob)), ("plain_off", "I", poff)]
    old = open_index(previous) if previous is not None and (unchanged or unchanged_runs) else None
    for prefix, texts, ids, carried in (
            ("r_", [r.instruction or r.title for r in run_infos], [r.step for r in run_infos], unchanged_runs),
            ("i_", [f"{i.title}\n{i.guideline}\n{i.applicability}" for i in ins_infos], [i.id for i in ins_infos],
             unchanged)):
        p = _postings(texts, _previous_postings(old, prefix, len(texts), ids, carried))
        tf_code = "H" if max(p["tf"], default=0) < 1 << 16 else "I"
        sections += [(prefix + "vocab", "s", p["vocab"]), (prefix + "starts", "I", p["starts"]),
                     (prefix + "docs", "I", p["docs"]), (prefix + "tf", tf_code, p["tf"]),
                     (prefix + "len", "I", p["len"])]

    body, table = bytearray(), {}
    for name, code, values in sections:
        if code == "s":
            data = values.encode("utf-8") if isinstance(values, str) else values
        else:
            arr = array(code, values)
            if not _LITTLE:
                arr.byteswap()
            data = arr.tobytes()
        table[name] = [len(body), len(data), code]
        body += data
        body += b"\0" * (-len(body) % 8)
    header = {
        "format": FORMAT,
        "source": {"bytes": sum(len(piece) for piece in pieces), "sha256": source.hexdigest()},
        "scoring": scoring_stamp(),
        "render": {"template": template_stamp(None), "wikitrace": _version(),
                   "chars": [sum(len(t) + 1 for t in plain), sum(len(t) + 1 for t in wiki)]},
        "counts": {"runs": len(runs), "insights": len(insights)},
        "first": {"step": run_infos[0].step if run_infos else None,
                  "insight": ins_infos[0].id if ins_infos else None},
        "kinds": kinds,
        "sections": table,
    }
    line = json.dumps(header, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
    line += b"\0" * (-len(line) % 8)
    return line + bytes(body)


__all__ = ["INDEX_PATH", "prompt_index_bytes", "write_prompt_index"]
