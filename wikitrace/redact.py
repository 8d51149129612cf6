"""Replace secrets in a run with typed placeholders before anything is sent or written.

On by default: ``load.iter_runs`` redacts every run it yields. Built-in shapes:

==================  ===============================================================
type                what it matches
==================  ===============================================================
private-key         PEM blocks ``-----BEGIN ... PRIVATE KEY-----`` (also cut-off ones)
anthropic-key       ``sk-ant-...``
openai-key          ``sk-...``, ``sk-proj-...``, ``sk-svcacct-...``, ``sk-admin-...``
aws-access-key-id   ``AKIA...``/``ASIA...`` (16 more upper-case letters or digits)
aws-secret-key      40-character secret after ``aws_secret_access_key``/``secret_access_key``
github-token        ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` tokens, ``github_pat_...``
slack-token         ``xoxb-``, ``xoxp-``, ``xoxa-``, ... tokens
bearer-token        the credential after ``Authorization: Bearer|Basic|Token``
jwt                 three base64url parts starting ``eyJ``
url-password        the password in ``scheme://user:password@host``
custom              a user pattern (``--redact-pattern``)
==================  ===============================================================

Each match becomes ``[REDACTED:<type>]``; for the context-bound types (AWS
secret, bearer, URL password) only the secret part is replaced, so the text
still reads ``Authorization: Bearer [REDACTED:bearer-token]``. A user pattern
with a named group ``secret`` likewise replaces only that group. Redaction
walks the task (instruction, observation, metadata), every turn field
including nested arguments and extra keys, the outcome's ``ended_by`` and
``run.source['original']`` (keys and values). Run ids are left alone so ids
stay stable. The same input always gives the same output.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable

from .runs.model import Run

PLACEHOLDER = "[REDACTED:{}]"

# (type, pattern, triggers). A pattern may hold one group named ``secret``: only it is
# replaced. A pattern is only run on strings containing one of its trigger substrings
# ("~x": looked up in the lower-cased string; "/x/": a regex with a literal first
# character, for families of prefixes): most text has none, and such a test is far
# cheaper than the pattern itself. Order matters: earlier rules
# replace first (sk-ant- before sk-, a bearer credential before the JWT shape).
_BUILTIN: list[tuple[str, str, tuple[str, ...]]] = [
    ("private-key",
     r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
     r"(?:[\s\S]{0,16384}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
     r"|(?:[ \t]*(?:\r?\n|\\n)[ \t]*(?:[A-Za-z0-9+/=]{1,80}|[A-Za-z-]+:[^\n]{0,200}))*)",
     ("PRIVATE KEY",)),
    ("anthropic-key", r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    ("openai-key", r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", ("sk-",)),
    ("aws-access-key-id",
     r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
     ("/A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA|SCA)/",)),
    ("aws-secret-key",
     r"(?i:aws_?secret_?access_?key|secret_?access_?key|aws_?secret_?key|aws_?secret)"
     r"[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
     ("~secret",)),
    ("github-token", r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
     ("/gh[pousr]_|github_pat_/",)),
    ("slack-token", r"(?<![A-Za-z0-9-])xox[a-z]-[A-Za-z0-9-]{10,}", ("xox",)),
    ("bearer-token",
     r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:bearer|basic|token)\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
     ("~authorization",)),
    ("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", ("eyJ",)),
    ("url-password",
     r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:/@\"'<>\[\]]{1,200}:"
     r"(?!\[REDACTED:)(?P<secret>[^\s@/\"'<>]{1,200})@",
     ("://",)),
]


class Redactor:
    """Compiled redaction rules: the built-in shapes plus user patterns."""

    def __init__(self, patterns: Iterable[str | re.Pattern] = (), builtin: bool = True):
        # (type, regex, secret group or None, plain triggers, lower-case triggers, trigger regexes)
        self._rules: list[tuple[str, re.Pattern, str | None, tuple[str, ...], tuple[str, ...],
                                tuple[re.Pattern, ...]]] = []
        if builtin:
            for kind, pat, triggers in _BUILTIN:
                rx = re.compile(pat)
                plain = tuple(t for t in triggers if t[0] not in "~/")
                lower = tuple(t[1:] for t in triggers if t.startswith("~"))
                probes = tuple(re.compile(t[1:-1]) for t in triggers if t.startswith("/"))
                self._rules.append((kind, rx, "secret" if "secret" in rx.groupindex else None, plain, lower, probes))
        plain_all = sorted({t for *_, plain, _, _ in self._rules for t in plain})
        # For a whole run: a trigger that contains another one (sk-ant- holds sk-) adds nothing.
        self._run_plain = tuple(t for t in plain_all if not any(o != t and o in t for o in plain_all))
        self._run_lower = tuple(sorted({t for *_, lower, _ in self._rules for t in lower}))
        self._run_probes = tuple(p for *_, probes in self._rules for p in probes)
        alts = ([re.escape(t) for t in plain_all] + [p.pattern for p in self._run_probes]
                + ([f"(?i:{'|'.join(map(re.escape, self._run_lower))})"] if self._run_lower else []))
        # One scan that tells whether any built-in rule could match at all.
        self._trigger = re.compile("|".join(alts)) if alts else None
        for pat in patterns:
            try:
                rx = pat if isinstance(pat, re.Pattern) else re.compile(pat)
            except re.error as exc:
                raise ValueError(f"redact pattern {pat!r} is not a valid regular expression: {exc}") from None
            self._rules.append(("custom", rx, "secret" if "secret" in rx.groupindex else None, (), (), ()))

    # -- text ---------------------------------------------------------------------------

    def text(self, text: str, counts: Counter | None = None) -> str:
        """``text`` with every secret replaced; adds what it found to ``counts``."""
        counts = counts if counts is not None else Counter()
        if len(text) < 8:
            return text
        lowered: str | None = None
        maybe = self._trigger is not None and self._trigger.search(text) is not None
        for kind, rx, secret, plain, lower, probes in self._rules:
            if plain or lower or probes:
                if not maybe:
                    continue
                hit = any(t in text for t in plain) or any(p.search(text) for p in probes)
                if not hit and lower:
                    lowered = text.lower() if lowered is None else lowered
                    hit = any(t in lowered for t in lower)
                if not hit:
                    continue
            new = rx.sub(lambda m: self._replace(m, kind, secret, counts), text)
            if new != text:
                text, lowered = new, None
        return text

    @staticmethod
    def _replace(m: re.Match, kind: str, secret: str | None, counts: Counter) -> str:
        if secret is not None and m.group(secret):
            start, end = m.span(secret)
            base = m.start(0)
            whole = m.group(0)
            counts[kind] += 1
            return whole[: start - base] + PLACEHOLDER.format(kind) + whole[end - base:]
        if m.group(0) == "":
            return ""
        counts[kind] += 1
        return PLACEHOLDER.format(kind)

    # -- values -------------------------------------------------------------------------

    def value(self, value: Any, counts: Counter | None = None) -> Any:
        """A copy of a JSON-like value with every string (keys too) redacted."""
        counts = counts if counts is not None else Counter()
        # Iterative walk: input nesting depth must not hit Python's recursion limit.
        root: list[Any] = [None]
        stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
        while stack:
            item, parent, key = stack.pop()
            if isinstance(item, str):
                parent[key] = self.text(item, counts)
            elif isinstance(item, dict):
                out: dict = {}
                parent[key] = out
                for k, v in item.items():
                    nk = self.text(k, counts) if isinstance(k, str) else k
                    out[nk] = None
                    stack.append((v, out, nk))
            elif isinstance(item, (list, tuple)):
                out_l: list = [None] * len(item)
                parent[key] = out_l
                for i, v in enumerate(item):
                    stack.append((v, out_l, i))
            else:
                parent[key] = item
        return root[0]

    def _may_hold_secret(self, run: Run) -> bool:
        """One pass over the whole run's text: most runs hold no trigger at all.

        Walking every string of a run (and of its original record) costs far more
        than serialising it once and testing the trigger substrings, so the walk
        only happens when a trigger is present. User patterns have no triggers.
        """
        if any(kind == "custom" for kind, *_ in self._rules):
            return True
        import json

        blob = json.dumps([run.task.__dict__, [t.__dict__ for t in run.turns],
                           run.outcome.__dict__ if run.outcome is not None else None,
                           run.source.get("original")], ensure_ascii=False, default=str)
        # Substring tests and literal-led regexes: each a fast scan, unlike one alternation of all.
        if any(t in blob for t in self._run_plain) or any(p.search(blob) for p in self._run_probes):
            return True
        if self._run_lower:
            low = blob.lower()
            return any(t in low for t in self._run_lower)
        return False

    def run(self, run: Run) -> Counter:
        """Redact ``run`` in place; returns how many secrets of each type were replaced."""
        counts: Counter = Counter()
        if not self._may_hold_secret(run):
            return counts
        task = run.task
        for attr in ("instruction", "initial_observation", "task_type"):
            v = getattr(task, attr)
            if isinstance(v, str):
                setattr(task, attr, self.text(v, counts))
        if task.apps:
            task.apps = self.value(task.apps, counts)
        task.metadata = self.value(task.metadata, counts)
        for t in run.turns:
            for attr in ("role", "content", "name", "reasoning", "result"):
                v = getattr(t, attr)
                if isinstance(v, str):
                    setattr(t, attr, self.text(v, counts))
            if t.arguments is not None:
                t.arguments = self.value(t.arguments, counts)
            t.extra = self.value(t.extra, counts)
        if run.outcome is not None and isinstance(run.outcome.ended_by, str):
            run.outcome.ended_by = self.text(run.outcome.ended_by, counts)
        if "original" in run.source:
            run.source["original"] = self.value(run.source["original"], counts)
        return counts


_DEFAULT: Redactor | None = None


def default_redactor() -> Redactor:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Redactor()
    return _DEFAULT


def redact_text(text: str, patterns: Iterable[str] = ()) -> tuple[str, Counter]:
    counts: Counter = Counter()
    r = Redactor(patterns) if patterns else default_redactor()
    return r.text(text, counts), counts


def redact_run(run: Run, patterns: Iterable[str] = ()) -> Counter:
    """Redact ``run`` in place with the built-in shapes plus ``patterns``; counts by type."""
    patterns = list(patterns)
    return (Redactor(patterns) if patterns else default_redactor()).run(run)
