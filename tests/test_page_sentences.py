"""Every sentence a compilation page writes is true of the run it is about, or absent.

Each run of every importer fixture (tests/fixtures/importers/) and of examples/ is compiled
twice, once judged a success and once a failure, so both kinds of page are written for
every format. Each decision, support line, note and summary must match one of the
sentence templates below, and each template's claim is checked against the run's own
turns: who spoke when, which calls failed, what came later, what a turn's text holds.
A sentence no template knows fails the test, so a new sentence needs its check here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fixture_runs import IMPORTERS, RUNS, relabeled

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.changes import diff_files, edit_of, what_ran
from wikitrace.compilers.consent import _PUTS_TO_USER
from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.reading import is_harness_turn, is_read_only, looks_like_error, read_run
from wikitrace.runs.model import Outcome, Run, Turn, count_steps

_LOOKS_FINE = re.compile(r"\b(looks|sounds|is|all) (good|fine|great|right|correct|perfect)\b|\bokay\b|\bok\b", re.I)
_AGREE = re.compile(r"\b(yes|yeah|yep|confirm|confirmed|correct|go ahead|proceed|please do)\b|(?<!make )(?<!be )\bsure\b", re.I)




def test_every_format_is_here():
    formats = {r.source.get("format") for r in RUNS}
    assert {"swe-agent", "mini-swe-agent", "claude-code", "atif", "react-text", "react-notebook"} <= formats
    assert len(RUNS) >= 25


def _text(t: Turn) -> str:
    args = t.arguments if isinstance(t.arguments, str) or t.arguments is None else json.dumps(t.arguments, ensure_ascii=False)
    return "\n".join(x for x in (t.content, args, t.result) if x)


def _flat_keep(text: str) -> str:
    return " ".join(text.split())


_TEST_NAME = re.compile(r"(?:^|/)(?:test|tests|__tests__|specs?)/|(?:^|/)tests?_[^/]*$|_(?:test|spec)\.\w+$"
                        r"|[a-z0-9]Tests?\.\w+$|\.(?:test|spec)\.\w+$")


def _test_path(path: str) -> bool:
    """A test file by the conventions (written apart from the compiler's own rule)."""
    return bool(_TEST_NAME.search(path))


def _flat(text: str) -> str:
    return " ".join(text.split()).lower()


class Check:
    """The run's turns, and the facts each sentence may claim about them."""

    def __init__(self, run: Run):
        self.run = run
        self.by_n = {t.turn: t for t in run.turns}
        self.calls = [t for t in run.turns if t.type == "function_call" and not is_harness_turn(t)]
        self.first_agent = next((t.turn for t in run.turns if t.type == "function_call"
                                 or (t.type == "message" and t.role == "assistant")), None)

    def call(self, n: int) -> Turn:
        t = self.by_n[n]
        assert t.type == "function_call", f"turn {n} is no call"
        return t

    def went_through(self, n: int) -> bool:
        return not self.call(n).is_error

    def only_tests_changed(self) -> bool:
        """Every file the run's calls that went through changed, and every file its patch holds, is
        a test file by its path; and it changed one at least."""
        edited = [e.file for t in self.calls if not t.is_error and (e := edit_of(t)) is not None]
        patched = [p for t in self.calls if not t.is_error for p, _new in diff_files(t.result)]
        return bool(edited or patched) and all(_test_path(f) for f in edited + patched)

    def changes(self) -> list[Turn]:
        return [t for t in self.calls if not t.is_error and not is_read_only(t)]

    def user_agreed_before(self, n: int) -> bool:
        users = [t for t in self.run.turns if t.turn < n and t.type == "message" and t.role == "user"]
        if not users or self.first_agent is None:
            return False
        last = users[-1]
        said = last.content or ""
        return last.turn > self.first_agent and bool(_AGREE.search(said) or _LOOKS_FINE.search(said))

    def has_interlocutor(self) -> bool:
        return any(t.type == "message" and t.role == "user" and self.first_agent is not None and t.turn > self.first_agent
                   and t.extra.get("written_by") != "harness" for t in self.run.turns)

    def provenance(self, n: int, listed: str) -> None:
        """``key from tool's answer (turn 3), the user (turn 1); other from no earlier turn``:
        each key an argument of the call, each named turn before it, of the kind named, and
        holding one of the argument's values."""
        call = self.call(n)
        for part in listed.rstrip(".").split("; "):
            if re.fullmatch(r"and \d+ more arguments", part):
                continue
            part = re.sub(r" and \d+ more$", "", part)  # the places past the third are counted, not named
            m = re.fullmatch(r"`([^`]+)` from (.+)", part)
            assert m, part
            # a call whose only argument is a plain string (click[grey]) names it `argument`
            value = call.arguments if isinstance(call.arguments, str) and m.group(1) == "argument" else call.arguments[m.group(1)]
            values = [_flat(str(v)).lower() for v in _scalars(value)]
            values += [_NUMBER_WORDS[v] for v in _scalars(value) if isinstance(v, int) and v in _NUMBER_WORDS]
            # a number the user gave in words is quoted with them, and the key's words they lack named
            quoted = {}
            for q in re.finditer(r"the user \(turn (\d+)\), whose words were \"([^\"]+)\""
                                 r"(?:, with no word for \"([^\"]+)\")?", m.group(2)):
                quoted[int(q.group(1))] = (q.group(2), q.group(3))
            places = re.sub(r"(the user \(turn \d+\)), whose words were \"[^\"]+\"(?:, with no word for \"[^\"]+\")?",
                            r"\1", m.group(2))
            for k, (words, lacking) in quoted.items():
                user = self.by_n[k]
                assert user.type == "message" and user.role == "user", k
                assert words.rstrip("…").lower() in " ".join((user.content or "").split()).lower(), (words, k)
                keys = m.group(1) + " " + " ".join(re.findall(r'"(\w+)":', json.dumps(value)))
                key_words = [w for w in re.split(r"[^a-z]+", keys.lower()) if len(w) >= 3]
                for w in (lacking or "").replace(" and ", ", ").split(", "):
                    assert not lacking or (w in key_words and w[:3] not in words.lower()), (lacking, words)
            for where in re.split(r", | and ", places):
                if where == "no earlier turn":  # in no form in any earlier turn, and no default
                    assert any(v not in (0, "", False) and not _held_anywhere(self, v, n) for v in _scalars(value)), m.group(1)
                    continue
                own = re.fullmatch(r"the agent's own (\S+) call \(turn (\d+)\) before any user message or answer gave it", where)
                if own:  # the first call that sent the value under this key, and no user message before it held it
                    k, key = int(own.group(2)), m.group(1)
                    t = self.by_n[k]
                    assert k < n and t.type == "function_call" and t.name == own.group(1), where
                    mine = [v for v in _scalars(value) if v in _scalars((t.arguments or {}).get(key))]
                    assert mine, where
                    for e in self.calls:
                        if e.turn < k and isinstance(e.arguments, dict):
                            assert not set(map(str, mine)) & set(map(str, _scalars(e.arguments.get(key)))), (where, e.turn)
                    continue
                w = re.fullmatch(r"(?:(\S+)'s answer|the user|the earlier (\S+) call) \(turn (\d+)\)", where)
                assert w, where
                k = int(w.group(3))
                t = self.by_n[k]
                assert k < n
                if w.group(1):
                    assert t.type == "function_call" and t.name == w.group(1)  # an error's text shows values too
                    shown = t.result or ""
                elif w.group(2):
                    assert t.type == "function_call" and t.name == w.group(2)
                    shown = json.dumps(t.arguments, ensure_ascii=False) if not isinstance(t.arguments, str) else t.arguments
                else:
                    assert t.type == "message" and t.role == "user"
                    shown = t.content or ""
                flat = _flat(shown).lower()
                assert any(v and (v in flat or v.replace("_", " ") in flat.replace("-", " ")) for v in values), \
                    (m.group(1), where)

    def stopped_by_harness(self) -> bool:
        return (self.run.outcome.ended_by or "").startswith("harness") or any(is_harness_turn(t) for t in self.run.turns)

    def holds(self, n: int, text: str) -> bool:
        return _flat(text) in _flat(_text(self.by_n[n]))

    def diff(self, n: int, listed: str) -> None:
        """```a` (new file) and `b```: each file a git diff header of the call's answer names, in
        order; "(new file)" only where that file's header says so."""
        result = self.call(n).result or ""
        for path, new in re.findall(r"`([^`]+)`( \(new file\))?", listed):
            head = re.search(r"^diff --git a/(?:\S+ b/" + re.escape(path) + r"|" + re.escape(path) + r")[ \t]*$", result, re.M)
            assert head, path
            header = result[head.end():].split("\ndiff --git ", 1)[0].split("\n@@", 1)[0]
            assert bool(re.search(r"^new file mode", header, re.M)) == bool(new), path

    def edits(self, phrase: str, start: int, end: int | None) -> None:
        """``Edit changed `f` (in `g`) at turns 6 and 8; ...`` between two turns."""
        for m in re.finditer(r"(\w+) changed `([^`]+)`(?: \(in `(\w+)`\))? at turns? ([\d, and]+)", phrase):
            ns = [int(x) for x in re.findall(r"\d+", m.group(4))]
            for k in ns:
                t = self.call(k)
                assert start < k and (end is None or k < end) and t.name == m.group(1) and not t.is_error
                assert m.group(2) in _text(t), (m.group(2), k)
            if m.group(3):
                assert any(m.group(3) in _text(self.by_n[k]) for k in ns), m.group(3)


_NUMBER_WORDS = dict(enumerate("zero one two three four five six seven eight nine ten eleven twelve".split()))


def _scalars(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _scalars(v)
    elif isinstance(value, list):
        for v in value:
            yield from _scalars(v)
    elif value is not None:
        yield value


def _fields(call: Turn, text: str) -> None:
    """``an object; its plain top-level fields: {...}``: each field shown is a plain field at the top of
    the call's JSON answer, with its value; "its" fields are all of them, "the first of" a prefix."""
    m = re.search(r": an object; (its|the first of its) plain top-level fields: (\{.*\})$", text)
    if not m:
        return
    answer, shown = json.loads(call.result), json.loads(m.group(2))
    plain = [k for k, v in answer.items() if not isinstance(v, (dict, list))]
    assert list(shown) == plain[:len(shown)] and all(answer[k] == v for k, v in shown.items()), text
    assert (len(shown) == len(plain)) == (m.group(1) == "its"), text


def _sent_again(c: Check, n: int, keys: str, text: str) -> None:
    """"a later call sent the same k": for each key, a later change sent a value the call at ``n``
    had itself been sent (a plain-text query sent whole as the answer, for ``argument``)."""
    args = c.call(n).arguments
    sent = {args.strip().casefold()} if isinstance(args, str) else {str(v).casefold() for _k, _d, v in _keyed(args)}
    for key in keys.split(", "):
        assert any(isinstance(t.arguments, str) and t.arguments.strip().casefold() in sent if key == "argument" else
                   isinstance(t.arguments, dict) and str(t.arguments.get(key)).casefold() in sent
                   for t in c.changes() if t.turn > n), (key, text)


def _decision(c: Check, text: str, success: bool) -> None:
    m = re.fullmatch(r"After (.+) failed at turn (\d+), (.+); (the same command|the same call|.+) then went through at "
                     r"turn (\d+)(?: and its tests passed \((.+)\))?\.", text)
    if m:  # fail, edit, pass
        err, fix = int(m.group(2)), int(m.group(5))
        assert c.call(err).is_error and c.went_through(fix) and err < fix
        c.edits(m.group(3), err, fix)
        if m.group(4) == "the same command":
            assert json.loads(json.dumps(c.call(err).arguments)).get("command") == c.call(fix).arguments.get("command") \
                if isinstance(c.call(err).arguments, dict) else c.call(err).arguments == c.call(fix).arguments
        if m.group(6):
            assert c.holds(fix, m.group(6).rstrip("…")) and not re.search(r"\b[1-9]\d* failed", c.call(fix).result or "")
        return
    m = re.fullmatch(r"After (\S+) failed at turn (\d+)(?: and again at turns? ([\d, and]+?))?, called it again at turn "
                     r"(\d+) with (.+?)(?:; a later call took (.+?) from what it returned)?"
                     r"(?:(?: and|; a later call) sent the same (.+))?\.", text)
    if m:
        # every failed call of the tool between the first and the retry that went through is named
        between = [int(x) for x in re.findall(r"\d+", m.group(3) or "")]
        assert between == [t.turn for t in c.calls if int(m.group(2)) < t.turn < int(m.group(4)) and t.is_error
                           and t.name == m.group(1)], text
        m = re.fullmatch(r"After (\S+) failed at turn (\d+), called it again at turn (\d+) with (.+?)"
                         r"(?:; a later call took (.+?) from what it returned)?(?:(?: and|; a later call) sent the same "
                         r"(.+))?\.", re.sub(r" and again at turns? [\d, and]+?,", ",", text))
        err, fix = int(m.group(2)), int(m.group(3))
        if m.group(6):
            _sent_again(c, fix, m.group(6), text)
        if m.group(5):  # each key sent by a later call, a plain-string one held by the retry's answer
            later = [t for t in c.calls if t.turn > fix]
            for key in m.group(5).split(", "):
                if key == "argument":
                    assert any(isinstance(t.arguments, str) and c.holds(fix, t.arguments.strip()) for t in later)
                else:
                    assert any(isinstance(t.arguments, dict) and key in t.arguments for t in later), key
        assert c.call(err).is_error and c.went_through(fix) and err < fix
        assert c.call(err).name == c.call(fix).name == m.group(1)
        assert what_ran(c.call(err)) == what_ran(c.call(fix))
        if m.group(4) == "the same arguments":
            assert c.call(err).arguments == c.call(fix).arguments
        else:
            assert c.call(err).arguments != c.call(fix).arguments
        return
    m = re.fullmatch(r"Called (\S+) at turn (\d+)(, changing `([^`]+)`(?: \(in `(\w+)`\))?)?(, which answered with a "
                     r"diff of (.+?))?(, after the user agreed|, after the user said yes \(turn \d+\) to the agent's "
                     r"message at turn \d+, which named (?:neither a value this call sent nor a word of \S+ or of its "
                     r"values|no word of \S+|.+?, not the \$[\d,.]+ the call (?:paid|charged)))?"
                     r"(, a test file, and no call of this run changed a file outside the tests)?"
                     r"(; the run's last state-changing call\.|; the answer that ended the run\.|"
                     r"; the hand-off that ended the run\.|; the run made no change after it, and (\d+) changes? the "
                     r"task expected (?:was|were) never made\.|\.)", text)
    if m and m.group(8) and m.group(8).endswith("or of its values"):
        _yes_to_another_thing(c, int(m.group(2)), m.group(8))
    elif m and m.group(8) and ", which named no word of " in m.group(8):
        _yes_to_no_hand_off(c, int(m.group(2)), m.group(8))
    elif m and m.group(8) and m.group(8).startswith(", after the user said yes"):
        _yes_to_other_amounts(c, int(m.group(2)), m.group(8))
    if m:
        n = int(m.group(2))
        assert c.call(n).name == m.group(1) and c.went_through(n)
        if m.group(4):
            assert m.group(4) in _text(c.call(n))
        if m.group(5):
            assert m.group(5) in _text(c.call(n))
        if m.group(7):
            c.diff(n, m.group(7))
        if m.group(8):
            assert c.user_agreed_before(n), f"no reply of a user agreed before turn {n}"
        if m.group(9):  # the run changed test files alone
            assert m.group(4) and _test_path(m.group(4)) and c.only_tests_changed(), text
        if m.group(10).startswith(";"):
            assert not any(t.turn > n for t in c.changes())
        if m.group(11):  # the log's expected changes outnumber what the run made by at least that many
            expected = json.loads((c.run.task.metadata or {}).get("expected_calls") or "[]")
            assert len(expected) >= int(m.group(11)) + 1, text
        if m.group(10) == "; the answer that ended the run.":  # a free-text answer the log records as one
            text_sent = c.call(n).arguments
            assert isinstance(text_sent, str) and ((c.run.task.metadata or {}).get("gold_answer") or any(
                t.type == "answer" and (t.content or "").strip() == text_sent.strip() for t in c.run.turns)
                or (c.run.task.instruction or "").strip().endswith("?"))  # a question's last free-text write
        if m.group(10) == "; the hand-off that ended the run.":  # a transfer to a person, by its tool's name
            assert re.search(r"transfer|hand_?off|escalat|human|operator", m.group(1), re.I), text
        return
    m = re.fullmatch(r"Called (\S+) at turn (\d+), which returned nothing; (?:the next change that went through was "
                     r"(\S+) at turn (\d+)|no change went through after it)\.", text)
    if m:  # a call that sent text and got nothing back; the change after it, or none
        n = int(m.group(2))
        call = c.call(n)
        assert call.name == m.group(1) and c.went_through(n) and is_read_only(call) and not (call.result or "").strip()
        later = [t for t in c.changes() if t.turn > n]
        assert (later[0].turn, later[0].name) == (int(m.group(4)), m.group(3)) if m.group(3) else not later
        return
    m = re.fullmatch(r"Looked up with (.+) at turn (\d+)(?:; a later call took (.+) from what it returned)?"
                     r"(?:(?: and|; a later call|; (\S+) at turn (\d+)) sent the same (.+))?\.", text)
    if m and m.group(6):  # each key: a later change sent the value this look-up had itself been sent
        _sent_again(c, int(m.group(2)), m.group(6), text)
        if m.group(4):  # the call named is that later change, and its text holds the look-up's own
            named = c.call(int(m.group(5)))
            assert named.name == m.group(4) and int(m.group(5)) > int(m.group(2)), text
            args = c.call(int(m.group(2))).arguments  # it sent, under each key, a value the look-up was itself sent
            sent = {args.strip().casefold()} if isinstance(args, str) else {str(v).casefold() for _k, _d, v in _keyed(args)}
            for key in m.group(6).split(", "):
                got = named.arguments if key == "argument" else (named.arguments or {}).get(key)
                assert str(got).strip().casefold() in sent or isinstance(got, str) and any(
                    x in got.casefold() for x in sent), (key, text)
        text = (f"Looked up with {m.group(1)} at turn {m.group(2)}"  # what is left is checked below
                + (f"; a later call took {m.group(3)} from what it returned." if m.group(3) else "."))
    m = re.fullmatch(r"Looked up with (.+) at turn (\d+)(; a later call took (.+) from what it returned\.| before any "
                     r"change\.|\.)", text)
    if m:
        n = int(m.group(2))
        assert c.went_through(n) and is_read_only(c.call(n))
        if m.group(3) == " before any change.":
            assert c.changes() and all(t.turn > n for t in c.changes())
        elif m.group(4):
            later = [t for t in c.calls if t.turn > n]
            for key in m.group(4).split(", "):
                if key == "argument":  # a plain-string argument, taken from what the look-up returned
                    assert any(isinstance(t.arguments, str) and c.holds(n, t.arguments.strip()) for t in later)
                else:
                    assert any(isinstance(t.arguments, dict) and key in t.arguments for t in later), key
        return
    m = re.fullmatch(r"Called (.+?) at turn (\d+)(?:, right after (\S+) at turn (\d+))?; the run went on without it: (.+) "
                     r"went through at turn (\d+), and (\S+) made a change at turn (\d+)\.", text)
    if m:  # a failed look-up the run got past another way: a look-up went through, then a change
        n, k, j = int(m.group(2)), int(m.group(6)), int(m.group(8))
        err, look, change = c.call(n), c.call(k), c.call(j)
        assert err.is_error and is_read_only(err) and not any(
            t.turn > n and not t.is_error and what_ran(t) == what_ran(err) for t in c.calls), text
        if m.group(4):
            prev = int(m.group(4))
            assert c.call(prev).name == m.group(3) and not any(prev < t.turn < n for t in c.calls)
        assert n < k < j and c.went_through(k) and is_read_only(look), text
        assert m.group(5).startswith(("`", f"{look.name}(")), text
        assert change.name == m.group(7) and c.went_through(j) and not is_read_only(change), text
        firsts = [t.turn for t in c.changes() if t.turn > n]
        assert firsts and firsts[0] == j, text  # the first change after the error, the look-up before it
        return
    m = re.fullmatch(r"Called (.+?) at turn (\d+)(?:, right after (\S+) at turn (\d+))?; (?:no later (\S+) call went "
                     r"through|a later (\S+) call went through at turn (\d+)(?:, after (.+))?)\.", text)
    if m:  # an error cause
        n = int(m.group(2))
        assert c.call(n).is_error
        if m.group(4):
            prev = int(m.group(4))
            assert c.call(prev).name == m.group(3) and not any(prev < t.turn < n for t in c.calls)
        program = m.group(5) or m.group(6)
        assert what_ran(c.call(n)) == program
        later_ok = [t for t in c.calls if t.turn > n and not t.is_error and what_ran(t) == program]
        if m.group(5):
            assert not later_ok, f"turn {later_ok[0].turn} went through"
        else:
            k = int(m.group(7))
            assert later_ok and later_ok[0].turn == k
            if m.group(8):
                c.edits(m.group(8), n, k)
        return
    m = re.fullmatch(r"Repeated the same call (.+) (\d+) times \(turns ([\d, …]+)\)(?:; (no later (\S+) call went "
                     r"through|a later (\S+) call went through at turn (\d+)(?:, after (.+))?))?\.", text)
    if m:
        ns = [int(x) for x in re.findall(r"\d+", m.group(3))]
        first = c.call(ns[0])
        same = [t for t in c.calls if t.name == first.name and t.arguments == first.arguments
                and " ".join((t.result or "").split()) == " ".join((first.result or "").split())]
        assert len(same) == int(m.group(2)) >= 3 and set(ns) <= {t.turn for t in same}
        if m.group(4):  # the error it repeated, told as the error cause tells it
            _decision(c, f"Called {first.name} at turn {first.turn}; {m.group(4)}.", success)
        return
    m = re.fullmatch(r"Called (\S+) (\d+) times with different arguments \(turns ([\d, ]+) and (\d+)\), and each was "
                     r"answered with (the same error|an error that reads (\".*\") around what it sent); no later (\S+) "
                     r"call went through\.", text)
    if m:  # one error of one tool, met with several arguments and never got past: told once
        ns = [int(x) for x in m.group(3).split(", ")] + [int(m.group(4))]
        same = [c.call(k) for k in ns]
        assert len(ns) == int(m.group(2)) and all(t.name == m.group(1) and t.is_error for t in same), text
        if m.group(6) is None:
            assert len({" ".join((t.result or "").split()) for t in same}) == 1, text
        else:  # each answer's first sentence, with what that call sent put as …
            form = json.loads(m.group(6)).rstrip("…")
            for t in same:
                first = re.split(r"(?<=[.!?])\s", " ".join((t.result or "").split()), maxsplit=1)[0]
                assert first.replace(" ".join(str(t.arguments).split()), "…").startswith(form), (first, form)
        assert len({json.dumps(t.arguments, sort_keys=True) for t in same}) == len(ns), text
        assert not any(t.turn > ns[0] and not t.is_error and what_ran(t) == what_ran(same[0]) for t in c.calls), text
        return
    m = re.fullmatch(r"(?:Made|Answered after) (\d+) look-up calls? \((.+)\) (?:and no call that changes state|"
                     r"without a change|(and gave no answer))\.", text)
    if m:
        if m.group(3):  # a task that expects an answer, and no call gave one
            assert (c.run.task.metadata or {}).get("gold_answer") and not any(t.type == "answer" for t in c.run.turns)
        assert len(c.calls) == int(m.group(1)) and all(is_read_only(t) for t in c.calls)
        named = re.split(r", | and ", re.sub(r" and \d+ more$", "", m.group(2)))
        assert set(named) <= {t.name for t in c.calls}, text  # the tools it looked with, by name
        return
    m = re.fullmatch(r"The harness ended the run after (\d+) calls?, before (any answer was given|any state-changing "
                     r"call went through)\.", text)
    if m:  # a run stopped by its harness with nothing changed: no answer, no booking went through
        assert len(c.calls) == int(m.group(1)) and not c.changes() and c.stopped_by_harness()
        # answer words only where the task records an answer to give
        assert (m.group(2) == "any answer was given") == bool((c.run.task.metadata or {}).get("gold_answer")), text
        return
    if text in ("Ended the run without calling any tool.", "Answered without calling any tool."):
        assert not c.calls
        return
    raise AssertionError(f"a sentence no template knows: {text!r}")


def _yes_to_another_thing(c: Check, n: int, said: str) -> None:
    """agreed_terms.yes_to_another_thing: the user's yes answered the agent's message named, which
    holds none of the call's values as written."""
    m = re.match(r", after the user said yes \(turn (\d+)\) to the agent's message at turn (\d+)", said)
    yes, put = c.by_n[int(m.group(1))], c.by_n[int(m.group(2))]
    assert yes.role == "user" and put.role == "assistant" and put.turn < yes.turn < n, said
    assert c.user_agreed_before(n), said
    values = [str(v).lower() for _k, _d, v in _keyed(c.call(n).arguments) if isinstance(v, str) and len(v) >= 3]
    assert not any(v in put.content.lower() for v in values), (said, values)


def _yes_to_no_hand_off(c: Check, n: int, said: str) -> None:
    """A hand-off after a yes to a message that named no word (of three letters or more) of its tool."""
    m = re.fullmatch(r", after the user said yes \(turn (\d+)\) to the agent's message at turn (\d+), which named no "
                     r"word of (\S+)", said)
    yes, put = c.by_n[int(m.group(1))], c.by_n[int(m.group(2))]
    assert yes.role == "user" and put.role == "assistant" and put.turn < yes.turn < n, said
    assert c.call(n).name == m.group(3) and c.user_agreed_before(n), said
    words = [w.lower() for w in re.split(r"[_\W]+", m.group(3)) if len(w) >= 3]
    assert not any(re.search(rf"(?<![a-z]){w[:5]}", put.content.lower()) for w in words), (said, words)


def _yes_to_other_amounts(c: Check, n: int, said: str) -> None:
    """agreed_terms.py: the user's yes came right after the agent's message named, every amount
    named is in it, and the call's total (what it paid, or a number of its answer) is above them
    all and in no message of the agent before the call."""
    m = re.fullmatch(r", after the user said yes \(turn (\d+)\) to the agent's message at turn (\d+), which named (.+?), "
                     r"not the \$([\d,.]+) the call (paid|charged)", said)
    yes, put = c.by_n[int(m.group(1))], c.by_n[int(m.group(2))]
    assert yes.role == "user" and put.role == "assistant" and put.turn < yes.turn < n, said
    assert c.user_agreed_before(n), said
    total = m.group(4)
    named = re.findall(r"\$([\d,.]+)", m.group(3))
    assert named and all(f"${v}" in put.content for v in named), said
    assert all(float(v.replace(",", "")) < float(total.replace(",", "")) for v in named), said
    assert not any(f"${total}" in (t.content or "") or f"${total.replace(',', '')}" in (t.content or "")
                   for t in c.run.turns if t.type == "message" and t.role == "assistant" and t.turn < n), said
    call = c.call(n)
    if m.group(5) == "charged":
        assert total.replace(",", "") in (call.result or ""), said
    else:
        amounts = [v for k, _d, v in _keyed(call.arguments) if k == "amount" or str(k).endswith("_amount")]
        assert sum(amounts) == float(total.replace(",", "")), said


def _support(c: Check, text: str, turns: list[int]) -> None:
    if text.startswith("The environment answered with an error"):
        assert c.call(turns[-1]).is_error
    elif text.startswith("The shell could not find "):  # a missing program, named as the shell named it
        call = c.call(turns[-1])
        assert call.is_error
        for program in re.findall(r"`([^`]+)`", text.split(":", 1)[0]):
            assert re.search(re.escape(program) + r": (?:command )?not found", call.result or ""), program
        if text.endswith("so the run's changes are ranked above it."):
            assert c.changes(), "ranked below changes the run did not make"
    elif text.startswith("The run changed only test files ("):
        m = re.fullmatch(r"The run changed only test files \((.+?)\) and was judged a failure: it changed the test, not "
                         r"the code the test exercises\.(?: The task statement said: \"(.+)\")?", text)
        assert m and c.run.outcome.label == "failure" and c.only_tests_changed(), text
        for base, at in re.findall(r"(\S+) at turns? ([\d, and]+)", m.group(1)):
            for n in map(int, re.findall(r"\d+", at)):
                assert c.went_through(n) and base in _text(c.call(n)) and _test_path(base), text
        if m.group(2):  # a sentence of the task statement with a negation and the word test
            said = m.group(2).rstrip("…")
            opening = [t.content or "" for t in c.run.turns if c.first_agent is None or t.turn < c.first_agent]
            assert any(said in _flat_keep(x) for x in opening + [c.run.task.instruction or ""]), text
            assert re.search(r"\b(?:not|no|never)\b|n't\b", said, re.I) and re.search(r"\btest", said, re.I), text
    elif text.startswith("The run handed the request off here"):  # a hand-off that went through changes no record
        call = c.call(turns[-1])
        assert c.went_through(turns[-1]) and re.search(r"transfer|hand_?off|human|escalat|operator", call.name or "", re.I), text
        expected = c.run.task.metadata.get("expected_calls")
        if "which the task did not expect" in text:
            assert expected and all(e["name"] != call.name for e in json.loads(expected)), text
        if "the changes the task expected were left unmade" in text:
            made = [(x.name, x.arguments) for x in c.changes()]
            assert expected and any((e["name"], e["arguments"]) not in made and e["name"] != call.name
                                    for e in json.loads(expected)), text
    elif text.startswith("The environment accepted it") or text.startswith("The call went through"):
        assert c.went_through(turns[-1])
        if "but the harness ended the run (" in text:  # the limit cut it off: no call after this change
            assert (c.run.outcome.ended_by or "").startswith("harness"), text
            assert not any(x.turn > turns[-1] for x in c.changes()), text
        if text.startswith("The call went through, but it is not the call the log records as expected"):
            call = c.call(turns[-1])  # the log expects this tool, never with these arguments
            same = [e for e in json.loads(c.run.task.metadata["expected_calls"]) if e["name"] == call.name]
            assert same and all(e["arguments"] != call.arguments for e in same), text
        _fields(c.call(turns[-1]), text)
    elif text.startswith("Its tests passed ("):  # a test run of a failed run: the summary it printed, no change
        call = c.call(turns[-1])
        assert c.went_through(turns[-1]) and c.run.outcome.label == "failure", text
        summary = re.match(r"Its tests passed \((.+)\), yet the run was judged a failure", text).group(1)
        assert _flat(summary.rstrip("…")) in _flat(call.result or ""), text
    elif text.startswith("Nothing in the arguments or the answer changed and "):
        errs = sum(1 for n in turns if c.call(n).is_error)
        if "each of them was answered with an error" in text:
            assert errs == len(turns)
        elif "none of them was answered with an error" in text:
            assert errs == 0
        else:
            k = int(re.search(r"and (\d+) of them were answered with an error", text).group(1))
            assert 0 < errs <= k
    elif text.startswith("The first call returned an error"):
        assert c.call(turns[0]).is_error and c.went_through(turns[-1])
    elif text.startswith("This answer ended the run and was judged wrong"):
        answer = c.call(turns[-1])
        assert c.went_through(turns[-1]) and isinstance(answer.arguments, str) and c.run.outcome.label == "failure"
        # it ended the run: the last change, and the agent (not the harness) stopped there
        assert c.changes()[-1] is answer and not (c.run.outcome.ended_by or "").startswith("harness"), text
        m = re.search(r'the task expected "(.+)", which (?:appears in what the look-up at turn (\d+) returned|no look-up had '
                      r'returned|no look-up that went through had returned, only the errors? (\S+) answered at turns? '
                      r'([\d, and]+?);.*)\.$', text)
        if m and m.group(4):  # each error named holds the expected name in its list of near names
            gold = m.group(1).casefold()
            for n in map(int, re.findall(r"\d+", m.group(4))):
                assert c.call(n).is_error and c.call(n).name == m.group(3) and gold in (c.call(n).result or "").casefold()
        if m and not m.group(1).endswith("…"):
            gold = re.compile(r"(?<![\w.])" + re.escape(_flat(m.group(1)).lower()) + r"(?!\w)")
            # what the look-ups returned, not what they asked: as written, or word for word once case,
            # punctuation and spacing are set aside
            phrase = " " + " ".join(re.findall(r"[^\W_]+", m.group(1).casefold())) + " "
            shown = [t.turn for t in c.calls if t.turn < answer.turn and not t.is_error
                     and (gold.search(_flat(t.result or "").lower())
                          or phrase in " " + " ".join(re.findall(r"[^\W_]+", (t.result or "").casefold())) + " ")]
            alone = [t for t in shown if any(not re.match(r"\s+[A-Z]", " ".join(by.result.split())[x.end():])
                                             for by in c.calls if by.turn == t
                                             for x in gold.finditer(_flat(by.result).lower()))]
            # the first that names it with no capitalised word after it (not the head of a longer name), else the first
            assert (alone or shown)[:1] == ([int(m.group(2))] if m.group(2) else []), text
    elif text.startswith("The run was judged a success with no environment call"):
        assert not c.calls and c.run.outcome.label == "success"
        if ": what the agent told the user rests on " in text:
            assert c.has_interlocutor(), "a user named in a log where nobody answers the agent"
        m = re.search(r" Its last message \(turn (\d+)\) is quoted below\.$", text)
        said = [t.turn for t in c.run.turns if t.type == "message" and t.role == "assistant" and not is_harness_turn(t)
                and (t.content or "").strip()]
        assert (m is None) == (not turns), text
        if m:  # the last of the agent's messages
            assert turns == [int(m.group(1))] and said[-1] == int(m.group(1)), text
    elif text.startswith("The run was judged a "):
        last = re.search(r" What the agent last wrote \(turn (\d+)\) is quoted below\.$", text)
        if last:  # a run that called nothing: the agent's last message
            said = [t.turn for t in c.run.turns if t.type == "message" and t.role == "assistant"
                    and not is_harness_turn(t) and (t.content or "").strip()]
            assert not c.calls and turns == [int(last.group(1))] and said[-1] == int(last.group(1)), text
        m = re.search(r" What the agent wrote after its last call \(turn (\d+)\) is quoted below\.$", text)
        if m:  # the agent's first message after its last call
            assert c.calls, "a run that called nothing has no last call"
            said = int(m.group(1))
            assert turns == [said] and any(t.turn == said and t.type == "message" and t.role == "assistant"
                                           for t in c.run.turns)
            last_call = max((t.turn for t in c.calls), default=None)
            between = [t for t in c.run.turns if t.type == "message" and t.role == "assistant" and not is_harness_turn(t)
                       and (t.content or "").strip() and (last_call is None or t.turn > last_call)]
            assert between and (between[0] if last_call is not None else between[-1]).turn == said, text
    elif text.startswith("This call ended the run, and the run was judged a failure"):
        call = c.call(turns[-1])
        assert c.went_through(turns[-1]) and c.run.outcome.label == "failure"
        assert c.changes()[-1] is call and not (c.run.outcome.ended_by or "").startswith("harness"), text
        # no answer was given: the log records no answer turn with the call's text
        assert not any(t.type == "answer" and (t.content or "").strip() == str(call.arguments).strip()
                       for t in c.run.turns), text
        m = re.search(r"\(score ([\d.e-]+)\)\.$", text)
        assert (m is None) == (c.run.outcome.score is None), text
        if m:
            assert abs(float(m.group(1)) - c.run.outcome.score) < 1e-5, text
    elif text.startswith("The harness stopped the run: "):
        assert c.stopped_by_harness() and not c.changes()
        found = [t for t in c.calls if not t.is_error and is_read_only(t) and (t.result or "").strip()]
        assert bool(found) == text.endswith("is listed below."), text
    elif text.startswith("It returned the record a later call took "):
        m = re.fullmatch(r"It returned the record a later call took `(\w+)` (\".*?\") from: (\{.*)", text)
        assert m, text
        value, shown, call = json.loads(m.group(2)), m.group(3), c.call(turns[-1])
        records = [json.dumps(o, ensure_ascii=False) for o in _objects(json.loads(call.result))]
        assert any(r == shown or shown.endswith("…") and r.startswith(shown[:-1]) for r in records), shown
        held = [o for o in _objects(json.loads(call.result)) if json.dumps(o, ensure_ascii=False).startswith(
            shown.rstrip("…")) and any(v == value and (k == m.group(1) or m.group(1).endswith("_" + k))
                                       for k, v in o.items())]
        assert held, text
        assert any(value in list(_scalars(t.arguments)) for t in c.changes() if t.turn > turns[-1]), text
    elif text.startswith("It returned"):
        _fields(c.call(turns[-1]), text)
    elif text.startswith("It handed in the edits made before it, the last at turn "):
        m = re.fullmatch(r"It handed in the edits made before it, the last at turn (\d+), (with no test run after that "
                         r"edit|after (.+) passed at turn (\d+) \((.+)\)|after (.+) still reported failing tests at turn "
                         r"(\d+)); the run was judged a failure, so what those edits do is where to look\.", text)
        assert m and c.run.outcome.label == "failure", text
        submit, edit = c.call(turns[-1]), int(m.group(1))
        # the last edit before the submit that went through, and the submit itself changed no file
        edits = [t for t in c.changes() if t.turn < submit.turn and edit_of(t)]
        assert edits and edits[-1].turn == edit and not edit_of(submit), text
        tests = [t for t in c.calls if edit < t.turn < submit.turn and re.search(r"\d+ (?:passed|failed)|Tests run:",
                                                                                  t.result or "")]
        if m.group(4):  # the last test run after the edit passed: its summary is in its answer
            assert tests and tests[-1].turn == int(m.group(4)) and m.group(5).rstrip("…") in tests[-1].result, text
        elif m.group(7):
            assert tests and tests[-1].turn == int(m.group(7)) and re.search(r"\d+ failed|FAIL", tests[-1].result), text
        else:
            assert not tests, text
    elif text == "Its text, quoted below, is all the call holds: what the agent wrote there before going on.":
        call = c.call(turns[-1])  # a call that sent text and got nothing back
        assert not call.is_error and not (call.result or "").strip() and call.arguments
    else:
        raise AssertionError(f"a support line no template knows: {text!r}")


def _held_anywhere(c: Check, value, n: int) -> bool:
    """Whether any turn before ``n`` holds ``value`` as written, as a number however formatted
    (``$1,000.00``), or as a date in a spelling of its own (``April 12, 2001``, ``12 April``)."""
    text = value if isinstance(value, str) else json.dumps(value)
    forms = {_flat(text), _flat(text.replace("_", " "))}
    if re.fullmatch(r"-?\d+(?:\.\d+)?", text):
        forms = {f"{float(text):g}"}
    elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        import datetime as dt
        day = dt.date.fromisoformat(text)
        for month in (day.strftime("%B"), day.strftime("%b")):
            forms |= {f"{month} {day.day}".lower(), f"{day.day} {month}".lower(), f"{day.day}th of {month}".lower()}
    for t in c.run.turns:
        if t.turn >= n:
            break
        body = _flat(_text(t) + "\n" + (t.reasoning or ""))
        numbers = {f"{float(x):g}" for x in re.findall(r"\d+(?:\.\d+)?", body.replace(",", ""))}
        if any(f in numbers or f in body for f in forms):
            return True
    return False


def _note(c: Check, text: str, n: int) -> None:
    m = re.fullmatch(r"`(.+?)` is (.+), where `(.+?)`'s record in the observation at turn (\d+) holds `(\w+)` (.+)\.", text)
    if m:  # the named record (filed under the name, or holding it as its id) holds the field with that value,
        # and the name is one the call sent beside the argument
        path, name, at, key = m.group(1), m.group(3), int(m.group(4)), m.group(5)
        held = [json.loads(v) for v in re.sub(r" \(and \d+ more\)$", "", m.group(6)).split(" or ")]
        assert path.split(".")[-1].split("[")[0] == key and at < n, text
        args = json.dumps(c.call(n).arguments)
        assert f'"{name}"' in args, text
        found = []

        def walk(node, filed=None):
            if isinstance(node, dict):
                if name in (filed, node.get("id")) and key in node:
                    found.append(node[key])
                for k2, v in node.items():
                    walk(v, k2)
            elif isinstance(node, list):
                for v in node:
                    walk(v)
        walk(json.loads(c.by_n[at].result))
        assert any(v in found for v in held), text
        return
    m = re.fullmatch(r"`(.+?)` is (.+): no earlier observation, user message or call holds this value\.", text)
    if m:  # a value no earlier turn holds in any form, and no default a call sends unasked
        value = json.loads(m.group(2))
        assert value not in (0, "", None, False) and not _held_anywhere(c, value, n), text
        return
    m = re.fullmatch(r"`(.+?)` is ([\d.]+): no earlier turn holds this number as written; it is (.+)\.", text)
    if m:  # a number held nowhere, and each way given multiplies a rate the prompt states by a list's length
        value = float(m.group(2))
        assert not _held_anywhere(c, json.loads(m.group(2)), n), text
        ways = re.findall(r"([\d.]+) times the (\d+) `(\w+)` of what (\S+) returned at turn (\d+) \(the system "
                          r"prompt's \"(.+?)\"\)", m.group(3))
        assert ways, text
        for rate, count, key, tool, at, written in ways:
            src = c.call(int(at))
            assert src.name == tool and int(at) < n and len(json.loads(src.result)[key]) == int(count), text
            assert float(rate) * int(count) == value and written in (c.run.turns[0].content or ""), text
        return
    m = re.fullmatch(r"`(.+?)` is (.+): no earlier turn holds it as written, but it is close to (\S+)'s answer at "
                     r"turn (\d+): \"(.+)\"\.", text)
    if m:  # a free-text value held nowhere as written, whose words but one stand together in an earlier answer
        value, k = json.loads(m.group(2)), int(m.group(4))
        src = c.call(k)
        assert isinstance(value, str) and not _held_anywhere(c, value, n), text
        assert src.name == m.group(3) and k < n and not src.is_error, text
        assert m.group(5).rstrip("…") in " ".join((src.result or "").split()), text  # exact, case kept
        stem = lambda w: w[:-2] if w.endswith(("'s", "’s")) else w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w  # noqa: E731
        wanted = {stem(w) for w in re.findall(r"[\w'’]+", value.casefold())}
        held = {stem(w) for w in re.findall(r"[\w'’]+", m.group(5).casefold())}
        assert len(wanted) >= 4 and len(wanted & held) >= len(wanted) - 1, text
        return
    m = re.fullmatch(r"Its look-ups before it asked: (.+)\.", text)
    if m:  # each a free-text look-up sent before the decision's turn, in its words (clipped with …)
        for name, arg in re.findall(r"(\w+)\[(.*?)\](?:, | and |$)", re.sub(r" and \d+ more$", "", m.group(1))):
            assert any(t.name == name and t.turn <= n and isinstance(t.arguments, str)
                       and " ".join(t.arguments.split()).startswith(arg.rstrip("…")) for t in c.calls), (name, arg)
        return
    m = re.fullmatch(r'The answer it gave, (".*?"), appears in no look-up that went through, only in the error (\S+) '
                     r'returned at turn (\d+): "…?(.+?)…?"', text)
    if m:  # a final answer read off an error's text (a list of near names), never from a page
        given, k = json.loads(m.group(1)), int(m.group(3))
        err, call = c.call(k), c.call(n)
        assert err.is_error and is_read_only(err) and err.name == m.group(2) and k < n and c.changes()[-1] is call
        assert _flat(str(call.arguments)) == _flat(given) and m.group(4) in " ".join((err.result or "").split())
        pattern = re.compile(r"(?<!\w)" + re.escape(_flat(given)) + r"(?!\w)")
        assert pattern.search(_flat(m.group(4))) and not any(
            t.turn < n and not t.is_error and is_read_only(t) and pattern.search(_flat(t.result or "")) for t in c.calls)
        return
    m = re.fullmatch(r'The answer it gave, (".*?"), appears in the user message at turn (\d+), not in any look-up: '
                     r'"…?(.+?)…?"', text)
    if m:  # a final answer no look-up showed, quoted from the last user message before it that did
        given, k = json.loads(m.group(1)), int(m.group(2))
        said, call = c.by_n[k], c.call(n)
        assert said.type == "message" and said.role == "user" and k < n and c.changes()[-1] is call
        assert _flat(str(call.arguments)) == _flat(given) and m.group(3) in " ".join((said.content or "").split())
        pattern = re.compile(r"(?<!\w)" + re.escape(_flat(given)) + r"(?!\w)")
        assert pattern.search(_flat(m.group(3))) and not any(
            t.turn < n and not t.is_error and is_read_only(t) and pattern.search(_flat(t.result or "")) for t in c.calls)
        return
    m = re.fullmatch(r'The answer it gave, (".*?"), appears in what (\S+) returned at turn (\d+): "…?(.+?)…?"', text)
    if m:  # a wrong final answer's text, quoted exactly from the latest look-up that showed it
        given, k = json.loads(m.group(1)), int(m.group(3))
        src, call = c.call(k), c.call(n)
        assert _flat(str(call.arguments)) == _flat(given)
        assert c.changes()[-1] is call  # the call that ended the run, and an answer the log records as one
        assert any(t.type == "answer" and _flat(t.content or "") == _flat(given) for t in c.run.turns) or \
            (c.run.task.metadata or {}).get("gold_answer")
        assert src.name == m.group(2) and k < n and not src.is_error
        flat = " ".join((src.result or "").split())
        assert m.group(4) in flat and _flat(given) in _flat(m.group(4)), text
        assert re.search(r"(?<!\w)" + re.escape(_flat(given)) + r"(?!\w)", _flat(m.group(4))), "not as whole words"
        assert len(given.split()) > 1 or any(ch.isdigit() or ch.isupper() for ch in given)
        assert not any(k < t.turn < n and not t.is_error and is_read_only(t) and _flat(given) in _flat(t.result or "")
                       for t in c.calls), "a later look-up showed it too"
        return
    m = re.fullmatch(r'(.+) at turn (\d+) returned: "(.+)"', text)
    if m:  # what a look-up that went through returned, from its start (a run the harness stopped)
        seen = c.call(int(m.group(2)))
        assert not seen.is_error and is_read_only(seen) and int(m.group(2)) <= n
        assert seen.name in m.group(1) or m.group(1).strip("`").rstrip("…") in _text(seen), m.group(1)
        assert " ".join((seen.result or "").split()).startswith(m.group(3)), text
        return
    m = re.fullmatch(r'What (\S+) returned at turn (\d+) holds it: "…?(.+?)…?"', text)
    if m:  # the words around the expected answer, quoted exactly from that look-up's answer
        seen = c.call(int(m.group(2)))
        assert seen.name == m.group(1) and int(m.group(2)) < n and not seen.is_error
        assert m.group(3) in " ".join((seen.result or "").split()), text  # exact, case kept
        assert c.run.outcome.label == "failure"
        return
    m = re.fullmatch(r"(The error listed \d+ names \(.+\); )the (\S+) call at turn (\d+) sent one of them \('(.+)'\) "
                     r"inside quote marks, as (.+), and (was answered with an error|went through)\.", text)
    if m:  # a listed name sent wrapped in quote marks: the call's text is the name inside two marks
        k = int(m.group(3))
        x = c.call(k)
        sent = x.arguments.strip()
        assert x.name == m.group(2) and k > n and sent == m.group(5) and sent[0] in "\"'\u201c\u201d\u2018\u2019`"
        assert " ".join(sent[1:-1].split()).casefold() == " ".join(m.group(4).split()).casefold()
        assert x.is_error == (m.group(6) == "was answered with an error")
        err = c.call(n) if c.call(n).is_error else None
        if err is not None:
            assert f"'{m.group(4)}'" in (err.result or "") or f'"{m.group(4)}"' in (err.result or "")
            assert not any(t.turn > n and t.name == x.name and isinstance(t.arguments, str) and
                           f"'{t.arguments.strip()}'" in (err.result or "") for t in c.calls)  # none sent it bare
        return
    m = re.fullmatch(r"The error listed (\d+) names \((.+)\); (?:the (\S+) call at turn (\d+) sent one of them "
                     r"\('(.+)'\)|no later (\S+) call sent one of them)\.", text)
    if m:  # the names an error offered, and whether a later call of its tool sent one
        err = c.call(n)  # the error itself, or on a success page the call that got past it: then the
        if not err.is_error:  # earlier error of its tool that lists the names shown
            shown = re.findall(r"'(.*?)'(?:, |$)", m.group(2))
            err = next(t for t in reversed(c.calls) if t.turn < n and t.is_error and t.name == err.name
                       and all(x in (t.result or "") for x in shown))
            n = err.turn
        shown = re.findall(r"'(.*?)'(?:, |$)", m.group(2))
        assert err.is_error and int(m.group(1)) >= max(2, len(shown)) and (m.group(2).endswith("…") or
                                                                            int(m.group(1)) == len(shown))
        for name in shown:
            assert f"'{name}'" in (err.result or "") or f'"{name}"' in (err.result or ""), name
        fold = lambda x: " ".join(str(x).split()).casefold()  # noqa: E731
        later = [t for t in c.calls if t.turn > n and t.name == err.name and isinstance(t.arguments, str)]
        if m.group(4):
            k = int(m.group(4))
            assert c.call(k) in later and fold(c.call(k).arguments) == fold(m.group(5)) and m.group(5) in err.result
            assert not any(t.turn < k and fold(t.arguments) in fold(err.result) for t in later if
                           f"'{t.arguments.strip()}'" in (err.result or ""))
        else:
            assert not any(f"'{fold(t.arguments)}'" in fold(err.result) or f'"{fold(t.arguments)}"' in fold(err.result)
                           for t in later)
        return
    m = re.fullmatch(r"Its words beyond the task text all appear in what (\S+) returned at turn (\d+): it followed a "
                     r"name an earlier answer showed\.", text)
    if m:
        k = int(m.group(2))
        src, call = c.call(k), c.call(n)
        assert src.name == m.group(1) and k < n and not src.is_error
        task = set(re.findall(r"\w+", (c.run.task.instruction or "").casefold()))
        new = set(re.findall(r"\w+", str(call.arguments).casefold())) - task
        assert new and new <= set(re.findall(r"\w+", (src.result or "").casefold()))
        return
    m = re.fullmatch(r"Where its values came from: (.+)\.", text)
    if m:  # once per value on a page: a value picked among those one earlier answer listed for a field that no
        # user message held, the places that showed an argument's values, or the earlier call whose note told them
        call = c.call(n)
        assert c.run.outcome.label == "failure" and c.went_through(n) and not is_read_only(call)
        sent = call.arguments if isinstance(call.arguments, dict) else {}
        mine = {a: v for a, v in sent.items() if isinstance(v, str) and (a == "id" or a.endswith("_id"))}
        for part in re.split(r"; (?=`)", m.group(1)):
            p = re.fullmatch(r"`(.+?)` (\".*?\") is one of the (\d+) values (\S+)'s answer \(turn (\d+)\) gave `(.+?)`, "
                             r"and no user message names it \(the others: (.+?)\)", part)
            d = re.fullmatch(r"`(.+?)` (\".*?\") is one of the (\d+) values (\S+)'s answer \(turn (\d+)\) gave `(.+?)`, and "
                             r"(?:the user wrote at turn (\d+) what only its record holds|the agent tied it at turn (\d+) "
                             r"to names the user wrote)", part)
            if d is not None:  # a listed value the user's words picked, which the expected call does not send
                value, k = json.loads(d.group(2)), int(d.group(5))
                assert c.call(k).name == d.group(4) and k < n and not c.call(k).is_error
                listed = [str(v) for key, _depth, v in _keyed(json.loads(c.call(k).result)) if key == d.group(6)]
                assert value in listed and len(set(listed)) >= int(d.group(3)), (value, listed)
                if d.group(7):  # a user message, before the call
                    assert c.by_n[int(d.group(7))].role == "user" and int(d.group(7)) < n, part
                else:  # an agent message before the call that names the value
                    said = c.by_n[int(d.group(8))]
                    assert said.role == "assistant" and int(d.group(8)) < n and value in (said.content or ""), part
                expected = [e for e in json.loads(c.run.task.metadata["expected_calls"]) if e["name"] == call.name]
                assert all(e["arguments"] != call.arguments for e in expected), part
                continue
            if p is None:
                ref = re.fullmatch(r"(.+) as told for the call at turn (\d+)", part)
                if ref is not None:  # the same values, sent by an earlier call of the page
                    other = c.call(int(ref.group(2)))
                    assert not is_read_only(other) and other.turn != n, part
                    for key in re.findall(r"`([^`]+)`", ref.group(1)):
                        assert key in sent and any(set(map(str, _scalars(sent[key]))) & set(map(str, _scalars(v)))
                                                   for v in (other.arguments or {}).values()), (key, part)
                    continue
                c.provenance(n, part)
                continue
            value, k, field = json.loads(p.group(2)), int(p.group(5)), p.group(6)
            src = c.call(k)
            assert src.name == p.group(4) and k < n and not src.is_error
            # the answer is about the record the call refers to: it names none of the call's ids otherwise
            answer = json.loads(src.result)
            theirs = {**(answer if isinstance(answer, dict) else {}), **(src.arguments if isinstance(src.arguments, dict) else {})}
            assert all(theirs.get(a, v) == v for a, v in mine.items()), (p.group(1), k)
            others = json.loads("[" + re.sub(r" and \d+ more$", "", p.group(7)) + "]")
            by_depth: dict[int, list[str]] = {}  # the field's values at each depth: the items of one listing
            for key, depth, v in _keyed(answer):
                if key == field and v not in (None, ""):
                    by_depth.setdefault(depth, []).append(str(v) if not isinstance(v, float) else f"{v:g}")
            assert any(value in listed and len(set(listed)) == int(p.group(3)) and set(others) <= set(listed) - {value}
                       for listed in by_depth.values()), (value, by_depth)
            assert not any(value.lower() in (t.content or "").lower() for t in c.run.turns
                           if t.turn < n and t.type == "message" and t.role == "user")
        return
    m = re.fullmatch(r"`(.+?)` is (.+), close to (?:the user message|what (\S+) returned|the error (\S+) answered) at "
                     r"turn (\d+) \((\d+) of its (\d+) main words\)\.", text)
    if m:  # a free-text value no turn holds whole, most of whose longer words one earlier turn holds
        value, k, total, src = json.loads(m.group(2)), int(m.group(6)), int(m.group(7)), c.by_n[int(m.group(5))]
        assert src.turn < n and 2 * k > total >= 2 and not _held_anywhere(c, value, n), text
        tool = m.group(3) or m.group(4)
        assert (src.name == tool) if tool else (src.type == "message" and src.role == "user")
        assert bool(m.group(4)) == (tool is not None and looks_like_error(src)), text  # an error is not "returned"
        words = set(re.findall(r"[^\W_]+", (src.result or src.content or "").lower().replace("\u2019", "'")))
        mains = {w for w in re.findall(r"[^\W_]+", value.lower()) if len(w) >= 4 or any(ch.isdigit() for ch in w)}
        forms = lambda w: {w, w + "s", w + "es", w[:-1] if w.endswith("s") else w, w[:-2] if w.endswith("es") else w}  # noqa: E731
        assert total <= len(mains) and sum(1 for w in mains if forms(w) & words) >= k, (mains, words)
        return
    m = re.fullmatch(r'The record `(.+?)` points at has `(.+?)` (".*?") \((\S+)\'s answer, turn (\d+)\); a rule of the '
                     r'system prompt \(turn (\d+)\) on this action names it: "(.+)"', text)
    if m:  # a rule naming a plain value of the record an id argument of the change points at
        path, field, value, k = m.group(1), m.group(2), json.loads(m.group(3)), int(m.group(5))
        call, src, system = c.call(n), c.call(int(m.group(5))), c.by_n[int(m.group(6))]
        sent = call.arguments
        for part in re.findall(r"\w+|\[\d+\]", path):
            sent = sent[int(part[1:-1])] if part.startswith("[") else sent[part]
        assert src.name == m.group(4) and k < n and not src.is_error and isinstance(sent, str)
        records = [d for d in _objects(json.loads(src.result)) if d.get(field) == value and sent in d.values()]
        assert records, (field, value, sent)
        assert system.role == "system" and _flat(m.group(7)) in _flat(system.content or "")
        for word in re.findall(r"[a-z]+", value.lower()):  # every word of the value, as the rule words it
            assert word[:4] in m.group(7).lower(), word
        return
    m = re.fullmatch(r'(?:The agent wrote with this call \(turn (\d+)\)|The agent\'s last message before it \(turn '
                     r'(\d+)\)): "(.+?)(…?)"', text)
    if m:  # the agent's own words before a change: the call's reasoning, or its last message since its previous call
        quoted = m.group(3)
        if m.group(1):
            k = int(m.group(1))
            assert k == n and (c.by_n[k].reasoning or "").strip()
            said = " ".join(c.by_n[k].reasoning.split())
        else:
            k = int(m.group(2))
            t = c.by_n[k]
            assert t.type == "message" and t.role == "assistant" and k < n and not (c.by_n[n].reasoning or "").strip()
            assert not any(k < x.turn < n for x in c.calls) and not any(
                k < x.turn < n and x.type == "message" and x.role == "assistant" and (x.content or "").strip()
                for x in c.run.turns), "not the last message before the call"
            said = " ".join((t.content or "").split())
        assert said.startswith(quoted) and (said == quoted) != bool(m.group(4)), text
        return
    m = re.fullmatch(r"The expected `([\w.\[\]]+)` (\".*?\") (?:appears in no observation or user message before this call|"
                     r"was shown before this call by (.+))\.", text)
    if m:  # where the expected value of an argument stood before the change, or that it stood nowhere
        value = json.loads(m.group(2))
        expected = json.loads(c.run.task.metadata["expected_calls"])
        call = c.call(n)
        assert any(e["name"] == call.name and _at(e["arguments"], m.group(1)) == value != _at(call.arguments, m.group(1))
                   for e in expected)
        word = re.compile(r"(?<![\w.])" + re.escape(value.lower()) + r"(?!\w)")
        held = [t.turn for t in c.run.turns if t.turn < n and not is_harness_turn(t) and (
            (t.type == "function_call" and word.search((t.result or "").lower()))
            or (t.type == "message" and t.role == "user" and word.search((t.content or "").lower())))]
        if not m.group(3):
            assert not held, held
        else:
            named = [int(x) for x in re.findall(r"\(turn (\d+)\)", m.group(3))]
            assert named and named == held[:len(named)], (named, held)
            for where, k in re.findall(r"(\S+)'s answer \(turn (\d+)\)", m.group(3)):
                assert c.call(int(k)).name == where
        return
    if text.startswith(("The calls the log records as expected", "The log records ")):
        _expected_note(c, text, n)
        return
    if text.startswith("It opened item "):
        from test_option_choices import check_item_note

        check_item_note(c.run, c.call(n), text)
        return
    if text.startswith("It chose "):
        from test_option_choices import check_option_note

        check_option_note(c.run, c.call(n), text)
        return
    if text.startswith("The reasoning given with it"):
        from test_verdict_evidence import check_verdict

        check_verdict(c.run, text, n)
        return
    m = re.fullmatch(r"((?:`.+?` (?:is|holds) \".*?\"(?:, | and )?)+) in this answer, and the agent's own words name "
                     r"(?:it|them): (.+)", text)
    if m:  # fields of the look-up's JSON answer, and the agent's later sentences that hold their values as words
        fields = re.findall(r"`(.+?)` (is|holds) (\".*?\")(?:, | and |$)", m.group(1))
        assert fields and (" name them: " in text) == (len(fields) > 1), text
        quoted = re.findall(r'turn (\d+): "(.+?)"(?=; turn \d+: "|$)', m.group(2))
        assert quoted, text
        for key, verb, shown in fields:
            _named_field(c, n, key, verb, json.loads(shown), quoted, text)
        return
    m = re.fullmatch(r"Each of these arguments holds `(.+)` itself: several calls were written into one\.", text)
    if m:  # the tool's own call form inside each argument of the errors told together
        name = re.match(r"\w+", m.group(1)).group(0)
        last = c.call(n)
        same = [t for t in c.calls if t.is_error and t.name == name == last.name
                and " ".join((t.result or "").split()) == " ".join((last.result or "").split())]
        assert len(same) >= 2 and all(m.group(1) in str(t.arguments) for t in same), text
        return
    m = re.fullmatch(r"The call that failed sent its text inside quote marks, as (.+); the one that went through "
                     r"sent none\.", text)
    if m:  # a retry that went through, and the failed call before it: quote marks around its text, none in the retry
        fix = c.call(n)
        err = next(t for t in reversed(c.calls) if t.turn < n and t.is_error and t.name == fix.name
                   and isinstance(t.arguments, str) and " ".join(t.arguments.split()) == m.group(1))
        assert err.arguments.strip()[0] in "\"'\u201c\u201d\u2018\u2019`" and not fix.is_error, text
        assert not any(q in fix.arguments for q in "\"'\u201c\u201d\u2018\u2019`"), text
        return
    m = re.fullmatch(r"Each of these arguments was sent inside quote marks, as (.+)\.", text)
    if m:  # the errors told together: each sent a text wrapped in quote marks, the last one as shown
        last = c.call(n)
        assert isinstance(last.arguments, str) and " ".join(last.arguments.split()) == m.group(1), text
        assert last.arguments.strip()[0] in "\"'\u201c\u201d\u2018\u2019`" and last.is_error, text
        return
    m = re.fullmatch(r'The agent wrote at turn (\d+): "(.+)"', text)
    if m:  # one of the agent's own messages, quoted from its start
        said = c.by_n[int(m.group(1))]
        assert said.type == "message" and said.role == "assistant" and not is_harness_turn(said), text
        assert _flat(said.content or "").startswith(_flat(m.group(2).rstrip("…"))), text
        return
    users = [t for t in c.run.turns if t.turn < n and t.type == "message" and t.role == "user"]
    if "no user message came before the call" in text:
        assert c.has_interlocutor() and not users, text
    m = re.search(r"the user's last message before the call \(turn (\d+)\) (did not agree to a change|said no or "
                  r"wait, not yes)", text)
    if m:  # the user's last word before the change agreed to nothing, or held the agent back
        assert c.has_interlocutor(), "a confirmation breach in a log where nobody answers the agent"
        said = c.by_n[int(m.group(1))]
        assert users and users[-1] is said, text
        if m.group(2).startswith("did not"):
            assert not _AGREE.search(said.content or ""), text
        else:
            assert re.match(r"\W*(no|nope|not|wait|hold on|hang on|stop|don'?t|do not|never mind)\b", said.content, re.I)
    m = re.search(r"the user's last message before the call \(turn (\d+)\) was a request naming the \"(\w+)\", and the "
                  r"agent made the change without first putting its details to the user for a yes", text)
    if m:  # the user's own words named the thing, and no agent message between them and the call asked for a yes
        asked = int(m.group(1))
        assert c.has_interlocutor() and users and users[-1].turn == asked, text
        assert re.search(r"\b" + m.group(2) + r"\b", users[-1].content or "") and not _AGREE.search(users[-1].content), text
        assert not any(asked < t.turn < n and t.type == "message" and t.role == "assistant" and _PUTS_TO_USER.search(
            t.content or "") for t in c.run.turns), text
    m = re.search(r"the user agreed at turn (\d+), then asked for something else at turn (\d+), and did not agree "
                  r"again before the call", text)
    if m:  # an agreed change was made, then a new request, then this change with no yes to it
        yes, asked = int(m.group(1)), int(m.group(2))
        assert c.user_agreed_before(yes + 1) and c.by_n[yes].role == "user", text
        assert users and users[-1].turn == asked and not _AGREE.search(users[-1].content or ""), text
        assert any(yes < t.turn < asked and t.type == "function_call" and c.went_through(t.turn)
                   and not is_read_only(t) for t in c.calls), text


def _expected_note(c: Check, text: str, n: int) -> None:
    """The notes comparing a run's changes with the calls its log records as expected."""
    expected = json.loads(c.run.task.metadata["expected_calls"])
    changes = [e for e in expected if not is_read_only(Turn(0, "function_call", "assistant", name=e["name"],
                                                            arguments=e["arguments"]))]
    shown = lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True)  # noqa: E731
    m = re.fullmatch(r"The calls the log records as expected for this task include no (\S+) call(; it expected "
                     r"(look-ups only|no call at all))?\.", text)
    if m:
        assert c.call(n).name == m.group(1) and not any(e["name"] == m.group(1) for e in expected)
        assert bool(m.group(2)) == (not changes)
        assert m.group(3) is None or (m.group(3) == "no call at all") == (not expected)
        return
    m = re.fullmatch(r"The log records this same (\S+) call among those the task expected\.", text)
    if m:
        call = c.call(n)
        assert any(e["name"] == call.name == m.group(1) and e["arguments"] == call.arguments for e in changes)
        return
    m = re.fullmatch(r"The log records the (\S+) call the task expected with (.+?)(?: \(and (\d+) more arguments "
                     r"differ\))?\.", text)
    if m:
        call = c.call(n)
        assert call.name == m.group(1)
        pairs = re.findall(r"`([\w.\[\]]+)` (.+?) where this call sent (.+?)(?:; |$)", m.group(2))
        assert pairs
        fits = lambda said, value: said.endswith("…") and value.startswith(said[:-1]) or said == value  # noqa: E731
        absent, at = _ABSENT, _at
        assert any(all((fits(want, shown(at(e["arguments"], k))) if at(e["arguments"], k) is not absent else want == "absent")
                       and (fits(sent, shown(at(call.arguments, k))) if at(call.arguments, k) is not absent else sent == "none")
                       and at(e["arguments"], k) != at(call.arguments, k) for k, want, sent in pairs)
                   for e in changes if e["name"] == call.name)
        return
    m = re.fullmatch(r"The log records (\d+) expected look-ups? this run did not make as written: (.+?)"
                     r"(?: and \d+ more)?(?: \((its own .+)\))?\.", text)
    if m:  # expected look-ups no call of the run made with the same arguments (one that went through)
        lookups = [e for e in expected if e not in changes]
        unread = [e for e in lookups if not any(t.name == e["name"] and t.arguments == e["arguments"] and not t.is_error
                                                for t in c.calls)]
        assert int(m.group(1)) == len(unread) > 0
        assert set(re.findall(r"(\w+)\(", m.group(2))) <= {e["name"] for e in unread}
        for name, n in re.findall(r"its own (\w+) call at turn (\d+) sent other arguments", m.group(3) or ""):
            first = next(t for t in c.calls if t.name == name and not t.is_error)  # the first that went through
            assert first.turn == int(n) and all(first.arguments != e["arguments"] for e in unread), text
        return
    m = re.fullmatch(r"The log records (\d+) expected changes? this run did not make: (.+?)(?: and \d+ more)?\.", text)
    assert m, text
    made = [t for t in c.changes()]
    missed = []  # per tool expected more often than changed: the expected calls no change sent alike
    for name in {e["name"] for e in changes}:
        wanted = [e for e in changes if e["name"] == name]
        sent = [t.arguments for t in made if t.name == name]
        if len(wanted) > len(sent):
            missed += [e for e in wanted if e["arguments"] not in sent]
    assert int(m.group(1)) == len(missed) > 0
    assert set(re.findall(r"(\w+)\(", m.group(2))) <= {e["name"] for e in missed}


_ABSENT = object()


def _at(args, path: str):
    """The value at an argument path (``flights[1].flight_number``), or _ABSENT."""
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("["):
            args = args[int(part[1:-1])] if isinstance(args, list) and int(part[1:-1]) < len(args) else _ABSENT
        else:
            args = args.get(part, _ABSENT) if isinstance(args, dict) else _ABSENT
    return args


def _objects(node):
    """Every JSON object in parsed JSON, outermost first."""
    if isinstance(node, dict):
        yield node
        node = list(node.values())
    if isinstance(node, list):
        for v in node:
            yield from _objects(v)


def _json_fields(node, key: str = "", listed: bool = False):
    """(the key a scalar sits under, the scalar, whether it is an item of that key's list) for
    every scalar of parsed JSON."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _json_fields(v, k, False)
    elif isinstance(node, list):
        for v in node:
            yield from _json_fields(v, key, True)
    else:
        yield key, node, listed


def _keyed(node, key: str = "", depth: int = 0):
    """(the key a scalar sits under, its depth, the scalar) for every scalar of parsed JSON; a
    list's items sit under the list's key, one level deeper."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _keyed(v, k, depth + 1)
    elif isinstance(node, list):
        for v in node:
            yield from _keyed(v, key, depth + 1)
    else:
        yield key, depth, node


def _description(c: Check, text: str) -> None:
    m = re.match(r"The agent (succeeded|failed) after (\d+) tool calls? \((\d+) returned an error\)", text)
    assert m, text
    assert int(m.group(2)) == len(c.calls)
    assert int(m.group(3)) == sum(1 for t in c.calls if t.is_error)
    if "The harness stopped the run" in text:
        assert (c.run.outcome.ended_by or "").startswith("harness") or any(is_harness_turn(t) for t in c.run.turns)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r.source.get('format')}:{r.run_id}")
