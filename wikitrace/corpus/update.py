"""What an update of an agent-run corpus keeps and what it writes.

``Reuse`` decides which runs' pages stay as they are (unchanged and intact);
``RunWriter`` claims and hands the others' pages to a page sink (corpus/pages.py)
and keeps every run's corpus.json entries. ``wikitrace.build`` drives both.
"""

from __future__ import annotations

import collections

from ..redact import redact_compilation, redactor_for
from ..runs._common import Carried
from ..runs.model import Run
from . import (applies, cannot_claims, documents, insights as insight_layer, layout, pages, pattern_tally,
               trial_contrast, usage_pages)
from .insight_unchanged import same_page
from .ledger import insight_counts
from .manifest import IdAllocator
from .publish import Publisher

REUSED = object()  # marker: the corpus already holds this run's pages, intact


class Reuse:
    """Runs whose pages in the corpus are still what this build would write.

    True when the corpus was built with the same build key (wikitrace version,
    compiler and model, templates, mount path), the run's content is unchanged
    and every file of the run is as the build wrote it (a missing or edited page
    makes its run compiled and rendered again: repaired, not carried). Their
    files stay as they are, so adding one run to a large corpus costs one
    compile. Fallback pages are never reused: their LLM call is tried again.
    """

    def __init__(self, previous: dict | None, pub: Publisher, key: str):
        self.pub = pub
        # Indexes are written again anyway (checked to report damage); entries of corpus.json
        # and renders in the prompt index are reused, so those two must be intact.
        pub.verify_group(list(INDEXES))
        self.prompt_index_ok = pub.verify_group([PROMPT_INDEX])
        same = pub.verify_group(["corpus.json"]) and bool(previous) and previous.get("build_key") == key
        data = pub.manifest.data
        self.runs: dict[str, dict] = {}
        self.files: dict[str, list[str]] = {}  # step -> every file of the run
        raw: dict[str, list[str]] = collections.defaultdict(list)
        for rel in pub.manifest.files:
            if rel.startswith("raw/step-"):
                raw[rel.split("/", 2)[1]].append(rel)
        for r in (previous or {}).get("runs", []):
            if "content_hash" not in r:  # ids kept by the manifest only (corpus.json was lost)
                continue
            files = sorted(raw.get(r["step"], ())) + [layout.compilation_doc(r["step"])]
            if pub.verify_group(files) and same and layout.raw_metadata(r["step"]) in files:
                self.runs[r["run_id"]] = r
                self.files[r["step"]] = files
        self.insights = {i["id"]: i for i in previous.get("insights", [])} if same else {}
        # JSONL records compiled from exactly these bytes: the readers skip parsing them.
        records = data.get("records") if same and data.get("build_key") == key else None
        self.digests = {k: v for k, v in records.items() if isinstance(k, str) and isinstance(v, str)} \
            if isinstance(records, dict) else {}
        self.known = {d: Carried(d, run_id, self.runs[run_id]["outcome"]) for run_id, d in self.digests.items()
                      if run_id in self.runs and self.runs[run_id]["compiler"] != "offline-fallback"}

    def entry(self, run: Run | Carried, digest: str | None) -> dict | None:
        prev = self.runs.get(run.run_id)
        if not prev or prev["compiler"] == "offline-fallback":
            return None
        if isinstance(run, Carried):
            return prev if self.digests.get(run.run_id) == run.record_digest else None
        return prev if prev["content_hash"] == digest else None


INDEXES = tuple(f"{layer}/_index.md" for layer in layout.LAYERS)
PROMPT_INDEX = "index/prompt.bin"


