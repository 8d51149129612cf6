"""Parse and check the agent's post-episode citation (which R / C / I ids it used).

Models rarely answer with bare JSON. The parser accepts code fences, prose before and
after the object, single quotes, trailing commas, bare or differently-cased keys
(``r``, ``Raw``, ``insights`` ...), a string instead of a list, and ids written loosely
(``step-23``, ``insight_40``, a path ``/work/corpus/raw/step-0023/``, a bare number).
Every id is then checked against the corpus: R and C name runs, I names insights.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .corpusdata import CorpusData, as_corpus, format_id

KEYS = ("R", "C", "I")
_KEY_ALIASES = {
    "r": "R", "raw": "R", "raws": "R", "rawtrajectory": "R", "rawtrajectories": "R", "trajectories": "R",
    "rawruns": "R", "runs": "R",
    "c": "C", "compilation": "C", "compilations": "C",
    "i": "I", "insight": "I", "insights": "I",
}
_ID = re.compile(r"\b(step|insight)[-_ ]?(\d+)\b", re.I)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)


class CitationError(ValueError):
    """No JSON object could be read from the reply."""


@dataclass
class Citation:
    R: list[str] = field(default_factory=list)
    C: list[str] = field(default_factory=list)
    I: list[str] = field(default_factory=list)  # noqa: E741 (the paper's key)
    unknown: list[dict[str, str]] = field(default_factory=list)  # {"key", "id", "reason"}
    warnings: list[str] = field(default_factory=list)
    checked: bool = False  # ids were validated against a corpus

    @property
    def ok(self) -> bool:
        return not self.unknown

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _candidates(text: str) -> list[str]:
    """Balanced {...} spans, fenced ones first, each fence / text scanned in order."""
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    found: list[str] = []
    for src in sources:
        i = 0
        while True:
            start = src.find("{", i)
            if start < 0:
                break
            end = _match_brace(src, start)
            if end is None:
                # unclosed: take the rest (a reply cut short) and let repair try
                found.append(src[start:] + "}")
                break
            found.append(src[start:end + 1])
            i = end + 1
    return found


def _match_brace(s: str, start: int) -> int | None:
    depth, quote, esc = 0, None, False
    for j in range(start, len(s)):
        ch = s[j]
        if quote:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _loads(candidate: str) -> Any:
    s = candidate.translate({0x201C: '"', 0x201D: '"', 0x2018: "'", 0x2019: "'"})
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        pass
    try:
        pyish = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", s)))
        return ast.literal_eval(pyish)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    repaired = re.sub(r",\s*([}\]])", r"\1", s)                                      # trailing commas
    repaired = re.sub(r"'([^'\"\\]*)'", r'"\1"', repaired)                           # 'x' -> "x"
    repaired = re.sub(r'([{,]\s*)([A-Za-z_][A-Za-z0-9_ ]*?)\s*:', r'\1"\2":', repaired)  # bare keys
    repaired = re.sub(r'\[\s*([A-Za-z][\w-]*(?:\s*,\s*[A-Za-z][\w-]*)*)\s*\]',        # [step-1, step-2]
                      lambda m: "[" + ", ".join(f'"{x.strip()}"' for x in m.group(1).split(",")) + "]", repaired)
    try:
        return json.loads(repaired)
    except json.JSONDecodeError:
        return None


def _canon_key(key: Any) -> str | None:
    k = re.sub(r"[^a-z]", "", str(key).lower())
    return _KEY_ALIASES.get(k)


def _items(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple, set)):
        return list(value)
    if isinstance(value, str):
        return [v for v in re.split(r"[,;\s]+", value) if v and v.lower() not in ("none", "n/a", "-")]
    return [value]


def _normalise_id(key: str, item: Any) -> tuple[str | None, str]:
    """(canonical id or None, the text as written)."""
    if isinstance(item, bool):
        return None, str(item)
    if isinstance(item, int):
        return format_id("insight" if key == "I" else "step", item), str(item)
    text = str(item).strip()
    m = _ID.search(text)
    if m:
        return format_id(m.group(1).lower(), int(m.group(2))), text
    if text.isdecimal():
        return format_id("insight" if key == "I" else "step", int(text)), text
    return None, text


def parse_citation(text: str) -> Citation:
    """Read R / C / I id lists from a model reply; raise CitationError if no object is found.

    The reply is redacted first: an unknown id is echoed (printed, returned over MCP) and
    whatever the agent wrote in its place must not carry a key along."""
    from ..redact import scrub

    text = scrub(text or "")
    best: dict | None = None
    for cand in _candidates(text or ""):
        obj = _loads(cand)
        if isinstance(obj, dict) and any(_canon_key(k) for k in obj):
            best = obj  # the last matching object wins: replies put the answer at the end
    if best is None:
        raise CitationError("no JSON object with R, C or I keys found in the reply")
    out = Citation()
    for key, value in best.items():
        canon = _canon_key(key)
        if canon is None:
            out.warnings.append(f"ignored key {key!r}")
            continue
        bucket: list[str] = getattr(out, canon)
        for item in _items(value):
            ident, written = _normalise_id(canon, item)
            if ident is None:
                out.unknown.append({"key": canon, "id": written, "reason": "not an id"})
                continue
            wanted = "insight" if canon == "I" else "step"
            if not ident.startswith(wanted + "-"):
                out.unknown.append({"key": canon, "id": ident, "reason": f"{canon} takes {wanted} ids"})
                continue
            if ident not in bucket:
                bucket.append(ident)
    return out


def check_citation(cit: Citation, corpus: "CorpusData | str | Path | dict") -> Citation:
    """Move ids the corpus does not hold from R / C / I to ``unknown``."""
    data = as_corpus(corpus)
    for key in KEYS:
        known = data.insight_by_id if key == "I" else data.run_by_step
        retired = data.retired_insights if key == "I" else data.retired_steps
        kept = []
        for ident in getattr(cit, key):
            if ident in known:
                kept.append(ident)
            else:
                reason = "retired from the corpus" if ident in retired else "not in the corpus"
                cit.unknown.append({"key": key, "id": ident, "reason": reason})
        setattr(cit, key, kept)
    cit.checked = True
    return cit


def parse_and_check(text: str, corpus: "CorpusData | str | Path | dict") -> Citation:
    return check_citation(parse_citation(text), corpus)


def cite_parse_command(source: str, corpus: Path, as_json: bool) -> int:
    """CLI body: 0 all ids known, 1 unknown ids, 2 no citation object."""
    import sys

    from rich.console import Console

    from ..errors import InputError, PREFIX

    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", "give the agent's reply as UTF-8", where=source) from None
    try:
        cit = parse_and_check(text, corpus)
    except CitationError as exc:
        if as_json:
            print(json.dumps({"error": str(exc)}))
        sys.stderr.write(f"{PREFIX}{source}: {exc} — the reply must hold a JSON object with R, C or I lists\n")
        return 2
    if as_json:
        print(json.dumps(cit.to_dict(), indent=2))
    else:
        console = Console()
        for key, label in (("R", "raw"), ("C", "compilations"), ("I", "insights")):
            ids = getattr(cit, key)
            console.print(f"{key} ({label}): {', '.join(ids) if ids else '-'}")
        for u in cit.unknown:
            console.print(f"[red]unknown[/red] {u['key']}: {u['id']} ({u['reason']})")
        for w in cit.warnings:
            console.print(f"[yellow]warning[/yellow]: {w}")
    return 0 if cit.ok else 1
