"""``wikitrace dialogue add SESSION --corpus DIR --sample S``: append one session to a compiled
conversation.

The memory is built as the conversation went: snapshots are replayed in order, and continuity
weighs words by the document frequencies of the sessions so far, so a later session cannot
change how an earlier one was read. ``add`` compiles the extended conversation with the same
code as ``dialogue compile`` (the stored messages of ``memory.json`` plus the new session) and
publishes it through the same publisher: the result is byte-identical to compiling the whole
input, and a file is rewritten only where its bytes change - the new session's sources and
snapshots, the trajectories it joined, the pages listing those, and the indexes; earlier
snapshots keep their bytes, inode and mtime, except one whose claim the new session revised or
deprecated (its claim's status is shown there). What is still computed over the whole dialogue
(nickname merging, the wiki plan) can move earlier files; the summary says when it did.

Accepted session shapes (one session per file):
- LoCoMo, cut from a flat conversation: ``{"session_19": [turns], "session_19_date_time": "..."}``;
- a session object: ``{"session": 19, "date_time": "...", "turns": [turns]}`` (``messages`` is
  accepted for ``turns``; ``session`` defaults to the next number);
- JSONL of messages (``id, speaker, text, timestamp, session``), all of one session.
A turn is a LoCoMo turn (``speaker``, ``dia_id``, ``text``, optional ``blip_caption``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .load import (Dialogue, DialogueInputError, _from_jsonl, _from_locomo, read_json, _redact, _repaired,
                   _slug)
from .stored import changes, dialogue_from_memory, owned_files, read_memory

SHAPES = ('a LoCoMo session ({"session_N": [turns], "session_N_date_time": "..."}), '
          '{"session": N, "date_time": "...", "turns": [turns]}, or JSONL of messages of one session')


def _next_session(ids: list[str]) -> str:
    nums = [int(i) for i in ids if i.isdecimal()]
    return str(max(nums) + 1 if nums else len(ids) + 1)


def read_session(path: Path, sample: str, next_id: str, id_offset: int) -> Dialogue:
    """The session in ``path`` as a one-session Dialogue (secrets redacted), parsed by the
    loader's own LoCoMo and JSONL readers."""
    from ..runs._common import not_a_file

    path = Path(path)
    why = not_a_file(path)
    if why:
        raise DialogueInputError(why)
    if not path.is_file():
        raise DialogueInputError(f"{path}: {'a folder, not a file' if path.is_dir() else 'no such file'}; "
                                 f"give one session file ({SHAPES})")
    if path.suffix == ".jsonl":
        found = _from_jsonl(path, default_session=next_id, id_offset=id_offset)
        others = [d.sample_id for d in found if d.sample_id not in (sample, _slug(path.stem))]
        if len(found) != 1 or others:
            raise DialogueInputError(f"{path}: holds messages of sample(s) {', '.join(d.sample_id for d in found)}, "
                                     f"not only {sample}; give the session of --sample {sample}")
        d = found[0]
        d.sample_id = sample
    else:
        data, repairs = _repaired(read_json(path))
        keys = [k for k in data if re.fullmatch(r"session_\d+", k) and isinstance(data[k], list)] \
            if isinstance(data, dict) else []
        if len(keys) > 1:
            raise DialogueInputError(f"{path}: holds {len(keys)} sessions ({', '.join(keys[:4])}); add one session "
                                     f"at a time, or compile the whole conversation with `wikitrace dialogue compile`")
        if keys:
            conv = {keys[0]: data[keys[0]], f"{keys[0]}_date_time": data.get(f"{keys[0]}_date_time")}
        elif isinstance(data, dict) and isinstance(data.get("turns", data.get("messages")), list):
            n = str(data.get("session") if data.get("session") is not None else next_id)
            if not n.isdecimal():
                raise DialogueInputError(f"{path}: field 'session': {n!r} is not a session number; give a whole "
                                         f"number (or leave it out for the next one, {next_id})")
            conv = {f"session_{n}": data.get("turns", data.get("messages")),
                    f"session_{n}_date_time": data.get("date_time")}
        else:
            raise DialogueInputError(f"{path}: not a session; give {SHAPES}")
        d = _from_locomo(conv, sample, [], str(path), "locomo-session")
        d.repaired = repairs
    _redact(d)
    d.sample_id = sample
    if len(d.sessions) != 1:
        raise DialogueInputError(f"{path}: holds {len(d.sessions)} sessions "
                                 f"({', '.join(s['id'] for s in d.sessions[:4])}); add one session at a time")
    if not d.messages:
        raise DialogueInputError(f"{path}: the session has no message with text; nothing to add")
    return d


