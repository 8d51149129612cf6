"""What a build says about its compiler: which one, which model, and why runs fell back.

A build that asked for the LLM and would publish no page of the model's at all
publishes nothing (``nothing_answered``): offline pages under an LLM build's name would
pass for the model's work. Single runs that fall back are published, labelled
``offline-fallback``, and counted here by reason.
"""

from __future__ import annotations

from typing import Any


def describe(compiler: Any) -> dict[str, Any]:
    """The compiler's name, model and endpoint (never its key)."""
    config = getattr(compiler, "config", None)
    return {"name": compiler.name, "model": getattr(compiler, "model", None),
            "endpoint": getattr(config, "endpoint", None)}


def nothing_answered(compiler: Any, by_compiler: dict[str, int]) -> str | None:
    """The reason to publish nothing: the LLM was asked for, runs fell back, and not
    one page of the corpus (this build's or one carried over) is the model's."""
    if compiler.name != "llm" or by_compiler.get("llm", 0) or not by_compiler.get("offline-fallback", 0):
        return None
    stats = compiler.stats()
    who = describe(compiler)
    return (f"the LLM ({who['model']} at {who['endpoint']}) compiled none of the {stats.runs} runs: "
            f"{_reasons(stats)}; nothing was published — fix the endpoint (--base-url, OPENAI_API_KEY, "
            f"--model) and run again, or pass --offline to compile without a model")


def waiting_for_model(compiler: Any, run_ids: list[str]) -> str | None:
    """The reason a build that published fails: runs whose content changed kept the
    pages the model wrote for their earlier content, as the model did not answer."""
    if not run_ids:
        return None
    shown = ", ".join(run_ids[:10]) + (f" and {len(run_ids) - 10} more" if len(run_ids) > 10 else "")
    return (f"{len(run_ids)} changed run(s) wait for the model ({_reasons(compiler.stats())}): {shown} keep the "
            f"pages the model wrote for their earlier content")


WAITING_FIX = "run the same command again once the endpoint answers (or pass --offline to compile them without it)"


def compiler_line(compiler: dict[str, Any], by_compiler: dict[str, int]) -> str:
    """``llm: gpt-4o-mini at https://... (5 llm, 1 offline-fallback pages)``."""
    name = compiler.get("name") or "offline"
    if name == "llm":
        head = f"llm: {compiler.get('model')} at {compiler.get('endpoint')}"
    else:
        head = "offline (rule-based, no model)"
    pages = ", ".join(f"{n} {label}" for label, n in sorted(by_compiler.items()))
    return f"{head} ({pages} pages)" if pages else head


def fallback_line(stats: dict[str, Any]) -> str:
    """``2 (1 schema: ..., 1 timeout after 4 attempts)``: counts by reason, one example each."""
    count = stats.get("fallbacks", 0)
    if not count:
        return "0"
    return f"{count} ({_reasons_from(stats.get('fallback_reasons') or {}, stats.get('fallback_examples') or {})})"


def dropped_line(stats: dict[str, Any]) -> str:
    """What the answer checks removed from published LLM pages, or '' when nothing was."""
    parts = [(stats.get("dropped_refs", 0), "turn refs not in the run"),
             (stats.get("dropped_quotes", 0), "quotes not in their turns"),
             (stats.get("dropped_items", 0), "decisions/causes citing no turn"),
             (stats.get("dropped_insights", 0), "lessons copying episode values or the prompt")]
    return ", ".join(f"{n} {what} dropped" for n, what in parts if n)


def _reasons(stats: Any) -> str:
    return _reasons_from(stats.fallback_reasons, stats.fallback_examples)


def _reasons_from(reasons: dict[str, int], examples: dict[str, str]) -> str:
    ordered = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
    return "; ".join(f"1× {examples.get(kind, kind)}" if n == 1 else f"{n}× {kind}, e.g. {examples.get(kind, kind)}"
                     for kind, n in ordered)
