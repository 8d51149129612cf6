"""Compile dialogues into ``<out>/dialogue/<sample>/{sources,snapshots,trajectories,wiki}/``.

Every file is a pure function of the inputs (byte-identical rebuilds). Files are
published in place by the same publisher as agent runs (corpus/publish.py), as the
``dialogue`` kind: an agent-run corpus in the same folder, and anything a user put
there, is left alone."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, UsageError
from . import FORMAT
from .extract import about, build_snapshots
from .load import Dialogue, load_inputs
from .embed import HASHED, centred
from .index import snapshot_text
from .render import anchor, render_sample, root_index, session_file
from .text import COUNT_RE, IdfVectors, display_keywords, entity_key, families_of
from .trajectories import build_trajectories, feature_text
from .wiki import TrajInfo, audit, plan_pages


@dataclass
class DialogueOptions:
    inputs: list
    out: Path
    samples: list[str] = field(default_factory=list)
    templates: Path | None = None
    llm: object | None = None          # a dialogue.llm.StructuredLLM, or None for offline
    embedder: object | None = None     # a dialogue.embed.EndpointEmbedder, or None (hashed-lexical)
    progress: object | None = None     # wraps the dialogue list to report progress (wikitrace.progress)
    dialogues: list | None = None      # already loaded (dialogue add/forget), instead of ``inputs``
    restore: bool = False              # compile forgotten samples/sessions again (drops their tombstones)
    command: str = "dialogue compile"  # named by `wikitrace check` when this build is interrupted


# ---------------------------------------------------------------- memory (pure data)

def compile_sample(d: Dialogue, llm=None, embedder=None) -> dict:
    """The whole memory of one dialogue as plain JSON-able data. With an ``embedder`` (endpoint
    backend) the snapshot source text is embedded once (cached by content hash) and used for g_det."""
    reasons_before = dict(llm.stats.get("fallback_reasons", {})) if llm else {}
    claim_fn = llm.claims_fn(d) if llm else None
    snaps, xstats = build_snapshots(d, claim_fn)
    matcher = llm.match_fn() if llm else None
    judge = llm.judge_fn() if llm else None
    vectors = _snapshot_vectors(d, snaps, embedder) if embedder is not None else None
    # continuity, on every path; weighed by the dialogue so far, so an added session is appended
    lexical = IdfVectors([feature_text(s, d.speakers) for s in snaps], stages=[s.session for s in snaps])
    trajs, tstats = build_trajectories(snaps, d.speakers, matcher=matcher, judge=judge, vectors=vectors,
                                       lexical=lexical)
    by_snap = {s.id: s for s in snaps}
    known = {e for s in snaps for e in s.entities}
    aliases = xstats.get("aliases", {})
    traj_out, infos = [], []
    for T in trajs:
        record, info = _trajectory_record(d, T, [by_snap[x] for x in T.snapshots], known, aliases)
        traj_out.append(record)
        infos.append(info)
    pages, pstats = plan_pages(infos)
    orphans = audit(pages, [t.id for t in trajs if t.claims])     # small talk is on the index only
    page_out = _page_records(pages, traj_out)
    stats = {"extraction": xstats, "trajectories": tstats, "wiki": pstats, "audit_orphans": orphans,
             "extractor": llm.name if llm else "offline",
             "embedder": embedder.name if embedder is not None else HASHED,
             **({"llm_fallbacks": _fallbacks_since(llm, reasons_before)} if llm else {})}
    return _memory_data(d, snaps, traj_out, page_out, stats)


def _snapshot_vectors(d: Dialogue, snaps, embedder) -> dict:
    """Endpoint vectors of each snapshot's source text (centred), which trajectory matching uses
    in place of the lexical ones."""
    by_id = {m.id: m for m in d.messages}
    texts = [snapshot_text([(by_id[i].speaker, by_id[i].text) for i in s.message_ids], s.temporal)
             for s in snaps]
    return dict(zip([s.id for s in snaps], centred(embedder.embed_passages(texts))))


def _trajectory_record(d: Dialogue, T, ss: list, known: set, aliases: dict) -> tuple[dict, TrajInfo]:
    """A trajectory as stored (title, entities, exact terms, families, keywords, whom it is about,
    dates, claim statuses) and what page planning needs of it."""
    text = " ".join(c.text for c in T.active_claims()) or " ".join(s.summary for s in ss)
    ents = list(dict.fromkeys(e for s in ss for e in s.entities if e not in d.speakers))
    terms = list(dict.fromkeys(x for s in ss for x in s.exact_terms))
    counts = [x for x in terms if COUNT_RE.fullmatch(x)]
    fams = sorted({f for s in ss for f in s.facets if "=" not in f and f != "event_type"} & set(families_of(text) | {f for s in ss for f in s.facets}))
    subj = Counter(c.subject for c in T.claims if c.subject)
    participants = sorted(subj) or sorted(ss[0].speakers)
    fam_count = Counter(f for s in ss for f in s.facets if "=" in f)
    primary_fam = sorted(((n, f.split("=")[0]) for f, n in fam_count.items()
                          if f.split("=")[0] in fams), key=lambda x: (-x[0], x[1]))
    kws = display_keywords(" ".join(c.text for c in T.claims) or ss[0].summary, limit=24)
    names = {w.lower() for p in d.speakers for w in p.split()} | {a.lower() for a in aliases}
    kws = [k for k in kws if k not in names | {"said", "reports"}]
    # what the thread is about in the speakers' own words: a shared photo's caption describes a
    # picture, so it names no thread
    spoken = " ".join(c.text for c in T.claims if not c.supporting_quote.startswith("[shares a photo:"))
    thread = [k for k in display_keywords(spoken, limit=24) if k not in names | {"said", "reports"}]
    head = ", ".join(kws[:4]) or "small talk"
    title = f"{' & '.join(participants)}: {head}"
    dates = [s.date for s in ss if s.date]
    # whom the trajectory is about, whoever said it: its pages are those entities' pages
    about_of = Counter(about(c, d.speakers, known, aliases) for c in T.claims if c.status != "deprecated")
    facts = _facts_by_entity(T.claims, d.speakers, known, aliases)
    record = {
        "id": T.id, "title": title, "snapshots": list(T.snapshots),
        "claims": [c.id for c in T.claims], "ops": T.ops, "update_links": T.update_links,
        "entities": ents, "entity_keys": list(dict.fromkeys(entity_key(e) for e in ents)),
        "exact_terms": terms, "counts": counts, "families": fams, "participants": participants,
        "keywords": kws, "about": sorted(about_of, key=lambda e: (-about_of[e], e)), "date_first": dates[0] if dates else None, "date_last": dates[-1] if dates else None,
        "status_counts": {st: sum(1 for c in T.claims if c.status == st)
                          for st in ("active", "deprecated", "contradictory", "needs-confirmation")},
    }
    info = TrajInfo(id=T.id, entities=ents, participants=participants,
                    families=[primary_fam[0][1]] if primary_fam else [],
                    keywords=sorted(set(kws)),
                    exact_terms=terms, counts=counts, emb=T.emb_sum,
                    owners=sorted(e for e in about_of if e in d.speakers),
                    about=sorted(e for e in about_of if e not in d.speakers),
                    thread_words=thread, facts=facts, has_claims=bool(T.claims))
    return record, info


def _facts_by_entity(claims, speakers: list[str], known: set, aliases: dict) -> dict[str, list[str]]:
    """Entity -> the texts of the (not deprecated) claims a page of that entity states: those about
    it, and those naming it, except that a participant's page leaves out what the other one did."""
    names = sorted({*speakers, *known, *aliases}, key=lambda n: (-len(n), n))
    pattern = [(n, re.compile(r"(?<![\w'’])" + re.escape(n) + r"(?![\w])")) for n in names]
    out: dict[str, list[str]] = {}
    for c in claims:
        if c.status == "deprecated":
            continue
        ents = [about(c, speakers, known, aliases)]
        for n, rx in pattern:
            e = aliases.get(n, n)
            if rx.search(c.text) and not (e in speakers and c.subject and c.subject != e):
                ents.append(e)
        for e in dict.fromkeys(ents):
            out.setdefault(e, []).append(c.text)
    return out