@pytest.mark.parametrize("success", [True, False], ids=["as-success", "as-failure"])
def test_every_sentence_is_true_of_its_run(run, success):
    run = relabeled(run, success)
    comp = compile_offline(run)
    c = Check(run)
    _description(c, comp.description)
    for e in comp.evidence:
        assert "never got past" not in e.decision
        _decision(c, e.decision, success)
        _support(c, e.support, e.turns)
        for note in e.notes:
            _note(c, note, e.turns[-1])
    _told_before(comp)


def _told_before(comp) -> None:
    """A back-reference ("as told for the call at turn K") stands for the note of call K: every
    turn that note names came before the call referring to it, so it holds there too."""
    sources = {e.turns[-1]: n for e in comp.evidence for n in e.notes if n.startswith("Where its values came from: ")}
    for n, note in sources.items():
        for at in re.findall(r"as told for the call at turn (\d+)", note):
            named = [int(k) for k in re.findall(r"turn (\d+)", sources[int(at)].split(" as told for ")[0])]
            assert all(k < n for k in named), (n, note, sources[int(at)])


def test_swe_agent_instruction_is_no_user_agreement():
    """SWE-agent's instance template says "make sure"; no page says a user agreed to anything."""
    runs = [r for r in RUNS if r.source.get("format") in ("swe-agent", "mini-swe-agent")]
    assert runs
    for run in runs:
        run = relabeled(run, True)
        comp = compile_offline(run)
        assert not any("user agreed" in e.decision for e in comp.evidence)
        assert not read_run(run).has_interlocutor  # the template and the harness's reminders are nobody's reply
    chat = next(r for r in RUNS if r.run_id == "7d3e1a52-9c4b-4f0e-8a61-3b2c5d9e0f14")
    assert read_run(chat).has_interlocutor