def extend(base: Dialogue, new: Dialogue) -> Dialogue:
    """``base`` with ``new``'s one session appended (what the loader reads from the longer input)."""
    messages = list(base.messages)
    for m in new.messages:
        m.index = len(messages)
        messages.append(m)
    sess = {**new.sessions[0], "first": len(base.messages), "count": len(new.messages)}
    speakers = base.speakers + [s for s in new.speakers if s not in base.speakers]
    return Dialogue(sample_id=base.sample_id, speakers=speakers, messages=messages,
                    sessions=base.sessions + [sess], source=base.source, source_format=base.source_format,
                    repaired=new.repaired, redactions=new.redactions)


def check_new(base: Dialogue, new: Dialogue, forgotten: dict, path: Path) -> None:
    sid = new.sessions[0]["id"]
    have = [s["id"] for s in base.sessions]
    span = f"sessions {have[0]}-{have[-1]}" if len(have) > 1 else f"session {have[0]}" if have else "no session"
    if sid in have:
        raise DialogueInputError(f"{path}: session {sid} is already in sample {base.sample_id} ({span}); a session "
                                 f"is added once - to change it, edit the input and run `wikitrace dialogue compile`")
    if sid in forgotten:
        raise DialogueInputError(f"{path}: session {sid} of sample {base.sample_id} was forgotten; number the new "
                                 f"session {_next_session(have + list(forgotten))}, or bring the original back with "
                                 f"`wikitrace dialogue compile INPUT --restore`")
    nums = [int(i) for i in have + list(forgotten) if i.isdecimal()]
    if sid.isdecimal() and nums and int(sid) <= max(nums):
        raise DialogueInputError(f"{path}: session {sid} comes before the last session of sample {base.sample_id} "
                                 f"({max(nums)}); sessions are appended in order - number it "
                                 f"{max(nums) + 1}, or edit the input and run `wikitrace dialogue compile`")
    old = {m.id for m in base.messages}
    clash = [m.id for m in new.messages if m.id in old]
    if clash:
        raise DialogueInputError(f"{path}: message id {clash[0]!r} is already in sample {base.sample_id}; "
                                 f"message ids must be unique - renumber the session's messages")


def _groups(mem: dict, ids: set) -> set:
    """Trajectories as sets of snapshot ids (only ``ids``): regrouping, not renumbering."""
    by: dict[str, set] = {}
    for s in mem["snapshots"]:
        if s["id"] in ids:
            by.setdefault(s["trajectory"], set()).add(s["id"])
    return {frozenset(g) for g in by.values()}


def _finish_interrupted(root: Path, llm, embedder, templates) -> dict | None:
    """Finish a dialogue build of this corpus that was killed (dialogue/pending.py): its
    summary, with the samples it wrote, or None when there was none."""
    from .build import DialogueOptions, compile_dialogues
    from .pending import load

    if load(root) is None:
        return None
    res = compile_dialogues(DialogueOptions(inputs=[], out=root, dialogues=[], templates=templates, llm=llm,
                                            embedder=embedder, command="dialogue add"))
    return {**res, "samples": [s["sample"] for s in res["samples"]]}


def _is_last_session(base: Dialogue, new: Dialogue) -> bool:
    """Whether ``new`` is the sample's last session, message for message: the session an
    interrupted add was adding, finished just now."""
    if not base.sessions or base.sessions[-1]["id"] != new.sessions[0]["id"]:
        return False
    last = base.messages[base.sessions[-1]["first"]:]
    return [(m.id, m.speaker, m.text) for m in last] == [(m.id, m.speaker, m.text) for m in new.messages]


