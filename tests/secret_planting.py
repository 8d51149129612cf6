"""Fake secrets of every redacted kind, and a way to plant them into every importer's fixtures.

Shared by the property test and the per-leak tests (test_secrets_never_leave.py).
Each secret is made from a seeded ``random.Random``, so it is long and random
enough that finding it anywhere in the output can only mean it leaked.
"""

from __future__ import annotations

import json
import random
import shutil
import string
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parent.parent
FIX = REPO / "tests" / "fixtures" / "importers"
EXAMPLES = REPO / "examples" / "runs.jsonl"

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
KINDS = ("private-key", "anthropic-key", "openai-key", "aws-access-key-id", "aws-secret-key", "github-token",
         "slack-token", "bearer-token", "jwt", "url-password")
# How a secret is written into text: as is, after an escaped newline (a JSON document kept
# as a string), URL-encoded with its key name, or inside a JSON string inside the string.
FORMS = ("plain", "escaped", "url", "nested")
KEY_STYLES = ("end", "cut", "numbered", "numbered-colon", "arrow")


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


@dataclass
class Secret:
    kind: str
    text: str  # what is written into the input (context included)
    needles: list[str] = field(default_factory=list)  # what must never be found in the output


def make_secret(kind: str, rng: random.Random, key_style: str = "end") -> Secret:
    if kind == "private-key":
        lines = [_r(rng, 64, B64) for _ in range(4)] + [_r(rng, 20, B64) + "=="]
        block = ["-----BEGIN RSA PRIVATE KEY-----", *lines, "-----END RSA PRIVATE KEY-----"]
        if key_style != "end":
            block = block[:-2]  # a file shown cut off before its last lines
        if key_style.startswith("numbered") or key_style == "arrow":
            sep = {"numbered": " ", "numbered-colon": ":", "arrow": "\u2192"}[key_style]
            block = [f"{n:>6}{sep}{line}" for n, line in enumerate(block, start=12)]
        return Secret(kind, "\n".join(block), lines[:-1] if key_style != "end" else lines)
    if kind == "anthropic-key":
        s = "sk-ant-api03-" + _r(rng, 60, ALNUM + "-_")
    elif kind == "openai-key":
        s = "sk-proj-" + _r(rng, 48, ALNUM + "-_")
    elif kind == "aws-access-key-id":
        s = "AKIA" + _r(rng, 16, string.ascii_uppercase + string.digits)
    elif kind == "aws-secret-key":
        s = _r(rng, 40, B64)
        return Secret(kind, f"aws_secret_access_key={s}", [s])
    elif kind == "github-token":
        s = "ghp_" + _r(rng, 36)
    elif kind == "slack-token":
        s = f"xoxb-{_r(rng, 12, string.digits)}-{_r(rng, 13, string.digits)}-{_r(rng, 24)}"
    elif kind == "bearer-token":
        s = _r(rng, 32, ALNUM + "._~+/-")
        return Secret(kind, f"Authorization: Bearer {s}", [s])
    elif kind == "jwt":
        s = f"eyJ{_r(rng, 20, B64URL)}.eyJ{_r(rng, 30, B64URL)}.{_r(rng, 43, B64URL)}"
    elif kind == "url-password":
        s = _r(rng, 18)
        return Secret(kind, f"https://deploy:{s}@git.example.com/app.git", [s])
    else:
        raise ValueError(kind)
    return Secret(kind, s, [s])


def written(secret: Secret, form: str) -> str:
    """``secret.text`` as it appears in a field, in one of ``FORMS``."""
    if form == "plain":
        return f"value {secret.text} end"
    if form == "escaped":
        return "line one\\n" + secret.text.replace("\n", "\\n") + "\\nnext"
    if form == "url":
        return "https://api.example.com/v1?key%3D" + quote(secret.text, safe="") + "&x=1"
    if form == "nested":
        return json.dumps({"env": {"note": "line one\n" + secret.text + "\nnext"}})
    raise ValueError(form)


def needles(secrets: list[Secret]) -> set[str]:
    """Every form of every secret that must not be found (raw and URL-encoded)."""
    out: set[str] = set()
    for s in secrets:
        for n in s.needles:
            out.add(n)
            out.add(quote(n, safe=""))
    return out


# Keys whose string values are free text an importer takes into the task or a turn.
CONTENT_KEYS = {"text", "content", "thought", "action", "observation", "response", "message", "thinking",
                "command", "summary", "problem_statement", "instruction", "arguments", "reasoning",
                "reasoning_content", "result", "output"}
FREE_BELOW = {"input", "arguments"}  # every string below these is a tool argument


def plant_json(value, block: str, key: str | None = None, free: bool = False):
    """``value`` with ``block`` appended to every free-text string (nested JSON strings
    decoded, planted and encoded again) and a ``notes`` key added to every object."""
    if isinstance(value, dict):
        out = {k: plant_json(v, block, k, free or k in FREE_BELOW) for k, v in value.items()}
        out["notes"] = block  # a field no importer models: only the kept original holds it
        return out
    if isinstance(value, list):
        return [plant_json(v, block, key, free) for v in value]
    if isinstance(value, str):
        if value[:1] in "{[":
            try:
                inner = json.loads(value)
            except ValueError:
                inner = None
            if isinstance(inner, (dict, list)):
                return json.dumps(plant_json(inner, block))
        if free or key in CONTENT_KEYS:
            return f"{value}\n{block}" if value else block
    return value


