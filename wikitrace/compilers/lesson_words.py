"""The words a lesson is made of, all drawn from the run itself.

Tool names, argument keys and where each argument came from, the look-ups before a
call, the task sentence closest to it, the agent's own reasoning and last message,
the reason a call states for itself, the answer the task expected (when the log
records one) and sentences of the run's system prompt. Values that hold only in one
episode are masked: ids and numbers (text.generic) and the names the run's records
give a person or thing (the values of their ``*name`` fields). Double quotes inside a
quote become single ones.
"""

from __future__ import annotations

import math
import re

from .reading import Call, Reading, _json_fields, _occurs, check_arguments, command_of, is_command_line, leaves
from .rules import RULE, _words, sentences
from .text import clip, first_line, generic

# A call that hands the conversation to a person: its failure is about *whether* to hand
# off, never about its arguments.
_HAND_OFF = re.compile(r"transfer|hand_?off|escalat|human|operator", re.I)


def is_hand_off(call: Call) -> bool:
    return bool(_HAND_OFF.search(call.name))


def kind_of(r: Reading) -> str:
    task = r.run.task
    return task.task_type or (", ".join(task.apps) if task.apps else "")


def for_kind(r: Reading) -> str:
    kind = kind_of(r)
    return f"{kind} tasks" if kind else "tasks like this one"


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


# A proper name as records write it: one to four capitalised words (``Mia``, ``Sophia Silva``);
# not a file, a function or a product code, which are the domain's own words.
_PROPER = re.compile(r"[A-Z][a-z'’-]+(?: [A-Z][a-z'’-]+){0,3}")


def episode_names(r: Reading) -> list[str]:
    """Names the run's records give (values of fields whose key ends in ``name``: a
    passenger's first and last name, a user's name): episode values, like ids. Longest first."""
    if "names" not in r.memo:
        found = {v.strip() for t in r.facts if t.type == "function_call"
                 for k, v in _json_fields(t.result or "") if k.lower().endswith("name") and isinstance(v, str)
                 and _PROPER.fullmatch(v.strip())}
        found |= _names_in_ids(r) | _introduced(r)
        found |= {v for c in r.calls if isinstance(c.turn.arguments, dict)  # ids with no digit: ``MDCLVA``
                  for k, v in leaves(c.turn.arguments) if _last(k).lower().endswith("id") and isinstance(v, str) and v.strip()}
        r.memo["names"] = sorted(found, key=len, reverse=True)
    return r.memo["names"]


def _last(path: str) -> str:
    return re.split(r"[.\[]", path)[-1] if path else ""


def _names_in_ids(r: Reading) -> set[str]:
    """Words an id is built from (``sophia_silva_7557``) that the task or the user writes as a
    proper name and the system prompt never uses: a person's name carried in an id."""
    told = " ".join([r.run.task.instruction or ""] + [t.content or "" for t in r.facts if t.type == "message"])
    policy = (r.system.content or "").lower() if r.system else ""
    ids = [v for c in r.calls for _, v in leaves(c.turn.arguments if isinstance(c.turn.arguments, dict) else {})]
    ids += [v for t in r.facts if t.type == "function_call" for k, v in _json_fields(t.result or "") if k.lower().endswith("id")]
    parts = {p for v in ids if isinstance(v, str) and re.fullmatch(r"[A-Za-z]+(?:_[A-Za-z]+)*_\d+", v)
             for p in v.split("_")[:-1] if len(p) >= 3}
    return {p.capitalize() for p in parts if re.search(r"\b" + re.escape(p.capitalize()) + r"\b", told)
            and p.lower() not in policy}


_INTRODUCED = re.compile(r"\b(?:[Mm]y name is|I am|I'm|[Yy]ou are|[Tt]his is)\s+([A-Z][a-z'’-]+(?: [A-Z][a-z'’-]+){0,2})")


def _introduced(r: Reading) -> set[str]:
    """Names a person gives themselves in the task or a user message ("My name is Mia Li",
    "You are Mia Li"), each word too: a first name alone is still a name. Words the system
    prompt uses are kept (they are the domain's)."""
    told = [r.run.task.instruction or ""] + [t.content or "" for t in r.facts if t.type == "message"]
    policy = (r.system.content or "").lower() if r.system else ""
    found: set[str] = set()
    for text in told:
        for m in _INTRODUCED.finditer(text):
            words = [w for w in m.group(1).split() if not re.search(r"\b" + re.escape(w.lower()) + r"\b", policy)]
            if words:
                found |= set(words) | ({" ".join(words)} if len(words) > 1 else set())
    return found


