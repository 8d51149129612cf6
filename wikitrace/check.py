"""``wikitrace check``: prove a corpus is whole before an agent relies on it.

Checks that every relative link and every absolute mount-path reference
resolves, that every insight reaches its compilation and raw run (and they
point back), that every turn ref names a turn of its run, that frontmatter
carries the documented fields, and that each index lists every document.

Only the paths a build writes are checked (``layout.is_corpus_path``): a user's
notes, ``.git/``, ``.obsidian/`` and the build's own ``.wikitrace/`` are ignored.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

import frontmatter

from .corpus import layout

# Only what the templates wrote counts: run and model text is backslash-escaped when it
# is rendered (templates.md_text), so an escaped bracket or backtick is quoted text.
_LINK = re.compile(r"(?<!\\)\]\(([^)\s]+)\)")
_TURN_CMD = re.compile(r"(?<!\\)`turn (step-\d{4,}) (\d+)(?: (\d+))?`")

REQUIRED = {
    "raw-run": ("step_id", "run_id", "task_id", "outcome", "success", "steps"),
    "trajectory-compilation": ("title", "description", "step_id", "outcome", "compiler", "insights", "raw"),
    "insight": ("id", "title", "source_step", "source_outcome", "compiler"),
    "index": ("layer", "count"),
    "raw-turns": ("step_id", "run_id"),
}
_FENCE = re.compile(r"^(`{3,})[^\n]*\n.*?^\1`*[ \t]*$", re.M | re.S)


def _turn_numbers(log: Path) -> set[int]:
    numbers = set()
    with log.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                numbers.add(json.loads(line)["turn"])
    return numbers


def check_corpus(root: Path) -> list[str]:
    root = Path(root)
    from .capture import logged_failures

    stamp = root / "corpus.json"
    failures = logged_failures(root)  # adds a hook ran unattended and that failed
    if not stamp.is_file():
        if failures:
            return failures + [f"{root}: no corpus.json yet"]
        if (root / "dialogue").is_dir():  # dialogue memory only, no agent runs compiled yet
            from .dialogue.check import check_dialogue
            from .dialogue.pending import describe as dialogue_pending

            return check_dialogue(root) + dialogue_pending(root)
        return [f"{root}: no corpus.json; is this a compiled corpus? (wikitrace compile ... --out {root})"]
    problems: list[str] = list(failures)
    try:
        data = json.loads(stamp.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return [f"{stamp}: unreadable JSON ({exc})"]
    if not isinstance(data, dict):
        return [f"{stamp}: expected a JSON object (format {layout.CORPUS_FORMAT}), got {type(data).__name__}; "
                f"rebuild with wikitrace compile"]
    if data.get("format") != layout.CORPUS_FORMAT:
        problems.append(f"corpus.json: format is {data.get('format')!r}, expected {layout.CORPUS_FORMAT!r}")
    mount = str(data.get("mount_path", "/work/corpus")).rstrip("/")

    docs: dict[str, dict] = {}
    for path in _corpus_files(root, ".md"):
        rel = path.relative_to(root).as_posix()
        try:
            post = frontmatter.load(path)
        except Exception as exc:  # yaml errors come in many types
            problems.append(f"{rel}: frontmatter does not parse ({type(exc).__name__}: {exc})")
            continue
        meta, body = post.metadata, post.content
        kind = meta.get("type")
        if kind not in REQUIRED:
            problems.append(f"{rel}: frontmatter 'type' is {kind!r}; expected one of {', '.join(REQUIRED)}")
        else:
            for key in REQUIRED[kind]:
                if key not in meta:
                    problems.append(f"{rel}: frontmatter is missing '{key}' (required for type {kind})")
            if kind in ("raw-run", "trajectory-compilation", "insight") and "task_type" not in meta and "apps" not in meta:
                problems.append(f"{rel}: frontmatter needs 'task_type' or 'apps'")
        docs[rel] = meta
        _check_links(root, rel, body, mount, problems)

    _check_cross_links(root, docs, problems)
    _check_turn_refs(root, docs, problems)
    _check_indexes(root, docs, problems)
    _check_manifest(root, data, docs, problems)
    from .corpus.usage_pages import check_usage

    problems.extend(check_usage(root, data, docs))
    _check_forgotten(root, data, problems)
    if (root / "dialogue").is_dir():
        try:
            from .dialogue.check import check_dialogue
        except ImportError:
            problems.append("dialogue/: present but this wikitrace has no dialogue checker")
        else:
            problems.extend(check_dialogue(root))
    from .dialogue.pending import describe as dialogue_pending
    from .corpus.pending import describe

    problems.extend(describe(root))  # an update killed half-way, and which command finishes it
    problems.extend(dialogue_pending(root))
    return problems


def _corpus_files(root: Path, suffix: str) -> list[Path]:
    """The files of the layers that a build writes, sorted; nothing else in the folder."""
    found = []
    for layer in layout.LAYERS:
        for path in (root / layer).rglob(f"*{suffix}"):
            if layout.is_corpus_path(path.relative_to(root).as_posix()) and path.is_file():
                found.append(path)
    return sorted(found)


def _check_links(root: Path, rel: str, body: str, mount: str, problems: list[str]) -> None:
    here = posixpath.dirname(rel)
    body = _FENCE.sub("", body)  # fenced text is quoted run text, not links the page makes
    for target in _LINK.findall(body):
        if re.match(r"^[a-z]+://", target) or target.startswith("#"):
            continue
        resolved = posixpath.normpath(posixpath.join(here, target.split("#", 1)[0]))
        if resolved.startswith("..") or not (root / resolved).exists():
            problems.append(f"{rel}: link ({target}) does not resolve")
    for ref in re.findall(r"(?<!\\)`(" + re.escape(mount) + r"/[^`\s]*)`", body):
        inside = ref[len(mount) + 1:]
        if not (root / inside).exists():
            problems.append(f"{rel}: mount path {ref} does not exist in the corpus")


def _outcomes(steps: list, docs: dict[str, dict]) -> tuple[int, int]:
    """(successful, failed) among the runs of ``steps``, by their compilation pages."""
    found = [(docs.get(layout.compilation_doc(str(s))) or {}).get("outcome") for s in steps]
    return sum(o == "success" for o in found), sum(o == "failure" for o in found)


def _check_cross_links(root: Path, docs: dict[str, dict], problems: list[str]) -> None:
    for rel, meta in docs.items():
        if meta.get("type") == "insight":
            sources = meta.get("sources") if isinstance(meta.get("sources"), list) else [meta.get("source_step", "")]
            for step in sources:  # every run it names reaches its compilation and raw run, and lists it
                step = str(step)
                comp = docs.get(layout.compilation_doc(step))
                if comp is None:
                    problems.append(f"{rel}: source {step!r} has no compilation ({layout.compilation_doc(step)})")
                elif meta.get("id") not in (comp.get("insights") or []):
                    problems.append(f"{rel}: its source {layout.compilation_doc(step)} does not list {meta.get('id')}")
                if not (root / layout.raw_log(step)).is_file():
                    problems.append(f"{rel}: source {step!r} has no raw run ({layout.raw_log(step)})")
            if "runs" in meta and (meta.get("runs") != len(sources)
                                   or (meta.get("success"), meta.get("failure")) != _outcomes(sources, docs)):
                problems.append(f"{rel}: its counts ({meta.get('runs')} runs, {meta.get('success')} successful, "
                                f"{meta.get('failure')} failed) differ from its {len(sources)} listed sources")
            if meta.get("id") and rel != layout.insight_doc(meta["id"]):
                problems.append(f"{rel}: id {meta['id']!r} does not match its file name")
        elif meta.get("type") == "trajectory-compilation":
            for ins in meta.get("insights") or []:
                if layout.insight_doc(ins) not in docs:
                    problems.append(f"{rel}: lists {ins} but {layout.insight_doc(ins)} is missing")
            if not (root / layout.raw_metadata(meta.get("step_id", ""))).is_file():
                problems.append(f"{rel}: no raw run for step_id {meta.get('step_id')!r}")


def _check_turn_refs(root: Path, docs: dict[str, dict], problems: list[str]) -> None:
    cache: dict[str, set[int]] = {}
    for rel, meta in docs.items():
        if meta.get("type") != "trajectory-compilation":
            continue
        body = (root / rel).read_text(encoding="utf-8")
        for step, a, b in _TURN_CMD.findall(body):
            log = root / layout.raw_log(step)
            if step not in cache:
                try:
                    cache[step] = _turn_numbers(log) if log.is_file() else set()
                except (json.JSONDecodeError, KeyError, UnicodeDecodeError) as exc:
                    problems.append(f"{layout.raw_log(step)}: unreadable turn log ({exc})")
                    cache[step] = set()
            for n in filter(None, (a, b)):
                if int(n) not in cache[step]:
                    problems.append(f"{rel}: turn ref `turn {step} {n}` names no turn of {layout.raw_log(step)}")


def _check_indexes(root: Path, docs: dict[str, dict], problems: list[str]) -> None:
    for layer in layout.LAYERS:
        index = f"{layer}/_index.md"
        if index not in docs:
            problems.append(f"{index}: missing")
            continue
        text = (root / index).read_text(encoding="utf-8")
        listed = set(re.findall(r"\]\(((?:step|insight)-\d{4,})(?:/metadata)?\.md\)", text))
        if layer == "raw":
            present = {p.parent.name for p in _corpus_files(root, "") if p.parent.parent.name == "raw"}
        else:
            present = {Path(r).stem for r in docs if r.startswith(f"{layer}/") and not r.endswith("_index.md")}
        for missing in sorted(present - listed):
            problems.append(f"{index}: does not list {missing}")
        for extra in sorted(listed - present):
            problems.append(f"{index}: lists {extra}, which does not exist")


def _entries(data: dict, key: str, problems: list[str]) -> list[dict]:
    """corpus.json's ``key`` list, each malformed entry reported rather than trusted."""
    value = data.get(key, [])
    if not isinstance(value, list):
        problems.append(f"corpus.json: '{key}' is a {type(value).__name__}, expected a list")
        return []
    good = [e for e in value if isinstance(e, dict)]
    for n, entry in enumerate(value):
        if not isinstance(entry, dict):
            problems.append(f"corpus.json: {key}[{n}] is {json.dumps(entry)[:40]}, expected an object")
    return good


