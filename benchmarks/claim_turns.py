"""Whether each turn a compiled corpus cites beside a claim holds what the claim says it holds.

A page that says a value came "from get_user_details's answer (turn 4)" or "from the user (its
turn 3)", or that a call was made "at turn 16", sends a reader to that turn; if the turn does not
show the value (or the call), the claim is false whatever the rest of the sentence says. This
reads every compilation and insight page of a corpus with the run logs under ``raw/`` and sorts
each such claim:

- *kind*: the cited turn is not a message of the user / an answer of the named tool;
- *holds*: a value claim whose turn holds none of the values the call sent under the argument
  (as a whole token, not inside a longer word or number), or not the quoted value;
- *echo*: the cited answer is the answer of a call that was itself sent the value, so it shows
  what the agent already had;
- *record*: the cited answer is about another record than the call's (its look-up was sent, or
  its answer holds at its top level, an id the call sends under the same key with another
  value: a reservation's payment history for a change to another reservation), or holds an id
  only as another item than the call's (its records of it, or the look-up's own arguments, give
  a field the call sends beside it another value: the same flight number on another date),
  while another turn before the call that was neither (a user message, or an answer that was
  no echo) held it;
- *stale*: after the cited turn and before the call, the user wrote the value again (or, for an
  id, the look-up of the call's own record showed it, where the cited answer was no such look-up):
  that later turn is the source;
- *taking*: a procedure lesson's "taking a from T" / "from the user's words" where no turn of
  that kind before the run's call holds a value the call sent under ``a`` (echoes aside, and
  for an id, answers about another record or item while another answer held it: see *record*);
- *took*: a page's "Looked up with T at turn N; a later call took a from what it returned": no
  later call sent under ``a`` a value turn N's answer held (not as its own argument) that the user
  did not give instead (a word or number a user message before the call wrote, naming its field
  for a number or a short word; an id, or a free-form text, a user message between turn N and the
  call wrote: a question holding its answer's words gave no answer);
- *at*, *named*: "X at turn N", "X (turn N)" with X a tool of the run: turn N is no call of X;
- *role*, *told*, *said-at*: "the agent's last message before it (turn N)", "the system prompt
  (turn N)", "the user's yes (turn N)", "the user message at turn N", "the error at turn N":
  turn N is not such a message or failed call;
- *past*: an insight's "turn N: got past it at turn M" (or "turn N (first met at turn K): ...") where N (or K) is no failed call, or M no call of
  the same tool that went through.

Each count is over the claims of that form the pages make ("claims"); a claim of a form the
script does not parse is not counted, so 0 wrong says nothing of other wording.

Usage: ``python benchmarks/claim_turns.py <corpus> [<corpus> ...] [--show N]``.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

_PLACE = re.compile(r"(?:the user|(\w+)'s answer)(?: had listed before that)? \((its )?turn (\d+)\)")
_STEP = re.compile(r"\[(step-\d+)\]\(")
_TICK = re.compile(r"`([^`]+)`")
_AT = re.compile(r"\b(\w+)(?:\([^)]*\))?(?:'s answer| returned| call)? (?:at|failed at|went through at) (its )?turn (\d+)")
# "(turn N)" after words that say what the turn is: the agent's message, the system prompt, the user's yes
_ROLE = re.compile(r"(message before it|agent last wrote|[Ii]ts last message|system prompt|user said yes|user's yes"
                   r"|system prompt's rule on \w+) "
                   r"\((its )?turn (\d+)\)")
_ROLES = {"system prompt": ("message", "system"), "user said yes": ("message", "user"), "user's yes": ("message", "user")}
_SAID_AT = re.compile(r"\b(user message|the error) at (its )?turn (\d+)")  # a user's message; a call that failed
_NAMED = re.compile(r"(?<!rule on )\b(\w+) \((its )?turn (\d+)\)")  # "get_reservation_details (turn 8)"
_PAST = re.compile(r"\): turn (\d+)(?: \(first met at turn (\d+)\))?: "
                   r"(?:got past it at turn (\d+)|sent the same call|tried other arguments)")


@dataclass
class Tally:
    claims: Counter = field(default_factory=Counter)  # by claim form
    wrong: Counter = field(default_factory=Counter)  # by fault
    examples: list[str] = field(default_factory=list)


@lru_cache(maxsize=None)
def _turns(root: str, step: str) -> dict[int, dict]:
    path = Path(root) / "raw" / step / "solver.full.jsonl"
    out: dict[int, dict] = {}
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        try:
            out[int(d["turn"])] = d
        except (KeyError, ValueError, TypeError):
            continue
    return out


def _args(t: dict):
    a = t.get("arguments")
    if isinstance(a, str):
        for parse in (json.loads, ast.literal_eval):
            try:
                return parse(a)
            except (ValueError, SyntaxError, TypeError):
                continue
    return a


def _leaves(node, path: str = ""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, f"{path}[{i}]")
    elif node is not None:
        yield path, node


def _top(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def _last(path: str) -> str:
    return re.split(r"[.\[\]]+", path.rstrip("]"))[-1]


def _text(t: dict) -> str:
    if t.get("type") == "function_call":
        return str(t.get("result") or "")
    return str(t.get("content") or "")


def _is_user(t: dict) -> bool:
    return t.get("type") == "message" and t.get("role") == "user"


def _is_error(t: dict) -> bool:
    return str(t.get("is_error")).lower() == "true"


_WORDS = "zero one two three four five six seven eight nine ten".split()


def holds(text: str, value) -> bool:
    """The value as a whole token of the text (case aside), or with "_" written as a space or "-",
    or a small count written as a word."""
    v = "true" if value is True else "false" if value is False else str(value)
    low = text.lower()
    spellings = {v.lower()} | ({v.lower().replace("_", s) for s in " -"} if "_" in v else set())
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(_WORDS):
        spellings.add(_WORDS[value])
    tail = r"(?:\.0)?(?![\w]|\.\d)" if isinstance(value, int) and not isinstance(value, bool) else r"(?![\w]|\.\d)"
    return any(re.search(rf"(?<![\w.]){re.escape(s)}{tail}", low) for s in spellings)


def answered(text: str, key: str, value) -> bool:
    """A yes/no value given in other words by a message that names the field ("no insurance, thanks")."""
    words = [w for w in re.split(r"[^a-z]+", key.lower()) if len(w) >= 3]
    return str(value).lower() in ("yes", "no", "true", "false") and any(w in text.lower() for w in words)


def _role(words: str) -> tuple[str, str]:
    """The (type, role) of the turn words such as "the system prompt (turn 0)" point at."""
    if words.startswith("system prompt"):
        return ("message", "system")
    return _ROLES.get(words, ("message", "assistant"))


def _values(turns: dict[int, dict], key: str, at: int | None, after: int) -> list[tuple[int, object]]:
    """(call turn, value) for each scalar a call sent under ``key`` (its top or last key): the call
    at ``at`` when given, else every call after ``after``."""
    out = []
    for n, t in sorted(turns.items()):
        if t.get("type") != "function_call" or n <= after or (at is not None and n != at):
            continue
        out += [(n, v) for p, v in _leaves(_args(t)) if key in (_top(p), _last(p))]
    return out


def _distinctive(v) -> bool:
    t = str(v)
    return not isinstance(v, (int, float)) and any(c.isdigit() for c in t) and any(c.isalpha() for c in t)


def _sent_before(turns: dict[int, dict], v, k: int) -> bool:
    """Whether a call before turn ``k`` was sent the value (an answer after it may only repeat it)."""
    return any(u.get("type") == "function_call" and v in [x for _p, x in _leaves(_args(u))]
               for n, u in turns.items() if n < k)


def _check_place(root: str, step: str, line: str, m: re.Match, call_at: int | None, tally: Tally, where: str) -> None:
    turns = _turns(root, step)
    n = int(m.group(3))
    t = turns.get(n)
    tool = m.group(1)
    before = line[:m.start()]
    clause = re.split(r"; |\. ", before)[-1]
    if before.endswith("told "):  # the agent's message to the user at that turn
        tally.claims["told"] += 1
        if t is None or t.get("type") != "message" or t.get("role") != "assistant":
            tally.wrong["told"] += 1
            tally.examples.append(f"told: {where} [{step} turn {n}]")
        return
    form = "from" if re.search(r"\bfrom $", before) else "listed" if "had listed before" in m.group(0) else (
        "shown" if "shown before this call by" in clause else "gave" if " gave `" in line[m.end():m.end() + 8] else "place")
    tally.claims[form] += 1

    def wrong(fault: str) -> None:
        tally.wrong[fault] += 1
        tally.examples.append(f"{fault}: {where} [{step} turn {n}] …{line[max(0, m.start() - 140):m.end() + 20]}")

    if t is None or (tool is None and not _is_user(t)) or (
            tool is not None and (t.get("type") != "function_call" or t.get("name") != tool)):
        return wrong("kind")
    if form == "place":
        return
    if form == "listed":  # "(`key` from the user (its turn 9)), a value X's answer had listed before that"
        keys = _TICK.findall(clause)
        if keys and not any(holds(_text(t), v) for _c, v in _values(turns, keys[-1], None, n)):
            wrong("holds")
        return
    if form in ("shown", "gave"):
        quoted = re.findall(r'"([^"]+)"', clause if form == "shown" else before[-160:])
        if quoted and not holds(_text(t), quoted[-1]):
            wrong("holds")
        return
    keys = _TICK.findall(clause)
    if not keys:
        return
    key = keys[-1].split()[0]
    at = [int(x.group(3)) for x in _AT.finditer(before) if turns.get(int(x.group(3)), {}).get("type") == "function_call"]
    call = at[-1] if at else call_at
    if call is not None and call < n:
        call = None
    sent = _values(turns, _last(key) if "." in key or "[" in key else key, call, n)
    shown = [(c, v) for c, v in sent if holds(_text(t), v) or (_is_user(t) and answered(_text(t), key, v))]
    words = re.match(r', whose words were "([^"]+)"', line[m.end():])
    if words and words.group(1).lower() in _text(t).lower():  # a number the user gave in words
        return
    if not shown:
        return wrong("holds")
    if tool is not None and any(v in [x for _p, x in _leaves(_args(t))] for _c, v in shown) and all(
            v in [x for _p, x in _leaves(_args(t))] for _c, v in shown if not isinstance(v, (int, float))):
        return wrong("echo")
    def answer_of(k: int, v) -> bool:  # an answer that showed the value and was no echo of the agent's own call
        u = turns[k]
        return (u.get("type") == "function_call" and holds(_text(u), v)
                and v not in [x for _p, x in _leaves(_args(u))] and not _sent_before(turns, v, k))

    def newer(k: int, c: int, v) -> bool:  # a later turn showing it: a user message, or for an id the call's own record
        u = turns[k]
        if not n < k < c or not holds(_text(u), v):
            return False
        return _is_user(u) or (_distinctive(v) and answer_of(k, v) and _own_record(u, turns[c], key)
                               and not _own_record(t, turns[c], key))

    if tool is not None and all(_distinctive(v) for _c, v in shown):
        def elsewhere(c: int, v) -> bool:  # a turn before the call, not the cited one, that was about the call's item
            return any(k != n and k < c and (_is_user(u) and holds(_text(u), v) or answer_of(k, v) and not _astray(
                u, turns[c], key, v)) for k, u in turns.items())

        if all(_astray(t, turns[c], key, v) and elsewhere(c, v) for c, v in shown):
            return wrong("record")
    later = [(c, v) for c, v in shown if any(newer(k, c, v) for k in turns)]
    if later and len(later) == len(shown):
        wrong("stale")


def _ids(node) -> dict[str, str]:
    """The text fields of an object's top level whose key names an id (``id``, ``reservation_id``)."""
    if not isinstance(node, dict):
        return {}
    return {k: v for k, v in node.items() if isinstance(v, str) and (k.lower() == "id" or k.lower().endswith("_id"))}


