"""The LLM compiler's system messages, rendered once per variant of a build.

A run's system message depends on its outcome, its task kind, the agent's own
instructions and the response mode, not on the run itself: the runs of one
benchmark share a few variants. Rendered through the template engine for every
run, it was a few percent of the build's main process, the process every model
request waits on; each variant is rendered once here and shared.
"""

from __future__ import annotations

from json.encoder import encode_basestring

from ..templates import render
from .answer_check import norm
from .prompt_views import Prompt

_KEPT = 64  # variants kept; a build with more starts over (each is still rendered right)


class SystemMessages:
    def __init__(self, templates: str | None):
        self.templates = templates
        self._rendered: dict[tuple, tuple[str, str]] = {}
        self._instructions: dict[tuple, str] = {}

    @staticmethod
    def _variant(prompt: Prompt, mode: str, **ctx) -> tuple[str, tuple, dict]:
        """The template, the variant's key and its context (prompt_views.build_prompt makes
        every value a str, an int or None, so the key hashes)."""
        ctx = {**prompt.system_ctx, **ctx}
        name = f"prompts/compile_{ctx['outcome']}.system.j2"
        return name, (name, mode, tuple(sorted(ctx.items()))), ctx

    def system_and_json(self, prompt: Prompt, mode: str) -> tuple[str, str]:
        """The system message of ``prompt`` in ``mode`` and its JSON string."""
        name, key, ctx = self._variant(prompt, mode)
        made = self._rendered.get(key)
        if made is None:
            if len(self._rendered) >= _KEPT:
                self._rendered.clear()
            text = render(name, self.templates, mode=mode, **ctx)
            made = self._rendered[key] = (text, encode_basestring(text))
        return made

    def instructions(self, prompt: Prompt, mode: str) -> str:
        """The compiler's own instructions (without the agent's), normalised, to spot answers
        that echo them."""
        name, key, ctx = self._variant(prompt, mode, solver_prompt=None)
        made = self._instructions.get(key)
        if made is None:  # the same few variants recur on every run of a build
            if len(self._instructions) >= _KEPT:
                self._instructions.clear()
            made = self._instructions[key] = norm(render(name, self.templates, mode=mode, **ctx))
        return made
