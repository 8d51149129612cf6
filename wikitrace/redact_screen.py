"""Whether a whole run may hold a secret at all, in one pass over its distinct strings: most runs
hold none, and walking every string through the full rules costs far more than a few substring
scans of all of them together. The screen remembers long strings found clean in earlier runs
(a benchmark's system prompt is in every run), bounded by their total length."""

from __future__ import annotations

import re
from functools import cached_property

from . import redact_rules as rules
from .redact_decode import View

TYPE_CHECKING = False  # typing itself costs every command a few milliseconds at start-up
if TYPE_CHECKING:
    from typing import Any

    from .runs.model import Run

_ENDS = "_-."


def _literal_patterns(literals) -> list[str]:
    """Regexes that find ``literals``: those ending in ``_``, ``-`` or ``.`` grouped by that
    character (the engine skips from one to the next and checks the prefixes behind it), the
    others one each."""
    ends: dict[str, list[str]] = {}
    out = []
    for t in literals:
        if len(t) > 1 and t[-1] in _ENDS:
            ends.setdefault(t[-1], []).append(t)
        else:
            out.append(re.escape(t))
    return out + [re.escape(end) + "(?:" + "|".join(f"(?<={re.escape(t)})" for t in sorted(ts)) + ")"
                  for end, ts in sorted(ends.items())]


def _by_first_character(literals) -> tuple[tuple[str, ...], tuple[re.Pattern, ...]]:
    """Tests that find ``literals``: those sharing a first character as one regex (a tree of
    their characters: the engine skips to the first one and follows a single branch, where a
    scan per literal would read the text once for each), a lone long one by ``in``, a lone
    short one by the regex engine (it skips to its first character)."""
    words = sorted(set(literals))
    # a word that starts with another adds nothing: wherever it is, the other is too
    words = [w for w in words if not any(o != w and w.startswith(o) for o in words)]
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(word)
    found_by_in = tuple(g[0] for g in groups.values() if len(g) == 1 and len(g[0]) >= 8)
    regexes = tuple(re.compile(_tree(g)) for g in groups.values() if len(g) > 1 or len(g[0]) < 8)
    return found_by_in, regexes


def _tree(words: list[str]) -> str:
    """A regex that matches where one of ``words`` (none the start of another) starts."""
    if len(words) == 1:
        return re.escape(words[0])
    heads: dict[str, list[str]] = {}
    for word in words:
        heads.setdefault(word[0], []).append(word[1:])
    branches = [re.escape(head) + _tree(rest) for head, rest in sorted(heads.items())]
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


# What JSON writes as digits, true, false, null, NaN or Infinity: no trigger is made of these.
_SCALARS = frozenset({int, float, bool, type(None)})
_CLEAN_MIN_CHARS, _CLEAN_MAX_CHARS = 512, 1 << 24  # run strings remembered clean: long ones, 16M characters in all