def _page_records(pages, traj_out: list[dict]) -> list[dict]:
    """The planned pages as stored; each trajectory record gains the slugs of the pages that link it."""
    page_out = []
    for p in pages:
        page_out.append({"slug": p.slug, "type": p.type, "title": p.title, "trajectories": p.trajectories,
                         "entities": p.entities, "entity_keys": [entity_key(e) for e in p.entities],
                         "facet": p.facet, "keywords": p.keywords, "rescue": p.rescue, "shard": p.shard,
                         "path": f"wiki/{p.slug}.md"})
    pages_of: dict[str, list[str]] = {}
    for p in page_out:
        for t in p["trajectories"]:
            pages_of.setdefault(t, []).append(p["slug"])
    for t in traj_out:
        t["pages"] = pages_of.get(t["id"], [])
    return page_out


def _claim_dict(c) -> dict:
    return {"id": c.id, "text": c.text, "status": c.status, "source_message_ids": c.source_message_ids,
            "supporting_quote": c.supporting_quote, "snapshot": c.snapshot, "trajectory": c.trajectory,
            "subject": c.subject, "replaces": c.replaces, "replaced_by": c.replaced_by,
            "duplicate_of": c.duplicate_of}


def _memory_data(d: Dialogue, snaps, traj_out: list[dict], page_out: list[dict], stats: dict) -> dict:
    """The memory.json of a sample: sessions, messages (with their snapshot and source page),
    snapshots with their claims, trajectories, pages and the build's statistics."""
    msg_snap = {mid: s.id for s in snaps for mid in s.message_ids}
    return {
        "format": FORMAT,
        "sample": d.sample_id,
        "speakers": d.speakers,
        "source": {"format": d.source_format, "file": os.path.basename(d.source)},
        "sessions": [{**s, "path": f"sources/{session_file(s['id'])}.md"} for s in d.sessions],
        "messages": [{"id": m.id, "speaker": m.speaker, "text": m.text, "session": m.session,
                      "timestamp": m.timestamp, "date": m.date, "snapshot": msg_snap.get(m.id),
                      "path": f"sources/{session_file(m.session)}.md#{anchor(m.id)}"} for m in d.messages],
        "snapshots": [{"id": s.id, "session": s.session, "date": s.date, "timestamp": s.timestamp,
                       "message_ids": s.message_ids, "speakers": s.speakers, "summary": s.summary,
                       "context": s.context, "keywords": s.keywords, "entities": s.entities,
                       "exact_terms": s.exact_terms, "facets": s.facets, "temporal": s.temporal,
                       "trajectory": s.trajectory, "match": s.match, "extractor": s.extractor,
                       "claims": [_claim_dict(c) for c in s.claims]} for s in snaps],
        "trajectories": traj_out,
        "pages": page_out,
        "stats": stats,
    }