def _answer_json(t: dict):
    try:
        return json.loads(_text(t))
    except (ValueError, TypeError):
        return None


def _call_ids(call: dict, key: str) -> dict[str, str]:
    return {k: v for k, v in _ids(_args(call)).items() if k != key.split(".")[-1].split("[")[0]}


def _own_record(t: dict, call: dict, key: str) -> bool:
    """The look-up was sent an id the call sends under the same key, with the same value."""
    theirs = _ids(_args(t))
    return any(theirs.get(k) == v for k, v in _call_ids(call, key).items())


def _astray(t: dict, call: dict, key: str, v) -> bool:
    """The answer is about another record than the call's, or holds the id only as another item."""
    mine = _call_ids(call, key)
    theirs = {**_ids(_answer_json(t)), **_ids(_args(t))}
    if any(k in theirs and theirs[k] != x for k, x in mine.items()):
        return True
    beside = _beside(call, v)
    if not beside:
        return False
    asked = {k: x for k, x in (_args(t) or {}).items() if isinstance(x, str)} if isinstance(_args(t), dict) else {}
    items = [{**asked, **{k: x for k, x in o.items() if isinstance(x, str)}} for o in _objects(_answer_json(t))
             if v in o.values()]
    return bool(items) and all(any(k in o and o[k].lower() != x.lower() for k, x in beside.items()) for o in items)


