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

Each match becomes ``[REDACTED:<type>#<tag>]``. The tag is four hex digits of an
HMAC-SHA256 of the secret, so two mentions of one secret read as one, and
different secrets differ, without the tag saying anything about the secret to
whoever reads the corpus: the HMAC key is ``$WIKITRACE_REDACT_KEY`` if set, else
a random key made once per user and kept outside every corpus
(``$XDG_CONFIG_HOME/wikitrace/redact-key``, mode 0600). With a public key a
short secret (a 4-digit PIN, a dictionary password) could be recovered by
hashing every candidate; with a key the reader does not hold it cannot, and
16 bits are too few to confirm a guess against a long list anyway. Teams that
build one corpus on several machines set the same ``WIKITRACE_REDACT_KEY``
everywhere so the tags (and the pages) stay byte-identical.

For the context-bound types (AWS secret, bearer, URL password) only the secret
part is replaced, so the text still reads ``Authorization: Bearer
[REDACTED:bearer-token#1a2b]``. A user pattern with a named group ``secret``
likewise replaces only that group. A private key block is removed from BEGIN
to END; without an END line (a file shown cut off, with or without line
numbers) to the end of the string or the first quote, which no key body holds.

Every string is searched as written and, when it holds escapes, once more in
its decoded form (``redact_decode``: JSON/Python backslash escapes, nested
JSON strings, ``%XX`` URL encoding): a secret found there is replaced in the
raw text, escapes and all. ``Redactor.run`` walks the run id, the task, every
turn field including nested arguments and extra keys, the outcome, and
``run.source`` (file name and the kept original record, keys and values).
The same input and key always give the same output.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets as _secrets
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from .redact_decode import HINT as _ESCAPED, View
from .runs.model import Run

PLACEHOLDER = "[REDACTED:{}#{}]"
ENV_KEY = "WIKITRACE_REDACT_KEY"
TAG_HEX = 4

# (type, pattern, triggers). A pattern may hold one group named ``secret``: only it is
# replaced. A pattern is only run on strings containing one of its trigger substrings
# ("~x": looked up in the lower-cased string; "/x/": a regex with a literal first
# character, for families of prefixes): most text has none, and such a test is far
# cheaper than the pattern itself. A key may follow ``-`` or ``_`` (``run-sk-proj-...`` as a
# file or run name), never a letter or digit; that check is a lookbehind placed after the
# literal prefix, so the regex engine can jump from prefix to prefix (50x faster on long
# text than a pattern that starts with the lookbehind). Order matters: earlier rules
# replace first (sk-ant- before sk-, a bearer credential before the JWT shape).
_BUILTIN: list[tuple[str, str, tuple[str, ...]]] = [
    # BEGIN to END; without END, to the end of the string or the first quote (no key
    # body holds one: it ends a JSON or Python string the key was shown inside).
    ("private-key",
     r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
     r"(?:[^\"']*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|[^\"']*)",
     ("PRIVATE KEY",)),
    ("anthropic-key", r"sk-ant-(?<![A-Za-z0-9]sk-ant-)[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    ("openai-key", r"sk-(?<![A-Za-z0-9]sk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
     ("/sk-[A-Za-z0-9_-]{20}/",)),  # not bare "sk-": every "task-1" holds it
    ("aws-access-key-id",
     r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA|SCA)[A-Z0-9]{16}(?<![A-Za-z0-9][A-Z0-9]{20})(?![A-Za-z0-9])",
     ("/A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA|SCA)/",)),
    ("aws-secret-key",
     r"(?i:aws_?secret_?access_?key|secret_?access_?key|aws_?secret_?key|aws_?secret)"
     r"[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
     ("~secret",)),
    ("github-token", r"(?:gh[pousr]_(?<![A-Za-z0-9]gh[pousr]_)[A-Za-z0-9]{30,}|github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{22,})",
     ("/gh[pousr]_|github_pat_/",)),
    ("slack-token", r"xox[a-z]-(?<![A-Za-z0-9]xox[a-z]-)[A-Za-z0-9-]{10,}", ("xox",)),
    ("bearer-token",
     r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:bearer|basic|token)\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
     ("~authorization",)),
    ("jwt", r"eyJ(?<![A-Za-z0-9]eyJ)[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", ("eyJ",)),
    ("url-password",
     r"://(?<=[A-Za-z0-9+.-]://)[^\s:/@\"'<>\[\]]{1,200}:"
     r"(?!\[REDACTED:)(?P<secret>[^\s@/\"'<>]{1,200})@",
     ("://",)),
]
# Trigger words as URL encoding writes them (a space or ``:/`` encoded): the one-pass test
# over a whole run must not miss them; each string's own test runs on its decoded view.
_ENCODED_TRIGGERS = ("private%20key", "private+key", "%3a%2f%2f", ":%2f%2f", "%3a//")


def _key_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(base).expanduser() if base else Path.home() / ".config") / "wikitrace" / "redact-key"


