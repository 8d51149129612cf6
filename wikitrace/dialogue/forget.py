"""``wikitrace dialogue forget --sample S [--session N]``: remove a conversation's memory, or one
session of it, for good.

Forgetting records a tombstone (ids and hashes, never text; see tombstones.py) and then
recompiles from the stored messages through the same build as ``dialogue compile``, which
leaves the forgotten part out: a session's sources, snapshots, claims and trajectory history
go, the trajectories and wiki pages are rebuilt without them, and the files the dialogue
build owns but no longer produces are removed (a whole sample: all of its files). The
dialogue path keeps no LLM response cache; its one cache, the endpoint embeddings in the
sample folder, is rewritten with the vectors still in use only, so the forgotten text's
vectors go with it. A later ``dialogue compile`` from an input still holding the forgotten
part reports it and leaves it out, unless ``--restore``."""

from __future__ import annotations

import json
from pathlib import Path

from .stored import StoredError, changes, dialogue_from_memory, owned_files, read_memory, samples


def _counts(mem: dict | None) -> dict:
    if not mem:
        return {"messages": 0, "sessions": 0, "snapshots": 0, "claims": 0, "trajectories": 0, "pages": 0}
    return {"messages": len(mem["messages"]), "sessions": len(mem["sessions"]), "snapshots": len(mem["snapshots"]),
            "claims": sum(len(s["claims"]) for s in mem["snapshots"]), "trajectories": len(mem["trajectories"]),
            "pages": len(mem["pages"])}


def forget(corpus: Path, sample: str, session: str | None = None, llm=None, embedder=None,
           templates=None) -> dict:
    """Forget a sample (``session`` None) or one of its sessions; returns what was removed."""
    from ..corpus.publish import corpus_root
    from .build import DialogueOptions, compile_dialogues
    from .tombstones import FILE, Tombstones

    root = corpus_root(Path(corpus))
    graves = Tombstones.load(root)
    out = {"sample": sample, "session": session, "tombstone": str(root / ".wikitrace" / FILE)}
    compiled = sample in samples(root)
    if session is None and not compiled and graves.whole(sample):
        return {**out, "already_forgotten": True}
    try:
        mem = read_memory(root, sample)
    except StoredError:
        if session is not None or not any(r.startswith(f"dialogue/{sample}/") for r in owned_files(root)):
            raise
        mem = None            # a damaged sample: what the build owns there is still forgotten
    d = dialogue_from_memory(mem) if mem else None
    have = [s["id"] for s in d.sessions] if d else []
    if session is not None:
        session = str(int(session)) if session.isdecimal() else session
        if session not in have:
            if session in graves.sessions(sample):
                return {**out, "already_forgotten": True}
            raise StoredError(f"sample {sample} has no session {session!r} (sessions: {', '.join(have)}); "
                              f"give one of them, or leave out --session to forget the whole sample")
        if have == [session]:
            raise StoredError(f"session {session} is the only session of sample {sample}; forget the whole "
                              f"sample (leave out --session)")
        ids = [m.id for m in d.messages if m.session == session]
        gone = [x for x in mem["snapshots"] if x["session"] == session]
        graves.bury_session(d, session)
    else:
        ids = [m.id for m in d.messages] if d else []
        gone = mem["snapshots"] if mem else []
        graves.bury_sample(sample, d)
    before = owned_files(root)
    graves.save()                 # first: a build interrupted from here on still leaves it out
    res = compile_dialogues(DialogueOptions(inputs=[], out=root, dialogues=[] if session is None else [d],
                                            templates=templates, llm=llm if session else None,
                                            embedder=embedder if session else None, command="dialogue forget"))
    after = None if session is None else read_memory(root, sample)
    files = changes(before, owned_files(root), f"dialogue/{sample}/")
    return {**out, "already_forgotten": False, "memory_readable": mem is not None, "message_ids": ids,
            "snapshots": [x["id"] for x in gone], "claims": [c["id"] for x in gone for c in x["claims"]],
            "before": _counts(mem), "after": _counts(after),
            "embedder": {"before": (mem.get("stats") or {}).get("embedder") if mem else None,
                         "after": (after.get("stats") or {}).get("embedder") if after else None},
            "files": {"removed": files["removed"], "rewritten": len(files["rewritten"]),
                      "added": len(files["added"]), "unchanged": files["unchanged"]},
            "build": {k: res.get(k) for k in ("out", "repaired")}}


def forget_command(corpus: Path, sample: str, session: str | None, templates, offline: bool, model, base_url,
                   quiet: bool = False, as_json: bool = False) -> int:
    from ..errors import Failed, InputError
    from ..corpus.publish import PublishError
    from ..progress import console as make_console
    from .embed import EmbeddingError, endpoint_embedder
    from .llm import from_options

    con = make_console(quiet=quiet)
    llm = from_options(model, base_url, offline=offline, templates=templates) if session else None
    try:
        res = forget(corpus, sample, session, llm=llm,
                     embedder=endpoint_embedder(None, offline=offline) if session else None, templates=templates)
    except (FileNotFoundError, EmbeddingError) as exc:  # the dialogue's own errors are InputErrors already
        raise InputError(str(exc)) from None
    except PublishError as exc:
        raise Failed(str(exc)) from None
    say = con.print
    what = f"session {session} of sample {sample}" if session else f"sample {sample}"
    if res["already_forgotten"]:
        say(f"{what} was already forgotten; nothing to remove (tombstone: {res['tombstone']})")
    else:
        b, a, f = res["before"], res["after"], res["files"]
        def ids(xs):
            return f"{xs[0]}..{xs[-1]}" if len(xs) > 1 else (xs[0] if xs else "none")

        if not res["memory_readable"]:
            say(f"forgot {what}: its memory.json could not be read, so what it held is not counted; every file the "
                f"dialogue build owned there was removed")
        else:
            say(f"forgot {what}: {len(res['message_ids'])} messages ({ids(res['message_ids'])}), "
                f"{len(res['snapshots'])} snapshots ({ids(res['snapshots'])}), {len(res['claims'])} claims")
        say("  memory now: " + ", ".join(f"{k} {b[k]} -> {a[k]}" for k in ("sessions", "snapshots", "claims",
                                                                        "trajectories", "pages"))
            + ("; later snapshot and claim ids move up (they number positions in the dialogue)" if session else ""))
        say(f"  removed {len(f['removed'])} file(s)" + (f", rewrote {f['rewritten']}, kept {f['unchanged']} unchanged"
                                                       if session else ""))
        for rel in f["removed"][:20]:
            say(f"    {rel}")
        if len(f["removed"]) > 20:
            say(f"    ... {len(f['removed']) - 20} more (--json lists all)")
        say(f"  tombstone (ids and hashes only): {res['tombstone']}; a later `wikitrace dialogue compile` leaves it "
            f"out, `--restore` compiles it again")
        emb = res["embedder"]
        if session and emb["before"] != emb["after"]:
            say(f"  note: the memory used embeddings {emb['before']}; it was rebuilt with {emb['after']} "
                f"(set WIKITRACE_EMBEDDINGS_URL as for the compile)")
        say("  caches: the dialogue build keeps no LLM response cache"
            + ("" if emb["before"] in (None, "hashed-lexical") else
               "; the forgotten text's vectors were dropped from the sample's embedding cache" if session else
               "; the sample's embedding cache went with its folder"))
    if as_json:
        print(json.dumps(res, indent=2, default=str))
    return 0