def _fallbacks_since(llm, before: dict[str, int]) -> dict[str, int]:
    """Why this sample's model calls fell back (reason -> calls), from the model's running count."""
    now = llm.stats.get("fallback_reasons", {})
    return {reason: n - before.get(reason, 0) for reason, n in sorted(now.items()) if n > before.get(reason, 0)}


# ---------------------------------------------------------------- publishing

def _publish_order(rel: str) -> tuple:
    """Pages first, then what lists them: folder indexes, the sample's index and data files."""
    parts = rel.split("/")
    return (0 if len(parts) > 1 and parts[-1] != "_index.md" else 1, rel)


def _with_added_sessions(d, root: Path, graves, kept: list[str]):
    """``d`` as read from the input, followed by the sessions ``wikitrace dialogue add`` appended
    to its compiled sample after the input's last one (and not forgotten): a compile of the
    original input must not quietly drop them. Each one kept is named in ``kept``."""
    import dataclasses

    from .stored import StoredError, dialogue_from_memory, read_memory

    if not (root / "dialogue" / d.sample_id / "memory.json").is_file():
        return d
    try:
        stored = dialogue_from_memory(read_memory(root, d.sample_id))
    except (StoredError, KeyError, TypeError, ValueError):
        return d
    have = {str(s["id"]) for s in d.sessions}
    gone = graves.sessions(d.sample_id)
    order = [str(s["id"]) for s in stored.sessions]
    last = max((order.index(i) for i in have if i in order), default=None)
    if last is None:
        return d
    extra = [s for s in stored.sessions[last + 1:] if str(s["id"]) not in have and str(s["id"]) not in gone]
    if not extra:
        return d
    messages, sessions, speakers = list(d.messages), list(d.sessions), list(d.speakers)
    for sess in extra:
        first = len(messages)
        for m in stored.messages[sess["first"]:sess["first"] + sess["count"]]:
            messages.append(dataclasses.replace(m, index=len(messages)))
            if m.speaker not in speakers:
                speakers.append(m.speaker)
        sessions.append({**sess, "first": first, "count": len(messages) - first})
        kept.append(f"session {sess['id']} of {d.sample_id}")
    return dataclasses.replace(d, messages=messages, sessions=sessions, speakers=speakers)


