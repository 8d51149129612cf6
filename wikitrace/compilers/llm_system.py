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

    def system(self, prompt: Prompt, mode: str) -> str:
        """The system message of ``prompt`` in ``mode``."""
        return self.system_and_json(prompt, mode)[0]

    def system_and_json(self, prompt: Prompt, mode: str) -> tuple[str, str | None]:
        """The system message and its JSON string (None: not kept, encoded where needed)."""
        name = f"prompts/compile_{prompt.system_ctx['outcome']}.system.j2"
        try:
            key = (name, mode, tuple(sorted(prompt.system_ctx.items())))
            hash(key)
        except TypeError:  # a value that cannot key a dict: rendered every time
            return render(name, self.templates, mode=mode, **prompt.system_ctx), None
        made = self._rendered.get(key)
        if made is None:
            if len(self._rendered) >= _KEPT:
                self._rendered.clear()
            text = render(name, self.templates, mode=mode, **prompt.system_ctx)
            made = self._rendered[key] = (text, encode_basestring(text))
        return made

    def instructions(self, prompt: Prompt, mode: str) -> str:
        """The compiler's own instructions (without the agent's), normalised, to spot answers
        that echo them."""
        name = f"prompts/compile_{prompt.system_ctx['outcome']}.system.j2"
        ctx = dict(prompt.system_ctx, solver_prompt=None)
        key = (name, mode, repr(sorted(ctx.items())))
        if key not in self._instructions:  # the same few variants recur on every run of a build
            self._instructions[key] = norm(render(name, self.templates, mode=mode, **ctx))
        return self._instructions[key]
