"""``wikitrace forget``: remove agent runs from a corpus for good.

A forgotten run loses its raw pages and its compilation; the insight layer is gathered
again from the runs that stay (corpus/insights.py), so an insight another run taught
too loses one source and its counts change, and an insight left without sources goes.
The ids of what goes are retired, never handed out again. Every index, the search files, ``corpus.json`` and
the build's manifest are written again without it, and every cached LLM answer
tagged with its content hash is deleted, wherever the corpus's builds kept their
cache. What remains of it is a tombstone (corpus/tombstones.py): enough to keep it
out of later builds, none of its text.

The update goes through the same publisher as a build, under the same lock and in
the same order: the tombstone first, then the indexes, ``corpus.json``, the removal
of the run's files (only files a build wrote) and the manifest. A forget that is
interrupted is finished by running it again (or by the next compile).
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from pathlib import Path

from .compilers.insight_merge import carry_over
from .corpus import corpus_json, documents, layout, ledger, pattern_tally, usage_pages
from .corpus import other_types
from .corpus.insights import gather
from .corpus.publish import STATE, BuildLock, PublishError, Publisher, corpus_root, read_corpus_json
from .corpus.tombstones import CACHE_DIRS, Tombstone, Tombstones


@dataclass
class ForgottenRun:
    run_id: str
    step: str
    insights: list[str]
    files: list[str] = field(default_factory=list)  # corpus files removed
    before: bool = False  # forgotten by an earlier `wikitrace forget` (its leftovers purged again)
    content_hash: str | None = None  # its cached answers carry it as their tag


@dataclass
class ForgetResult:
    corpus: Path
    runs: list[ForgottenRun]
    cache_dirs: list[str]  # response caches searched
    cache_removed: int = 0  # cached answers deleted
    cache_untagged: int = 0  # answers with no run tag: cannot be told apart

    def to_dict(self) -> dict:
        return {"corpus": str(self.corpus),
                "forgotten": [{"run_id": r.run_id, "step": r.step, "insights": r.insights, "files": r.files,
                               "forgotten_before": r.before} for r in self.runs],
                "cache": {"dirs": self.cache_dirs, "answers_removed": self.cache_removed,
                          "untagged_answers": self.cache_untagged}}


def _usage_error(what: str, fix: str, where: object):
    from .errors import UsageError

    return UsageError(what, fix, where=where)


def forget(corpus: Path, idents: list[str], cache_dirs: list[Path] = ()) -> ForgetResult:
    """Forget the runs named by ``idents`` (run ids or step ids) in the corpus at ``corpus``.
    Nothing is removed when any of them is unknown (UsageError naming each)."""
    root = corpus_root(corpus)
    if not (root / "corpus.json").is_file():
        raise _usage_error("no corpus.json here", "give the folder `wikitrace compile --out` wrote", root)
    with BuildLock(root):
        journal = root / STATE / "runs.journal"
        pub = Publisher(root, "runs")
        try:
            from .agent.index import prompt_index_bytes
            from .corpus.pending import recover

            recover(pub, prompt_index_bytes)  # a command killed earlier is finished (or its unlisted pages removed) first
            result = _forget_locked(pub, idents)
        finally:
            pub.close()
            if journal.is_file() and not journal.stat().st_size:  # nothing was claimed (an unknown id): no trace
                journal.unlink()
        _purge_cache(result, _cache_dirs(pub, cache_dirs))
        drop_references(root, result)
    return result


def _purge_cache(result: ForgetResult, dirs: list[Path]) -> None:
    from .llm.cache import purge_runs

    tags = {r.content_hash for r in result.runs if r.content_hash}
    result.cache_dirs = [str(d) for d in dirs]
    for d in dirs if tags else ():
        removed, untagged = purge_runs(d, tags)
        result.cache_removed += len(removed)
        result.cache_untagged += untagged


def drop_references(root: Path, result: ForgetResult) -> None:
    """The one place where records kept beside the corpus (the usage ledger of cited
    episodes) drop the forgotten run and insight ids; nothing else names them now.
    Episodes recorded for a forgotten run go whole, so the counts of the insights they
    also cited drop too, and those pages are rewritten at once."""
    from .agent.index import prompt_index_bytes
    from .corpus import ledger, recount
    from .corpus.publish import read_corpus_json

    ids = {r.step for r in result.runs} | {i for r in result.runs for i in r.insights}
    if not ledger.drop_ids(root, ids, runs={r.run_id for r in result.runs}):
        return
    counts, _problems = ledger.insight_counts(root)
    data = read_corpus_json(root) or {}
    insight_ids = [i["id"] for i in data.get("insights", []) if isinstance(i, dict) and "id" in i]
    recount.publish_counts(root, counts, insight_ids, [], prompt_index_bytes)


def _cache_dirs(pub: Publisher, extra) -> list[Path]:
    """Where answers about these runs may be: every cache a build of this corpus used,
    the default cache, and any the user names."""
    from .llm.cache import default_dir

    seen = pub.manifest.data.get(CACHE_DIRS)
    found = [Path(d) for d in (seen if isinstance(seen, list) else []) if isinstance(d, str)]
    out: list[Path] = []
    for d in [*found, default_dir(), *map(Path, extra)]:
        d = d.expanduser().resolve()
        if d not in out and d.is_dir():
            out.append(d)
    return out


def _resolve(idents: list[str], runs: list[dict], stones: Tombstones, where: Path) -> tuple[list[dict], list[Tombstone]]:
    """The corpus.json entries to forget and the tombstones of runs forgotten before;
    a UsageError naming every id that is neither."""
    by_id = {r["run_id"]: r for r in runs}
    by_step = {r["step"]: r for r in runs}
    live: dict[str, dict] = {}
    dead: dict[str, Tombstone] = {}
    unknown = []
    for ident in dict.fromkeys(idents):
        entry = by_id.get(ident) or by_step.get(ident)
        if entry is not None:
            live[entry["run_id"]] = entry
        elif (stone := stones.find(ident)) is not None:
            dead[stone.run_id] = stone
        else:
            unknown.append(ident)
    if unknown:
        raise _usage_error(f"no run {', '.join(repr(u) for u in unknown)} in this corpus; nothing was forgotten",
                           "give run ids or step ids as corpus.json (or raw/_index.md) lists them", where)
    return list(live.values()), [t for t in dead.values() if t.run_id not in live]


def _forget_locked(pub: Publisher, idents: list[str]) -> ForgetResult:
    root = pub.root
    data = read_corpus_json(root)
    runs, insights = data.get("runs"), data.get("insights")
    if not (isinstance(runs, list) and isinstance(insights, list)
            and all(isinstance(r, dict) and isinstance(r.get("run_id"), str) and isinstance(r.get("step"), str)
                    and isinstance(r.get("insights", []), list) for r in runs)
            and all(isinstance(i, dict) and isinstance(i.get("id"), str) for i in insights)):
        raise PublishError(f"{root / 'corpus.json'}: its runs/insights are not laid out as wikitrace writes them; "
                           f"compile the corpus again, then forget")
    stones = Tombstones.load(root)
    gone, before = _resolve(idents, runs, stones, root)
    # The tombstones first: from here on no build compiles these runs again.
    stones.add(Tombstone(r["run_id"], r.get("content_hash"), r["step"]) for r in gone)
    stones.save()
    pattern_tally.save(root, pattern_tally.PatternTally(), None)  # counts with the forgotten runs in: gone now

    steps = {r["step"] for r in gone} | {t.step for t in before}
    keep_runs = [r for r in runs if r["step"] not in steps]
    # the insight layer gathered again from the runs that stay: a lesson another run taught
    # too keeps its page (one source fewer); a lesson left without sources goes
    tally = pattern_tally.PatternTally()
    keep_ins = other_types.link(gather(keep_runs, tally=tally))
    carry_over(keep_ins, insights)  # merged guidelines of unchanged insights stay; no model is asked
    dropped_ins = {i["id"] for i in insights} - {i["id"] for i in keep_ins}
    doomed: dict[str, list[str]] = {}  # step -> its files
    for rel in pub.manifest.files:
        step = _step_of(rel, steps)
        if step is not None:
            doomed.setdefault(step, []).append(rel)
    removed = {rel for files in doomed.values() for rel in files} | {layout.insight_doc(i) for i in dropped_ins}
    pub.keep([rel for rel in pub.manifest.files if rel not in removed])

    _set_trial_lines(pub, keep_runs, gone)
    _publish(pub, data, keep_runs, keep_ins, steps, dropped_ins, {r["run_id"] for r in gone})
    published = pub.manifest.files.get("corpus.json")  # the next add counts its run on top of these
    pattern_tally.save(root, tally, published[0] if published else None)
    listed = [ForgottenRun(r["run_id"], r["step"], sorted(set(r.get("insights", [])) & dropped_ins, key=layout.id_number),
                           sorted(doomed.get(r["step"], []) + [layout.insight_doc(i) for i in r.get("insights", [])
                                                               if i in dropped_ins]),
                           content_hash=r.get("content_hash")) for r in gone]
    listed += [ForgottenRun(t.run_id, t.step, [], sorted(doomed.get(t.step, [])), before=True,
                            content_hash=t.content_hash) for t in before]
    return ForgetResult(root, listed, [])


def _set_trial_lines(pub: Publisher, runs: list[dict], gone: list[dict]) -> None:
    """The pages of the other trials of a forgotten run's task lose their line against it, and
    the failure pages of its task type count their causes without it."""
    from .corpus import cause_contrast, trial_pages

    templates = pub.manifest.data.get("templates")
    templates = Path(templates) if isinstance(templates, str) and Path(templates).is_dir() else None
    trial_pages.set_on_disk(pub, runs, set(), gone, templates)
    cause_contrast.set_on_disk(pub, runs, set(), gone, templates)


def _step_of(rel: str, steps: set[str]) -> str | None:
    """The forgotten step a corpus file belongs to, or None."""
    parts = rel.split("/")
    if parts[0] == "raw" and len(parts) == 3 and parts[1] in steps:
        return parts[1]
    if parts[0] == "compilation" and len(parts) == 2 and parts[1][:-3] in steps and rel.endswith(".md"):
        return parts[1][:-3]
    return None


def _publish(pub: Publisher, data: dict, runs: list[dict], insights: list[dict], steps: set[str],
             dropped_ins: set[str], run_ids: set[str]) -> None:
    """Indexes, prompt index, search files, corpus.json, then the removals and the manifest:
    the order of a build, so a reader never meets a link to a removed file."""
    from .agent.index import prompt_index_bytes
    from .corpus import pending
    from .corpus.update import PROMPT_INDEX

    root = pub.root
    state = dict(pub.manifest.data)
    templates = state.get("templates")
    templates = Path(templates) if isinstance(templates, str) and Path(templates).is_dir() else None
    prompt_ok = pub.verify_group([PROMPT_INDEX])
    mount = str(data.get("mount_path") or "/work/corpus")
    # the insight pages the forgotten runs were sources of, gathered again (one source fewer)
    before = {i["id"]: i for i in data.get("insights") or [] if isinstance(i, dict)}
    counts_by_id, _problems = ledger.insight_counts(root)
    titles = {i["id"]: i["title"] for i in insights}
    for entry in insights:
        text = documents.render_insight(entry, mount, templates, counts_by_id.get(entry["id"], (0, 0)), titles)
        pub.write(layout.insight_doc(entry["id"]), text.encode("utf-8"))
    state["usage"] = usage_pages.shown_counts(counts_by_id, [i["id"] for i in insights])
    retired = data.get("retired") if isinstance(data.get("retired"), dict) else {}
    retired = {"steps": sorted(set(retired.get("steps", [])) | steps, key=layout.id_number),
               "insights": sorted(set(retired.get("insights", [])) | dropped_ins, key=layout.id_number)}
    new = dict(data)
    new["runs"], new["insights"], new["retired"] = runs, insights, retired
    counts = dict(data.get("counts") or {})
    by_compiler: dict[str, int] = {}
    for r in runs:
        by_compiler[str(r.get("compiler"))] = by_compiler.get(str(r.get("compiler")), 0) + 1
    counts.update(runs=len(runs), success=sum(r.get("outcome") == "success" for r in runs),
                  failure=sum(r.get("outcome") == "failure" for r in runs), insights=len(insights),
                  by_compiler=dict(sorted(by_compiler.items())))
    new["counts"] = counts
    new["build"] = _build_block(data.get("build"), run_ids)
    text, region = corpus_json.dumps(new)
    prompt = prompt_index_bytes(runs, insights, region, previous=root if prompt_ok else None,
                                unchanged={i["id"] for i in insights if before.get(i["id"]) == i},
                                unchanged_runs={r["step"] for r in runs})

    records = state.get("records") if isinstance(state.get("records"), dict) else {}
    state["records"] = {k: v for k, v in records.items() if k not in run_ids}
    ids = state.get("ids") if isinstance(state.get("ids"), dict) else {}
    state["ids"] = {"runs": [r for r in ids.get("runs") or [] if isinstance(r, dict) and r.get("step") not in steps],
                    "retired": retired}
    record = pending.Pending(command="forget", data=state, output={}, corpus_json=text,
                             templates=str(templates) if templates else None)
    pending.save(pub, record)  # the tombstones are saved: from here the next command can finish this one
    pending.complete(pub, record, prompt)


def _build_block(block, run_ids: set[str]) -> dict:
    """corpus.json's ``build`` block after a forget: its problem lists lose every line that
    names a forgotten run (they may quote it); it says when and how many runs were forgotten."""
    import re

    block = dict(block) if isinstance(block, dict) else {}
    names = re.compile("|".join(rf"(?<![\w.-]){re.escape(r)}(?![\w-])" for r in sorted(run_ids))) if run_ids else None
    for key in ("skipped", "warnings", "ignored_files"):
        if names is not None and isinstance(block.get(key), list):
            block[key] = [line for line in block[key] if not names.search(str(line))]
    block["forgotten_at"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    block["forgotten_runs"] = int(block.get("forgotten_runs") or 0) + len(run_ids)
    return block


def forget_command(corpus: Path, idents: list[str], cache_dir: Path | None, as_json: bool) -> int:
    """CLI body: forget, then list what went (stderr), or the same as JSON (stdout)."""
    from .errors import Failed
    from .progress import console as make_console, plural

    try:
        result = forget(corpus, idents, [cache_dir] if cache_dir else [])
    except PublishError as exc:
        raise Failed(str(exc)) from None
    if as_json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return 0
    console = make_console()
    for r in result.runs:
        what = "leftovers of a run forgotten before" if r.before else "forgot"
        console.print(f"{what} {r.run_id} ({r.step}): {plural(len(r.files), 'file')}, "
                      f"{plural(len(r.insights), 'insight')}{' (' + ', '.join(r.insights) + ')' if r.insights else ''}")
        for rel in r.files:
            console.print(f"  removed {rel}")
    console.print(f"cached LLM answers removed: {result.cache_removed} "
                  f"(searched {', '.join(result.cache_dirs) or 'no cache folder'})")
    if result.cache_untagged:
        console.print(f"{plural(result.cache_untagged, 'cached answer')} carry no run tag (written by an older "
                      f"wikitrace, or not about a corpus run) and were left: delete the cache folder to be sure "
                      f"none quotes a forgotten run")
    console.print("a later `wikitrace compile` skips these runs; `wikitrace compile --restore` compiles them again "
                  "(with new ids)")
    return 0