class RunScreen:
    """The trigger tests of a set of built-in rules, applied to a whole run."""

    def __init__(self, rule_list: list, plain: list[str], lower: tuple[str, ...],
                 enc_plain: tuple[str, ...], enc_lower: tuple[str, ...], builtin: bool):
        self._rules, self._plain, self._lower = rule_list, plain, lower
        self._enc_plain, self._enc_lower, self._builtin = enc_plain, enc_lower, builtin
        self._clean: set[str] = set()  # long strings of earlier runs that hold no trigger
        self._clean_chars = 0
        self._quiet_names: set[str] = set()  # attribute names of task, turns, outcome found to hold no trigger

    def may_hold_secret(self, run: Run) -> bool:
        """One pass over the run's text: most runs hold no trigger at all.

        Walking every string of a run through ``text`` costs far more than testing the
        trigger substrings on all of them at once, so the walk only happens when a trigger
        is present. Each distinct string is tested once: the kept original repeats the
        turns' text, and long strings found clean before (a benchmark's system prompt, in
        every run) are not tested again. ``text`` judges each string alone, so nothing is
        lost by testing them apart.
        """
        import json

        fresh, others = self._untested_strings(run)
        blob = json.dumps([fresh, others], ensure_ascii=False, default=str)
        if self._holds_trigger(blob):
            return True
        # A secret written only with escapes (``\\u0067hp_``, ``postgres:\\/\\/``, ``&#115;k-``)
        # shows its trigger once decoded. In the blob an escape in the text carries a doubled
        # backslash (JSON escaped its backslash); the blob's own ``\\n`` and ``\\"`` do not.
        if ("\\\\" in blob or ("%" in blob and rules.PERCENT.search(blob))
                or ("&" in blob and rules.ENTITY.search(blob))):
            view = View(blob)
            if view.changed and self._holds_trigger(view.text):
                return True
        self._note_clean(fresh)
        return False

    @cached_property
    def _run_triggers(self) -> tuple[tuple, tuple, tuple, tuple]:
        """The tests ``_holds_trigger`` makes on a whole run (built when a run is first redacted:
        a command that only prints never needs them)."""
        # For a whole run: a trigger that contains another one (sk-ant- holds sk-) adds nothing.
        every_plain = sorted(set(self._plain) | set(self._enc_plain))
        run_plain = [t for t in every_plain if not any(o != t and o in t for o in every_plain)]
        run_lower = self._lower + self._enc_lower + (rules.ENCODED_TRIGGERS if self._builtin else ())
        # Each test is a scan of the whole run: literals sharing a first character are found
        # together (``_by_first_character``), and the prefixes ending in ``_``/``-``/``.`` by
        # one scan per end character.
        ending = [t for t in run_plain if len(t) > 1 and t[-1] in _ENDS]
        plain, plain_rx = _by_first_character([t for t in run_plain if t not in ending])
        probes = plain_rx + tuple(re.compile(p) for p in _literal_patterns(ending)) + tuple(
            p for r in self._rules if not r.decoded for p in r.probes)
        lower, lower_probes = _by_first_character(run_lower)
        return plain, probes, lower, lower_probes

    def _untested_strings(self, run: Run) -> tuple[list[str], list[Any]]:
        """The distinct strings of the run (dict keys too) not known clean, and everything else
        that JSON would write as more than a number, ``true``, ``false`` or ``null`` (serialised as
        it is, as the whole run was before: a subclass of str, dict or list goes there whole, so
        its text is tested too). The attribute names of the task, turns and outcome, the same few
        words in every turn, are tested once each, not in every turn of every run."""
        seen: dict[str, None] = {}
        others: list[Any] = []
        clean = self._clean
        names: set[str] = set()
        stack: list[Any] = [run.run_id, run.source]
        for holder in (run.task, run.outcome, *run.turns):
            if holder is not None:
                fields = holder.__dict__
                names.update(fields)
                stack.extend(fields.values())
        quiet = self._quiet_names
        for name in names - quiet:
            if name.isidentifier() and not self._holds_trigger(name):  # no escapes; tested once
                quiet.add(name)
            elif name not in clean:
                seen[name] = None
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            item = pop()
            kind = type(item)
            if kind is str:
                if item not in clean:
                    seen[item] = None
            elif kind is dict:
                for k, v in item.items():
                    push(v)
                    if type(k) is str:
                        if k not in clean:
                            seen[k] = None
                    else:
                        others.append(k)
            elif kind is list:
                extend(item)
            elif kind not in _SCALARS:
                others.append(item)
        return list(seen), others

    def _note_clean(self, strings: list[str]) -> None:
        """Remember the long strings of a run found clean (bounded by their total length)."""
        for text in strings:
            if len(text) >= _CLEAN_MIN_CHARS:
                if self._clean_chars + len(text) > _CLEAN_MAX_CHARS:
                    self._clean.clear()
                    self._clean_chars = 0
                self._clean.add(text)
                self._clean_chars += len(text)

    def _holds_trigger(self, blob: str) -> bool:
        # Substring tests and literal-led regexes: each a fast scan, unlike one alternation of all.
        plain, probes, lower, lower_probes = self._run_triggers
        if any(t in blob for t in plain) or any(p.search(blob) for p in probes):
            return True
        if lower or lower_probes:
            low = blob.lower()
            return any(t in low for t in lower) or any(p.search(low) for p in lower_probes)
        return False