def test_a_user_reply_is_an_agreement():
    """The Claude Code session's "yes, go ahead" answers the agent's question: the Edit after it was agreed to."""
    run = relabeled("7d3e1a52-9c4b-4f0e-8a61-3b2c5d9e0f14", True)
    decisions = [e.decision for e in compile_offline(run).evidence]
    assert "Called Edit at turn 6, changing `/home/dev/ledger/ledger/invoice.py` (in `total`), after the user agreed." \
        in decisions


def test_fail_edit_pass_says_what_changed_and_that_the_tests_passed():
    for run_id, edited, function in [("7d3e1a52-9c4b-4f0e-8a61-3b2c5d9e0f14", "/home/dev/ledger/ledger/invoice.py", "total"),
                                     ("lumen__cli-3", "/lumen__cli/lumen/cli.py", "parse_args")]:
        run = relabeled(run_id, True)
        comp = compile_offline(run)
        item = next(e for e in comp.evidence if "then went through" in e.decision)
        assert f"changed `{edited}` (in `{function}`)" in item.decision
        assert "the same command then went through" in item.decision and "its tests passed (" in item.decision
        assert "description changed" not in " ".join(i.guideline for i in comp.insights)


def test_a_failure_page_keeps_the_only_source_edit():
    """Ten errors of look-ups and a loop compete for eight slots; the one edit and the submit stay."""
    run = relabeled("lumen__parser-7", False)
    comp = compile_offline(run)
    edit = next(t.turn for t in run.actions if t.name == "edit")
    submit = next(t.turn for t in run.actions if t.name == "submit")
    cited = {n for e in comp.evidence for n in e.turns}
    assert {edit, submit} <= cited
    assert comp.left_out > 0  # the slots did run short
    item = next(e for e in comp.evidence if e.turns == [edit])
    assert "(in `readToken`)" in item.decision


