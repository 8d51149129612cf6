"""What the lessons read from a run: where each argument of a call came from, how a
later call differed from a failed one, a final free-form answer and the answer the task
expected (when the log records one). Values of one episode are masked (text.generic);
double quotes inside a quote become single ones.
"""

from __future__ import annotations

import re

from .reading import Call, Reading, _occurs, check_arguments, is_command_line
from .text import clip, generic

# A call that hands the conversation to a person: its failure is about *whether* to hand
# off, never about its arguments.
_HAND_OFF = re.compile(r"transfer|hand_?off|escalat|human|operator", re.I)


def is_hand_off(call: Call) -> bool:
    return bool(_HAND_OFF.search(call.name))


def top_key(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def sources(r: Reading, call: Call) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """Which earlier tool showed each top-level argument, which came from the user, and the
    argument paths no earlier turn showed (a key with any such part is listed only there)."""
    by_turn = {c.n: c.name for c in r.calls}
    checks = check_arguments(r, call.turn)
    unseen = list(dict.fromkeys(a.path for a in checks if a.seen_at is None))
    doubtful = {top_key(p) for p in unseen}
    from_tool: dict[str, list[str]] = {}
    from_user: list[str] = []
    placed: set[str] = set()  # a key whose parts came from several places is named with its first
    for a in checks:
        key = top_key(a.path)
        if a.seen_at is None or key in doubtful or key in placed:
            continue
        placed.add(key)
        if a.seen_in == "user message":
            from_user.append(key)
        elif a.seen_in == "earlier call":
            from_tool.setdefault(f"the earlier {by_turn.get(a.seen_at, 'tool')} call", []).append(key)
        else:
            from_tool.setdefault(by_turn.get(a.seen_at, "a look-up"), []).append(key)
    dedup = lambda xs: list(dict.fromkeys(xs))  # noqa: E731
    return {t: dedup(k) for t, k in from_tool.items()}, dedup(from_user), unseen


def join(items: list[str], limit: int = 4) -> str:
    items = list(dict.fromkeys(items))
    shown = items[:limit] + ([f"{len(items) - limit} more"] if len(items) > limit else [])
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]






def free_form(w: Call) -> str | None:
    """The call's only argument when it is a plain string (an answer, a query), values masked."""
    args = w.turn.arguments
    if not isinstance(args, str) or not args.strip() or is_command_line(w.turn):
        return None
    return clip(generic(args.strip()), 80).replace('"', "'")


def what_changed(err: Call, fix: Call) -> str:
    """How a later call that went through differed from a failed one, in a phrase:
    "with reason changed", "with payment_id taken from what the error listed",
    "as Search[Nick Park], a name the error listed"."""
    x, y = err.turn.arguments, fix.turn.arguments
    listed = (err.turn.result or "").lower()
    if isinstance(x, dict) and isinstance(y, dict):
        changed = [k for k in dict.fromkeys([*x, *y]) if x.get(k) != y.get(k)]
        from_error = [k for k in changed if str(y.get(k, "")) and str(y.get(k)).lower() in listed]
        if from_error:
            return f"with {join(from_error)} taken from what the error listed"
        return f"with {join(changed)} changed" if changed else "with the same arguments, later"
    if isinstance(y, str) and y.strip() and y != x:
        shown = f"{fix.name}[{clip(generic(y.strip()), 60)}]".replace('"', "'")
        return f"as {shown}" + (", a name the error listed" if y.strip().lower() in listed else "")
    return "with the same arguments, later"


def expected_answer(r: Reading) -> str | None:
    """The answer the task expected, when the log records it (a QA log's gold answer)."""
    gold = (r.run.task.metadata or {}).get("gold_answer")
    return gold.strip() if isinstance(gold, str) and gold.strip() else None


def is_label(answer: str) -> bool:
    """A verdict from a fixed set of labels (``SUPPORTS``, ``NOT ENOUGH INFO``): upper case, a few words."""
    return bool(re.search(r"[A-Z]{2}", answer)) and answer == answer.upper() and len(answer.split()) <= 4


def is_verdict(r: Reading, answer: str) -> bool:
    """A label of the task's fixed set: shaped like one (``is_label``) and named by the run's
    own instructions (system prompt or task text), so an upper-case name such as a call sign
    (``KXII``) is an answer, not a verdict."""
    if not is_label(answer):
        return False
    told = " ".join(t for t in ((r.system.content if r.system is not None else None) or "",
                                r.run.task.instruction or "") if t)
    return re.search(rf"(?<![\w]){re.escape(answer)}(?![\w])", told) is not None


def answer_seen_in(r: Reading, gold: str, before: Call | None = None) -> Call | None:
    """The first call (before ``before``, when given) whose observation holds the expected answer."""
    return next((c for c in r.calls if (before is None or c.n < before.n) and not c.error and c.turn.result
                 and _occurs(gold, c.turn.result.lower())), None)


_WORD = re.compile(r"\w+")


def followed(r: Reading, c: Call) -> Call | None:
    """For a free-text look-up whose words beyond the task text all appear in one earlier answer,
    the latest such answer's call (the run searched a name a page had shown); else None."""
    if free_form(c) is None:
        return None
    task = set(_WORD.findall((r.run.task.instruction or "").casefold()))
    new = set(_WORD.findall(str(c.turn.arguments).casefold())) - task
    if not new:
        return None
    return next((x for x in reversed(r.calls) if x.n < c.n and not x.error and x.turn.result
                 and new <= set(_WORD.findall(x.turn.result.casefold()))), None)

