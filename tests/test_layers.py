"""The package's layers, and the rule they keep.

A module may import from its own layer and from any layer below it, never from one
above; ``agent`` and ``dialogue`` stand side by side and import nothing of each other.
No group of modules imports itself round in a circle, inside a layer or across.

Imports inside functions count: they run the same as the ones at the top, only later.
Imports under ``if TYPE_CHECKING:`` do not: they are never executed and only name a
type for the reader. Importing the package root (``from wikitrace import __version__``)
is allowed everywhere: Python has loaded it before any of its modules.

Every module must appear in the table below (the longest matching prefix decides), so a
new module is placed on purpose, not by accident.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "wikitrace"

# Lowest first; a module's layer is the one of its longest matching prefix.
LAYERS: list[tuple[str, list[str]]] = [
    # helpers every layer may use: files, errors, redaction, templates, progress lines
    ("base", ["wikitrace.fsio", "wikitrace.errors", "wikitrace.redact", "wikitrace.redact_rules",
              "wikitrace.redact_decode", "wikitrace.redact_screen", "wikitrace.redact_tags", "wikitrace.safe_names", "wikitrace.progress", "wikitrace.controls",
              "wikitrace.templates", "wikitrace.template_cache", "wikitrace.helper_process", "wikitrace.gc_policy", "wikitrace.code_digest",
              "wikitrace.lazy_re"]),
    # reading agent runs in their many formats into one model
    ("runs", ["wikitrace.runs", "wikitrace.input_survey"]),
    # talking to a model: endpoint, key, limits, what a wait or fallback means
    ("llm", ["wikitrace.llm", "wikitrace.llm_report"]),
    # one run in, its compilation and insights out
    ("compilers", ["wikitrace.compilers"]),
    # the corpus on disk: layout, pages, manifest, publishing, ledger
    ("corpus", ["wikitrace.corpus"]),
    # what an agent reads from a corpus / the dialogue memory beside it
    ("agent", ["wikitrace.agent"]),
    ("dialogue", ["wikitrace.dialogue"]),
    # the commands that change or read a whole corpus, beside each other
    ("commands", ["wikitrace.build", "wikitrace.build_options", "wikitrace.build_input", "wikitrace.build_publish", "wikitrace.build_key", "wikitrace.compile_loop", "wikitrace.add", "wikitrace.add_carry", "wikitrace.forget", "wikitrace.capture",
                  "wikitrace.check", "wikitrace.corpus_access"]),
    # what a person or a program calls: the CLI, its fast parsers, the MCP server, the API facade
    ("interfaces", ["wikitrace", "wikitrace.cli", "wikitrace.cli_checks", "wikitrace.cli_usage",
                    "wikitrace.fast_args", "wikitrace.entry",
                    "wikitrace.mcp_server", "wikitrace.tools_install", "wikitrace.agent.cli_glue",
                    "wikitrace.dialogue.__main__", "wikitrace.dialogue.cli_support"]),
]
BESIDE = {"dialogue": "agent"}  # same rank as agent, and neither imports the other
RANK: dict[str, int] = {}
for _name, _ in LAYERS:
    RANK[_name] = RANK[BESIDE[_name]] if _name in BESIDE else len(set(RANK.values()))


def side_by_side(a: str, b: str) -> bool:
    return BESIDE.get(a) == b or BESIDE.get(b) == a


def module_files() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def layer_of(module: str) -> str | None:
    best, best_len = None, -1
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = name, len(prefix)
    return best


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skipped.update(id(n) for n in ast.walk(inner))
    return skipped


def imports_of(module: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """(imported package module, line) for every import the file executes, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names]
        else:
            continue
        for target in targets:
            if target != PACKAGE and not target.startswith(PACKAGE + "."):
                continue
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != module:
                found.append((target, node.lineno))
    return found


def import_graph() -> dict[str, list[tuple[str, int]]]:
    files = module_files()
    return {m: imports_of(m, p, set(files)) for m, p in files.items()}


