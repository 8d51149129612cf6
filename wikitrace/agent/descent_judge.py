"""The descent judge (paper §5.2 / Appendix E.1): trigger, target and effect of each burst.

With a model configured (``--model`` / ``--base-url`` / ``OPENAI_*``, as for ``compile``),
each burst gets one call per axis — the system prompt, the insights the agent saw, the
transcript with every burst marked, and the axis prompt — and the effect gets ``judges``
calls whose majority decides (no majority: ``code`` is null and the votes are kept). The
calls go through the compiler's own HTTP client: the same retries and backoff, the same
response-mode fallback (json_schema -> json_object -> text) and the same on-disk cache.

An answer is checked: the code must be one of the axis's codes (spellings such as
``insight_doubt`` are accepted) and the quote must appear word for word in the message
it names. A failing answer is sent back once with its problems; if the second answer
fails too, or the call fails, that axis is labelled by the offline rules
(``descent_rules``) with ``judge: offline`` and the reason. Transcripts are redacted
before anything is sent. Without a model every label is offline.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..llm.cache import CachedAnswer
from ..compilers.llm import LLMCompiler, RESPONSE_MODES, extract_json
from ..llm.transport import Failure as _Failure
from ..templates import render
from .descent_rules import AXES, Burst, Label, Transcript, agent_text_of, offline_labels, render_transcript

_AXIS_TEMPLATES = {axis: f"prompts/descent_{axis}.user.j2" for axis in AXES}
MIN_QUOTE = 12


def normalise_code(value: Any, axis: str) -> str | None:
    if not isinstance(value, str):
        return None
    text = re.sub(r"[\s_\-]+", " ", value.strip().strip('"').lower())
    return text if text in AXES[axis] else None


def _squash(text: str) -> str:
    return " ".join(text.split())


def check_answer(data: Any, axis: str, tr: Transcript, burst: int) -> tuple[Label | None, list[str]]:
    """(the label, []) or (None, the problems to send back)."""
    if not isinstance(data, dict):
        return None, ["the answer is not a JSON object"]
    problems = []
    code = normalise_code(data.get("code"), axis)
    if code is None:
        problems.append(f"code {data.get('code')!r} is not one of: {', '.join(AXES[axis])}")
    quote = data.get("quote") if isinstance(data.get("quote"), str) else ""
    msg = data.get("msg")
    if isinstance(msg, str) and msg.strip().isdecimal() and len(msg.strip()) <= 9:  # no message has more
        msg = int(msg)
    if not isinstance(msg, int) or isinstance(msg, bool):
        problems.append("msg must be the number of the message the quote comes from")
    elif len(quote.strip()) < MIN_QUOTE:
        problems.append(f"the quote must be at least {MIN_QUOTE} characters copied from message {msg}")
    elif _squash(quote) not in _squash(agent_text_of(tr, msg)):
        problems.append(f"the quote {quote[:80]!r} is not found in message {msg}")
    if problems:
        return None, problems
    note = data.get("note") if isinstance(data.get("note"), str) else ""
    return Label(code, quote.strip(), msg, note.strip(), judge="llm"), []


def parsed_label(text: str, axis: str, tr: Transcript, burst: int) -> tuple[Label | None, list[str]]:
    """``check_answer`` on a reply's JSON; a reply that holds none (or JSON nested too deep
    to read) is a problem to send back, like a wrong code."""
    try:
        return check_answer(extract_json(text), axis, tr, burst)
    except (ValueError, RecursionError) as exc:
        return None, [str(exc) if isinstance(exc, ValueError) else "the answer's JSON is nested too deeply to read"]


def _schema(axis: str) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False,
            "required": ["burst", "code", "quote", "msg", "note"],
            "properties": {"burst": {"type": "integer"}, "code": {"type": "string", "enum": list(AXES[axis])},
                           "quote": {"type": "string"}, "msg": {"type": "integer"}, "note": {"type": "string"}}}


class JudgeClient(LLMCompiler):
    """The compiler's client, asked for a descent label instead of a compilation."""

    def request_body(self, messages: list[dict[str, str]], outcome: str, mode: str) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        axis = outcome  # the compiler's "outcome" slot carries the axis here
        if mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": f"descent_{axis}", "schema": _schema(axis), "strict": False}}
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    async def ask(self, messages: list[dict[str, str]], axis: str) -> str:
        """One answer (cache, retries, mode fallback); raises ``_Failure`` when there is none."""
        first = await self.first_answer({m: messages for m in RESPONSE_MODES}, axis)
        if first.too_large is not None:
            raise _Failure(f"schema: {first.too_large}")
        text = self.redacted(first.text)  # a key the model wrote back is never cached or used
        if not first.cached and self.cache is not None:  # every answer, as the judge always did
            self.cache.put(first.key, CachedAnswer(text, first.usage), model=self.model, mode=first.mode, messages=[])
        return text