@lru_cache(maxsize=4)
def _hmac_key(explicit: str | None) -> bytes:
    """The key that makes tags unguessable (see the module docstring)."""
    if explicit:
        return hashlib.sha256(b"wikitrace-redact\0" + explicit.encode("utf-8", "surrogatepass")).digest()
    path = _key_file()
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        pass
    tmp = path.with_name(f".redact-key.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(_secrets.token_hex(32) + "\n")
        os.link(tmp, path)  # appears whole or not at all; fails if another process was first
    except FileExistsError:
        pass  # another process (the build's reader, say) made it first: use theirs
    except OSError:
        # Nowhere to keep a key: tags are stable within this process only, never guessable.
        return _secrets.token_bytes(32)
    finally:
        try:
            tmp.unlink()
        except OSError:
            pass
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return _secrets.token_bytes(32)


def tag(secret: str) -> str:
    """Four hex digits that stand for ``secret`` (same secret, same tag)."""
    key = _hmac_key(os.environ.get(ENV_KEY) or None)
    mac = hmac.new(key, secret.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return mac.hexdigest()[:TAG_HEX]


def placeholder(kind: str, secret: str) -> str:
    return PLACEHOLDER.format(kind, tag(secret))


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
        lower_all = tuple(sorted({t for *_, lower, _ in self._rules for t in lower}))
        self._run_lower = lower_all + (_ENCODED_TRIGGERS if builtin else ())
        self._run_probes = tuple(p for *_, probes in self._rules for p in probes)
        alts = ([re.escape(t) for t in plain_all] + [p.pattern for p in self._run_probes]
                + ([f"(?i:{'|'.join(map(re.escape, lower_all))})"] if lower_all else []))
        # One scan that tells whether any built-in rule could match at all.
        self._trigger = re.compile("|".join(alts)) if alts else None
        self._custom = False
        for pat in patterns:
            try:
                rx = pat if isinstance(pat, re.Pattern) else re.compile(pat)
            except re.error as exc:
                raise ValueError(f"redact pattern {pat!r} is not a valid regular expression: {exc}") from None
            self._rules.append(("custom", rx, "secret" if "secret" in rx.groupindex else None, (), (), ()))
            self._custom = True

    # -- text ---------------------------------------------------------------------------

    def text(self, text: str, counts: Counter | None = None) -> str:
        """``text`` with every secret replaced; adds what it found to ``counts``."""
        counts = counts if counts is not None else Counter()
        if len(text) < 8:
            return text
        text = self._as_written(text, counts)
        if ("\\" in text or "%" in text) and _ESCAPED.search(text):
            text = self._decoded(text, counts)
        return text

    def _rules_for(self, text: str):
        """The rules whose trigger ``text`` holds (all user patterns)."""
        lowered: str | None = None
        maybe = self._trigger is not None and self._trigger.search(text) is not None
        for rule in self._rules:
            kind, rx, secret, plain, lower, probes = rule
            if plain or lower or probes:
                if not maybe:
                    continue
                hit = any(t in text for t in plain) or any(p.search(text) for p in probes)
                if not hit and lower:
                    lowered = text.lower() if lowered is None else lowered
                    hit = any(t in lowered for t in lower)
                if not hit:
                    continue
            yield rule

    def _as_written(self, text: str, counts: Counter) -> str:
        for kind, rx, secret, *_ in list(self._rules_for(text)):
            text = rx.sub(lambda m: self._replace(m, kind, secret, counts), text)
        return text

    def _decoded(self, text: str, counts: Counter) -> str:
        """Secrets that show only once escapes are undone, replaced in the raw text."""
        view = View(text)
        if not view.changed:
            return text
        decoded = view.text
        taken: list[tuple[int, int]] = []
        found: list[tuple[int, int, str, str]] = []  # raw start, raw end, placeholder, kind
        for kind, rx, secret, *_ in list(self._rules_for(decoded)):
            for m in rx.finditer(decoded):
                if secret is not None:
                    if not m.group(secret):
                        continue
                    s, e = m.span(secret)
                else:
                    s, e = m.span()
                if s == e or any(s < te and ts < e for ts, te in taken):
                    continue
                taken.append((s, e))
                rs, re_ = view.raw_span(s, e)
                found.append((rs, re_, placeholder(kind, decoded[s:e]), kind))
        for rs, re_, ph, kind in sorted(found, reverse=True):
            text = text[:rs] + ph + text[re_:]
            counts[kind] += 1
        return text

    @staticmethod
    def _replace(m: re.Match, kind: str, secret: str | None, counts: Counter) -> str:
        if secret is not None and m.group(secret):
            start, end = m.span(secret)
            base = m.start(0)
            whole = m.group(0)
            counts[kind] += 1
            return whole[: start - base] + placeholder(kind, m.group(secret)) + whole[end - base:]
        if m.group(0) == "":
            return ""
        counts[kind] += 1
        return placeholder(kind, m.group(0))

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
        if self._custom:
            return True
        import json

        blob = json.dumps([run.run_id, run.task.__dict__, [t.__dict__ for t in run.turns],
                           run.outcome.__dict__ if run.outcome is not None else None,
                           run.source], ensure_ascii=False, default=str)
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
        run.run_id = self.text(run.run_id, counts) if isinstance(run.run_id, str) else run.run_id
        task = run.task
        for attr in ("id", "instruction", "initial_observation", "task_type"):
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
        run.source = self.value(run.source, counts)  # file name, the kept original, notes
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


def redactor_for(redact: bool, patterns: Iterable[str] = ()) -> Redactor | None:
    """The redactor a build's options ask for (None with ``--no-redact``)."""
    if not redact:
        return None
    patterns = list(patterns)
    return Redactor(patterns) if patterns else default_redactor()


def redact_compilation(comp: Any, redactor: Redactor | None, counts: Counter | None = None) -> Any:
    """Redact a compilation's free text in place: the last gate before its pages are written
    (an answer cached before redaction covered answers, a fallback reason quoting a reply)."""
    if redactor is None:
        return comp
    t = lambda s: redactor.text(s, counts) if isinstance(s, str) else s  # noqa: E731
    comp.title, comp.description, comp.fallback_reason = t(comp.title), t(comp.description), t(comp.fallback_reason)
    for e in comp.evidence:
        e.decision, e.support, e.quote = t(e.decision), t(e.support), t(e.quote)
    for i in comp.insights:
        i.title, i.guideline, i.applicability = t(i.title), t(i.guideline), t(i.applicability)
    return comp
