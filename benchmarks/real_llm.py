"""Compile a few runs through a real OpenAI-compatible server and report what came out.

    python benchmarks/real_llm.py --base-url http://127.0.0.1:8765/v1 --model qwen-coder-1.5b \
        --tau ../shared/data/runs-dev/tau-bench-airline/gpt-4o-airline.json --runs 5 --work /tmp/real-llm

Writes a slice of ``--tau`` (first ``--runs`` episodes) and ``--runs`` SWE-agent
trajectories of its own (``trajs/*.traj`` under a folder holding SWE-bench's
``results.json``), compiles each set with the installed ``wikitrace
compile`` against the server, and prints per run: the compiler label, the
fallback reason, what the answer checks dropped; per set: calls, repairs,
fallbacks and seconds per run. Nothing here is a test: a local model on two
cores takes minutes per run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

SYSTEM = ("SETTING: You are an autonomous programmer working in a command line with a special file viewer.\n"
          "COMMANDS:\nopen <path> [<line_number>] - opens the file at the given path\n"
          "goto <line_number> - moves the window to the line\nsearch_dir <term> [<dir>] - searches files\n"
          "find_file <name> [<dir>] - finds files\nedit <start>:<end>\\n<replacement>\\nend_of_edit - replaces lines\n"
          "create <name> - creates a file\nsubmit - submits your current code\n"
          "RESPONSE FORMAT: a DISCUSSION section, then exactly one command in a code block.")


def _step(thought: str, action: str, observation: str) -> dict:
    return {"thought": thought, "action": action, "observation": observation, "response": f"{thought}\n```\n{action}\n```"}


def _traj(iid: str, issue: str, steps: list[dict], exit_status: str, submission: str | None) -> dict:
    info = {"exit_status": exit_status, "model_stats": {"instance_cost": 1.2, "api_calls": len(steps)}}
    if submission:
        info["submission"] = submission
    return {
        "trajectory": steps,
        "history": [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": f"We're currently solving the following issue within our repository.\n"
                                                f"ISSUE:\n{issue}\n\nINSTRUCTIONS:\nSolve the issue on your own."}],
        "info": info,
        "replay_config": json.dumps({"problem_statement": {"text": issue, "id": iid}}),
    }


def swe_runs() -> tuple[dict[str, dict], dict]:
    """Five SWE-agent trajectories in the real shape: two resolved, three not."""
    runs = {
        "psf__requests-1963": _traj("psf__requests-1963",
            "`Session.resolve_redirects` copies the original request for all redirects, so a 303 that turned a "
            "POST into a GET is turned back into a POST by a following 307.",
            [_step("Find where redirects are resolved.", "search_dir \"def resolve_redirects\"",
                   "Found 1 matches for \"def resolve_redirects\" in /psf__requests:\n/psf__requests/requests/sessions.py (1 matches)"),
             _step("Open the function.", "open requests/sessions.py 84",
                   "[File: /psf__requests/requests/sessions.py (571 lines total)]\n84:    def resolve_redirects(self, resp, req, stream=False, timeout=None,\n"
                   "88:        i = 0\n90:        while resp.is_redirect:\n91:            prepared_request = req.copy()\n"
                   "99:            method = req.method"),
             _step("Each iteration copies the original request; keep the last one instead.",
                   "edit 91:91\n            prepared_request = req.copy()\n            req = prepared_request\nend_of_edit",
                   "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit command.\n"
                   "ERRORS:\n- E999 IndentationError: unexpected indent"),
             _step("Fix the indentation and update the request after the method change.",
                   "edit 99:99\n            method = prepared_request.method\nend_of_edit",
                   "[File: /psf__requests/requests/sessions.py (571 lines total)]\n99:            method = prepared_request.method\n"
                   "File updated. Please review the changes and make sure they are correct."),
             _step("Run the redirect tests.", "python -m pytest test_requests.py -k redirect -q",
                   "....\n4 passed, 134 deselected in 2.31s"),
             _step("Submit.", "submit", "")],
            "submitted", "diff --git a/requests/sessions.py b/requests/sessions.py\n-            method = req.method\n+            method = prepared_request.method\n"),
        "sympy__sympy-20590": _traj("sympy__sympy-20590",
            "Symbol instances have __dict__ since 1.7; they should only have __slots__.",
            [_step("Find the Symbol class.", "find_file symbol.py", "Found 1 matches for \"symbol.py\" in /sympy__sympy:\n/sympy__sympy/sympy/core/symbol.py"),
             _step("Open it.", "open sympy/core/symbol.py", "[File: /sympy__sympy/sympy/core/symbol.py (883 lines total)]\n1:from sympy.core.assumptions import StdFactKB"),
             _step("Check which base classes lack __slots__.", "search_file \"__slots__\"",
                   "Found 4 matches for \"__slots__\" in /sympy__sympy/sympy/core/symbol.py"),
             _step("Reproduce.", "python -c \"import sympy; print(sympy.Symbol('s').__dict__)\"", "{}"),
             _step("The mixin in printing lacks __slots__; add one.",
                   "edit 14:14\nclass Printable:\n__slots__ = ()\nend_of_edit",
                   "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit command.\n"
                   "ERRORS:\n- E999 IndentationError: expected an indented block"),
             _step("Retry the edit.", "edit 14:14\nclass Printable:\n__slots__ = ()\nend_of_edit",
                   "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit command.\n"
                   "ERRORS:\n- E999 IndentationError: expected an indented block"),
             _step("Exit due to cost limit", "exit_cost", "Exited (autosubmitted)")],
            "submitted (exit_cost)", None),
        "django__django-13230": _traj("django__django-13230",
            "Add support for item_comments to syndication framework: add comments argument to feed.add_item().",
            [_step("Run the syndication tests first.", "pytest tests/syndication_tests -q", "/bin/bash: line 1: pytest: command not found"),
             _step("Use Django's runner instead.", "python tests/runtests.py syndication_tests",
                   "Testing against Django installed in '/django__django/django'\nRan 26 tests in 0.412s\n\nOK"),
             _step("Open the views module.", "open django/contrib/syndication/views.py 200",
                   "[File: /django__django/django/contrib/syndication/views.py (219 lines total)]\n200:            feed.add_item(\n214:                **self.item_extra_kwargs(item)"),
             _step("Pass comments through.", "edit 213:213\n                comments=self._get_dynamic_attr('item_comments', item),\nend_of_edit",
                   "[File: /django__django/django/contrib/syndication/views.py (220 lines total)]\nFile updated."),
             _step("Submit.", "submit", "")],
            "submitted", "diff --git a/django/contrib/syndication/views.py b/django/contrib/syndication/views.py\n+                comments=self._get_dynamic_attr('item_comments', item),\n"),
        "pallets__flask-4045": _traj("pallets__flask-4045",
            "Raise error when blueprint name contains a dot, since dots are now significant for nested blueprints.",
            [_step("Create a reproduction.", "create reproduce.py", "[File: /pallets__flask/reproduce.py (1 lines total)]"),
             _step("Write it.", "edit 1:1\nfrom flask import Blueprint\nBlueprint('a.b', __name__)\nprint('no error')\nend_of_edit",
                   "[File: /pallets__flask/reproduce.py (3 lines total)]\nFile updated."),
             _step("Run it.", "python reproduce.py", "no error"),
             _step("Find the Blueprint constructor.", "search_file \"def __init__\" src/flask/blueprints.py",
                   "Found 2 matches for \"def __init__\" in /pallets__flask/src/flask/blueprints.py:\nLine 171:    def __init__("),
             _step("Add the check.", "edit 188:188\n        if \".\" in name:\n            raise ValueError(\"'name' may not contain a dot '.' character.\")\nend_of_edit",
                   "[File: /pallets__flask/src/flask/blueprints.py (542 lines total)]\nFile updated."),
             _step("Run again.", "python reproduce.py",
                   "Traceback (most recent call last):\n  File \"/pallets__flask/reproduce.py\", line 2, in <module>\n"
                   "ValueError: 'name' may not contain a dot '.' character."),
             _step("Submit.", "submit", "")],
            "submitted", "diff --git a/src/flask/blueprints.py b/src/flask/blueprints.py\n+        if \".\" in name:\n"),
        "astropy__astropy-14182": _traj("astropy__astropy-14182",
            "Please support header rows in RestructuredText output: `tbl.write(sys.stdout, format='ascii.rst', header_rows=['name', 'unit'])` raises TypeError.",
            [_step("Reproduce.", "python -c \"from astropy.table import QTable; import sys; QTable({'a': [1]}).write(sys.stdout, format='ascii.rst', header_rows=['name'])\"",
                   "Traceback (most recent call last):\nTypeError: RST.__init__() got an unexpected keyword argument 'header_rows'"),
             _step("Open the rst writer.", "open astropy/io/ascii/rst.py", "[File: /astropy__astropy/astropy/io/ascii/rst.py (66 lines total)]\n60:    def __init__(self):\n61:        super().__init__(delimiter_pad=None, bookend=False)"),
             _step("Accept the argument and ignore it.", "edit 60:61\n    def __init__(self, header_rows=None):\n        super().__init__(delimiter_pad=None, bookend=False)\nend_of_edit",
                   "[File: /astropy__astropy/astropy/io/ascii/rst.py (66 lines total)]\nFile updated."),
             _step("Reproduce again.", "python -c \"from astropy.table import QTable; import sys; QTable({'a': [1]}).write(sys.stdout, format='ascii.rst', header_rows=['name'])\"",
                   "===\n  a\n===\n  1\n==="),
             _step("Submit.", "submit", "")],
            "submitted", "diff --git a/astropy/io/ascii/rst.py b/astropy/io/ascii/rst.py\n+    def __init__(self, header_rows=None):\n"),
    }
    ids = sorted(runs)
    results = {"no_generation": [], "generated": ids, "applied": ids,
               "resolved": ["pallets__flask-4045", "psf__requests-1963"]}
    return runs, results


def write_inputs(work: Path, tau: Path | None, n: int) -> dict[str, Path]:
    sets = {}
    if tau is not None:
        episodes = json.loads(tau.read_text(encoding="utf-8"))[:n]
        sets["tau-bench"] = work / "tau5.json"
        sets["tau-bench"].write_text(json.dumps(episodes), encoding="utf-8")
    runs, results = swe_runs()
    exp = work / "swe-experiment"
    (exp / "trajs").mkdir(parents=True, exist_ok=True)
    for iid in sorted(runs)[:n]:
        (exp / "trajs" / f"{iid}.traj").write_text(json.dumps(runs[iid], indent=1), encoding="utf-8")
    (exp / "results.json").write_text(json.dumps(results), encoding="utf-8")  # SWE-bench's verdicts
    sets["swe-agent"] = exp
    return sets


def compile_set(name: str, src: Path, out: Path, args: argparse.Namespace) -> None:
    exe = shutil.which("wikitrace") or sys.executable
    cmd = ([exe] if exe.endswith("wikitrace") else [exe, "-m", "wikitrace.cli"]) + [
        "compile", str(src), "--out", str(out), "--base-url", args.base_url, "--model", args.model,
        "--concurrency", str(args.concurrency), "--max-tokens", str(args.max_tokens), "--timeout", str(args.timeout)]
    if args.no_cache:
        cmd.append("--no-cache")
    env = dict(os.environ, COLUMNS="300", WIKITRACE_CACHE_DIR=str(args.work / "cache"))
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    print(f"\n## {name}: exit {proc.returncode}, {seconds:.0f} s")
    print(proc.stderr.strip())
    if proc.returncode != 0 or not (out / "corpus.json").is_file():
        return
    data = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    import frontmatter

    print("| run | outcome | compiler | fallback reason | dropped refs/quotes/items/lessons | insights |")
    print("|---|---|---|---|---|---|")
    for r in data["runs"]:
        fm = frontmatter.load(out / "compilation" / f"{r['step']}.md").metadata
        print(f"| {r['run_id']} | {r['outcome']} | {fm['compiler']} | {fm.get('fallback_reason') or ''} | "
              f"{fm.get('dropped_refs', 0)}/{fm.get('dropped_quotes', 0)}/{fm.get('dropped_items', 0)}/"
              f"{fm.get('dropped_insights', 0)} | {len(r['insights'])} |")
    s = data["build"]["stats"]
    runs = max(1, len(data["runs"]))
    print(f"calls {s['calls']}, repairs {s['repairs']}, retries {s['retries']}, fallbacks {s['fallbacks']}, "
          f"cache hits {s['cache_hits']}, completion tokens {s['completion_tokens']}; {seconds / runs:.0f} s per run")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", default="local")
    p.add_argument("--tau", type=Path)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--work", type=Path, default=Path("/tmp/wikitrace-real-llm"))
    p.add_argument("--only", choices=["tau-bench", "swe-agent"])
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--max-tokens", type=int, default=1024)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--no-cache", action="store_true")
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    for name, src in write_inputs(args.work, args.tau, args.runs).items():
        if args.only and name != args.only:
            continue
        out = args.work / f"corpus-{name}"
        compile_set(name, src, out, args)


if __name__ == "__main__":
    main()
