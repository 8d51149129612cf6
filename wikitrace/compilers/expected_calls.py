"""What a failure page says when the log records the calls its task expected (tau-bench keeps
them as ``info.task.actions``; the importer puts them in ``task.metadata["expected_calls"]``):
an expected change made with other values, a change none of the expected calls is, an expected
change never made. Only the log's own record is compared; nothing is guessed, and a log
without that record gets none of these notes.
"""

from __future__ import annotations

import ast
import json
import operator
import re

from ..runs.model import Turn
from .insight_words import is_hand_off, join
from .reading import Call, Reading, _occurs, is_read_only
from .text import clip

SHOWN = 3  # differing arguments or missing calls named per note


def expected_changes(r: Reading) -> list[dict] | None:
    """The state-changing calls the log records as expected (``[]``: look-ups only), or None
    when it records none."""
    key = "expected.changes"
    if key not in r.memo:
        raw = (r.run.task.metadata or {}).get("expected_calls")
        try:
            calls = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            calls = None
        if not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str)
                                                  and isinstance(c.get("arguments"), dict) for c in calls):
            calls = None
        r.memo["expected.all"] = calls
        r.memo[key] = None if calls is None else [
            c for c in calls if not is_read_only(Turn(0, "function_call", "assistant", name=c["name"],
                                                      arguments=c["arguments"]))]
    return r.memo[key]


def expected_lookups(r: Reading) -> list[dict]:
    """The look-ups the log records as expected (empty when it records none)."""
    changes = expected_changes(r)
    return [c for c in r.memo.get("expected.all") or [] if c not in (changes or [])]


def _value(v) -> str:
    return clip(json.dumps(v, ensure_ascii=False, sort_keys=True), 60)


def _call(c: dict) -> str:
    """The call with its plain arguments (an id, an amount) whole and first: they say which record
    a call acts on, so a long list or object is what gets clipped, never them."""
    items = sorted(c["arguments"].items(), key=lambda kv: (isinstance(kv[1], (dict, list)), str(kv[0])))
    plain = [f"{k}={_value(v)}" for k, v in items if not isinstance(v, (dict, list))]
    nested = [f"{k}={_value(v)}" for k, v in items if isinstance(v, (dict, list))]
    return f"{c['name']}(" + ", ".join(plain + ([clip(", ".join(nested), 80)] if nested else [])) + ")"


_ABSENT = object()


def _differing(expected, sent, path: str = "") -> list[tuple[str, object, object]]:
    """(argument path, expected value, value sent) for each place the two differ, ``_ABSENT`` where
    one has none: objects compared key by key and lists item by item, so a reader
    sees the one flight or payment that differs, not two lists clipped to the same start."""
    if isinstance(expected, dict) and isinstance(sent, dict):
        return [d for k in sorted(set(expected) | set(sent), key=str)
                for d in _differing(expected.get(k, _ABSENT), sent.get(k, _ABSENT), f"{path}.{k}" if path else str(k))]
    if isinstance(expected, list) and isinstance(sent, list) and path:
        return [d for i in range(max(len(expected), len(sent))) for d in _differing(
            expected[i] if i < len(expected) else _ABSENT, sent[i] if i < len(sent) else _ABSENT, f"{path}[{i}]")]
    return [] if expected == sent else [(path or "argument", expected, sent)]


def made_as_expected(r: Reading, c: Call) -> bool:
    """Whether the log records this very change (same tool, same arguments) among the expected ones:
    a change the task asked for, so not where a failed run went wrong."""
    return any(e["name"] == c.name and e["arguments"] == c.turn.arguments for e in expected_changes(r) or [])


def differs_from_expected(r: Reading, c: Call) -> bool:
    """Whether the log expects a call of this tool and none with these arguments: the change the
    task asked for was made another way (its first note, change_notes, says how)."""
    same = [e for e in expected_changes(r) or [] if e["name"] == c.name]
    return bool(same) and not any(e["arguments"] == c.turn.arguments for e in same)


def differences(r: Reading, c: Call) -> list[tuple[str, object, object]] | None:
    """(argument path, expected value, value sent) between a change and the expected call of its
    tool it is closest to; ``_ABSENT`` stands for a value one side lacks. None when the log
    records no expected call of this tool (or none at all); empty when it records this very call.
    Once per change (kept on the run's memo): the page's notes, its facts and the rule quotes ask."""
    key = f"differences:{c.n}"
    if key not in r.memo:
        same = _open(r, c)
        sent = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
        r.memo[key] = min((_differing(e["arguments"], sent) for e in same), key=len) if same else None
    return r.memo[key]


def unasked_hand_off(r: Reading, c: Call) -> bool:
    """A hand-off in a run whose log records the task's expected calls, none of them with its tool:
    it changed no record the task was judged on, so it is not what a success did right."""
    expected = expected_changes(r) if is_hand_off(c) else None
    return expected is not None and not any(e["name"] == c.name for e in expected)


