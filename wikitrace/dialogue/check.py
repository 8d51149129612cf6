"""``check_dialogue(corpus_root) -> list[str]``: every relative link resolves (file and anchor),
every claim's source ids exist, required frontmatter fields are present, and each folder's
``_index.md`` lists every page in it. An empty list means the dialogue memory is sound."""

from __future__ import annotations

import json
import re
from pathlib import Path

import frontmatter

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_ANCHOR = re.compile(r'<a id="([^"]+)"></a>')

# source: wikitrace own page format (required frontmatter fields)
REQUIRED = {
    "sources": ("type", "sample", "session", "message_ids"),
    "snapshots": ("type", "id", "sample", "trajectory", "session", "source_message_ids", "claims", "extractor"),
    "trajectories": ("type", "id", "sample", "title", "snapshots", "claims", "status_counts"),
    "wiki": ("type", "slug", "sample", "title", "page_type", "trajectories", "sections", "compiler"),
}
WIKI_SECTIONS = ("## Overview", "## Key Facts", "## Items/Counts", "## Linked Trajectories",
                 "## Conflicts/Uncertainty")


def _sample_problems(sdir: Path) -> list[str]:
    problems: list[str] = []
    rel = lambda p: str(p.relative_to(sdir.parent.parent))  # noqa: E731
    anchors: dict[Path, set[str]] = {}

    def anchors_of(p: Path) -> set[str]:
        if p not in anchors:
            anchors[p] = set(_ANCHOR.findall(p.read_text(encoding="utf-8"))) if p.exists() else set()
        return anchors[p]

    mem_path = sdir / "memory.json"
    if not mem_path.exists():
        return [f"{rel(sdir)}: memory.json missing"]
    rebuild = "compile the conversation again (wikitrace dialogue compile INPUT --out CORPUS)"
    try:
        mem = json.loads(mem_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        problems.append(f"{rel(sdir)}/memory.json: cannot be read ({exc.__class__.__name__}) — {rebuild}")
    else:
        try:
            msg_ids = {m["id"] for m in mem["messages"]}
            for s in mem["snapshots"]:
                for c in s["claims"]:
                    bad = [i for i in c["source_message_ids"] if i not in msg_ids]
                    if bad or not c["source_message_ids"]:
                        problems.append(f"{rel(sdir)}/memory.json: claim {c['id']} cites unknown source ids {bad}")
        except (KeyError, TypeError, AttributeError) as exc:
            problems.append(f"{rel(sdir)}/memory.json: not laid out as wikitrace writes it "
                            f"({exc.__class__.__name__}: {exc}) — {rebuild}")
    if not (sdir / "index.json").exists():
        problems.append(f"{rel(sdir)}: index.json missing")
    for md in sorted(sdir.rglob("*.md")):
        text = md.read_text(encoding="utf-8")
        folder = md.parent.name if md.parent != sdir else ""
        if md.name != "_index.md" and folder in REQUIRED:
            post = frontmatter.loads(text)
            missing = [k for k in REQUIRED[folder] if k not in post.metadata]
            if missing:
                problems.append(f"{rel(md)}: frontmatter lacks {', '.join(missing)}")
            if folder == "wiki":
                absent = [h for h in WIKI_SECTIONS if h not in text]
                if absent:
                    problems.append(f"{rel(md)}: missing sections {', '.join(absent)}")
            if folder == "snapshots":
                for cid in post.metadata.get("claims", []):
                    if f"`{cid}`" not in text:
                        problems.append(f"{rel(md)}: claim {cid} listed but not shown")
        for target in _LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, frag = target.partition("#")
            dest = (md.parent / path).resolve() if path else md.resolve()
            if not dest.exists():
                problems.append(f"{rel(md)}: broken link {target}")
            elif frag and frag not in anchors_of(dest):
                problems.append(f"{rel(md)}: link {target} names a missing anchor")
    for folder in REQUIRED:
        d = sdir / folder
        if not d.is_dir():
            problems.append(f"{rel(sdir)}: {folder}/ missing")
            continue
        idx = d / "_index.md"
        if not idx.exists():
            problems.append(f"{rel(d)}: _index.md missing")
            continue
        listed = set(_LINK.findall(idx.read_text(encoding="utf-8")))
        for md in sorted(d.glob("*.md")):
            if md.name != "_index.md" and md.name not in listed:
                problems.append(f"{rel(idx)}: does not list {md.name}")
    return problems


def check_dialogue(corpus_root) -> list[str]:
    root = Path(corpus_root)
    base = root / "dialogue"
    if not base.is_dir():
        return [f"{base}: no dialogue/ folder"]
    problems: list[str] = []
    # a folder without memory.json is not a compiled sample (a user's notes): not checked
    samples = sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".") and (p / "memory.json").exists())
    idx = base / "_index.md"
    listed = set(_LINK.findall(idx.read_text(encoding="utf-8"))) if idx.exists() else set()
    if not idx.exists():
        problems.append("dialogue/_index.md missing")
    for s in samples:
        if f"{s.name}/_index.md" not in listed:
            problems.append(f"dialogue/_index.md: does not list {s.name}")
        problems.extend(_sample_problems(s))
    return problems