def _beside(call: dict, v) -> dict[str, str]:
    """The text fields the call sends in the same nested object as the value (a flight's date)."""
    for o in _objects(_args(call), top=False):
        if v in o.values():
            return {k: x for k, x in o.items() if isinstance(x, str) and x != v and len(x) >= 3}
    return {}


def _objects(node, top: bool = True):
    """Every object inside ``node`` (the top one too when ``top``)."""
    if isinstance(node, dict):
        if top:
            yield node
        for x in node.values():
            yield from _objects(x)
    elif isinstance(node, list):
        for x in node:
            yield from _objects(x)


def check_corpus(root: Path, tally: Tally) -> None:
    from claim_takes import check_taking, check_took  # its checks read this module's helpers

    for page in sorted((root / "compilation").glob("step-*.md")) + sorted((root / "insight").glob("insight-*.md")):
        own = page.stem if page.parent.name == "compilation" else None
        call_at: int | None = None
        text = page.read_text(encoding="utf-8")
        if own is None:
            check_taking(root, page, text, tally)
        for line in text.splitlines():
            line = line.replace("\\", "")
            if line.startswith("**Turns**"):
                nums = re.findall(r"\[(\d+)\]", line)
                call_at = int(nums[-1]) if nums else None
            elif line.startswith("#"):
                call_at = None
            if own is not None and "a later call took" in line:
                check_took(str(root), own, line, tally, page.name)
            for m in _PLACE.finditer(line):
                links = _STEP.findall(line[:m.start()])
                step = links[-1] if m.group(2) or own is None else own
                if step is None or (own is None and not links):
                    continue
                _check_place(str(root), step, line, m, call_at if not m.group(2) else None, tally, page.name)
            for m in _AT.finditer(line):
                links = _STEP.findall(line[:m.start()])
                step = links[-1] if (m.group(2) or own is None) and links else own
                if step is None:
                    continue
                turns = _turns(str(root), step)
                names = {t.get("name") for t in turns.values() if t.get("type") == "function_call"}
                if m.group(1) not in names:
                    continue
                tally.claims["at"] += 1
                t = turns.get(int(m.group(3)), {})
                if t.get("type") != "function_call" or t.get("name") != m.group(1):
                    tally.wrong["at"] += 1
                    tally.examples.append(f"at: {page.name} [{step}] …{line[max(0, m.start() - 80):m.end() + 20]}")
            for m in _ROLE.finditer(line):
                links = _STEP.findall(line[:m.start()])
                step = links[-1] if (m.group(2) or own is None) and links else own
                if step is None:
                    continue
                tally.claims["role"] += 1
                t = _turns(str(root), step).get(int(m.group(3)), {})
                if (t.get("type"), t.get("role")) != _role(m.group(1)):
                    tally.wrong["role"] += 1
                    tally.examples.append(f"role: {page.name} [{step}] …{line[max(0, m.start() - 80):m.end() + 20]}")
            for m in _SAID_AT.finditer(line):
                links = _STEP.findall(line[:m.start()])
                step = links[-1] if (m.group(2) or own is None) and links else own
                if step is None:
                    continue
                tally.claims["said-at"] += 1
                t = _turns(str(root), step).get(int(m.group(3)), {})
                if not (_is_user(t) if m.group(1) == "user message" else t.get("type") == "function_call" and _is_error(t)):
                    tally.wrong["said-at"] += 1
                    tally.examples.append(f"said-at: {page.name} [{step}] …{line[max(0, m.start() - 80):m.end() + 20]}")
            for m in _NAMED.finditer(line):
                links = _STEP.findall(line[:m.start()])
                step = links[-1] if (m.group(2) or own is None) and links else own
                if step is None:
                    continue
                turns = _turns(str(root), step)
                if m.group(1) not in {t.get("name") for t in turns.values() if t.get("type") == "function_call"}:
                    continue
                tally.claims["named"] += 1
                t = turns.get(int(m.group(3)), {})
                if t.get("type") != "function_call" or t.get("name") != m.group(1):
                    tally.wrong["named"] += 1
                    tally.examples.append(f"named: {page.name} [{step}] …{line[max(0, m.start() - 80):m.end() + 20]}")
            past = _PAST.search(line) if own is None and line.startswith("- [step-") else None
            if past:  # "turn N: got past it at turn M": N a failed call, M the same tool's call that went through
                step = _STEP.findall(line)[0]
                turns = _turns(str(root), step)
                met = [turns.get(int(n), {}) for n in past.group(1, 2) if n]  # each turn met the error
                a = met[0]
                b = turns.get(int(past.group(3)), {}) if past.group(3) else None
                tally.claims["past"] += 1
                if not (all(t.get("type") == "function_call" and _is_error(t) for t in met) and (b is None or (
                        b.get("type") == "function_call" and b.get("name") == a.get("name") and not _is_error(b)))):
                    tally.wrong["past"] += 1
                    tally.examples.append(f"past: {page.name} {line[:160]}")


def main(argv: list[str]) -> int:
    show = 0
    if "--show" in argv:
        i = argv.index("--show")
        show = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    for root in argv:
        tally = Tally()
        check_corpus(Path(root), tally)
        print(f"{root}: claims {sum(tally.claims.values())} ({dict(sorted(tally.claims.items()))}); "
              f"wrong {sum(tally.wrong.values())} ({dict(sorted(tally.wrong.items()))})")
        for e in tally.examples[:show]:
            print("  " + e)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
