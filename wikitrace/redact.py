"""Replace secrets in a run with typed placeholders before anything is sent or written.

On by default: ``load.iter_runs`` redacts every run it yields. Built-in shapes:

==================  ===============================================================
type                what it matches
==================  ===============================================================
private-key         PEM blocks ``-----BEGIN ... PRIVATE KEY-----`` (also cut-off ones)
anthropic-key       ``sk-ant-...``
openai-key          ``sk-...``, ``sk-proj-...``, ``sk-svcacct-...``, ``sk-admin-...``
aws-access-key-id   ``AKIA...``/``ASIA...`` (16 more upper-case letters or digits)
aws-secret-key      40-character secret after ``aws_secret_access_key`` (``=``, ``:`` or a space)
github-token        ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` tokens, ``github_pat_...``
slack-token         ``xoxb-``, ``xoxp-``, ``xoxa-``, ``xapp-`` ... tokens
slack-webhook       the path of a ``hooks.slack.com`` URL
stripe-key          ``sk_live_``/``sk_test_``/``rk_live_``/``rk_test_`` keys, ``whsec_`` secrets
google-api-key      ``AIza...`` keys, ``GOCSPX-`` client secrets, ``ya29.`` access tokens
api-token           prefixed tokens: Hugging Face, npm, GitLab, PyPI, SendGrid, DigitalOcean,
                    Groq, xAI, Replicate, Shopify, Databricks, age
bearer-token        the credential after ``Authorization: Bearer|Basic|Token``
jwt                 three base64url parts starting ``eyJ``
url-password        the password in ``scheme://user:password@host`` (the user may be empty)
custom              a user pattern (``--redact-pattern``)
==================  ===============================================================

A base64 or hex token that decodes to one of these (its encoded prefix is a trigger
like any other) is replaced whole, typed by what it holds. HTML character references
are undone like the other escapes. A record's strings are walked in order with a
``carry``: a field that ends in a key makes the key-like start of the next one its
other half.

``scrub`` is the one gate for everything else that leaves: ``errors.run`` routes
stdout and stderr through it, and model answers and echoed ids pass it.

Each match becomes ``[REDACTED:<type>#<tag>]``; the tag (``redact_tags``) stands for the
secret without telling a reader anything about it. A whole run is first screened for any
trigger at all (``redact_screen``); most runs hold none and are not walked.

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

import re
from collections import Counter

from . import redact_rules as rules
from .redact_decode import HINT as _ESCAPED, View, decode_whole, encoded_heads, encoded_pattern
from .redact_screen import RunScreen, _literal_patterns
from .redact_tags import placeholder

TYPE_CHECKING = False  # typing itself costs every command a few milliseconds at start-up
if TYPE_CHECKING:
    from typing import Any, Iterable

    from .runs.model import Run

def _other_half(text: str, kind: str, counts: Counter) -> str:
    """``text`` with its start replaced when it reads as the rest of a key cut off at the end
    of the string before: random characters (letters and digits mixed), no word."""
    m = rules.HALF.match(text)
    if m is None:
        return text
    half = m.group(0)
    if not (any(c.isdigit() for c in half) and any(c.isalpha() for c in half)):
        return text
    counts[kind] += 1
    return placeholder(kind, half) + text[m.end():]


_MEMO_CHARS, _MEMO_ENTRIES = 2048, 4096  # strings remembered redacted: at most ~8M characters


class Redactor:
    """Compiled redaction rules: the built-in shapes plus user patterns."""

    def __init__(self, patterns: Iterable[str | re.Pattern] = (), builtin: bool = True):
        self._rules: list[rules.Rule] = []
        encoded_plain: tuple[str, ...] = ()
        encoded_lower: tuple[str, ...] = ()
        if builtin:
            self._rules = [rules.compiled(*rule) for rule in rules.BUILTIN]
            # A string is searched for an encoded key when it holds a token long enough to be
            # one; a whole run, for the encodings of the known prefixes (base64 as written, hex
            # in lower case) instead: the token alone is in every run (tool-call ids).
            self._rules.append(rules.compiled("encoded", encoded_pattern(rules.ENCODED_HEADS),
                                              (f"/{rules.ENCODED_TOKEN}/",), decoded=True))
            heads = encoded_heads(rules.ENCODED_HEADS)
            encoded_plain = tuple(h for h in heads if not rules.is_hex(h))
            encoded_lower = tuple(h for h in heads if rules.is_hex(h) and h.islower())
        plain_all = sorted({t for r in self._rules for t in r.plain})
        lower_all = tuple(sorted({t for r in self._rules for t in r.lower}))
        alts = (_literal_patterns(plain_all) + [p.pattern for r in self._rules for p in r.probes]
                + ([f"(?i:{'|'.join(map(re.escape, lower_all))})"] if lower_all else []))
        # One scan of a string that tells whether any built-in rule could match at all.
        self._trigger = re.compile("|".join(alts)) if alts else None
        self._screen = RunScreen(self._rules, plain_all, lower_all, encoded_plain, encoded_lower, builtin)
        self._custom = False  # user patterns have no triggers: every run is walked
        # strings found to hold no secret: the same lesson wording and tool output recur
        # across runs, and under fixed rules the answer for a string never changes
        self._done: dict[str, tuple[str, tuple]] = {}
        for pat in patterns:
            try:
                rx = pat if isinstance(pat, re.Pattern) else re.compile(pat)
            except re.error as exc:
                raise ValueError(f"redact pattern {pat!r} is not a valid regular expression: {exc}") from None
            self._rules.append(rules.Rule("custom", rx, "secret" if "secret" in rx.groupindex else None))
            self._custom = True

    # -- text ---------------------------------------------------------------------------

    def text(self, text: str, counts: Counter | None = None, carry: list | None = None) -> str:
        """``text`` with every secret replaced; adds what it found to ``counts``.

        ``carry`` (a one-item list shared by the strings of one record, in order) joins a key
        split over two fields: when a string ends in a key, the key-like start of the next
        one is its other half."""
        if len(text) >= 8:
            done = self._done.get(text)
            if done is None:
                done = self._redacted(text)
                if not done[1] and len(text) <= _MEMO_CHARS:  # a tag depends on the key: never kept
                    if len(self._done) >= _MEMO_ENTRIES:
                        self._done.clear()
                    self._done[text] = done
            text = done[0]
            if counts is not None:  # none asked for (each string of a compilation): no Counter made
                for kind, n in done[1]:
                    counts[kind] += n
        if carry is None:
            return text
        if carry[0]:
            text = _other_half(text, carry[0], counts if counts is not None else Counter())
            carry[0] = None
        if text.endswith("]"):
            m = rules.ENDS_IN_KEY.search(text)
            carry[0] = m.group("kind") if m and m.group("kind") in rules.SPLITTABLE else None
        return text

    def _redacted(self, text: str) -> tuple[str, tuple]:
        """``text`` with its secrets replaced, and what was found in order of first finding."""
        found: Counter = Counter()
        text = self._as_written(text, found)
        if ("\\" in text or "%" in text or "&" in text) and _ESCAPED.search(text):
            text = self._decoded(text, found)
        return text, tuple(found.items())

    def _rules_for(self, text: str):
        """The rules whose trigger ``text`` holds (all user patterns)."""
        lowered: str | None = None
        maybe = self._trigger is not None and self._trigger.search(text) is not None
        for rule in self._rules:
            if rule.triggered:
                if not maybe:
                    continue
                hit = any(t in text for t in rule.plain) or any(p.search(text) for p in rule.probes)
                if not hit and rule.lower:
                    lowered = text.lower() if lowered is None else lowered
                    hit = any(t in lowered for t in rule.lower)
                if not hit:
                    continue
            yield rule

    def _as_written(self, text: str, counts: Counter) -> str:
        for rule in list(self._rules_for(text)):
            text = rule.rx.sub(lambda m: self._replace(m, rule, counts), text)
        return text

    def _decoded(self, text: str, counts: Counter) -> str:
        """Secrets that show only once escapes are undone, replaced in the raw text."""
        view = View(text)
        if not view.changed:
            return text
        decoded = view.text
        taken: list[tuple[int, int]] = []
        found: list[tuple[int, int, str, str]] = []  # raw start, raw end, placeholder, kind
        for rule in list(self._rules_for(decoded)):
            for m in rule.rx.finditer(decoded):
                kind = rule.kind
                if rule.secret is not None:
                    if not m.group(rule.secret):
                        continue
                    s, e = m.span(rule.secret)
                else:
                    s, e = m.span()
                if rule.decoded and (kind := self._inside(m.group(0))) is None:
                    continue
                if s == e or any(s < te and ts < e for ts, te in taken):
                    continue
                taken.append((s, e))
                rs, re_ = view.raw_span(s, e)
                found.append((rs, re_, placeholder(kind, decoded[s:e]), kind))
        for rs, re_, ph, kind in sorted(found, reverse=True):
            text = text[:rs] + ph + text[re_:]
            counts[kind] += 1
        return text

    def _inside(self, token: str) -> str | None:
        """The kind of the secret a base64/hex ``token`` decodes to, if it is one."""
        inner = decode_whole(token)
        if inner is None or len(inner) >= len(token):
            return None
        found: Counter = Counter()
        self.text(inner, found)
        return next(iter(found), None)

    def _replace(self, m: re.Match, rule: rules.Rule, counts: Counter) -> str:
        if rule.decoded:
            kind = self._inside(m.group(0))
            if kind is None:
                return m.group(0)
            counts[kind] += 1
            return placeholder(kind, m.group(0))
        if rule.secret is not None and m.group(rule.secret):
            start, end = m.span(rule.secret)
            base = m.start(0)
            whole = m.group(0)
            counts[rule.kind] += 1
            return whole[: start - base] + placeholder(rule.kind, m.group(rule.secret)) + whole[end - base:]
        if m.group(0) == "":
            return ""
        counts[rule.kind] += 1
        return placeholder(rule.kind, m.group(0))

    # -- values -------------------------------------------------------------------------

    def value(self, value: Any, counts: Counter | None = None, carry: list | None = None) -> Any:
        """A copy of a JSON-like value with every string (keys too) redacted, in document
        order (``carry``: see ``text``)."""
        counts = counts if counts is not None else Counter()
        carry = carry if carry is not None else [None]
        # Iterative walk: input nesting depth must not hit Python's recursion limit.
        root: list[Any] = [None]
        stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
        while stack:
            item, parent, key = stack.pop()
            if isinstance(item, str):
                parent[key] = self.text(item, counts, carry)
            elif isinstance(item, dict):
                out: dict = {}
                parent[key] = out
                pending = []
                for k, v in item.items():
                    nk = self.text(k, counts) if isinstance(k, str) else k
                    out[nk] = None
                    pending.append((v, out, nk))
                stack.extend(reversed(pending))  # popped in document order
            elif isinstance(item, (list, tuple)):
                out_l: list = [None] * len(item)
                parent[key] = out_l
                for i in range(len(item) - 1, -1, -1):
                    stack.append((item[i], out_l, i))
            else:
                parent[key] = item
        return root[0]

    def run(self, run: Run) -> Counter:
        """Redact ``run`` in place; returns how many secrets of each type were replaced."""
        counts: Counter = Counter()
        if not (self._custom or self._screen.may_hold_secret(run)):
            return counts
        carry: list = [None]
        t = lambda v: self.text(v, counts, carry) if isinstance(v, str) else v  # noqa: E731
        run.run_id = t(run.run_id)
        task = run.task
        for attr in ("id", "instruction", "initial_observation", "task_type"):
            setattr(task, attr, t(getattr(task, attr)))
        if task.apps:
            task.apps = self.value(task.apps, counts, carry)
        task.metadata = self.value(task.metadata, counts, carry)
        for turn in run.turns:
            for attr in ("role", "content", "name", "reasoning", "result"):
                setattr(turn, attr, t(getattr(turn, attr)))
            if turn.arguments is not None:
                turn.arguments = self.value(turn.arguments, counts, carry)
            turn.extra = self.value(turn.extra, counts, carry)
        if run.outcome is not None and isinstance(run.outcome.ended_by, str):
            run.outcome.ended_by = t(run.outcome.ended_by)
        run.source = self.value(run.source, counts)  # file name, the kept original, notes
        return counts


_DEFAULT: Redactor | None = None


def default_redactor() -> Redactor:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Redactor()
    return _DEFAULT


def scrub(text: Any) -> Any:
    """The one gate for text leaving wikitrace other than through a run's redaction: printed
    lines (errors.py wraps stdout and stderr with it), error messages, model answers, labels
    stored from the command line. Built-in shapes; anything but a string passes unchanged."""
    if isinstance(text, str):
        return default_redactor().text(text)
    if isinstance(text, (dict, list, tuple)):
        return default_redactor().value(text)
    return text


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
    for f in getattr(comp, "in_short", ()):  # a fact may quote the agent's own sentence
        f.text = t(f.text)
        if getattr(f, "rule", None):  # the rule's quote is counted and shown on insight pages
            f.rule = [t(x) for x in f.rule]
    comp.value_rules = [[t(x) for x in v] for v in getattr(comp, "value_rules", ())]  # prompt sentences, quoted on insights
    for i in comp.insights:
        i.title, i.guideline, i.applicability = t(i.title), t(i.guideline), t(i.applicability)
        if getattr(i, "case", None):  # a final answer's case quotes the answer and the look-ups
            i.case = {k: ({x: t(y) for x, y in v.items()} if isinstance(v, dict) else t(v)) for k, v in i.case.items()}
    return comp