def test_the_page_shows_the_score_the_log_gave(tmp_path):
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[IMPORTERS / "react_notebook" / "webshop_printout.txt"], out=out, offline=True, quiet=True))
    pages = {p.name: p.read_text() for p in (out / "compilation").glob("step-*.md")}
    outcomes = sorted(re.search(r"^- Outcome: .*$", t, re.M).group(0) for t in pages.values())
    assert any(", score 0.5 " in line for line in outcomes), outcomes
    assert all(", score " in line for line in outcomes)  # every WebShop episode has its score


def test_a_search_that_took_a_listed_name_or_followed_a_page_says_so_truly():
    """ReAct-shaped runs: a Search error offering similar titles, then a Search of one of them
    (success) or of other words (failure); a second Search whose words came from the first page."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_lesson_specifics import _qa
    from test_offline_content import _run

    took = _run(_qa("Ashby Vale", "Ashby Vale", [
        ("Kestrel Days fest", "Could not find [Kestrel Days fest]. Similar: ['Kestrel Days', 'Kestrel (bird)']."),
        ("Kestrel Days", "Kestrel Days is a festival held each May in Ashby Vale, a market town."),
        ("Ashby Vale", "Ashby Vale is a market town in the north.")],
        "Where is the Kestrel Days festival held?", success=True, run_id="took"))
    missed = _run(_qa("unknown", "Ashby Vale", [
        ("Kestrel Days fest", "Could not find [Kestrel Days fest]. Similar: ['Kestrel Days', 'Kestrel (bird)']."),
        ("Kestrel festival town", "Could not find that page, please try again.")],
        "Where is the Kestrel Days festival held?", success=False, run_id="missed"))
    notes = {}
    for run in (took, missed):
        c = Check(run)
        for e in compile_offline(run).evidence:
            for note in e.notes:
                _note(c, note, e.turns[-1])
                notes.setdefault(run.run_id, []).append(note)
    assert "no later Search call sent one of them." in " ".join(notes["missed"])
    assert ("Its words beyond the task text all appear in what Search returned at turn 2: it followed a name an "
            "earlier answer showed.") in notes["took"]
    # the success page's recovery says the retry took a listed name
    took.outcome = Outcome(success=True, steps=count_steps(took.turns))
    c = Check(took)
    told = [n for e in compile_offline(took).evidence for n in e.notes if n.startswith("The error listed")]
    assert told == ["The error listed 2 names ('Kestrel Days', 'Kestrel (bird)'); the Search call at turn 2 sent one "
                    "of them ('Kestrel Days')."]
    for e in compile_offline(took).evidence:
        for note in e.notes:
            _note(c, note, e.turns[-1])


def _native(run_id: str, turns: list[dict], success: bool) -> Run:
    from wikitrace.runs.native import run_from_dict

    return run_from_dict({"run_id": run_id, "task": {"id": run_id, "instruction": turns[1]["content"], "task_type": "t"},
                          "outcome": {"success": success, "ended_by": "agent"},
                          "turns": [dict(t, turn=i) for i, t in enumerate(turns)]}, "test.jsonl:1")


def _call(name, arguments, result, is_error=None) -> dict:
    return {"type": "function_call", "role": "assistant", "name": name, "arguments": arguments, "result": result,
            **({"is_error": is_error} if is_error is not None else {})}


def _say(role, content) -> dict:
    return {"type": "message", "role": role, "content": content}


def _checked(run: Run) -> list:
    """The run's page items, each sentence held to its template's check."""
    comp = compile_offline(run)
    c = Check(run)
    for e in comp.evidence:
        _decision(c, e.decision, run.outcome.success)
        _support(c, e.support, e.turns)
        for note in e.notes:
            _note(c, note, e.turns[-1])
    return comp.evidence


_NOTE = ("Booking QX7 is basic economy without insurance and older than a day, so it cannot be cancelled; "
         "booking RM2 is business class and can be.")


def test_a_call_that_answered_nothing_is_quoted_before_the_change():
    """A think tool answers nothing: its text is the agent's reasoning, shown with the change it came
    before, and never called a look-up."""
    turns = [_say("system", "You are a travel agent. Business bookings can always be cancelled."),
             _say("user", "Please cancel my bookings QX7 and RM2."),
             _call("get_booking", {"booking_id": "QX7"}, '{"booking_id": "QX7", "cabin": "basic_economy"}'),
             _call("get_booking", {"booking_id": "RM2"}, '{"booking_id": "RM2", "cabin": "business"}'),
             _call("think", {"thought": _NOTE}, ""),
             _say("assistant", "I can cancel RM2 only. Shall I go ahead?"),
             _say("user", "yes, go ahead"),
             _call("cancel_booking", {"booking_id": "RM2"}, '{"booking_id": "RM2", "status": "cancelled"}')]
    for success in (True, False):
        items = _checked(_native("think-1", turns, success))
        note = next(e for e in items if e.turns == [4])
        assert note.decision == ("Called think at turn 4, which returned nothing; the next change that went through was "
                                 "cancel_booking at turn 7.")
        assert note.quote and note.quote.startswith("Booking QX7 is basic economy")
        assert not any(e.decision.startswith("Looked up with think") for e in items)
    # two notes before one change: the later one is what the agent acted on, the earlier is not shown
    twice = turns[:4] + [_call("think", {"thought": "First look at QX7."}, "")] + turns[4:]
    items = _checked(_native("think-3", twice, True))
    assert [e.turns for e in items if "returned nothing" in e.decision] == [[5]]
    items = _checked(_native("think-2", turns[:5], True))  # nothing changed after it
    assert any(e.decision == "Called think at turn 4, which returned nothing; no change went through after it."
               for e in items)


def test_a_note_with_line_breaks_and_quote_marks_is_quoted_as_sent():
    """Real think notes are lists over several lines, with quote marks: the page quotes them, and
    the quote is held to the turn as the agent sent it (not to its JSON-escaped form)."""
    note = ('Bookings of the user:\n1. QX7: basic economy, "no insurance", booked 2024-05-01\n'
            '2. RM2: business\n\nSo only RM2 can be cancelled.')
    turns = [_say("system", "You are a travel agent. Business bookings can always be cancelled."),
             _say("user", "Please cancel my bookings QX7 and RM2."),
             _call("get_booking", {"booking_id": "RM2"}, '{"booking_id": "RM2", "cabin": "business"}'),
             _call("think", {"thought": note}, ""),
             _call("cancel_booking", {"booking_id": "RM2"}, '{"booking_id": "RM2", "status": "cancelled"}')]
    for success in (True, False):
        comp = compile_offline(_native("think-lines", turns, success))
        item = next(e for e in comp.evidence if e.turns == [3])
        assert item.quote and item.quote.startswith("Bookings of the user:") and '"no insurance"' in item.quote
        assert comp.dropped_quotes == 0


_PATCH = ("\ndiff --git a/Repro.java b/Repro.java\nnew file mode 100644\n--- /dev/null\n+++ b/Repro.java\n@@ -0,0 +1,3 @@\n"
          "+class Repro {}\ndiff --git a/src/main/java/acme/Money.java b/src/main/java/acme/Money.java\n"
          "--- a/src/main/java/acme/Money.java\n+++ b/src/main/java/acme/Money.java\n@@ -10,2 +10,2 @@\n"
          "-    if (cents < 0) {\n+    if (cents <= 0) {\n")


def test_a_failed_submit_names_its_diff_and_the_missing_program_comes_after_the_changes():
    """A failure page leads with what the run handed in (the files of its diff, a scratch file marked
    new), not with a compiler the machine lacks: runs that succeed meet that too."""
    turns = [_say("system", "You fix issues in a Java repository. Call submit when done."),
             _say("user", "Money.parse accepts zero cents as negative."),
             _call("create", "create Repro.java", "[File: /acme/Repro.java (1 lines total)]\n1:"),
             _call("javac", "javac Repro.java", "/bin/bash: line 88: javac: command not found"),
             _call("edit", "edit 10:10\n    if (cents <= 0) {\nend_of_edit",
                   "[File: /acme/src/main/java/acme/Money.java (40 lines total)]\n10:    if (cents <= 0) {\nFile updated."),
             _call("submit", "submit", _PATCH)]
    items = _checked(_native("acme__money-3", turns, False))
    decisions = [e.decision for e in items]
    assert decisions[0] == ("Called submit at turn 5, which answered with a diff of `Repro.java` (new file) and "
                            "`src/main/java/acme/Money.java`.")
    missing = next(i for i, e in enumerate(items) if e.turns[-1] == 3)
    edit = next(i for i, e in enumerate(items) if e.turns == [4])
    assert edit < missing
    assert items[missing].support.startswith("The shell could not find `javac`: ")
    assert items[missing].support.endswith("so the run's changes are ranked above it.")


def test_a_repeated_error_is_told_once():
    """The same call answered with the same error three times is one item that says the run never got
    past it, not an error item and a repetition item about the same call."""
    run = relabeled("lumen__parser-7", False)
    items = _checked(run)
    loop = next(e for e in items if e.decision.startswith("Repeated the same call mvn("))
    assert loop.decision.endswith("; no later mvn call went through.")
    first = loop.turns[0]
    assert not any(e.turns[-1] == first for e in items if e is not loop)  # no item of its own (others may cite it)


def test_a_rule_on_the_record_a_change_acted_on_is_noted():
    """cancel_booking sends only an id; the booking it points at (shown by get_booking) is basic
    economy, and the system prompt's rule on cancelling names that class: the failure page says so."""
    turns = [_say("system", "You are a travel agent. Basic economy bookings cannot be cancelled. Business bookings "
                            "can always be cancelled."),
             _say("user", "Please cancel my booking QX7."),
             _call("get_booking", {"booking_id": "QX7"}, '{"booking_id": "QX7", "cabin": "basic_economy", "paid": 120}'),
             _say("assistant", "Booking QX7 will be cancelled. Shall I go ahead?"),
             _say("user", "yes"),
             _call("cancel_booking", {"booking_id": "QX7"}, '{"booking_id": "QX7", "status": "cancelled"}')]
    items = _checked(_native("rule-1", turns, False))
    notes = [n for e in items for n in e.notes]
    assert ('The record `booking_id` points at has `cabin` "basic_economy" (get_booking\'s answer, turn 2); a rule of '
            'the system prompt (turn 0) on this action names it: "Basic economy bookings cannot be cancelled."') in notes
    assert not any("Business bookings" in n for n in notes)  # the record's class is not business
    # an economy booking, in a log that shows basic_economy as a class of its own: "Basic economy
    # bookings" does not name it
    turns[2] = _call("get_booking", {"booking_id": "QX7"},
                     '{"booking_id": "QX7", "cabin": "economy", "other_classes": ["basic_economy", "business"]}')
    notes = [n for e in _checked(_native("rule-2", turns, False)) for n in e.notes]
    assert not any(n.startswith("The record `booking_id`") for n in notes), notes