def _open(r: Reading, c: Call) -> list[dict]:
    """The expected calls of ``c``'s tool it can be compared with: all of them when it is one of
    them, else those on the record it acted on (``other_records``) that no other change of the run
    made as expected (an extra cancel after the expected ones were all made is no wrong version of
    one of them, nor is a change of another reservation than the expected one's)."""
    same = [e for e in expected_changes(r) or [] if e["name"] == c.name]
    if any(e["arguments"] == c.turn.arguments for e in same):
        return same
    if other_records(r, c):
        return []
    made = [x.turn.arguments for x in r.calls if x is not c and x.writes and not x.error and x.name == c.name]
    return [e for e in same if e["arguments"] not in made]


def _record_keys(tool: str, args: dict) -> list[str]:
    """The arguments that say which record a call acts on: an id whose name is the thing the tool's
    name names (``reservation_id`` of update_reservation_flights); a ``payment_id`` is a value it
    sends, not the record it changes."""
    named = set(_NAME_WORD.findall(tool.lower()))
    return [k for k, v in args.items() if isinstance(v, str) and (m := _ID_KEY.fullmatch(k.lower())) and m.group(1) in named]


_NAME_WORD = re.compile(r"[a-z]+")
_ID_KEY = re.compile(r"([a-z]+)_?id")


def other_records(r: Reading, c: Call) -> str:
    """The records the task expected ``c``'s tool to act on ("`reservation_id` "NM1VX1", "H8Q05L"
    and "KC18K6"), when it expected the tool on two or more and ``c`` acted on none of them with
    more than the record to tell them apart: an update of a fourth reservation is no wrong version
    of one of three, and setting its flights against one of theirs picks one at random. "" when the
    call names no record, the task expected it on one record (then the call is set against that
    call), or a call differs from one of theirs in its record alone (a wrong pick: that difference
    is the finding)."""
    sent = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    same = [e for e in expected_changes(r) or [] if e["name"] == c.name]
    for k in _record_keys(c.name, sent):
        theirs = [e["arguments"][k] for e in same if isinstance(e["arguments"].get(k), str)]
        if len(set(theirs)) < 2 or len(theirs) != len(same) or sent[k] in theirs:
            continue
        if all(_differing(dict(e["arguments"], **{k: sent[k]}), sent) for e in same):
            return f"`{k}` " + join([json.dumps(v, ensure_ascii=False) for v in dict.fromkeys(theirs)], 4)
    return ""


def closest_expected(r: Reading, c: Call) -> dict:
    """The arguments of the expected call of ``c``'s tool that ``differences`` compares it with."""
    same = _open(r, c)
    sent = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    return min(same, key=lambda e: len(_differing(e["arguments"], sent)))["arguments"] if same else {}


def no_such_call(r: Reading, c: Call) -> str:
    """What a change ``differences`` finds no expected call for was: "no cancel_reservation call",
    "no update_reservation_flights call on this record (only on `reservation_id` "NM1VX1")", or,
    when the task expected some that other changes of the run made, "no other … call"."""
    others = other_records(r, c)
    if others:
        return f"no {c.name} call on this record (only on {others})"
    expected_tool = any(e["name"] == c.name for e in expected_changes(r) or [])
    return f"no other {c.name} call" if expected_tool else f"no {c.name} call"


def shown_value(v) -> str:
    """An expected or sent value as a page prints it ("absent" for none)."""
    return "none" if v is _ABSENT else _value(v)


def change_notes(r: Reading, c: Call) -> list[str]:
    """Notes on a change that went through, against the expected changes of the same tool."""
    expected = expected_changes(r)
    if expected is None:
        return []
    diffs = differences(r, c)
    if diffs is None:
        others = other_records(r, c)
        if others:
            return [f"The log records the {c.name} calls the task expected, on {others} only: this "
                    "one changed another record."]
        if any(e["name"] == c.name for e in expected):
            return [f"The log records the {c.name} calls the task expected, and other changes of this run made "
                    "each of them: this one is an extra."]
        return [f"The calls the log records as expected for this task include no {c.name} call"
                + ("." if expected else "; it expected look-ups only." if expected_lookups(r)
                   else "; it expected no call at all.")]  # the changes it missed are a note of their own
    if not diffs:
        return [f"The log records this same {c.name} call among those the task expected."]
    parts = [f"`{k}` " + (_value(want) if want is not _ABSENT else "absent")
             + " where this call sent " + (_value(got) if got is not _ABSENT else "none") for k, want, got in diffs[:SHOWN]]
    return [f"The log records the {c.name} call the task expected with " + "; ".join(parts)
            + (f" (and {len(diffs) - SHOWN} more arguments differ)." if len(diffs) > SHOWN else ".")] + [
        _seen_note(r, c, k, want) for k, want, _got in diffs[:SHOWN] if isinstance(want, str) and want.strip()]