class DescentJudge:
    def __init__(self, client: JudgeClient | None, *, judges: int = 3, templates: str | Path | None = None):
        if judges < 1:
            raise ValueError("judges must be at least 1")
        self.client, self.judges, self.templates = client, judges, templates
        self.reason_offline = None if client else "no LLM configured"

    def describe(self) -> str:
        return f"llm ({self.client.config.describe()})" if self.client else "offline"

    async def label(self, tr: Transcript, bursts: list[Burst]) -> None:
        """Fill ``burst.labels`` for every burst (never raises for a model fault)."""
        starts = [b.start_turn for b in bursts] + [None]
        fallback = {b.number: offline_labels(tr, b, starts[i + 1]) for i, b in enumerate(bursts)}
        if self.client is None:
            for b in bursts:
                b.labels = fallback[b.number]
            return
        from ..redact import redact_text

        transcript, _ = redact_text(render_transcript(tr, bursts))
        insights, _ = redact_text(tr.insights_block or "(no insights block was found in the first message)")
        system = render("prompts/descent_judge.system.j2", self.templates)
        base = [{"role": "system", "content": system},
                {"role": "user", "content": "1. Insights the agent saw:\n\n" + insights},
                {"role": "user", "content": "2. The transcript, with the bursts marked:\n\n" + transcript}]

        async def one(b: Burst, axis: str, judge_of: str | None) -> Label:
            # Only a model that gives no answer falls back; a template error (a broken override)
            # or a bug is not the model's fault and is not hidden as one.
            axis_prompt = render(f"prompts/descent_{axis}.user.j2", self.templates, burst=b.number, judge_of=judge_of)
            messages = base + [{"role": "user", "content": axis_prompt}]
            try:
                text = await self.client.ask(messages, axis)
                got, problems = parsed_label(text, axis, tr, b.number)
                if got is None:
                    self.client._stats.repairs += 1
                    repair = render("prompts/descent_repair.user.j2", self.templates, problems=problems,
                                    burst=b.number, codes=AXES[axis])
                    text = await self.client.ask(messages + [{"role": "assistant", "content": text},
                                                             {"role": "user", "content": repair}], axis)
                    got, problems = parsed_label(text, axis, tr, b.number)
                if got is not None:
                    return got
                reason = "answer failed the checks twice: " + problems[0]
            except _Failure as exc:  # the model gave no answer: timeouts, refusals, 5xx after retries
                reason = exc.reason
            self.client._stats.fallbacks += 1
            off = fallback[b.number][axis]
            return Label(off.code, off.quote, off.msg, off.note, judge="offline", reason=reason[:200])

        async def burst_labels(b: Burst) -> dict[str, Label]:
            n = self.judges
            jobs = [one(b, "trigger", None), one(b, "target", None)]
            jobs += [one(b, "effect", f"{k} of {n}" if n > 1 else None) for k in range(1, n + 1)]
            trig, targ, *effects = await asyncio.gather(*jobs)
            return {"trigger": trig, "target": targ, "effect": majority(effects)}

        results = await asyncio.gather(*(burst_labels(b) for b in bursts))
        for b, labels in zip(bursts, results):
            b.labels = labels