def test_every_module_has_a_layer():
    unplaced = [m for m in module_files() if layer_of(m) is None]
    assert not unplaced, f"add these modules to a layer in tests/test_layers.py: {unplaced}"


def reaching_up(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Every import of a module from a higher layer, or between agent and dialogue."""
    wrong = []
    for module, imports in graph.items():
        mine = layer_of(module)
        for target, line in imports:
            theirs = layer_of(target)
            if target == PACKAGE or theirs == mine:
                continue
            if RANK[theirs] > RANK[mine] or side_by_side(mine, theirs):
                wrong.append(f"{module}:{line} ({mine}) imports {target} ({theirs})")
    return wrong


def test_no_module_imports_from_a_higher_layer():
    wrong = reaching_up(import_graph())
    assert not wrong, "imports that reach up or sideways:\n" + "\n".join(wrong)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, order, found = {}, {}, set(), [], [0], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = order[0]
        order[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = order[0]
                    order[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles():
    graph = {m: {t for t, _ in imports if t != PACKAGE} for m, imports in import_graph().items()}
    cycles = _cycles(graph)
    assert not cycles, "modules that import each other round in a circle:\n" + "\n".join(" ↔ ".join(c) for c in cycles)


# The checker itself, on small made-up packages: it must see what it is there to see.

def _write(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    out = {}
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        out[rel[:-3].replace("/", ".").removesuffix(".__init__")] = path
    return out


def test_checker_sees_function_level_and_relative_imports(tmp_path):
    files = _write(tmp_path, {
        "wikitrace/__init__.py": "",
        "wikitrace/corpus/__init__.py": "",
        "wikitrace/corpus/pages.py": "def f():\n    from ..agent import index\n    from . import layout\n",
        "wikitrace/corpus/layout.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..build import X\n",
        "wikitrace/agent/__init__.py": "",
        "wikitrace/agent/index.py": "import wikitrace.corpus.pages\nfrom wikitrace import __version__\n",
    })
    known = set(files)
    assert sorted(imports_of("wikitrace.corpus.pages", files["wikitrace.corpus.pages"], known)) == [
        ("wikitrace.agent.index", 2), ("wikitrace.corpus.layout", 3)]
    assert imports_of("wikitrace.corpus.layout", files["wikitrace.corpus.layout"], known) == []
    assert sorted(imports_of("wikitrace.agent.index", files["wikitrace.agent.index"], known)) == [
        ("wikitrace", 2), ("wikitrace.corpus.pages", 1)]
    assert layer_of("wikitrace.corpus.pages") == "corpus" and layer_of("wikitrace.agent.cli_glue") == "interfaces"


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}}, [["a", "b", "c"]]),
])
def test_checker_finds_circles(graph, expected):
    assert _cycles(graph) == expected


def test_checker_finds_imports_that_reach_up_or_sideways():
    graph = {
        "wikitrace.corpus.forget": [("wikitrace.agent.index", 205), ("wikitrace.fsio", 3)],
        "wikitrace.dialogue.query": [("wikitrace.agent.prompt", 9), ("wikitrace.corpus.publish", 4)],
        "wikitrace.compilers.llm": [("wikitrace.llm.config", 45), ("wikitrace.runs.model", 47), ("wikitrace", 1)],
        "wikitrace.build": [("wikitrace.agent.index", 420), ("wikitrace.dialogue.build", 2)],
        "wikitrace.runs.load": [("wikitrace.compilers.cache", 12)],
    }
    assert reaching_up(graph) == [
        "wikitrace.corpus.forget:205 (corpus) imports wikitrace.agent.index (agent)",
        "wikitrace.dialogue.query:9 (dialogue) imports wikitrace.agent.prompt (agent)",
        "wikitrace.runs.load:12 (runs) imports wikitrace.compilers.cache (compilers)",
    ]
