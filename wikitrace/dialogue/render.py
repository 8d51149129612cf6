"""The files of one compiled dialogue sample, from its memory (``build.compile_sample``): source
sessions, snapshots, trajectories, wiki pages, folder indexes, the sample's index and its data
files. Pure functions of the memory, so a rebuild writes the same bytes."""

from __future__ import annotations

import json
import re

from .. import __version__ as WIKITRACE_VERSION
from ..fsio import dump_frontmatter
from ..templates import render
from . import FORMAT
from .embed import CACHE_BIN, CACHE_JSON, HASHED
from .index import VECTOR_FILE, build_index
from .wiki import SECTIONS


def anchor(mid: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", mid.lower()).strip("-")


def session_file(session: str) -> str:
    s = str(session)
    return f"session-{int(s):02d}" if s.isdecimal() else "session-" + re.sub(r"[^a-z0-9]+", "-", s.lower())


def _fm(d: dict) -> str:
    return dump_frontmatter(d)


class _Memory:
    """A sample's memory with its records by id, which every kind of page looks up."""

    def __init__(self, mem: dict):
        self.mem = mem
        self.sample = mem["sample"]
        self.msgs = {m["id"]: m for m in mem["messages"]}
        self.claims = {c["id"]: c for s in mem["snapshots"] for c in s["claims"]}
        self.snaps = {s["id"]: s for s in mem["snapshots"]}
        self.trajs = {t["id"]: t for t in mem["trajectories"]}

    def refs(self, ids):
        return [{"id": i, "path": self.msgs[i]["path"]} for i in ids]

    def with_refs(self, c):
        return {**c, "refs": self.refs(c["source_message_ids"])}


def render_sample(mem: dict, templates=None, embedder=None) -> dict[str, str | bytes]:
    """Relative path -> file text (bytes for ``embeddings.f32``) for one sample."""
    m = _Memory(mem)
    files: dict[str, str | bytes] = {}
    files.update(_source_files(m, templates))
    files.update(_snapshot_files(m, templates))
    files.update(_trajectory_files(m, templates))
    for p in mem["pages"]:
        files[p["path"]] = _wiki_page(m, p, templates)
    files.update(_folder_indexes(m, templates))
    files.update(_sample_files(m, templates, embedder))
    return files


def _source_files(m: _Memory, templates) -> dict[str, str]:
    """One page per session, its messages verbatim with an anchor each (claims link to them)."""
    files = {}
    for sess in m.mem["sessions"]:
        ms = [dict(x, anchor=anchor(x["id"])) for x in m.mem["messages"] if x["session"] == sess["id"]]
        fm = {"type": "source-session", "sample": m.sample, "session": sess["id"], "timestamp": sess.get("timestamp"),
              "date": sess.get("date"), "message_ids": [x["id"] for x in ms]}
        files[sess["path"]] = render("dialogue/source_session.md.j2", templates, frontmatter=_fm(fm),
                                     sample=m.sample, session=sess, messages=ms)
    return files


def _snapshot_files(m: _Memory, templates) -> dict[str, str]:
    """One page per snapshot: its claims with their sources, and the messages it was read from."""
    files = {}
    for s in m.mem["snapshots"]:
        fm = {"type": "snapshot", "id": s["id"], "sample": m.sample, "trajectory": s["trajectory"],
              "session": s["session"], "date": s.get("date"), "timestamp": s.get("timestamp"),
              "source_message_ids": s["message_ids"], "speakers": s["speakers"], "keywords": s["keywords"],
              "claims": [c["id"] for c in s["claims"]], "extractor": s["extractor"],
              "trajectory_match": s["match"]}
        files[f"snapshots/{s['id']}.md"] = render(
            "dialogue/snapshot.md.j2", templates, frontmatter=_fm(fm), s=s,
            claims=[m.with_refs(c) for c in s["claims"]],
            sources=[{"id": i, "path": m.msgs[i]["path"], "speaker": m.msgs[i]["speaker"], "text": m.msgs[i]["text"]}
                     for i in s["message_ids"]])
    return files


def _trajectory_files(m: _Memory, templates) -> dict[str, str]:
    """One page per trajectory: active claims, the uncertain ones, dates and its revisions."""
    files = {}
    for t in m.mem["trajectories"]:
        cl = [m.claims[c] for c in t["claims"]]
        active = [m.with_refs(c) for c in cl if c["status"] == "active"][:12]
        uncertain = [m.with_refs(c) for c in cl if c["status"] != "active"]
        temporal = [a for sid in t["snapshots"] for a in m.snaps[sid]["temporal"]]
        fm = {"type": "trajectory", "id": t["id"], "sample": m.sample, "title": t["title"],
              "snapshots": t["snapshots"], "claims": t["claims"], "status_counts": t["status_counts"],
              "entities": t["entities"], "families": t["families"], "participants": t["participants"],
              "date_first": t["date_first"], "date_last": t["date_last"], "pages": t["pages"]}
        files[f"trajectories/{t['id']}.md"] = render(
            "dialogue/trajectory.md.j2", templates, frontmatter=_fm(fm), t=t, active=active,
            uncertain=uncertain, temporal=temporal, revisions=[o for o in t["ops"] if o["op"] != "ADD"],
            snapshots=[m.snaps[x] for x in t["snapshots"]])
    return files


def _page_claims(m: _Memory, p: dict, linked: list[dict]) -> list[dict]:
    """The claims a wiki page states: its trajectories' claims, and on an entity's page only those
    about that entity (a participant's page does not state what the other participant did)."""
    cl = [m.claims[c] for t in linked for c in t["claims"]]
    if p["type"] == "entity":
        ent = p["entities"][0]
        cl = [c for c in cl if c["subject"] == ent or re.search(r"\b" + re.escape(ent) + r"\b", c["text"])
              and not (c["subject"] and c["subject"] != ent and ent in m.mem["speakers"])]
    return cl


def _page_items(m: _Memory, linked: list[dict]) -> list[dict]:
    """Exact terms (names, titles, counts) of the page's snapshots, once each, with the messages
    that say them: what a "which ..." or "how many ..." question needs."""
    items, seen = [], set()
    for t in linked:
        for sid in t["snapshots"]:
            s = m.snaps[sid]
            for x in s["exact_terms"]:
                if x.lower() in seen:
                    continue
                src = [i for i in s["message_ids"] if x.lower() in m.msgs[i]["text"].lower()]
                if src:
                    seen.add(x.lower())
                    items.append({"term": x, "refs": m.refs(src)})
    return items


def _page_overview(p: dict, linked: list[dict]) -> str:
    """One sentence saying what kind of page this is, how many trajectories it links, and when."""
    dates = sorted(x for t in linked for x in (t["date_first"], t["date_last"]) if x)
    span = f" between {dates[0]} and {dates[-1]}" if dates else ""
    what = {"index": "Directory of every trajectory in this dialogue",
            "entity": f"Entity page for {', '.join(p['entities'])}" + (f", facet {p['facet']}" if p["facet"] else ""),
            "inventory": f"Inventory of {p['facet']} items and counts",
            "topic": "Rescue page for trajectories no other page covers" if p["rescue"]
            else f"Topic page for '{', '.join(p['keywords'])}'"}[p["type"]]
    return f"{what}: {len(linked)} linked trajectories{span}."


def _wiki_page(m: _Memory, p: dict, templates) -> str:
    """A wiki page (deterministic compiler): overview, key facts, items, linked trajectories,
    conflicts; the index page lists trajectories only."""
    linked = [m.trajs[x] for x in p["trajectories"]]
    cl = _page_claims(m, p, linked)
    facts = [m.with_refs(c) for c in cl if c["status"] == "active"]
    # the ten facts shown: first those naming what the title names (a "John: trip" page shows its
    # trips), then those with the most exact terms; listed in order
    named = [k.lower() for k in p["keywords"] if p["type"] != "topic" or p["shard"]]
    facts.sort(key=lambda c: (not any(k in c["text"].lower() for k in named),
                              -len([x for x in m.snaps[c["snapshot"]]["exact_terms"] if x in c["text"]]), c["id"]))
    facts = sorted(facts[:10], key=lambda c: c["id"])
    items = _page_items(m, linked)
    fm = {"type": "wiki-" + p["type"], "slug": p["slug"], "sample": m.sample, "title": p["title"],
          "page_type": p["type"], "trajectories": p["trajectories"], "entities": p["entities"] or None,
          "facet": p["facet"], "keywords": p["keywords"] or None, "rescue": p["rescue"] or None,
          "sections": list(SECTIONS), "compiler": "offline"}
    conflicts = [m.with_refs(c) for c in cl if c["status"] != "active"][:20]
    return render("dialogue/wiki_page.md.j2", templates, frontmatter=_fm(fm), p=p,
                  overview=_page_overview(p, linked), facts=facts if p["type"] != "index" else facts[:0],
                  items=items[:25] if p["type"] != "index" else [],
                  trajectories=linked, conflicts=conflicts if p["type"] != "index" else [])


def _folder_indexes(m: _Memory, templates) -> dict[str, str]:
    """``_index.md`` of each folder, listing its pages."""
    mem, sample = m.mem, m.sample
    files = {}

    def index(folder, title, intro, entries):
        fm = {"type": "index", "sample": sample, "folder": folder, "entries": len(entries)}
        files[f"{folder}/_index.md"] = render("dialogue/folder_index.md.j2", templates, frontmatter=_fm(fm),
                                              title=title, intro=intro, entries=entries)

    index("sources", f"{sample}: source sessions", "Verbatim dialogue sessions.",
          [{"label": f"session {s['id']}", "href": s["path"].split("/", 1)[1],
            "note": f"{s.get('timestamp') or ''} ({s['count']} messages)"} for s in mem["sessions"]])
    index("snapshots", f"{sample}: snapshots", "Exchange-level episodic snapshots in dialogue order.",
          [{"label": s["id"], "href": f"{s['id']}.md", "note": f"{s.get('date') or ''} {s['summary']}"}
           for s in mem["snapshots"]])
    index("trajectories", f"{sample}: trajectories", "Memory trajectories (append-only claim histories).",
          [{"label": t["id"], "href": f"{t['id']}.md", "note": t["title"]} for t in mem["trajectories"]])
    index("wiki", f"{sample}: Memory Wiki", "Wiki pages by type; each links its trajectories.",
          [{"label": p["title"], "href": f"{p['slug']}.md", "note": f"({p['type']}, {len(p['trajectories'])} trajectories)"}
           for p in mem["pages"]])
    return files


def _sample_files(m: _Memory, templates, embedder) -> dict[str, str | bytes]:
    """The sample's own index page and the data ``wikitrace query`` loads: memory.json, the
    retrieval index and its vectors, and the embedding cache when an endpoint embedded the text."""
    mem, sample = m.mem, m.sample
    files: dict[str, str | bytes] = {}
    counts = {"messages": len(mem["messages"]), "sessions": len(mem["sessions"]), "snapshots": len(mem["snapshots"]),
              "trajectories": len(mem["trajectories"]), "pages": len(mem["pages"]),
              "claims": sum(len(s["claims"]) for s in mem["snapshots"])}
    fm = {"type": "dialogue-sample", "sample": sample, "speakers": mem["speakers"], "counts": counts,
          "extractor": mem["stats"]["extractor"], "embedder": mem["stats"].get("embedder", HASHED),
          "format": FORMAT}
    idx = build_index(mem, embedder=embedder)
    if embedder is not None:
        keys = idx["dense"].pop("keys")
        files[CACHE_JSON], files[CACHE_BIN] = embedder.cache.dump(keys)
        emb_note = f"{embedder.config.model} from {embedder.config.url} ({embedder.cache.dim} dims)"
    else:
        emb_note = "hashed-lexical (offline substitute for a dense embedding)"
    files["_index.md"] = render("dialogue/sample_index.md.j2", templates, frontmatter=_fm(fm), sample=sample,
                                speakers=mem["speakers"], counts=counts, extractor=mem["stats"]["extractor"],
                                embedder=emb_note)
    files["memory.json"] = json.dumps(mem, ensure_ascii=False, indent=1, sort_keys=False) + "\n"
    files[VECTOR_FILE] = idx.pop("_vector_bytes")
    files["index.json"] = json.dumps(idx, ensure_ascii=False, separators=(",", ":")) + "\n"
    return files


def root_index(samples: list[dict], templates=None) -> str:
    """``dialogue/_index.md``: every compiled sample of the corpus."""
    fm = {"type": "dialogue-index", "format": FORMAT, "wikitrace_version": WIKITRACE_VERSION,
          "samples": [s["sample"] for s in samples]}
    return render("dialogue/root_index.md.j2", templates, frontmatter=_fm(fm), samples=samples)