def plant_react(text: str, block: str, one_line: str) -> str:
    out = []
    for line in text.splitlines():
        head = line.split(":", 1)[0]
        if head.startswith(("Observation", "Obs ")):
            line = f"{line} {block}"
        elif head.startswith(("Thought", "Question")) or " Question" in head:
            line = f"{line} {one_line}"
        elif head.startswith("Action") and line.endswith("]"):
            line = f"{line[:-1]} {one_line}]"
        elif head.startswith("Act "):
            line = f"{line} {one_line}"
        out.append(line)
    return "\n".join(out) + "\n"


OUTCOMES = {"0b7c4f2e-5d1a-4c8e-9f3b-2a6d8e1c7f90": "success", "sympy__sympy-20590": "success",
            "pylint-dev__pylint-7080": "failure", "sess-fix-nginx": "failure"}


def write_inputs(root: Path, block: str | None, one_line: str | None, name_secret: str | None) -> tuple[Path, Path]:
    """Every importer's fixtures under ``root/input`` (planted when ``block`` is given),
    plus one copy per format whose file name holds ``name_secret``; returns (input, outcomes)."""
    inp = root / "input"
    shutil.copytree(FIX, inp)
    shutil.copy(EXAMPLES, inp / "native.jsonl")
    chat = {"task_id": 7, "trial": 0, "reward": 1.0, "info": {"task": {"instruction": "Book the cheapest flight."}},
            "traj": [{"role": "system", "content": "You are an airline agent."},
                     {"role": "user", "content": "Book me on the 9am flight."},
                     {"role": "assistant", "content": "Looking it up.", "tool_calls": [
                         {"id": "c1", "type": "function",
                          "function": {"name": "search_flights", "arguments": json.dumps({"when": "9am"})}}]},
                     {"role": "tool", "tool_call_id": "c1", "content": "flight AB12 at 9:00"},
                     {"role": "assistant", "content": "Booked AB12."}]}
    (inp / "chat.json").write_text(json.dumps([chat]))
    if block is not None:
        for path in sorted(p for p in inp.rglob("*") if p.is_file()):
            if (path.name in ("results.json", "result.json", "report.json", "outcomes.json")
                    or path.suffix not in (".txt", ".jsonl", ".json", ".traj")):
                continue  # verdicts, evaluation logs
            text = path.read_text()
            if path.suffix == ".txt":
                path.write_text(plant_react(text, block, one_line))
            elif path.suffix == ".jsonl":
                lines = [json.dumps(plant_json(json.loads(x), block)) for x in text.splitlines() if x.strip()]
                path.write_text("\n".join(lines) + "\n")
            else:
                path.write_text(json.dumps(plant_json(json.loads(text), block), indent=1))
    if name_secret is not None:
        named = inp / "named"
        named.mkdir()
        for src in [inp / "swe_agent" / "django__django-11099.traj", inp / "react" / "hotpotqa_small.txt",
                    inp / "native.jsonl", inp / "chat.json",
                    inp / "claude_code" / "0b7c4f2e-5d1a-4c8e-9f3b-2a6d8e1c7f90.jsonl"]:
            shutil.copy(src, named / f"{name_secret}-{src.name}")
        records = [json.loads(x) for x in (inp / "native.jsonl").read_text().splitlines() if x.strip()]
        (named / "ids.jsonl").write_text("".join(
            json.dumps(dict(r, run_id=f"{r['run_id']}-{name_secret}")) + "\n" for r in records[:2]))
    outcomes = root / "outcomes.json"
    outcomes.write_text(json.dumps(OUTCOMES))
    return inp, outcomes


def answer(outcome: str, block: str) -> dict:
    """A valid compilation whose every text field also carries ``block`` (the model wrote it back)."""
    key = "key_decisions" if outcome == "success" else "failure_causes"
    return {
        "title": f"Check the record first {block}",
        "description": f"The agent read the record before changing it. {block}",
        key: [{"decision": f"Looked the record up {block}", "support": f"The look-up showed it {block}",
               "turns": [1]}],
        "candidate_insights": [{"title": f"Look before changing {block}",
                                "guideline": f"Read the record with the lookup tool first. {block}",
                                "applicability": f"Applies to record changes. {block}"}],
    }


def find_leaks(haystacks: dict[str, bytes], wanted: set[str]) -> list[tuple[str, str]]:
    """(where, needle) for every needle found."""
    found = []
    for where, data in haystacks.items():
        text = data.decode("utf-8", "replace")
        for n in wanted:
            if n in text:
                found.append((where, n[:24]))
    return found


def files_under(root: Path, skip: Path | None = None) -> dict[str, bytes]:
    out = {}
    for p in sorted(root.rglob("*")):
        if skip is not None and (p == skip or skip in p.parents):
            continue
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(root))] = p.read_bytes()
    return out