def test_a_listed_name_sent_inside_quote_marks_is_told_so():
    """A search tool lists 'Lantern Tide (song)'; the agent sends "Lantern Tide (song)" with the
    quote marks and is refused again: the page says the marks went with the name."""
    turns = [_say("user", "Which painter made the cover of the record that has the song Lantern Tide?"),
             _call("Search", '"Lantern Tide"', "Could not find [\"Lantern Tide\"]. Similar: ['Lantern tide', "
                   "'Lantern Tide (song)'].", True),
             _call("Search", '"Lantern Tide (song)"', "Could not find [\"Lantern Tide (song)\"]. Similar: "
                   "['Lantern Tide (song)', 'Harbour Lights'].", True),
             _call("Search", "Harbour Lights", "Harbour Lights is the second album by the Marrow Sisters.")]
    turns.insert(0, _say("system", "Answer questions with Search and Finish."))
    notes = [n for e in _checked(_native("quoted-1", turns, False)) for n in e.notes]
    assert ("The error listed 2 names ('Lantern tide', 'Lantern Tide (song)'); the Search call at turn 3 sent one "
            "of them ('Lantern Tide (song)') inside quote marks, as \"Lantern Tide (song)\", and was answered "
            "with an error.") in notes, notes


def test_a_wrong_answer_says_where_its_text_appeared():
    """No look-up returned the expected answer; the answer given was a name the second page showed:
    the page quotes where."""
    turns = [_say("system", "Answer questions with Search and Finish."),
             _say("user", "Who did the champion fight next, in Calder?"),
             _call("Search", "Bout of the Decade", "The Bout of the Decade was a bout between Okafor and Brandt."),
             _call("Search", "Harbour Bout II", "Harbour Bout II was a rematch between Okafor and Brandt in Port Ellery."),
             _call("Finish", "Brandt", ""),
             {"type": "answer", "role": "assistant", "content": "Brandt"}]
    notes = [n for e in _checked(_native("answer-1", turns, False)) for n in e.notes]
    assert ('The answer it gave, "Brandt", appears in what Search returned at turn 3: "Harbour Bout II was a rematch '
            'between Okafor and Brandt in Port Ellery."') in notes, notes