def masked(r: Reading, text: str) -> str:
    """``text`` with the episode's values masked: ids and numbers, and the names its records hold."""
    low = text.lower()
    for name in episode_names(r):
        if _occurs(name, low):
            text = re.sub(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", "…", text, flags=re.I)
            low = text.lower()
    return generic(text)


def task_gist(r: Reading, words: set[str], limit: int = 110) -> str:
    """The sentence of the task that shares most words with ``words`` and then with the
    run's tools and argument keys (the longer on a tie), values masked."""
    domain = set().union(*(call_words(c) for c in r.calls)) if r.calls else set()
    best, score = "", (-1, -1, -1)
    for s in sentences(r.run.task.instruction or ""):
        plain = masked(r, s)
        if len(re.findall(r"[A-Za-z]{3,}", plain)) < 4:  # mostly ids and numbers: says nothing
            continue
        found = _words(s)
        key = (len(found & words), len(found & domain), len(plain))
        if key > score:
            best, score = plain, key
    return clip(best, limit).replace('"', "'")


def call_label(c: Call) -> str:
    """A call named with what it was asked, short: ``Search[Nick Park]``, ``get_user(user_id)``."""
    args = c.turn.arguments
    if isinstance(args, str) and 0 < len(args) <= 50:
        return f"{c.name}[{generic(args)}]".replace('"', "'")
    if isinstance(args, dict) and args:
        return f"{c.name}({', '.join(list(args)[:3])})"
    return c.name


def lookup_chain(r: Reading, before: Call | None, limit: int = 4, changes: bool = False) -> str:
    """The look-ups that went through before a call (all of them for None), with short
    arguments: ``Search[Nick Park]``; with ``changes``, the other calls that went through
    too (the item and options a shop run clicked before it bought)."""
    shown = [call_label(c) for c in r.calls
             if not ((before is not None and c.n >= before.n) or (c.writes and not changes) or c.error)]
    shown = list(dict.fromkeys(shown))
    if len(shown) > limit:
        shown = shown[: limit - 1] + [f"{len(shown) - limit + 1} more", ]
    return ", ".join(shown)


def call_words(call: Call) -> set[str]:
    keys = " ".join(call.turn.arguments) if isinstance(call.turn.arguments, dict) else ""
    return _words(f"{call.name} {keys}".replace("_", " "))


def such_as(r: Reading, call: Call | None = None, said: str = "") -> str:
    """The task sentence closest to a call (and to what it was told, for an error), as a clause."""
    gist = task_gist(r, (call_words(call) if call is not None else set()) | _words(generic(said).replace("_", " ")))
    return f", such as: \"{gist}\"" if gist else ""


def reasoned(r: Reading, call: Call) -> str:
    """The run's own reasoning that came with a call, as a short quote (nothing when the log has none)."""
    said = said_by(r, call.turn.reasoning, 100)
    return f" (it reasoned: \"{said}\")" if said else ""


def last_said(r: Reading) -> str:
    """What the agent told the user about the request, as a short quote: the sentence of its
    messages that shares most words with the task (a later one on a tie), not a closing
    pleasantry; its last message's first line when none shares a word."""
    said = [t for t in r.run.turns if t.type in ("message", "answer") and t.role == "assistant" and t.content]
    if not said:
        return ""
    task = _words(r.run.task.instruction or "")
    best, score = first_line(said[-1].content, 200), 0
    for t in said:
        for s in sentences(t.content):
            shared = len(_words(s) & task)
            if shared >= score and shared > 0:
                best, score = s, shared
    quote = clip(masked(r, best), 120).replace('"', "'")
    return f" (it told the user: \"{quote}\")" if quote else ""


def said_by(r: Reading, text: str | None, limit: int) -> str:
    """What a message or thought says, as a short quote with the episode's values masked."""
    return masked(r, first_line(text, limit))


def rule_quote(sentence: str, limit: int = 160) -> str:
    return clip(sentence, limit).replace('"', "'")


def what_it_did(c: Call) -> str:
    """A state-changing call named by its tool and what it ran: ``bash (mvn -q test)``."""
    command = command_of(c.turn)
    if command is None or command.strip() == c.name:  # ``submit`` run as ``submit``: nothing to add
        return c.name
    return f"{c.name} ({clip(generic(' '.join(command.split()[:3])), 40)})".replace('"', "'")


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


def answer_seen_in(r: Reading, gold: str, before: Call | None = None) -> Call | None:
    """The first call (before ``before``, when given) whose observation holds the expected answer."""
    return next((c for c in r.calls if (before is None or c.n < before.n) and not c.error and c.turn.result
                 and _occurs(gold, c.turn.result.lower())), None)


def the_expected(gold: str) -> str:
    """The expected answer named in a lesson: quoted when masking leaves words to read."""
    shown = clip(generic(gold), 60).replace('"', "'")
    return f"the expected answer, \"{shown}\"," if re.search(r"[A-Za-z]{3}", shown) else "the expected answer"


def stated_reason(r: Reading, call: Call, limit: int = 150) -> str:
    """The reason a call gives for itself in its own words (a hand-off's summary: its longest
    prose argument), first sentence, episode values masked; "" when it states none."""
    args = call.turn.arguments
    texts = [v for v in (args.values() if isinstance(args, dict) else [args]) if isinstance(v, str)]
    prose = max((t for t in texts if len(t.split()) >= 4 and not is_command_line(call.turn)), key=len, default="")
    first = sentences(prose)[:1]
    return clip(masked(r, first[0]), limit).replace('"', "'") if first else ""


def rule_on(r: Reading, text: str, skip: set[str], within: list[str] | None = None, extra: str = "") -> str:
    """The rule sentence of the run's system prompt that ``text`` bears on most: words
    shared with it (not in ``skip``) weighed by how rare they are among the prompt's
    sentences; at least two shared words that are in fewer than half of them, else "".
    A hand-off's stated reason finds the rule it rests on this way."""
    if r.system is None or not text:
        return ""
    all_sentences = sentences(r.system.content or "")
    counts: dict[str, int] = {}
    for s in all_sentences:
        for w in _words(s):
            counts[w] = counts.get(w, 0) + 1
    n = len(all_sentences)
    wanted = {w for w in _words(text) - skip if counts.get(w, 0) * 2 < n}
    bonus = {w for w in _words(extra) if counts.get(w, 0) * 2 < n} - wanted  # weighs in, does not count towards two
    best, score = "", 0.0
    for s in all_sentences if within is None else within:
        own = _words(s)
        shared = wanted & own
        weight = sum(math.log(n / counts[w]) for w in shared | (bonus & own)) / math.sqrt(len(own))  # long ones share more by chance
        if RULE.search(s) and len(shared) >= 2 and weight > score:
            best, score = s, weight
    return best


def record_facts(r: Reading, call: Call) -> tuple[str, list[tuple[str, str]]]:
    """What the look-up that supplied a call's arguments said about the thing the call acts
    on, as (tool, [(field, value)]): fields whose value is a word or two, not an id, a number
    or a name (``cabin: basic_economy``, ``insurance: no``)."""
    by_turn = {c.n: c for c in r.calls}
    names = {n.casefold() for n in episode_names(r)}
    for a in check_arguments(r, call.turn):
        source = by_turn.get(a.seen_at) if a.seen_in == "observation" else None
        if source is None:
            continue
        facts = [(k, v) for k, v in _json_fields(source.turn.result or "")
                 if isinstance(v, str) and re.fullmatch(r"[A-Za-z][A-Za-z _-]{1,30}", v) and len(v.split()) <= 3
                 and v.casefold() not in names and not k.lower().endswith(("id", "name"))]
        if facts:
            return source.name, list(dict.fromkeys(facts))
    return "", []


def rule_for_call(r: Reading, call: Call, text: str) -> str:
    """The rule sentence of the system prompt on this call's action (it holds a word of the
    tool name) that shares most telling words with ``text`` (the request, the facts the run
    looked up) and the tool name, weighed as in rule_on; "" when none shares two words with
    ``text`` beyond the tool name's."""
    action = _words(call.name.replace("_", " "))
    if r.system is None:
        return ""
    on_action = [s for s in sentences(r.system.content or "") if action & _words(s)]
    return rule_on(r, text, action, within=on_action, extra=call.name.replace("_", " "))


_PLAN = re.compile(r"\b(should|will|need to|instead|next time|must|plan)\b", re.I)


def earlier_plan(r: Reading) -> str:
    """The plan the run was given from an earlier failed attempt (a self-reflection the log
    records in ``task.metadata["reflections"]``): the latest one's sentence that says what
    to do, values masked; "" when the run was given none."""
    notes = (r.run.task.metadata or {}).get("reflections")
    if not isinstance(notes, list) or not notes:
        return ""
    said = sentences(str(notes[-1]))
    plan = next((s for s in said if _PLAN.search(s)), said[0] if said else "")
    return clip(masked(r, plan).rstrip(". "), 110).replace('"', "'")
