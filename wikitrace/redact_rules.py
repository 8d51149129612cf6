"""The shapes redaction looks for: the built-in rules, their triggers, and the compiled
form ``Redactor`` (redact.py) runs. Kept apart from the redactor so a new shape is one
line here."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

# (type, pattern, triggers). A pattern may hold one group named ``secret``: only it is
# replaced. A pattern is only run on strings containing one of its trigger substrings
# ("~x": looked up in the lower-cased string; "/x/": a regex with a literal first
# character, for families of prefixes): most text has none, and such a test is far
# cheaper than the pattern itself. A key may follow ``-`` or ``_`` (``run-sk-proj-...`` as a
# file or run name), never a letter or digit; that check is a lookbehind placed after the
# literal prefix, so the regex engine can jump from prefix to prefix (50x faster on long
# text than a pattern that starts with the lookbehind). Order matters: earlier rules
# replace first (sk-ant- before sk-, a bearer credential before the JWT shape).
# A key body: anything but a quote, or a quote that only closes one line of a list of lines
# (``['-----BEGIN…\\n', 'MIIE…\\n', …]``, what ``print(f.readlines())`` shows).
PEM_BODY = r"""(?:[^"']|["']\s*,\s*["'])"""
BUILTIN: list[tuple[str, str, tuple[str, ...]]] = [
    # BEGIN to END; without END, to the end of the string or the first quote (no key
    # body holds one: it ends a JSON or Python string the key was shown inside).
    ("private-key",
     r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
     rf"(?:{PEM_BODY}*?-----END[A-Z0-9 ]{{0,40}}PRIVATE KEY(?: BLOCK)?-----|{PEM_BODY}*)",
     ("PRIVATE KEY",)),
    ("anthropic-key", r"sk-ant-(?<![A-Za-z0-9]sk-ant-)[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    ("openai-key", r"sk-(?<![A-Za-z0-9]sk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
     ("/sk-[A-Za-z0-9_-]{20}/",)),  # not bare "sk-": every "task-1" holds it
    ("aws-access-key-id",
     r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA|SCA)[A-Z0-9]{16}(?<![A-Za-z0-9][A-Z0-9]{20})(?![A-Za-z0-9])",
     ("/A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA|SCA)/",)),
    ("aws-secret-key",
     r"(?i:aws_?secret_?access_?key|secret_?access_?key|aws_?secret_?key|aws_?secret)"
     r"(?:[\"']?\s*[:=]\s*[\"']?|[ \t]+)(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
     ("~secret",)),
    ("github-token", r"(?:gh[pousr]_(?<![A-Za-z0-9]gh[pousr]_)[A-Za-z0-9]{30,}|github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{22,})",
     ("/gh[pousr]_|github_pat_/",)),
    ("slack-token", r"(?:xox[a-z]|xapp)-(?<![A-Za-z0-9]xox[a-z]-)(?<![A-Za-z0-9]xapp-)[A-Za-z0-9-]{10,}",
     ("xox", "xapp-")),
    ("slack-webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9/_-]{20,})",
     ("hooks.slack.com",)),
    ("stripe-key", r"(?:sk|rk)_(?<![A-Za-z0-9][sr]k_)(?:live|test)_[A-Za-z0-9]{16,}|whsec_(?<![A-Za-z0-9]whsec_)[A-Za-z0-9+/=]{24,}",
     ("k_live_", "k_test_", "whsec_")),
    ("google-api-key", r"AIza(?<![A-Za-z0-9]AIza)[0-9A-Za-z_-]{30,}|GOCSPX-(?<![A-Za-z0-9]GOCSPX-)[0-9A-Za-z_-]{20,}"
     r"|ya29\.(?<![A-Za-z0-9]ya29\.)[0-9A-Za-z_-]{20,}", ("AIza", "GOCSPX-", "ya29.")),
    # Tokens whose prefix says what they are (each provider's documented shape).
    ("api-token",
     r"(?:hf_(?<![A-Za-z0-9]hf_)[A-Za-z0-9]{30,}"            # Hugging Face
     r"|npm_(?<![A-Za-z0-9]npm_)[A-Za-z0-9]{36,}"            # npm
     r"|glpat-(?<![A-Za-z0-9]glpat-)[A-Za-z0-9_-]{20,}"      # GitLab
     r"|pypi-(?<![A-Za-z0-9]pypi-)AgE[A-Za-z0-9_-]{40,}"     # PyPI
     r"|SG\.(?<![A-Za-z0-9]SG\.)[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{20,}"  # SendGrid
     r"|do[por]_v1_(?<![A-Za-z0-9]do[por]_v1_)[a-f0-9]{64}"  # DigitalOcean
     r"|gsk_(?<![A-Za-z0-9]gsk_)[A-Za-z0-9]{40,}"            # Groq
     r"|xai-(?<![A-Za-z0-9]xai-)[A-Za-z0-9]{40,}"            # xAI
     r"|r8_(?<![A-Za-z0-9]r8_)[A-Za-z0-9]{30,}"              # Replicate
     r"|shp(?:at|ca|pa|ss)_(?<![A-Za-z0-9]shp[a-z]{2}_)[a-fA-F0-9]{32}"  # Shopify
     r"|dapi(?<![A-Za-z0-9]dapi)[a-f0-9]{32}"                # Databricks
     r"|AGE-SECRET-KEY-1[0-9A-Z]{50,})",                     # age
     ("hf_", "npm_", "glpat-", "pypi-", "SG.", "_v1_", "gsk_", "xai-", "r8_", "shpat_", "shpca_", "shppa_",
      "shpss_", "dapi", "AGE-SECRET")),
    ("bearer-token",
     r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:bearer|basic|token)\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",
     ("~authorization",)),
    ("jwt", r"eyJ(?<![A-Za-z0-9]eyJ)[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", ("eyJ",)),
    ("url-password",
     r"://(?<=[A-Za-z0-9+.-]://)[^\s:/@\"'<>\[\]]{0,200}:"
     r"(?!\[REDACTED:)(?P<secret>[^\s@/\"'<>]{1,200})@",
     ("://",)),
]
# Starts of secrets (or of their context) whose base64 or hex encoding is looked for.
ENCODED_HEADS = ("-----BEGIN", "sk-", "sk_live_", "sk_test_", "rk_live_", "rk_test_", "ghp_", "github_pat_",
                  "AKIA", "xoxb-", "AIza", "https://", "postgres", "Authorization", "aws_secret_access_key")
# A token long enough to be a key in base64 or hex: a string holding one is searched for them.
ENCODED_TOKEN = r"[A-Za-z0-9+/_-]{24}"
# An escape written in the text, as the JSON dump of a whole run shows it (besides ``\\\\``).
PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
ENTITY = re.compile(r"&(?:#[0-9xX]|[a-z]{2,6};)")
# Trigger words as URL encoding writes them (a space or ``:/`` encoded): the one-pass test
# over a whole run must not miss them; each string's own test runs on its decoded view.
ENCODED_TRIGGERS = ("private%20key", "private+key", "%3a%2f%2f", ":%2f%2f", "%3a//")


# A string that ends in a key (a placeholder now), and the kinds whose key a log can cut in two.
ENDS_IN_KEY = re.compile(r"\[REDACTED:(?P<kind>[a-z-]+)#[0-9a-f]{4}\]\Z")
SPLITTABLE = frozenset({"anthropic-key", "openai-key", "aws-access-key-id", "aws-secret-key", "github-token",
                         "slack-token", "stripe-key", "google-api-key", "api-token", "jwt", "bearer-token", "encoded"})
HALF = re.compile(r"[A-Za-z0-9_+/=.-]{6,}(?![A-Za-z0-9_+/=.-])")


def is_hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: str | re.Pattern  # compiled on first use (``rx``): most strings trigger no rule at all
    secret: str | None  # the named group replaced alone, if any
    plain: tuple[str, ...] = ()  # trigger substrings
    lower: tuple[str, ...] = ()  # trigger substrings of the lower-cased text
    probes: tuple[re.Pattern, ...] = ()  # trigger regexes
    decoded: bool = False  # the match is base64/hex: replaced only if it decodes to a secret

    @cached_property
    def rx(self) -> re.Pattern:
        return re.compile(self.pattern)

    @property
    def triggered(self) -> bool:
        return bool(self.plain or self.lower or self.probes)


def compiled(kind: str, pattern: str, triggers: tuple[str, ...], decoded: bool = False) -> Rule:
    """A built-in rule; its pattern is compiled when a string first holds one of its triggers
    (a command that prints no secret pays for one scan, not for every shape's regex)."""
    return Rule(kind, pattern, "secret" if "(?P<secret>" in pattern else None,
                 plain=tuple(t for t in triggers if t[0] not in "~/"),
                 lower=tuple(t[1:] for t in triggers if t.startswith("~")),
                 probes=tuple(re.compile(t[1:-1]) for t in triggers if t.startswith("/")), decoded=decoded)
