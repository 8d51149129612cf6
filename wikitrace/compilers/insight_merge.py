"""On the LLM path, one guideline per insight, written by the model from every run that taught it.

The lessons are grouped exactly as offline (the same keys, corpus/insights.py); then each
insight's group goes to the model once: its key, the lesson as its own source runs wrote it
(the wording most of them share, and when it applies), and what its first ``SHOWN_SOURCES``
source runs (in step order) showed of it. The prompt is made from the group's members alone:
not from the page's offline wording, whose leads count the whole task type ("160 of the 200
runs ...") and so move with every run added to the type. Adding a run therefore asks again
only for the insights it is one of the first sources of; every other prompt is the same and
its answer comes from the response cache (llm/cache.py), tagged with the source runs' content
hashes so ``forget`` can delete it. The page shows the counts beside the merged guideline,
from the gathered entry (its Evidence), never from the model.

The answer is a JSON object ``{"guideline": "..."}``, checked before it is trusted: a
non-empty string of at most ``MAX_CHARS`` characters, no echo of the instructions, no turn
reference, no value of one episode (an id, a number, a path) and no narration of one run.
Anything else — a transport fault after its retries, a refusal, malformed JSON, a failed
check — keeps the offline wording and records why in the page's frontmatter
(``guideline_by: offline-fallback``, ``fallback_reason``).

The merge is part of the LLM path: whenever a corpus is compiled (or added to) by the LLM
compiler, the changed groups are merged after every run is compiled; the offline compiler
never calls a model. ``--batch`` pre-fills only the runs' answers; the merge calls then go
through this live path, after the batch (their prompts need the gathered groups).
``forget`` sends no call: an insight whose sources are unchanged keeps its merged text
(``carry_over``), one that lost a source shows the offline wording, marked as a fallback,
until the next compile or add merges it again.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from .answer_check import _echo_problems
from ..llm.cache import CachedAnswer
from ..llm.transport import AnswerTooLarge, Failure, FormatRejected
from .text import _VALUE

MAX_CHARS = 700
SHOWN_SOURCES = 12  # source notes in one prompt: the first ones, so a later source changes nothing
_TURN = re.compile(r"\bturns? \d+", re.I)
_PATHISH = re.compile(r"(?:[\w.~-]*/)+[\w.-]+\.\w+")

SYSTEM, USER = "prompts/insight_merge.system.j2", "prompts/insight_merge.user.j2"


def _messages(entry: dict, lesson: dict, templates: str | None = None) -> list[dict[str, str]]:
    """The merge request of one insight group, from its members only: ``lesson`` (insights.members_text)
    and its sources' notes (templates: a user folder that overrides them)."""
    from ..templates import render

    notes = [f"- {s['outcome']}: {s['detail']}" for s in entry["sources"][:SHOWN_SOURCES] if s.get("detail")]
    task_type = ", ".join(entry["apps"]) if entry.get("apps") else entry.get("task_type") or "unspecified"
    user = render(USER, templates, task_type=task_type, key=entry["key"], guideline=lesson["guideline"],
                  applicability=lesson["applicability"], notes=notes,
                  more=len(entry["sources"]) - SHOWN_SOURCES)
    return [{"role": "system", "content": instructions(templates)}, {"role": "user", "content": user.removesuffix("\n")}]


def instructions(templates: str | None = None) -> str:
    """The merge's system message (how a fake endpoint tells a merge from a compilation)."""
    from ..templates import render

    return render(SYSTEM, templates).removesuffix("\n")