def _check_manifest(root: Path, data: dict, docs: dict[str, dict], problems: list[str]) -> None:
    for entry in _entries(data, "runs", problems):
        step = str(entry.get("step", "?"))
        if layout.compilation_doc(step) not in docs:
            problems.append(f"corpus.json: run {entry.get('run_id')!r} names {step}, which has no compilation")
    for entry in _entries(data, "insights", problems):
        if layout.insight_doc(str(entry.get("id", "?"))) not in docs:
            problems.append(f"corpus.json: insight {entry.get('id')!r} has no document")


def _check_forgotten(root: Path, data: dict, problems: list[str]) -> None:
    """A run `wikitrace forget` removed must not be listed still (a forget interrupted)."""
    from .corpus.publish import PublishError
    from .corpus.tombstones import Tombstones

    try:
        stones = Tombstones.load(root)
    except PublishError as exc:
        problems.append(str(exc))
        return
    for entry in _entries(data, "runs", []):
        stone = stones.find(str(entry.get("run_id")))
        if stone is not None:
            problems.append(f"corpus.json: run {stone.run_id!r} was forgotten but is still listed; run "
                            f"`wikitrace forget {stone.run_id}` again to finish removing it")


def print_report(root: Path, problems: list[str]) -> None:
    from rich.console import Console

    console = Console(stderr=False, highlight=False, soft_wrap=True)  # a path stays one line
    if not problems:
        console.print(f"{root}: ok")
        return
    for line in problems:
        console.print(line, markup=False)
    console.print(f"{root}: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