class RunWriter:
    """Hands each compiled run's pages to a page sink and keeps its corpus.json entries.

    The first ``HELPER_AFTER`` runs are written in this process; a build with
    more moves the rendering and writing to a helper process (corpus/pages.py),
    which runs on another core while this one reads runs and calls the model.
    With ``page_helper`` (a large input, every run of it to be written) the helper is
    started at once: its start-up overlaps the build's own, and this process renders
    no page of the first runs.
    Every run's paths are claimed (corpus/publish.py) before they are handed on.
    """

    HELPER_AFTER = 32

    def __init__(self, pub: Publisher, ids: IdAllocator, opts, reuse: Reuse, page_helper: bool = False):
        self.pub, self.ids, self.opts, self.reuse = pub, ids, opts, reuse
        self.redactor = redactor_for(opts.redact, opts.redact_patterns)
        self.runs: list[dict] = []
        self.insights: list[dict] = []
        self.compilers: collections.Counter = collections.Counter()
        self.record_digests: dict[str, str] = {}  # run id -> digest of its raw JSONL record
        self.carried_insights: set[str] = set()  # insight ids whose entries are the published ones
        self.prev_insights: dict[str, dict] = dict(getattr(reuse, "insights", {}))  # id -> the entry corpus.json holds now
        self.carried_steps: set[str] = set()  # steps of runs carried over unchanged
        self.published_lines: dict = {}  # the carried entries' lines in corpus.json (corpus_json.published_lines)
        # insight id -> (episodes citing it, of which succeeded), from the usage ledger: every
        # insight page written here shows them (corpus/usage_pages.py)
        self.usage, self.usage_problems = insight_counts(pub.root)
        self.new_paths: list[str] = []  # files of runs no index names yet (removed if the build fails)
        self._sink_args = (str(pub.root), str(pub.tmp), opts.mount_path, str(opts.templates) if opts.templates else None)
        self._sink: pages.PageSink | pages.HelperSink = pages.PageSink(*self._sink_args)
        if page_helper:
            try:
                self._sink = pages.HelperSink(*self._sink_args)
            except OSError:  # cannot start a process here: write in this one
                pass
        self._handed = 0
        self._provisional: set[str] = set()  # insight pages written ahead of the gathered ones
        self._checked: set[str] = set()  # insight pages already verified or written ahead
        # With a model asked for, a run already in the corpus that fell back is held until
        # the model has answered once: if it never does, the build publishes nothing and
        # the pages it has now must not have been overwritten with offline ones.
        self._held: list[tuple] | None = None
        # Runs whose content changed while the model did not answer for them: a page the
        # model wrote is replaced only by a page the model wrote, so they keep their pages
        # (and corpus.json entries) and the next build asks again. Run ids, in input order.
        self.waiting_for_model: list[str] = []
        self._gathered: tuple[set[str], list[dict]] | None = None  # by merge_insights, for publish_insights
        self._chosen: set[str] | None = None  # by choose_insights: the task types kept, pages not yet written
        self.tally: pattern_tally.PatternTally | None = None  # the task types' pattern counts, for the next command
        self.cause_counts = None  # cause_contrast.count of every run, once all are compiled

    def hold_fallbacks_until_the_model_answers(self) -> None:
        self._held = []

    def release(self) -> None:
        """Write the runs held back (the model answered, or the build goes ahead anyway)."""
        held, self._held = self._held or [], None
        for args in held:
            self._write(*args)

    def refresh_usage(self) -> dict[str, list[int]]:
        """The ledger's counts the insight pages show (every page is rendered with them by
        ``publish_insights``), for the manifest's ``usage``."""
        return usage_pages.shown_counts(self.usage, [i["id"] for i in self.insights])

    def counts(self) -> collections.Counter:
        """Pages per compiler label, the held runs included."""
        return self.compilers + collections.Counter(comp.compiler for _run, _digest, comp in self._held or [])

    def _apply(self, op: tuple) -> None:
        self._handed += 1
        if self._handed == self.HELPER_AFTER + 1 and isinstance(self._sink, pages.PageSink):
            try:
                helper = pages.HelperSink(*self._sink_args)
            except OSError:  # cannot start a process here: keep writing in this one
                pass
            else:
                self._sink.hand_held_to(helper)  # compilation pages wait for their trial lines
                self._record(self._sink)
                self._sink = helper
        self._sink.apply(op)

    def _record(self, sink) -> None:
        """A page writer's files into the publisher, and their words for grep's search files."""
        self.pub.record(sink.close())
        if sink.page_words is not None:
            if getattr(self.pub, "page_words", None) is None:
                self.pub.page_words = sink.page_words
            else:
                self.pub.page_words.merge(sink.page_words)

    def all_handed_on(self, trials: list, causes: dict | None = None) -> None:
        """No page is to come: the page writer gets the ``trials`` of each task its compilation
        pages set against each other (corpus/trial_pages.py ``trial_groups``) and the causes
        the successes met (corpus/cause_contrast.py ``notes``) and, in its
        process, writes those pages and the last ones (and seals its notes for the search
        files) while this one gathers the insights."""
        self._sink.apply(("trials", trials, causes or {}))
        if isinstance(self._sink, pages.HelperSink):
            self._sink.end()

    def close(self, ok: bool = True) -> None:
        """Wait until every page is written (raises PageWriteError), or stop at once."""
        if ok:
            self._record(self._sink)
            return
        self._sink.kill()
        if getattr(self.pub, "page_words", None) is not None:
            self.pub.page_words.discard()  # the search notes of pages no index will name

    def _carry_over(self, run: Run, digest: str) -> None:
        prev = self.reuse.entry(run, digest)
        step = self.ids.step_for(run.run_id)
        self.ids.keep_insights(prev["insights"])
        self.pub.keep(self.reuse.files[step])
        self.carried_steps.add(step)
        self.compilers[prev["compiler"]] += 1
        if isinstance(run, Carried):
            self.record_digests[run.run_id] = run.record_digest
        elif run.source.get("record_digest"):
            self.record_digests[run.run_id] = run.source["record_digest"]
        self.runs.append(prev)

    def __call__(self, run: Run, digest: str, comp) -> None:
        if comp is None:
            return
        if comp is REUSED:
            return self._carry_over(run, digest)
        if comp.compiler == "offline-fallback" and self._model_page(run.run_id) is not None:
            return self._keep_model_page(run)
        if self._held is not None:
            if comp.compiler != "llm" and run.run_id in self.ids.prev_runs:
                self._held.append((run, digest, comp))
                return
            if comp.compiler == "llm":
                self.release()
        self._write(run, digest, comp)

    def _model_page(self, run_id: str) -> dict | None:
        """The published entry of a run whose intact pages the model wrote, or None."""
        prev = getattr(self.reuse, "runs", {}).get(run_id)
        return prev if prev is not None and prev["compiler"] == "llm" else None  # intact, same build key

    def _keep_model_page(self, run: Run) -> None:
        """Carry the run's published LLM pages over unchanged. Its record digest stays the
        old one (or none), so the next build sees the changed content and asks the model."""
        prev = self._model_page(run.run_id)
        step = self.ids.step_for(run.run_id)
        self.ids.keep_insights(prev["insights"])  # its insight pages are gathered again with the others
        self.pub.keep(self.reuse.files[step])
        self.carried_steps.add(step)
        self.compilers[prev["compiler"]] += 1
        if run.run_id in getattr(self.reuse, "digests", {}):
            self.record_digests[run.run_id] = self.reuse.digests[run.run_id]
        self.runs.append(prev)
        self.waiting_for_model.append(run.run_id)

    def _write(self, run: Run, digest: str, comp) -> None:
        redact_compilation(comp, self.redactor)  # the model's answer, once more before any page
        if any(i.key is None for i in comp.insights):
            # a model's lessons: the run is grouped under the offline lessons' keys (the same
            # keys whichever compiler wrote the page), compiled beside the build when it could be
            from ..compilers.llm_offline import offline_lessons

            offline = offline_lessons(run)
            comp.insights, comp.patterns, comp.value_rules = offline.insights, offline.patterns, offline.value_rules
            comp.decisive = comp.decisive or offline.decisive
        step = self.ids.step_for(run.run_id)
        kind = {"task_type": run.task.task_type if not run.task.apps else None, "apps": run.task.apps or None}
        ins_ids = self.ids.insights_for(kind, [c.key for c in comp.insights])
        refs = [documents.InsightRef(i, c.title, layout.insight_doc(i)) for i, c in zip(ins_ids, comp.insights)]
        paths = pages.run_paths(run, step, refs)
        self.pub.claim(paths)
        if run.run_id not in self.ids.prev_runs:
            self.new_paths += paths
        entry = {
            "step": step, "run_id": run.run_id, "task_id": run.task.id,
            **({"request": key} if (key := applies.request_key(run)) else {}), **kind,
            "outcome": run.outcome.label, "steps": run.outcome.steps, "instruction": run.task.instruction,
            "title": comp.title, "compiler": comp.compiler, "content_hash": digest, "insights": ins_ids,
            "redactions": run.source.get("redactions") or None, **insight_layer.run_entry_fields(comp),
            **trial_contrast.entry_field(comp),
            **cannot_claims.entry_field(run, "idle|none" not in comp.patterns),
        }
        self._provisional_pages(entry, run.run_id not in self.ids.prev_runs)
        self._apply(("run", run, comp, step, refs))
        self.compilers[comp.compiler] += 1
        if run.source.get("record_digest"):
            self.record_digests[run.run_id] = run.source["record_digest"]
        self.runs.append(entry)

    def _provisional_pages(self, entry: dict, new_run: bool) -> None:
        """An insight id the corpus has no page for yet gets one from this run alone, before
        the run's pages that link it are written: a reader never meets a missing page. The
        page gathered from every run replaces it at the end (``publish_insights``)."""
        listed = entry.get("insights") or []
        if len(entry.get("lessons") or []) <= len(listed) and all(
                layout.insight_doc(i) in self._checked for i in listed):
            return  # every insight it links was seen already (most runs): nothing to gather
        for ins in insight_layer.gather([entry]):
            rel = layout.insight_doc(ins["id"])
            if rel in self._checked:
                continue
            self._checked.add(rel)
            # a page on disk (edited ones are noted as repaired) is a target already: rewritten at the end
            if self.pub.owns(rel) and (self.pub.verify_group([rel]) or (self.pub.root / rel).is_file()):
                continue
            self._provisional.add(rel)
            if new_run:
                self.new_paths.append(rel)
            self.pub.write(rel, documents.render_insight(ins, self.opts.mount_path, self.opts.templates).encode("utf-8"))

    def _unchanged_kinds(self, asks_model: bool) -> set[str]:
        """Task types whose insight entries are the published ones: no run of the type was
        added, compiled again or dropped. A task type's pages depend only on its own runs
        (its totals, the patterns they met, the trials of its tasks), so adding a run
        gathers only its own type again. Empty when that cannot be shown: no published
        entries to carry, a lesson without its id, a published entry missing, or a
        guideline the model has not written yet (it is asked again)."""
        if not self.prev_insights or not self.carried_steps:
            return set()
        changed = {insight_layer.kind_of(r) for r in self.runs if r["step"] not in self.carried_steps}
        changed |= {insight_layer.kind_of(r) for r in self.ids.prev_runs.values() if r["step"] not in self.carried_steps}
        kept = set()
        for r in self.runs:
            if len(r.get("insights") or []) < len(r.get("lessons") or []):
                return set()  # ids handed out in order of first appearance: gathered whole
            kind = insight_layer.kind_of(r)
            if kind in changed:
                continue
            for i in r["insights"]:
                entry = self.prev_insights.get(i)
                if entry is None or (asks_model and entry.get("guideline_by") != "llm"):
                    changed.add(kind)
                    break
            else:
                kept.add(kind)
        return kept - changed

    def _gather_insights(self, asks_model: bool) -> tuple[set[str], list[dict]]:
        from . import same_task_memo

        kept = self._unchanged_kinds(asks_model)
        published = self.pub.manifest.files.get("corpus.json")  # the corpus.json the kept counts must belong to
        self.tally = pattern_tally.load(self.pub.root, published[0] if published else None, self.carried_steps)
        self.tally.keep(kept)
        changed = [r for r in self.runs if insight_layer.kind_of(r) not in kept]
        if not changed:
            return kept, []
        memo = same_task_memo.load(self.pub.root)  # the last gather's trial comparisons, by what they read
        gathered = insight_layer.gather(changed, memo=memo, tally=self.tally)
        kinds = {insight_layer.kind_of(r) for r in self.runs}
        same_task_memo.save(self.pub.root, memo, kinds, kinds - kept)
        return kept, gathered

    def save_tally(self) -> None:
        """Keep this command's pattern counts beside the corpus.json it has just published."""
        if self.tally is not None:
            published = self.pub.manifest.files.get("corpus.json")
            pattern_tally.save(self.pub.root, self.tally, published[0] if published else None)

    def gather_insights(self) -> None:
        """Gather the insight layer (offline) now that every run has its entry, while the page
        writer process is still writing the last runs' pages: this process would otherwise
        wait for it with nothing to do. ``publish_insights`` then writes what was gathered."""
        self._gathered = self._gather_insights(asks_model=False)

    async def merge_insights(self, compiler) -> None:
        """Gather the insight layer now that every run has its entry, and have the model merge
        each insight's guideline on the running loop: the calls go out while the page writer
        is still catching up, and on the HTTP client the runs were compiled with.
        ``publish_insights`` then writes what was gathered here."""
        from ..compilers.insight_merge import keep_unchanged, merge_all

        self._gathered = self._gather_insights(asks_model=True)
        todo = keep_unchanged(self._gathered[1], self.prev_insights, self.carried_steps)
        if todo:
            await merge_all(compiler, todo, self.runs, insight_layer.members_text(todo, self.runs))

    def publish_insights(self, compiler=None) -> None:
        """Gather the insight layer from every run's entry (unless ``merge_insights`` did) and
        write its pages (those whose bytes are unchanged are left alone); insights no run links
        any more are not written, so the publisher removes their pages. With a model, each
        insight's guideline is the model's merge of its sources (compilers/insight_merge.py)."""
        if self._chosen is None:
            self.choose_insights(compiler)
        self._chosen = None
        self._write_insight_pages()

    def choose_insights(self, compiler=None) -> None:
        """``publish_insights`` up to its pages: the insight entries corpus.json and the indexes
        list (``insights``, ``carried_insights``), with nothing written, so the build can lay out
        its indexes while the page writer still writes."""
        asks_model = compiler is not None and compiler.name == "llm"
        if self._gathered is not None:
            (kept, gathered), self._gathered = self._gathered, None
        else:
            kept, gathered = self._gather_insights(asks_model)
            if asks_model and gathered:
                from ..compilers.insight_merge import keep_unchanged, merge_guidelines
        
                todo = keep_unchanged(gathered, self.prev_insights, self.carried_steps)
                if todo:
                    merge_guidelines(compiler, todo, self.runs, insight_layer.members_text(todo, self.runs))
        from . import other_types

        self.insights = other_types.link(sorted(gathered + [self.prev_insights[i] for i in sorted(
            {i for r in self.runs if insight_layer.kind_of(r) in kept for i in r["insights"]})],
            key=lambda i: layout.id_number(i["id"])))
        self.carried_insights = {i["id"] for i in self.insights if self.prev_insights.get(i["id"]) == i}
        self._chosen = kept

    def _write_insight_pages(self) -> None:
        titles = {i["id"]: i["title"] for i in self.insights}
        mount, templates = self.opts.mount_path, self.opts.templates
        shown_before = self.pub.manifest.data.get("usage")  # the ledger's counts the pages on disk show
        for entry in self.insights:
            rel = layout.insight_doc(entry["id"])
            usage = self.usage.get(entry["id"], (0, 0))
            if rel not in self._checked and self.pub.owns(rel):
                # a page found missing or edited is reported as repaired (and written below)
                if self.pub.verify_group([rel]) and same_page(self.prev_insights, entry, usage, shown_before, titles):
                    self.pub.keep([rel])  # what it shows did not change: not rendered again
                    continue
            text = documents.render_insight(entry, mount, templates, usage, titles)
            self.pub.write(rel, text.encode("utf-8"))