def add_session(session: Path, corpus: Path, sample: str, llm=None, embedder=None, templates=None) -> dict:
    """Append one session; returns the compile summary plus what changed on disk."""
    from ..corpus.publish import corpus_root
    from .build import DialogueOptions, compile_dialogues
    from .tombstones import Tombstones

    root = corpus_root(Path(corpus))
    finished = _finish_interrupted(root, llm, embedder, templates)
    mem = read_memory(root, sample)
    base = dialogue_from_memory(mem)
    forgotten = Tombstones.load(root).sessions(sample)
    new = read_session(session, sample, _next_session([s["id"] for s in base.sessions] + list(forgotten)),
                       len(base.messages))
    if finished and sample in finished["samples"] and _is_last_session(base, new):
        return {**finished, "sample": sample, "session": new.sessions[0]["id"], "finished_before": True}
    check_new(base, new, forgotten, Path(session))
    before = owned_files(root)
    res = compile_dialogues(DialogueOptions(inputs=[], out=root, dialogues=[extend(base, new)], templates=templates,
                                            llm=llm, embedder=embedder, command="dialogue add"))
    res["skipped"] = list(res.get("skipped") or []) + [f"{session}: {n} {what}" for what, n in sorted(new.notes.items())]
    after_mem = read_memory(root, sample)
    files = changes(before, owned_files(root), f"dialogue/{sample}/")
    earlier = {s["id"] for s in mem["snapshots"]}
    regrouped = _groups(mem, earlier) - _groups(after_mem, earlier)
    old_ops = sum(len(t["ops"]) for t in mem["trajectories"])
    res.update({
        "sample": sample, "session": new.sessions[0]["id"], "messages_added": len(new.messages),
        "message_ids": [m.id for m in new.messages],
        "snapshots_added": len(after_mem["snapshots"]) - len(mem["snapshots"]),
        "transitions_added": sum(len(t["ops"]) for t in after_mem["trajectories"]) - old_ops,
        "earlier_snapshots_rewritten": sum(1 for r in files["rewritten"] if "/snapshots/snap-" in r),
        "earlier_trajectories_regrouped": len(regrouped),
        "previous_extractor": (mem.get("stats") or {}).get("extractor"),
        "embedder": {"before": (mem.get("stats") or {}).get("embedder"),
                     "after": (after_mem.get("stats") or {}).get("embedder")},
        "files": {k: v if isinstance(v, int) else len(v) for k, v in files.items()},
        "changed": {k: v for k, v in files.items() if k != "unchanged"},
    })
    return res


def add_command(session: Path, corpus: Path, sample: str, templates, offline: bool, model, base_url,
                quiet: bool = False, as_json: bool = False) -> int:
    from ..errors import Failed, InputError
    from ..corpus.publish import PublishError
    from ..progress import console as make_console
    from .embed import EmbeddingError, endpoint_embedder
    from .llm import from_options

    con = make_console(quiet=quiet)
    llm = from_options(model, base_url, offline=offline, templates=templates)
    try:
        res = add_session(session, corpus, sample, llm=llm, embedder=endpoint_embedder(None, offline=offline),
                          templates=templates)
    except (FileNotFoundError, EmbeddingError) as exc:  # the dialogue's own errors are InputErrors already
        raise InputError(str(exc)) from None
    except PublishError as exc:
        raise Failed(str(exc)) from None
    say = con.print
    if res.get("finished_before"):
        say(f"{res['finished']}: session {res['session']} of {sample} is in the memory now; nothing more to add")
        if as_json:
            print(json.dumps(res, indent=2, default=str))
        return 0
    f = res["files"]
    say(f"added session {res['session']} to {sample}: {res['messages_added']} messages, "
        f"{res['snapshots_added']} snapshots, {res['transitions_added']} trajectory transitions")
    say(f"  files under dialogue/{sample}/: {f['added']} added, {f['rewritten']} rewritten, {f['removed']} removed, "
        f"{f['unchanged']} unchanged")
    if res["earlier_snapshots_rewritten"] or res["earlier_trajectories_regrouped"]:
        say(f"  earlier memory changed: {res['earlier_snapshots_rewritten']} earlier snapshot file(s) rewritten (a "
            f"claim there revised or deprecated by the new session, or a name first used in it merging entities), "
            f"{res['earlier_trajectories_regrouped']} earlier trajectory(ies) regrouped")
    if res["previous_extractor"] and res["previous_extractor"] != (llm.name if llm else "offline"):
        say(f"  note: the memory was compiled with extractor {res['previous_extractor']}; it was recompiled with "
            f"{llm.name if llm else 'offline'}")
    if res["embedder"]["before"] != res["embedder"]["after"]:
        say(f"  note: the memory used embeddings {res['embedder']['before']}; it was rebuilt with "
            f"{res['embedder']['after']} (set WIKITRACE_EMBEDDINGS_URL as for the compile)")
    if res.get("redactions"):
        say("  redacted: " + ", ".join(f"{n} {kind}" for kind, n in res["redactions"].items()))
    for line in res.get("skipped") or []:
        say(f"  skipped: {line}")
    if as_json:
        print(json.dumps(res, indent=2, default=str))
    return 0
