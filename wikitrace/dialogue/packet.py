"""The evidence packet's context: the exact text handed to a model, bounded by the budget.

Everything a model reads - session headers, message lines, resolved temporal anchors and
superseded-claim notes - is counted in whitespace tokens against ``budget``; scores, ids and
routing details go to the packet's diagnostics, which are never counted nor fed to a model.
The same packer serves the flat baselines of the benchmark, so every method pays the same
rendering cost for the same messages."""

from __future__ import annotations

from dataclasses import dataclass, field


def count_tokens(text: str) -> int:
    """The budget's unit: whitespace-separated tokens."""
    return len(text.split())


def session_header(session: str, date: str | None) -> str:
    return f"Session {session} ({date}):" if date else f"Session {session}:"


def message_text(row: list, note: str = "") -> str:
    """One context line for an index message row ``[id, speaker, date, session, text, snapshot]``;
    the session date is in the group header, not repeated on every line."""
    mid, speaker, _date, _session, text, _snap = row
    line = f"[{mid}] {speaker}: {' '.join(str(text).split())}"
    return f"{line} {note}" if note else line


@dataclass
class Context:
    text: str
    tokens: int
    messages: list[int] = field(default_factory=list)      # message indices, dialogue order
    picked: list[int] = field(default_factory=list)        # the same, in the order they were picked


def pack_context(order: list[int], rows: list[list], budget: int, notes: dict[int, str] | None = None) -> Context:
    """Take messages in priority ``order`` while the whole rendered text fits ``budget`` (a line that
    would overflow is skipped, a shorter later one may still fit), then render them in dialogue
    order grouped under one header per session. A message's ``notes`` travel with it and are paid
    with it; a session header is paid by the first message of its session."""
    notes = notes or {}
    used, chosen, opened = 0, [], set()
    for mi in order:
        row = rows[mi]
        cost = count_tokens(message_text(row, notes.get(mi, "")))
        if row[3] not in opened:
            cost += count_tokens(session_header(row[3], row[2]))
        if used + cost <= budget:
            chosen.append(mi)
            opened.add(row[3])
            used += cost
    picked = list(chosen)
    chosen.sort()
    lines, current = [], None
    for mi in chosen:
        row = rows[mi]
        if row[3] != current:
            current = row[3]
            lines.append(session_header(row[3], row[2]))
        lines.append(message_text(row, notes.get(mi, "")))
    text = "\n".join(lines)
    return Context(text=text, tokens=count_tokens(text), messages=chosen, picked=picked)


ANSWER_LABEL = "Answer (model output, not part of the evidence): "


def packet_markdown(question: str, embedder: str, context: str, answer: dict | None = None) -> str:
    """The packet as ``wikitrace query`` prints it: the question, the model's answer (or that there
    is none), the embedding backend, then the context. Written out here rather than in a template:
    a one-shot query would otherwise spend more time importing jinja2 than retrieving. Every value
    shows control characters as escapes, as the page templates do."""
    from ..controls import visible

    def oneline(value) -> str:
        return visible(" ".join(str(value or "").split()))

    if not answer:
        said = "No LLM is configured: evidence only."
    elif answer.get("can_answer"):
        said = (ANSWER_LABEL + oneline(answer.get("final_answer"))
                + f" (refs: {visible(', '.join(map(str, answer.get('supporting_source_refs') or [])))})")
    else:
        said = ANSWER_LABEL + "abstained: " + oneline(answer.get("abstain_reason"))
    return f"# Evidence for: {oneline(question)}\n{said}\nEmbeddings: {visible(embedder)}.\n\n{visible(context)}\n"


def header_tokens(question: str, embedder: str) -> int:
    """Tokens the header of an evidence-only packet takes (paid out of the budget first)."""
    return count_tokens(packet_markdown(question, embedder, ""))