def check_guideline(text: str, offline: str) -> tuple[str | None, str | None]:
    """(the guideline, None) when the answer is fit for the page, else (None, what is wrong)."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        return None, "the answer is not JSON"
    value = data.get("guideline") if isinstance(data, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None, "the answer has no guideline string"
    value = " ".join(value.split())
    if len(value) > MAX_CHARS:
        return None, f"the guideline is {len(value)} characters (at most {MAX_CHARS})"
    if _echo_problems("$.guideline", value, instructions()):
        return None, "the guideline repeats the instructions"
    if _TURN.search(value) or re.search(r"\bthis run\b", value, re.I):
        return None, "the guideline narrates one run"
    # a value of one episode: an id or number the offline wording does not hold, or a file path
    own = set(_VALUE.findall(value)) - set(_VALUE.findall(offline))
    if own:
        return None, f"the guideline copies values of one episode ({', '.join(sorted(own)[:3])})"
    if _PATHISH.search(value) and not _PATHISH.search(offline):
        return None, "the guideline names a file path"
    return value, None


async def _one(compiler, entry: dict, tags: list[str], lesson: dict) -> None:
    offline = lesson["guideline"]  # what the model was shown: the values it may repeat
    messages = _messages(entry, lesson, getattr(compiler, "templates", None))
    key = compiler.cache_key_for(messages, "insight-merge")
    text = None
    if compiler.cache is not None and compiler.read_cache:
        hit = compiler.cache.get(key)
        if hit is not None:
            compiler.stats().cache_hits += 1
            text = hit.text
    if text is None:
        body: dict[str, Any] = {"model": compiler.model, "messages": messages,
                                "response_format": {"type": "json_object"}}
        if compiler.max_tokens is not None:
            body["max_tokens"] = compiler.max_tokens
        try:
            text, usage = await compiler.transport.send(body, "json_object")
        except Failure as exc:  # a transport fault after the transport's own retries
            _fallback(entry, exc.reason)
            return
        except (FormatRejected, AnswerTooLarge) as exc:  # the server refused JSON mode, or an endless answer
            _fallback(entry, str(exc))
            return
        text = compiler.redacted(text)
        guideline, problem = check_guideline(text, offline)
        if problem is None and compiler.cache is not None:
            compiler.cache.put(key, CachedAnswer(text, dict(usage), runs=sorted(tags)), model=compiler.model,
                               mode="insight-merge", messages=messages)
    else:
        guideline, problem = check_guideline(text, offline)
    if problem is not None:
        _fallback(entry, problem)
        return
    entry["guideline"], entry["guideline_by"], entry["fallback_reason"] = guideline, "llm", None


def _fallback(entry: dict, reason: str) -> None:
    entry["guideline_by"], entry["fallback_reason"] = "offline-fallback", reason[:300]


async def merge_all(compiler, insights: list[dict], runs: list[dict], lessons: dict[str, dict]) -> None:
    """Give every insight the model's merged guideline (or record the fallback), in place, on
    the running loop: a build merges on the loop (and HTTP client) its runs were compiled on.
    ``lessons``: insight id -> the lesson its own sources taught (corpus/insights.members_text),
    the only wording the model is shown."""
    tags = {r["step"]: r["content_hash"] for r in runs if r.get("content_hash")}
    await asyncio.gather(*(_one(compiler, e, [tags[s["step"]] for s in e["sources"] if s["step"] in tags],
                                lessons[e["id"]]) for e in insights))


async def _all(compiler, insights: list[dict], runs: list[dict], lessons: dict[str, dict]) -> None:
    try:
        await merge_all(compiler, insights, runs, lessons)
    finally:
        await compiler.aclose()


def merge_guidelines(compiler, insights: list[dict], runs: list[dict], lessons: dict[str, dict]) -> None:
    """``merge_all`` on a loop of its own (the client is closed after it)."""
    asyncio.run(_all(compiler, insights, runs, lessons))


MERGED_FIELDS = ("guideline", "guideline_by", "fallback_reason")
NOT_MERGED_YET = "forget asks no model: the next compile or add merges this insight again"


def keep_unchanged(insights: list[dict], previous: dict[str, dict], unchanged_steps: set[str]) -> list[dict]:
    """Give every insight whose group is the one the corpus holds its published merge, and
    return the others (to be merged). The same group: the same key and sources, every source
    a run carried over unchanged (so the same lessons, the same prompt, the answer the cache
    would give), merged by the model before (a fallback is asked again). No prompt is
    rendered and no cache file read for those: an add pays only for the groups it joined."""
    todo = []
    for entry in insights:
        old = previous.get(entry["id"])
        if (old is not None and old.get("guideline_by") == "llm" and old.get("key") == entry["key"]
                and old.get("sources") == entry["sources"]
                and all(s["step"] in unchanged_steps for s in entry["sources"])):
            entry.update({k: old.get(k) for k in MERGED_FIELDS})
        else:
            todo.append(entry)
    return todo


def carry_over(insights: list[dict], previous: list[dict]) -> None:
    """Without a model (``forget``): an insight gathered from exactly the sources it had keeps
    the merged guideline it had; one whose sources changed keeps the offline wording, marked
    so. Insights of a corpus that never had a merge are left alone."""
    before = {e["id"]: e for e in previous if isinstance(e, dict) and e.get("guideline_by")}
    if not before:
        return
    for entry in insights:
        old = before.get(entry["id"])
        if old is not None and old.get("sources") == entry["sources"] and old.get("key") == entry["key"]:
            entry.update({k: old.get(k) for k in MERGED_FIELDS})
        else:
            _fallback(entry, NOT_MERGED_YET)