def majority(votes: list[Label]) -> Label:
    """The effect most judges gave (with the first such judge's evidence); no majority of
    more than half: code None, votes kept."""
    if len(votes) == 1:
        return votes[0]
    codes = [v.code for v in votes]
    top, count = Counter(codes).most_common(1)[0]
    if count * 2 <= len(votes):
        return Label(None, note="no majority among the judges", votes=codes,
                     judge="llm" if any(v.judge == "llm" for v in votes) else "offline")
    chosen = next(v for v in votes if v.code == top)
    return Label(chosen.code, chosen.quote, chosen.msg, chosen.note, judge=chosen.judge,
                 reason=chosen.reason, votes=codes)


def make_judge(model: str | None, base_url: str | None, offline: bool, cache_dir: Path | None,
               judges: int, templates: str | Path | None = None, concurrency: int = 8) -> DescentJudge:
    from ..llm.config import resolve

    config = None if offline else resolve(model, base_url)
    client = JudgeClient(config, cache_dir=cache_dir, templates=templates, concurrency=concurrency) if config else None
    judge = DescentJudge(client, judges=judges, templates=templates)
    if offline:
        judge.reason_offline = "--offline"
    return judge


# --- the paper's tables ------------------------------------------------------------------------

def distributions(bursts: list[Burst]) -> dict[str, Any]:
    """Shares of bursts per trigger, target and effect, and trigger x target (Figures 8-9)."""
    n = len(bursts)
    out: dict[str, Any] = {"bursts": n}
    for axis, codes in AXES.items():
        counts = Counter(b.labels[axis].code if axis in b.labels else None for b in bursts)
        rows = [{"code": c, "count": counts.get(c, 0), "share": round(counts.get(c, 0) / n, 4) if n else 0.0}
                for c in codes]
        missing = counts.get(None, 0)
        if missing:
            rows.append({"code": "no majority" if axis == "effect" else "unlabelled", "count": missing,
                         "share": round(missing / n, 4)})
        out[axis] = rows
    pairs = Counter((b.labels["trigger"].code, b.labels["target"].code) for b in bursts if "trigger" in b.labels)
    out["trigger_x_target"] = [{"trigger": t, "target": g, "count": c} for (t, g), c in sorted(
        pairs.items(), key=lambda kv: (-kv[1], str(kv[0])))]
    out["changed_plan"] = sum(b.labels.get("effect") is not None and b.labels["effect"].code in
                              ("revise insight", "refine insight", "new fact") for b in bursts)
    return out


def labels_json(b: Burst) -> dict[str, Any]:
    return {"burst": b.number, "start_turn": b.start_turn, "opened": b.opened, "outcomes": b.outcomes,
            **{axis: lab.to_dict() for axis, lab in b.labels.items()}}


def judge_file(path: Path, judge: DescentJudge, mount_path: str, tools_path: str):
    """[(report, bursts)] for every run in the transcript file, every burst labelled."""
    from .descent_rules import bursts_of, read_transcript
    from .descents import _Classifier, analyse_turns, read_transcripts

    clf = _Classifier(mount_path, tools_path)
    runs = []
    for name, turns in read_transcripts(Path(path)):
        report = analyse_turns(turns, name, mount_path, tools_path)
        tr = read_transcript(turns, clf)
        runs.append((report, tr, bursts_of(tr, report.descents)))

    async def go():
        try:
            await asyncio.gather(*(judge.label(tr, bursts) for _, tr, bursts in runs if bursts))
        finally:
            if judge.client is not None:
                await judge.client.aclose()

    asyncio.run(go())
    return [(report, bursts) for report, _, bursts in runs]


def judge_json(judged, judge: DescentJudge) -> dict[str, Any]:
    runs = []
    for report, bursts in judged:
        d = report.to_dict()
        by_index = {b.descent.index: b for b in bursts}
        for item in d["descents"]:
            b = by_index.get(item["index"])
            item["labels"] = labels_json(b) if b else None
        runs.append(d)
    every = [b for _, bursts in judged for b in bursts]
    out = {"judge": judge.describe(), "runs": runs, "distributions": distributions(every)}
    if judge.reason_offline:
        out["judge_reason"] = judge.reason_offline
    if judge.client is not None:
        out["llm_stats"] = judge.client.stats().as_dict()
        fell_back = sum(lab.judge == "offline" for b in every for lab in b.labels.values())
        out["offline_labels"] = fell_back
    return out
