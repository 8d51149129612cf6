"""A small structured-call helper for the dialogue LLM paths (claims, trajectory match,
claim transition, answer synthesis, retrieval reflection).

Requests go through the model gateway (``wikitrace.llm.client.Client``): every request
carries ``max_tokens``, a reply past the answer cap is not read, faults are retried and a
dead endpoint opens the breaker, and every answer is redacted on arrival, before a claim,
a snapshot, a page, a later prompt or a printed answer can hold it. Every call returns a
validated dict or ``None``; on ``None`` the caller uses its deterministic fallback, and the
reason is counted in ``stats`` (which the build records). A programming error is not an
LLM fault and is not caught. Offline is the default: ``from_options`` returns ``None``
when no model or endpoint is configured."""

from __future__ import annotations


class StructuredLLM:
    def __init__(self, config, templates=None, timeout: float | None = None, max_retries: int = 2):
        self.config = config
        self.templates = templates
        self.timeout = timeout
        self.max_retries = max_retries
        self.name = "llm"
        self.stats = {"calls": 0, "failures": 0, "invalid": 0}  # + "redacted", "fallback_reasons" once seen
        self._client = None

    # -------------------------------------------------------------- transport
    def _answer(self, prompt: str):
        from ..llm.client import Client

        if self._client is None:
            self._client = Client(self.config, timeout=self.timeout, max_attempts=self.max_retries + 1)
        return self._client.execute([{"role": "user", "content": prompt}], mode="json_object", temperature=0)

    def call(self, template: str, required: dict, **ctx) -> dict | None:
        """Render ``dialogue/prompts/<template>``, ask for JSON, check ``required`` keys and types."""
        from ..llm.client import ModelFault
        from ..templates import render

        prompt = render(f"dialogue/prompts/{template}", self.templates, **ctx)
        self.stats["calls"] += 1
        try:
            got = self._answer(prompt)
        except ModelFault as fault:             # network, auth, server, answer too large: fall back
            self.stats["failures"] += 1
            self._fell_back(fault.reason)
            return None
        if got.redacted:
            self.stats["redacted"] = self.stats.get("redacted", 0) + sum(got.redacted.values())
        data = got.data
        if data is None or any(not isinstance(data.get(k), t) for k, t in required.items()):
            self.stats["invalid"] += 1
            self._fell_back("the answer is not the JSON object asked for")
            return None
        return data

    def _fell_back(self, reason: str) -> None:
        reasons = self.stats.setdefault("fallback_reasons", {})
        reasons[reason] = reasons.get(reason, 0) + 1

    # -------------------------------------------------------------- compile-time hooks
    def claims_fn(self, dialogue):
        speakers = dialogue.speakers

        def fn(exchange):
            data = self.call("claims.md.j2", {"claims": list}, speakers=speakers,
                             messages=[{"id": m.id, "speaker": m.speaker, "date": m.date, "text": m.text}
                                       for m in exchange])
            return None if data is None else [c for c in data["claims"] if isinstance(c, dict)]
        return fn

    def match_fn(self):
        def fn(snapshot, top):
            data = self.call("match.md.j2", {"decision": str}, snapshot=snapshot,
                             candidates=[{"label": lab, "summary": T.summary_text()[:1200],
                                          "latest": T.snapshots[-1] if T.snapshots else ""} for lab, T, _ in top])
            if data is None:
                return None
            if data["decision"] == "NEW":
                return "NEW"
            sel = data.get("selected_candidate")
            return sel if data["decision"] == "CONTINUE" and sel in {lab for lab, _, _ in top} else None
        return fn

    def judge_fn(self):
        def fn(claim, previous):
            labels = {f"C{i + 1}": p for i, p in enumerate(previous)}
            data = self.call("transition.md.j2", {"decision": str}, claim=claim,
                             previous=[{"label": k, "text": p.text} for k, p in labels.items()])
            if data is None or data["decision"] not in ("ADD", "REVISE"):
                return None
            if data["decision"] == "REVISE":
                target = labels.get(data.get("selected_previous"))
                return ("REVISE", target) if target else None
            return ("ADD", None)
        return fn

    # -------------------------------------------------------------- answers
    def synthesize(self, packet) -> dict | None:
        return self.call("synthesis.md.j2", {"can_answer": bool}, p=packet)

    def reflect(self, packet) -> dict | None:
        return self.call("reflect.md.j2", {"search_terms": list}, p=packet)


def _strs(v) -> list[str]:
    return [str(x) for x in v if isinstance(x, (str, int, float))] if isinstance(v, list) else []


def from_options(model: str | None = None, base_url: str | None = None, offline: bool = False,
                 templates=None) -> StructuredLLM | None:
    """The configured LLM, or ``None`` (offline) when nothing is configured or ``offline`` is set."""
    if offline:
        return None
    from ..llm.config import resolve

    cfg = resolve(model, base_url)
    return StructuredLLM(cfg, templates) if cfg else None


def answer(llm: StructuredLLM, packet, retry) -> dict:
    """Structured synthesis under the source-support constraint: refs must be a subset of the
    packet's refs (others removed); no valid ref -> abstention; one reflection retry on
    abstention, through ``retry(extra_terms) -> packet``."""
    def attempt(p):
        data = llm.synthesize(p)
        if data is None:
            return None, p
        visible = set(p.refs())
        given = data.get("supporting_source_refs")
        given = [str(r) for r in given if isinstance(r, (str, int))] if isinstance(given, list) else []
        refs = list(dict.fromkeys(r for r in given if r in visible))
        dropped = [r for r in given if r not in visible]
        out = {"can_answer": data.get("can_answer") is True and bool(refs),
               "answer_type": data.get("answer_type"), "final_answer": str(data.get("final_answer") or ""),
               "supporting_facts": _strs(data.get("supporting_facts")), "supporting_source_refs": refs,
               "dropped_refs": dropped, "uncertainties": _strs(data.get("uncertainties")),
               "abstain_reason": data.get("abstain_reason") or ""}
        if not out["can_answer"]:
            out["final_answer"] = ""
            out["abstain_reason"] = str(out["abstain_reason"] or "no retrieved source supports an answer")
        return out, p

    first, p = attempt(packet)
    if first is None:
        return {"can_answer": False, "final_answer": "", "abstain_reason": "the LLM call failed",
                "supporting_source_refs": [], "mode": "llm-failed"}
    if first["can_answer"]:
        return {**first, "mode": "llm"}
    hints = llm.reflect(packet)
    if hints is None:
        return {**first, "mode": "llm"}
    terms = [str(x) for x in hints["search_terms"] if isinstance(x, (str, int))][:12]
    if not terms:
        return {**first, "mode": "llm"}
    second, p2 = attempt(retry(terms))
    if second is None:
        return {**first, "mode": "llm"}
    return {**second, "mode": "llm-reflected", "reflection": hints["search_terms"]}