def _tau(actions: list[dict] | None, traj: list[dict], reward: float) -> Run:
    from wikitrace.runs.openai_chat import record_to_run

    return record_to_run({"task_id": 7, "trial": 0, "reward": reward, "traj": traj,
                          "info": {"task": {"user_id": "ana_7", "instruction": "Cancel booking QX7.",
                                            "actions": actions}}}, "tau.json:1")


def _tool_call(i: int, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def _tool_answer(i: int, name: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": content}


def test_a_failure_page_compares_the_changes_with_the_calls_the_log_expected():
    """tau-bench records the calls a task counts as right: a cancel the task never expected, a
    booking with another payment, and an expected change never made are each said, checked."""
    traj = [{"role": "system", "content": "You are an airline agent. Basic economy bookings cannot be cancelled."},
            {"role": "user", "content": "Hi, cancel booking QX7 please, and book me on HAT1."},
            _tool_call(1, "get_booking", {"booking_id": "QX7"}),
            _tool_answer(1, "get_booking", '{"booking_id": "QX7", "cabin": "basic_economy"}'),
            {"role": "assistant", "content": "Cancel QX7 and book HAT1 paid by card_1. Go ahead?"},
            {"role": "user", "content": "yes"},
            _tool_call(2, "cancel_booking", {"booking_id": "QX7"}),
            _tool_answer(2, "cancel_booking", '{"booking_id": "QX7", "status": "cancelled"}'),
            _tool_call(3, "book_flight", {"flight": "HAT1", "payment_id": "card_1"}),
            _tool_answer(3, "book_flight", '{"booking_id": "NEW1", "flight": "HAT1"}'),
            {"role": "user", "content": "thanks ###STOP###"}]
    actions = [{"name": "get_booking", "kwargs": {"booking_id": "QX7"}},
               {"name": "book_flight", "kwargs": {"flight": "HAT1", "payment_id": "gift_2"}},
               {"name": "send_voucher", "kwargs": {"user_id": "ana_7", "amount": 50}}]
    run = _tau(actions, traj, 0.0)
    assert json.loads(run.task.metadata["expected_calls"])[1] == {"name": "book_flight",
                                                                   "arguments": {"flight": "HAT1", "payment_id": "gift_2"}}
    notes = [n for e in _checked(run) for n in e.notes]
    assert "The calls the log records as expected for this task include no cancel_booking call." in notes
    assert ('The log records the book_flight call the task expected with `payment_id` "gift_2" where this call sent '
            '"card_1".') in notes
    assert 'The log records 1 expected change this run did not make: send_voucher(amount=50, user_id="ana_7").' in notes
    booking = next(e for e in _checked(run) if e.decision.startswith("Called book_flight"))
    assert booking.support.startswith("The call went through, but it is not the call the log records as expected")
    assert booking.notes[0].startswith("The log records the book_flight call the task expected with")
    # the look-up the task expected was made; one it expected and the run never made is named
    assert not any("expected look-up" in n for n in notes)
    unread = _tau(actions + [{"name": "get_user", "kwargs": {"user_id": "ana_7"}}], traj, 0.0)
    assert 'The log records 1 expected look-up this run did not make as written: get_user(user_id="ana_7").' in [
        n for e in _checked(unread) for n in e.notes]
    # the run's one get_booking matched the other expected look-up (QX7) as written: it sent no "other
    # arguments" for QX8, so nothing is said beside it
    other = _tau(actions + [{"name": "get_booking", "kwargs": {"booking_id": "QX8"}}], traj, 0.0)
    assert 'The log records 1 expected look-up this run did not make as written: get_booking(booking_id="QX8").' in [
        n for e in _checked(other) for n in e.notes]
    # with QX7 not expected, the same call is the tool's own call with other arguments, said beside it, so a sum
    # written otherwise is not read as a look-up the run skipped
    alone = _tau([a for a in actions if a["name"] != "get_booking"] + [{"name": "get_booking", "kwargs": {"booking_id": "QX8"}}],
                 traj, 0.0)
    assert ('The log records 1 expected look-up this run did not make as written: get_booking(booking_id="QX8") '
            "(its own get_booking call at turn 2 sent other arguments).") in [n for e in _checked(alone) for n in e.notes]
    # two bookings expected, one made as expected: the other is the change it did not make
    twice = _tau([{"name": "book_flight", "kwargs": {"flight": "HAT1", "payment_id": "card_1"}},
                  {"name": "book_flight", "kwargs": {"flight": "HAT2", "payment_id": "card_1"}},
                  {"name": "cancel_booking", "kwargs": {"booking_id": "QX7"}}], traj, 0.0)
    notes = [n for e in _checked(twice) for n in e.notes]
    assert 'The log records 1 expected change this run did not make: book_flight(flight="HAT2", payment_id="card_1").' \
        in notes, notes
    # a change made as expected is said so in its support, not as a note, and ranked below the causes
    # (the last one keeps its place: it carries the changes the run did not make)
    items = _checked(twice)
    same = next(e for e in items if e.support.startswith("The call went through, and the log records this same call"))
    assert Check(twice).call(same.turns[-1]).name == "cancel_booking" and items.index(same) > 0
    assert not any("this same" in n for n in same.notes)
    assert "The log records this same book_flight call among those the task expected." in notes
    # the expected payment: the run never saw it; with it shown by a look-up, the page names that turn
    assert 'The expected `payment_id` "gift_2" appears in no observation or user message before this call.' \
        in [n for e in _checked(run) for n in e.notes]
    shown = _tau(actions, traj[:3] + [_tool_answer(1, "get_booking", '{"booking_id": "QX7", "cabin": "basic_economy", '
                                                   '"payment_history": [{"payment_id": "gift_2"}]}')] + traj[4:], 0.0)
    assert 'The expected `payment_id` "gift_2" was shown before this call by get_booking\'s answer (turn 2).' \
        in [n for e in _checked(shown) for n in e.notes]
    # the last change made as expected, with only a look-up the run skipped: still ranked below the
    # change the task never asked for, and the skipped look-up still named on it
    skipped = _tau([{"name": "get_user", "kwargs": {"user_id": "ana_7"}},
                    {"name": "book_flight", "kwargs": {"flight": "HAT1", "payment_id": "card_1"}}], traj, 0.0)
    items = _checked(skipped)
    assert Check(skipped).call(items[0].turns[-1]).name == "cancel_booking", [e.decision for e in items]
    last = next(e for e in items if e.decision.startswith("Called book_flight"))
    assert last.support.startswith("The call went through, and the log records this same call")
    assert 'The log records 1 expected look-up this run did not make as written: get_user(user_id="ana_7").' in last.notes
    # a log that records no expected calls gets none of these notes
    plain = _tau(None, traj, 0.0)
    assert "expected_calls" not in plain.task.metadata
    assert not any("expected" in n for e in _checked(plain) for n in e.notes)
    # an empty list is a record too: the task expected no call, so each change is one it did not expect
    none_expected = _tau([], traj, 0.0)
    assert none_expected.task.metadata["expected_calls"] == "[]"
    assert "The calls the log records as expected for this task include no cancel_booking call; it expected no call " \
           "at all." in [n for e in _checked(none_expected) for n in e.notes]


def test_an_answer_taken_from_the_task_text_is_said_so():
    """A retry whose task text carries notes on the earlier, wrong attempt gives the same answer
    again, and no look-up shows it: the page quotes where it stood."""
    turns = [_say("user", "Which hall stands across the square from the old mint? Notes on your last attempt: I "
                          "assumed it was Weaver Hall without searching for it."),
             _call("Search", "Old Mint of Corrisford", "The Old Mint of Corrisford is a stone building on the market square."),
             _call("Finish", "Weaver Hall", ""),
             {"type": "answer", "role": "assistant", "content": "Weaver Hall"}]
    turns.insert(0, _say("system", "Answer questions with Search and Finish."))
    notes = [n for e in _checked(_native("retry-1", turns, False)) for n in e.notes]
    assert ('The answer it gave, "Weaver Hall", appears in the user message at turn 1, not in any look-up: "…stands '
            'across the square from the old mint? Notes on your last attempt: I assumed it was Weaver Hall without '
            'searching for it."') in notes, notes


def test_a_change_carries_what_the_agent_wrote_before_it():
    """The why of a change in the agent's own words: its last message since its previous call (the
    plan the user agreed to), or the reasoning the call itself carries (a ReAct thought)."""
    turns = [_say("system", "You are a travel agent. Business bookings can always be cancelled."),
             _say("user", "Please cancel my booking RM2."),
             _call("get_booking", {"booking_id": "RM2"}, '{"booking_id": "RM2", "cabin": "business"}'),
             _say("assistant", "RM2 is business class, which can always be cancelled. Shall I go ahead?"),
             _say("user", "yes, go ahead"),
             _call("cancel_booking", {"booking_id": "RM2"}, '{"booking_id": "RM2", "status": "cancelled"}')]
    for success in (True, False):
        notes = [n for e in _checked(_native("why-1", turns, success)) for n in e.notes]
        assert ('The agent\'s last message before it (turn 3): "RM2 is business class, which can always be cancelled. '
                'Shall I go ahead?"') in notes, notes
    # a look-up right before the change: the message came before that look-up, so it is not this call's
    later = turns[:5] + [_call("get_booking", {"booking_id": "RM2"}, '{"booking_id": "RM2"}')] + turns[5:]
    assert not any(n.startswith("The agent's last message") for e in _checked(_native("why-2", later, True))
                   for n in e.notes)


def test_a_qa_answer_shows_every_look_up_it_rests_on_and_the_thought_behind_it():
    """A verdict ("no") takes no value from any page, yet the page that decided it is the second
    search: with no change but the answer, each distinct look-up is shown, and the Finish's own
    thought says what the agent concluded from them."""
    think = "Mira Holt is a Danish painter. So they are not both Swedish."
    turns = [_say("user", "Are Ola Berg and Mira Holt both Swedish?"),
             _call("Search", "Ola Berg", "Ola Berg is a Swedish composer born in Lund."),
             _call("Search", "Mira Holt", "Mira Holt (born 1970) is a Danish painter."),
             dict(_call("Finish", "no", ""), reasoning=think),
             {"type": "answer", "role": "assistant", "content": "no"}]
    turns.insert(0, _say("system", "Answer questions with Search and Finish."))
    items = _checked(_native("verdict-1", turns, True))
    assert [e.turns for e in items] == [[2], [3], [4]]
    assert f'The agent wrote with this call (turn 4): "{think}"' in items[-1].notes


def test_a_look_up_shows_the_record_a_later_change_took_its_value_from():
    """A long JSON answer starts with fields nobody used: the support shows the record the change's
    value came from (the payment the booking used), as JSON."""
    profile = json.dumps({"name": "Ana", "address": {"city": "Lund"}, "payment_methods": {
        "card_9": {"source": "credit_card", "last_four": "7334", "id": "card_9"},
        "gift_2": {"source": "gift_card", "amount": 40, "id": "gift_2"}}})
    turns = [_say("system", "You are a travel agent."),
             _say("user", "Book HAT1 for me (user ana_7), paid with my card ending in 7334."),
             _call("get_user", {"user_id": "ana_7"}, profile),
             _say("user", "yes"),
             _call("book_flight", {"flight": "HAT1", "payment_id": "card_9"}, '{"booking_id": "NEW1"}')]
    items = _checked(_native("record-1", turns, True))
    look = next(e for e in items if e.turns == [2])
    assert look.support == ('It returned the record a later call took `payment_id` "card_9" from: {"source": '
                            '"credit_card", "last_four": "7334", "id": "card_9"}')
    # a JSON object answer is shown by its plain top-level fields: nested lists and objects left out
    assert items[-1].support == 'The environment accepted it: an object; its plain top-level fields: {"booking_id": "NEW1"}'
    wide = [*turns[:2], _call("get_user", {"user_id": "ana_7"}, json.dumps(
        {"name": "Ana", "bookings": [{"id": f"B{i}", "flights": ["HAT1"] * 9} for i in range(9)], "tier": "gold"})),
        *turns[2:]]
    first = next(e for e in _checked(_native("record-2", wide, True)) if e.turns == [2])
    assert first.support == 'It returned: an object; its plain top-level fields: {"name": "Ana", "tier": "gold"}'


def test_a_run_the_harness_stopped_before_an_answer_says_what_it_had_found():
    """Stopped at the step limit with no answer: the page opens with that ending and what the
    look-ups that went through had returned, so a reader sees the run held both towns and spent
    its last steps on searches that failed."""
    from wikitrace.runs.native import run_from_dict

    turns = [_say("user", "Which chain is based further north, Kiln Pizza or Harbor Subs?"),
             _call("Search", "Kiln Pizza", "Kiln Pizza is a restaurant chain based in Tulsa, Oklahoma."),
             _call("Search", "Harbor Subs", "Harbor Subs is a sandwich chain based in Portland, Maine."),
             dict(_call("Search", "Tulsa latitude", "Could not find [Tulsa latitude]. Similar: ['Tulsa', 'Latitude'].",
                        is_error=True), reasoning="I need the latitude of Tulsa."),
             dict(_call("Search", "Tulsa coordinates", "Could not find [Tulsa coordinates]. Similar: ['Tulsa'].",
                        is_error=True), reasoning="I need the coordinates of Tulsa instead."),
             {"type": "episode_over", "role": "harness", "content": "halted at the step limit"}]
    run = run_from_dict({"run_id": "halt-1", "task": {"id": "halt-1", "instruction": turns[0]["content"],
                                                       "metadata": {"gold_answer": "Harbor Subs"}},
                         "outcome": {"success": False, "ended_by": "harness: halted at the step limit"},
                         "turns": [dict(t, turn=i) for i, t in enumerate(turns)]}, "test.jsonl:1")
    first = next(e for e in _checked(run) if e.decision.startswith("The harness"))
    assert first.decision == "The harness ended the run after 4 calls, before any answer was given."
    assert first.turns == [1, 2, 4]
    assert first.notes == ['Search(Kiln Pizza) at turn 1 returned: "Kiln Pizza is a restaurant chain based in Tulsa, '
                           'Oklahoma."', 'Search(Harbor Subs) at turn 2 returned: "Harbor Subs is a sandwich chain based '
                           'in Portland, Maine."',
                           'The agent wrote with this call (turn 4): "I need the coordinates of Tulsa instead."']
    # look-ups only, no error: the ending is told once, not again as a run that never acted
    calm = run_from_dict({"run_id": "halt-2", "task": {"id": "halt-2", "instruction": turns[0]["content"]},
                          "outcome": {"success": False, "ended_by": "harness: halted at the step limit"},
                          "turns": [dict(t, turn=i) for i, t in enumerate(turns[:3] + turns[-1:])]}, "test.jsonl:1")
    # a task that records no answer to give: worded as a change, never as a missing answer
    assert [e.decision for e in _checked(calm)] == [
        "The harness ended the run after 2 calls, before any state-changing call went through."]


def _qa_run(run_id: str, turns: list[dict], gold: str, success: bool, ended_by: str | None = None) -> Run:
    """A question-answering run in the native form: its first turn is the question."""
    from wikitrace.runs.native import run_from_dict

    outcome = {"success": success, **({"ended_by": ended_by} if ended_by else {})}
    return run_from_dict({"run_id": run_id, "task": {"id": run_id, "instruction": turns[0]["content"],
                                                      "metadata": {"gold_answer": gold}},
                          "outcome": outcome, "turns": [dict(t, turn=i) for i, t in enumerate(turns)]}, "test.jsonl:1")


def test_a_stopped_run_lists_the_look_up_that_held_the_expected_answer_and_says_how_many_it_left_out():
    """Six look-ups went through and the fifth held the expected answer: the list keeps the first
    four and that one, and its sentence says it shows 5 of the 6, not that it shows them all."""

    pages = ["Kiln Pizza", "Tulsa", "Harbor Subs", "Portland", "Maine", "Oklahoma"]
    turns = [_say("user", "Which chain is based further north, Kiln Pizza or Harbor Subs?")]
    turns += [_call("Search", p, f"{p} is a page." + (" Harbor Subs is further north." if p == "Maine" else ""))
              for p in pages]
    turns += [{"type": "episode_over", "role": "harness", "content": "halted at the step limit"}]
    run = _qa_run("halt-3", turns, "Harbor Subs", False, "harness: halted at the step limit")
    first = next(e for e in _checked(run) if e.decision.startswith("The harness"))
    shown = [n.split(" at turn ")[0] for n in first.notes]
    # Harbor Subs's own page names the answer too: it is among the first four, so the list is 1-5, not 6
    assert shown == ["Search(Kiln Pizza)", "Search(Tulsa)", "Search(Harbor Subs)", "Search(Portland)", "Search(Maine)"]
    assert ("What 5 of the 6 look-ups that went through returned (the first 4, and each that held the expected "
            "answer), each from its start, is listed below.") in first.support, first.support


def test_a_right_answer_several_look_ups_held_names_each_of_them_and_quotes_none():
    """'2004' stood on the first page by chance (another thing's year) and on the page the answer came
    from: naming only the first would point the reader at the wrong page."""
    turns = [_say("user", "The singer Jaclyn Stapp is married to the frontman of a band that disbanded in what year?"),
             _call("Search", "Jaclyn Stapp", "Jaclyn Stapp was Miss New York USA 2004. She married Scott Stapp of Creed."),
             _call("Search", "Creed (band)", "Creed is a rock band. Active from 1994 to 2004, and again from 2009."),
             _call("Finish", "2004", ""), {"type": "answer", "role": "assistant", "content": "2004"}]
    run = _qa_run("seen-2", turns, "2004", True)
    fact = next(f for f in compile_offline(run).in_short if f.text.startswith('The answer "2004"'))
    assert fact.text == 'The answer "2004" (turn 3) was judged right; "2004" appears in what the look-ups at turns 1 and 2 returned.'
    assert fact.turns == [1, 2, 3]


def test_an_expected_answer_an_error_listed_as_a_page_title_is_said_so():
    """"the Twist" stood in no page, but a failed search listed the page "Twist (dance)": the fact
    names that listing and that no call took it up; a title of another thing is not matched."""
    def run(listed: str) -> Run:
        turns = [_say("user", "Which dance craze did the song Funky Chicken start after?"),
                 _call("Search", "Funky Chicken", f"Could not find [Funky Chicken]. Similar: ['Chicken Dance', {listed}].",
                       is_error=True),
                 _call("Search", "Chicken Dance", "The Chicken Dance is an oom-pah song, a polka."),
                 _call("Finish", "polka", ""), {"type": "answer", "role": "assistant", "content": "polka"}]
        return _qa_run("title-1", turns, "the Twist", False)

    fact = next(f for f in compile_offline(run("'Twist (dance)'")).in_short if f.text.startswith('The answer "polka"'))
    assert fact.text.startswith('The answer "polka" (turn 3) was judged wrong; the task expected "the Twist", which no '
                                'look-up had returned; the page "Twist (dance)" was listed by the error Search answered '
                                'at turn 1; no call before turn 3 sent it.'), fact.text
    assert 1 in fact.turns
    other = next(f for f in compile_offline(run("'Oliver Twist'")).in_short if f.text.startswith('The answer "polka"'))
    assert "was listed by" not in other.text, other.text


def test_a_right_answer_is_quoted_from_the_sentence_that_ties_it_to_the_question():
    """The option's own page names it in every sentence; the one that says where it was founded is
    what decided the answer, and it is quoted whole."""
    page = ("Kiln Pizza is a chain of pizza restaurants. Kiln Pizza has 40 locations. Kiln Pizza was founded in "
            "Tulsa, Oklahoma, in 1971. Kiln Pizza serves thin crust.")
    turns = [_say("user", "Which chain was founded in Oklahoma, Kiln Pizza or Harbor Subs?"),
             _call("Search", "Kiln Pizza", page),
             _call("Search", "Harbor Subs", "Harbor Subs is a sandwich chain founded in Portland, Maine."),
             _call("Finish", "Kiln Pizza", ""), {"type": "answer", "role": "assistant", "content": "Kiln Pizza"}]
    run = _qa_run("tie-1", turns, "Kiln Pizza", True)
    fact = next(f for f in compile_offline(run).in_short if f.text.startswith('The answer "Kiln Pizza"'))
    assert fact.text == ('The answer "Kiln Pizza" (turn 3) was judged right; "Kiln Pizza" appears in what the look-up at '
                         'turn 1 returned ("…Kiln Pizza was founded in Tulsa, Oklahoma, in 1971.…").'), fact.text


def test_a_hand_off_shows_the_look_up_it_followed():
    """A transfer takes no value from the booking it read, yet that booking is why the agent
    handed off: the last look-up before the change that settled the run is on the page."""
    turns = [_say("system", "You are a travel agent. Basic economy bookings cannot be changed."),
             _say("user", "I am ana_7; change booking QX7 to a nonstop flight."),
             _call("get_user", {"user_id": "ana_7"}, '{"name": "Ana", "bookings": ["QX7", "RM2"]}'),
             _call("get_booking", {"booking_id": "QX7"}, '{"booking_id": "QX7", "cabin": "basic_economy"}'),
             _say("assistant", "QX7 is basic economy and cannot be changed. Shall I transfer you to an agent?"),
             _say("user", "yes please"),
             _call("transfer_to_agent", {"summary": "Wants to change a basic economy booking."}, "Transfer successful")]
    items = _checked(_native("handoff-1", turns, True))
    assert [e.turns for e in items] == [[2], [3], [6]]
    assert items[1].support == ('It returned: an object; its plain top-level fields: {"booking_id": "QX7", "cabin": '
                                '"basic_economy"}')
    # the field the agent's own words turned on, with those words: the first and the last that name it
    assert items[1].notes == ['`cabin` is "basic_economy" in this answer, and the agent\'s own words name it: turn 4: '
                              '"QX7 is basic economy and cannot be changed."; turn 6: "Wants to change a basic economy '
                              'booking."']
    assert items[0].notes == []  # "Ana" is a name the agent never wrote; ids and lists are no plain terms


def test_a_one_word_field_counts_only_beside_its_field_name():
    """"no" occurs in most sentences: an insurance of "no" is named only where the sentence also
    says insurance, and a status the agent never wrote is not named at all."""
    turns = [_say("system", "You are a travel agent."),
             _say("user", "I am ana_7; cancel booking QX7."),
             _call("get_booking", {"booking_id": "QX7"},
                   '{"booking_id": "QX7", "insurance": "no", "status": "confirmed", "cabin": "economy"}'),
             _say("assistant", "No, I cannot cancel it: the booking has no travel insurance."),
             _say("user", "ok, no problem")]
    items = _checked(_native("one-word-1", turns, True))
    look = next(e for e in items if e.turns == [2])
    assert look.notes == ['`insurance` is "no" in this answer, and the agent\'s own words name it: turn 3: "No, I cannot '
                          'cancel it: the booking has no travel insurance."']


def test_one_error_met_with_several_arguments_is_one_cause():
    """Searches that each packed several Search[...] into one action and got the same error are one
    defect: one cause with all their turns, naming the call form inside each argument."""
    turns = [_say("system", "Answer with Search[...] and Finish[...]."),
             _say("user", "Which museum in Rotterwyk showed Iris Maal?"),
             _call("Search", "Iris Maal", "Iris Maal (born 1970) is a textile designer."),
             *[_call("Search", f"Verlaan Gallery{' Hall' * k}], Search[Ostmark Museum{' Rotterwyk' * k}",
                     "Could not find that page, please try again.", is_error=True) for k in range(3)]]
    items = _checked(_native("packed-1", turns, False))
    one = [e for e in items if e.decision.startswith("Called Search 3 times")]
    assert len(one) == 1 and one[0].turns == [3, 4, 5], [e.decision for e in items]
    assert one[0].decision == ("Called Search 3 times with different arguments (turns 3, 4 and 5), and each was "
                               "answered with the same error; no later Search call went through.")
    assert one[0].notes == ["Each of these arguments holds `Search[` itself: several calls were written into one."]
    assert not any(e.decision.startswith("Called Search(") for e in items)


def test_a_look_up_error_the_next_search_got_past_is_no_cause():
    """A search error fixed by the next search is how the run found the page, not why its answer
    was wrong: the failure page names the answer, not the error."""
    turns = [_say("system", "Answer with Search[...] and Finish[...]."),
             _say("user", "Which festival screened Marsh Bell in 2016?"),
             _call("Search", "Marsh Bell", "Could not find [Marsh Bell]. Similar: ['Marsh Bell (film)', 'Bell Marsh'].",
                   is_error=True),
             _call("Search", "Marsh Bell (film)", "Marsh Bell is a 2016 film screened at the 12th Oresund Film Festival."),
             _call("Finish", "Venice Film Festival", "Episode finished, reward = 0")]
    comp = compile_offline(_native("got-past-1", turns, False))
    assert [e.turns for e in comp.evidence] == [[4]]
    # the search that got past the error is named in the answer's notes; the error is counted, not hidden
    assert any("at turn 3 returned" in n for n in comp.evidence[0].notes)
    assert comp.left_out == 1


def test_errors_that_differ_only_by_what_was_sent_are_one_cause():
    """Each search sent a name inside quote marks and got 'Could not find ["<name>"]' with its own
    list: one defect, told once, with the error's shape and the quote marks named."""
    turns = [_say("system", "Answer with Search[...] and Finish[...]."),
             _say("user", "Which comedy did Odile Marsh make with zoo animals?"),
             _call("Search", '"Tin and Tally"', 'Could not find ["Tin and Tally"]. Similar: '
                   "['Tin and Tally', 'A Near Miss'].", is_error=True),
             _call("Search", '"Odile Marsh"', "Could not find [\"Odile Marsh\"]. Similar: ['Odile Marsh', 'Hen Dash'].",
                   is_error=True)]
    items = _checked(_native("quoted-1", turns, False))
    one = next(e for e in items if e.decision.startswith("Called Search 2 times"))
    assert one.decision == ('Called Search 2 times with different arguments (turns 2 and 3), and each was answered with '
                            'an error that reads "Could not find […]." around what it sent; no later Search call went '
                            'through.')
    assert one.notes == ['Each of these arguments was sent inside quote marks, as "Odile Marsh".']


def test_an_answer_read_off_an_error_list_is_said_so():
    """The name it answered came from an error's list of near names, a page it never opened."""
    turns = [_say("system", "Answer with Search[...] and Finish[...]."),
             _say("user", "Which club signee was a rookie contender for the Herons?"),
             _call("Search", "Herons", "Could not find [Herons]. Similar: ['Dunmore Herons', 'Ada Kettering (basketball)'].",
                   is_error=True),
             _call("Search", "Dunmore Herons", "The Dunmore Herons are a basketball team based in Dunmore."),
             _call("Finish", "Ada Kettering", ""),
             {"type": "answer", "role": "assistant", "content": "Ada Kettering"}]
    notes = [n for e in _checked(_native("offered-1", turns, False)) for n in e.notes]
    assert ('The answer it gave, "Ada Kettering", appears in no look-up that went through, only in the error Search '
            'returned at turn 2: "Could not find [Herons]. Similar: [\'Dunmore Herons\', \'Ada Kettering (basketball)\']."'
            ) in notes, notes


def test_a_retry_without_the_quote_marks_says_so():
    """The search that failed sent its name inside quote marks; the one that went through did not."""
    turns = [_say("system", "Answer with Search[...] and Finish[...]."),
             _say("user", "Which comedy did Odile Marsh make with zoo animals?"),
             _call("Search", '"Tin and Tally"', 'Could not find ["Tin and Tally"]. Similar: '
                   "['Tin and Tally', 'Odile Marsh'].", is_error=True),
             _call("Search", "Odile Marsh", "Odile Marsh is a British animator who created Paper Zoo."),
             _call("Finish", "Paper Zoo", ""),
             {"type": "answer", "role": "assistant", "content": "Paper Zoo"}]
    retry = next(e for e in _checked(_native("quote-retry-1", turns, True)) if e.decision.startswith("After Search"))
    assert retry.notes[-1] == ('The call that failed sent its text inside quote marks, as "Tin and Tally"; the one '
                               'that went through sent none.')


def test_a_success_without_a_call_shows_what_the_agent_said():
    """With no call, the agent's messages are the whole answer: what it asked for and declined."""
    turns = [_say("system", "You are a travel agent."),
             _say("user", "Cancel my flight and refund me, please."),
             _say("assistant", "I need your booking id before I can cancel anything."),
             _say("user", "I do not have it."),
             _say("assistant", "Then I cannot cancel it now; come back with the booking id."),
             _say("user", "Fine, thanks."),
             _say("assistant", "You're welcome!")]
    item, = _checked(_native("no-call-1", turns, True))
    assert item.support == ("The run was judged a success with no environment call: what the agent told the user rests on "
                            "the user's messages and its system prompt alone. Its last message (turn 6) is quoted below.")
    assert item.notes == ['The agent wrote at turn 2: "I need your booking id before I can cancel anything."',
                          'The agent wrote at turn 4: "Then I cannot cancel it now; come back with the booking id."']


def test_an_expected_call_differing_inside_a_list_names_the_item_that_differs():
    """Two flights, the second one other than expected: the note names that flight, not two lists
    clipped to the same first flight, and where the expected one had been shown."""
    search = json.dumps([{"flight_number": "HAT2", "price": 90}, {"flight_number": "HAT3", "price": 70}])
    traj = [{"role": "system", "content": "You are an airline agent."},
            {"role": "user", "content": "Book HAT1 and then the cheapest flight after it."},
            _tool_call(1, "search_flights", {"after": "HAT1"}),
            _tool_answer(1, "search_flights", search),
            {"role": "user", "content": "yes"},
            _tool_call(2, "book_flight", {"flights": [{"flight_number": "HAT1"}, {"flight_number": "HAT2"}]}),
            _tool_answer(2, "book_flight", '{"booking_id": "NEW1"}')]
    run = _tau([{"name": "book_flight", "kwargs": {"flights": [{"flight_number": "HAT1"}, {"flight_number": "HAT3"}]}}],
               traj, 0.0)
    notes = [n for e in _checked(run) for n in e.notes]
    assert ('The log records the book_flight call the task expected with `flights[1].flight_number` "HAT3" where this '
            'call sent "HAT2".') in notes, notes
    assert ('The expected `flights[1].flight_number` "HAT3" was shown before this call by search_flights\'s answer '
            '(turn 2).') in notes, notes


def test_a_wrong_answer_no_page_held_shows_what_the_pages_said():
    """No look-up returned the expected answer: the page shows what the last look-ups did return,
    so a reader sees the fact the agent read past (the head office in another state)."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_lesson_specifics import _qa
    from test_offline_content import _run

    run = _run(_qa("yes", "no", [("Brightline Power", "Brightline Power is a utility based in Raleigh, North Carolina."),
                                 ("Harbor Funds", "Harbor Funds is an asset manager based in Salem, Massachusetts.")],
                   "Are Brightline Power and Harbor Funds both based in Massachusetts?", run_id="both-1"))
    notes = [n for e in _checked(run) for n in e.notes]
    assert 'Search(Brightline Power) at turn 1 returned: "Brightline Power is a utility based in Raleigh, North ' \
           'Carolina."' in notes, notes
    # with the expected answer on a page, the words around it are shown instead
    seen = _run(_qa("Salem", "Salem, Massachusetts", [("Harbor Funds", "Harbor Funds is an asset manager based in "
                                                                       "Salem, Massachusetts.")],
                    "Where is Harbor Funds based?", run_id="seen-1"))
    assert not any(" returned: " in n for e in _checked(seen) for n in e.notes)


def test_a_change_that_never_went_through_is_compared_with_the_expected_one():
    """The booking failed and was never made: the page still says how it differed from the one the
    log expected (the payment), on the error the run never got past."""
    traj = [{"role": "system", "content": "You are an airline agent."},
            {"role": "user", "content": "Book HAT1 for me, paid with gift_2."},
            _tool_call(1, "book_flight", {"flight": "HAT1", "payment_id": "card_1"}),
            _tool_answer(1, "book_flight", "Error: payment amount does not add up"),
            {"role": "user", "content": "thanks ###STOP###"}]
    run = _tau([{"name": "book_flight", "kwargs": {"flight": "HAT1", "payment_id": "gift_2"}}], traj, 0.0)
    error = next(e for e in _checked(run) if e.support.startswith("The environment answered with an error"))
    assert ('The log records the book_flight call the task expected with `payment_id` "gift_2" where this call sent '
            '"card_1".') in error.notes
    assert 'The expected `payment_id` "gift_2" was shown before this call by a user message (turn 1).' in error.notes


def test_a_failure_of_look_ups_only_names_them_all_and_leaves_none_out():
    """The page sums up a run that only looked things up in one item naming every call: saying
    two calls were 'left out' beside it was false (the reader was sent looking for calls it had seen)."""
    from wikitrace.compilers.offline import compile_offline

    traj = [{"role": "system", "content": "You are an airline agent."},
            {"role": "user", "content": "How many bags can I take on QX7? I am a gold member."},
            _tool_call(1, "get_booking", {"booking_id": "QX7"}),
            _tool_answer(1, "get_booking", '{"booking_id": "QX7", "cabin": "economy", "passengers": 2}'),
            _tool_call(2, "calculate", {"expression": "3 * 2"}),
            _tool_answer(2, "calculate", "6"),
            {"role": "assistant", "content": "You can take 6 bags."},
            {"role": "user", "content": "Thanks! ###STOP###"}]
    comp = compile_offline(_tau(None, traj, 0.0))
    summary = next(e for e in comp.evidence if e.decision.startswith("Made 2 look-up calls"))
    assert "get_booking and calculate" in summary.decision
    assert comp.left_out == 0


def test_a_last_change_made_as_expected_is_not_doubted_when_others_were_left_unmade():
    """The run's last change was one the task expected and the run stopped there with another
    expected change unmade: the page said the change 'may not be what the task asked for', which
    the log contradicts (a reviewer counted it false); it says why the change is shown instead."""
    from wikitrace.compilers.offline import compile_offline

    actions = [{"name": "cancel_booking", "kwargs": {"booking_id": "QX7"}},
               {"name": "cancel_booking", "kwargs": {"booking_id": "QX8"}}]
    traj = [{"role": "system", "content": "You are an airline agent."},
            {"role": "user", "content": "Cancel my bookings QX7 and QX8, please."},
            _tool_call(1, "cancel_booking", {"booking_id": "QX7"}),
            _tool_answer(1, "cancel_booking", '{"booking_id": "QX7", "status": "cancelled"}'),
            {"role": "assistant", "content": "QX7 is cancelled."},
            {"role": "user", "content": "Thanks! ###STOP###"}]
    comp = compile_offline(_tau(actions, traj, 0.0))
    item = next(e for e in comp.evidence if e.decision.startswith("Called cancel_booking"))
    assert "may not be what the task asked for" not in item.support
    assert item.support.startswith("The call went through and is one the task expected, but the run ended after it")
    assert any("QX8" in n for n in item.notes), item.notes  # the unmade change is listed below it


def _named_field(c, n: int, key: str, verb: str, value, quoted: list, text: str) -> None:
    """One field a look-up-note names ("is": the field's own value; "holds": one item of its list)
    and the agent's later sentences that hold its value as words."""
    assert (key, value, verb == "holds") in set(_json_fields(json.loads(c.call(n).result))), text
    words = " ".join(value.replace("_", " ").split()).lower()
    for k, sentence in quoted:
        said = c.by_n[int(k)]
        assert int(k) > n and said.role == "assistant" and not is_harness_turn(said), text
        # what it did with what it read: no question, nothing past the next change that went through
        assert not sentence.endswith("?") and not any(n < t.turn < int(k) for t in c.changes()), text
        assert _flat(sentence.rstrip("…")) in _flat(_text(said) + "\n" + (said.reasoning or "")), sentence
        assert re.search(r"(?<![\w-])" + r"[\s_-]+".join(map(re.escape, words.split())) + r"(?![\w-])",
                         sentence.lower()), (value, sentence)
        if len(words.split()) == 1:  # one word: beside a word of the field's name (its first five letters)
            assert any(re.search(r"(?<!\w)" + re.escape(w[:5]), sentence.lower())
                       for w in re.split(r"[_\W]+", key.lower()) if len(w) > 2), (key, sentence)