def _seen_note(r: Reading, c: Call, key: str, value: str) -> str:
    """Where the expected value of an argument was shown before the call, or that it was not: the
    run had the value in hand and sent another, or it never looked the value up."""
    places: list[str] = []
    if r.anywhere_before(value, c.n):
        needle = value.lower()
        for f in r.facts:
            if f.turn >= c.n:
                break
            if _occurs(needle, r.lower(f)):
                places.append(f"{f.name}'s answer (turn {f.turn})" if f.type == "function_call"
                              else f"a user message (turn {f.turn})")
    head = f"The expected `{key}` {_value(value)}"
    if not places:
        return head + " appears in no observation or user message before this call."
    return head + " was shown before this call by " + join(places, SHOWN) + "."


def missed_changes(r: Reading) -> list[dict]:
    """The expected changes the run did not make: for a tool the log expects more changes of than
    went through, each expected one that no change of the run sent with the same arguments."""
    expected = expected_changes(r) or []
    made: dict[str, list] = {}
    for c in r.calls:
        if c.writes and not c.error:
            made.setdefault(c.name, []).append(c.turn.arguments)
    missed = []
    for name in dict.fromkeys(e["name"] for e in expected):
        wanted = [e for e in expected if e["name"] == name]
        if len(wanted) > len(made.get(name, [])):
            missed += [e for e in wanted if e["arguments"] not in made.get(name, [])]
    return missed


def call_text(c: dict) -> str:
    """An expected call as a page prints it: its tool and sorted arguments, clipped."""
    return _call(c)


def missed_lookups(r: Reading) -> list[dict]:
    """The look-ups the log records as expected that no call of the run made with those arguments.
    A calculator's expression the run's own call of that tool worked out to the same number is made:
    "(350 - 122) * 2 + (499 - 127) * 2" is "2 * ((350 - 122) + (499 - 127))" written otherwise."""
    asked = [(c.name, c.turn.arguments) for c in r.calls if not c.error]
    reached = {(c.name, v) for c in r.calls if not c.error and isinstance(c.turn.arguments, dict)
               for v in _worked_out(c.turn.arguments)}
    return [e for e in expected_lookups(r) if (e["name"], e["arguments"]) not in asked
            and not (_worked_out(e["arguments"]) and {(e["name"], v) for v in _worked_out(e["arguments"])} <= reached)]


_ARITHMETIC = re.compile(r"[\d\s.+\-*/()%]+")
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.Mod: operator.mod}


def only_arithmetic(arguments) -> bool:
    """A look-up sent only arithmetic (a calculator's expression) reads no record: the numbers it
    needs are already in its arguments, so never making it left nothing unread."""
    values = list(arguments.values()) if isinstance(arguments, dict) else []
    return bool(values) and all(isinstance(v, str) and _ARITHMETIC.fullmatch(v) and re.search(r"\d", v)
                                for v in values)


def _worked_out(arguments) -> set[float]:
    """The numbers a call's arithmetic arguments come to (rounded to cents), or an empty set when
    any argument is not plain arithmetic."""
    if not only_arithmetic(arguments):
        return set()
    out = set()
    for v in arguments.values():
        try:
            out.add(round(_evaluate(ast.parse(v.strip(), mode="eval").body), 2))
        except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError):
            return set()
    return out


def _evaluate(node) -> float:
    """Numbers, + - * / % and brackets only: anything else is not read as arithmetic."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    raise ValueError("not plain arithmetic")


def missed_notes(r: Reading) -> list[str]:
    """The expected changes the run did not make, and the expected look-ups it never made."""
    missed = missed_changes(r)
    notes = [f"The log records {len(missed)} expected change{'s' if len(missed) != 1 else ''} this run did not make: "
             f"{join([_call(e) for e in missed], SHOWN)}."] if missed else []
    # a look-up the task expected and the run never made: the fact it answered or acted without
    # (a membership it took from the user's word, a record it never opened)
    unread = missed_lookups(r)
    if unread:
        # a tool the run did call, with other arguments, is said so: "2*(350-122)" may be the same sum written otherwise
        # the run's own call of the tool nearest to the one expected, among those no expected call matches
        # as written (a search that matched one expected look-up sent no "other arguments")
        asked = [x["arguments"] for x in r.memo.get("expected.all") or []]
        own: dict[str, int] = {}
        for e in unread:
            others = [c for c in r.calls if c.name == e["name"] and not c.error and c.turn.arguments not in asked]
            if others and e["name"] not in own:
                own[e["name"]] = min(others, key=lambda c: (len(_differing(e["arguments"], c.turn.arguments)), c.n)).n
        sent = [f"its own {name} call at turn {n} sent other arguments" for name, n in own.items()]
        notes.append(f"The log records {len(unread)} expected look-up{'s' if len(unread) != 1 else ''} this run did "
                     f"not make as written: {join([_call(e) for e in unread], SHOWN)}"
                     + (f" ({'; '.join(sent)})" if sent else "") + ".")
    return notes