def compile_dialogues(opts: DialogueOptions) -> dict:
    """Load, compile and publish; returns a summary (samples, counts, stats)."""
    skipped: list[str] = []
    dialogues = load_inputs(opts.inputs, skipped) if opts.dialogues is None else list(opts.dialogues)
    if opts.samples:
        wanted = set(opts.samples)
        dialogues = [d for d in dialogues if d.sample_id in wanted]
        missing = wanted - {d.sample_id for d in dialogues}
        if missing:
            raise UsageError(f"sample(s) not found in the inputs: {', '.join(sorted(missing))}",
                             "give the ids of samples the inputs hold", where="--sample")
    if not dialogues and opts.dialogues is None:
        raise InputError("no dialogue to compile", "give LoCoMo JSON or JSONL files of messages")
    from ..corpus.publish import BuildLock, Publisher, check_target, corpus_root
    from . import pending
    from .tombstones import Tombstones

    root = corpus_root(Path(opts.out))
    check_target(root)
    graves = Tombstones.load(root)
    dialogues, forgotten = graves.apply(dialogues, restore=opts.restore)
    kept_added: list[str] = []
    if opts.dialogues is None:
        dialogues = [_with_added_sessions(d, root, graves, kept_added) for d in dialogues]
    summary = {"out": str(root / "dialogue"), "samples": [], "skipped": skipped, "forgotten": forgotten,
               "kept_added": kept_added,
               "redactions": dict(sorted(sum((d.redactions for d in dialogues), Counter()).items()))}
    with BuildLock(root):
        pub = Publisher(root, "dialogue")
        try:
            unfinished = pending.load(root)  # a build killed earlier: its dialogues are compiled again too
            if unfinished is not None:
                mine = {d.sample_id for d in dialogues}
                dialogues += [d for d in unfinished[1] if d.sample_id not in mine]
                summary["finished"] = f"finished the interrupted `wikitrace {unfinished[0]}`"
            pending.save(root, dialogues, opts.command)
            rebuilt = {d.sample_id for d in dialogues}
            # samples compiled earlier and not recompiled now stay as they are
            kept = sorted({rel.split("/")[1] for rel in pub.manifest.files if rel.count("/") >= 2} - rebuilt)
            kept = [name for name in kept if pub.owns(f"dialogue/{name}/memory.json") and not graves.whole(name)]
            for name in kept:
                pub.keep(pub.owned_under(f"dialogue/{name}/"))
            listing = []
            for d in (opts.progress(dialogues) if opts.progress else dialogues):
                if opts.embedder is not None and (root / "dialogue" / d.sample_id).is_dir():
                    opts.embedder.cache.load(root / "dialogue" / d.sample_id)     # never re-embed unchanged text
                mem = compile_sample(d, opts.llm, opts.embedder)
                files = render_sample(mem, opts.templates, opts.embedder)
                pub.verify_group(pub.owned_under(f"dialogue/{d.sample_id}/"))  # damage is reported, then rewritten
                for rel in sorted(files, key=_publish_order):
                    text = files[rel]
                    pub.write(f"dialogue/{d.sample_id}/{rel}", text if isinstance(text, bytes) else text.encode("utf-8"))
                summary["samples"].append({"sample": d.sample_id, "messages": len(mem["messages"]),
                                           "snapshots": len(mem["snapshots"]),
                                           "trajectories": len(mem["trajectories"]), "pages": len(mem["pages"]),
                                           "claims": sum(len(s["claims"]) for s in mem["snapshots"]),
                                           "stats": mem["stats"]})
            for name in sorted(kept + [d.sample_id for d in dialogues]):
                mem = json.loads((root / "dialogue" / name / "memory.json").read_text(encoding="utf-8"))
                listing.append({"sample": name, "speakers": mem["speakers"], "messages": len(mem["messages"]),
                                "trajectories": len(mem["trajectories"]), "pages": len(mem["pages"])})
            pub.write("dialogue/_index.md", root_index(listing, opts.templates).encode("utf-8"))
            summary["removed"] = len(pub.finish())
            if opts.restore and forgotten:
                graves.save()
            pending.done(root)
            summary["repaired"] = list(pub.repaired)
        finally:
            pub.close()
    return summary
