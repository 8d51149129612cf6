"""What an insight's contrast with successful runs says, in words: the sentence on its page and the
figures on the index. Kept apart from the gathering (corpus/insights.py) so a cold ``prompt``,
which shows these sentences, does not import the whole insight layer."""

from __future__ import annotations

from ..compilers.ending_words import ended_with

# patterns that are trouble a run meets: for these a page lists what successful runs that met it did
TROUBLE = {"error", "loop", "unseen", "rule", "idle", "went-through", "hand-off", "stopped", "option", "missed",
           "unlooked", "untold"}


# what meeting a lesson's pattern means, by the pattern's kind (a sentence counts those runs)
MET = {
    "error": "that met this error", "loop": "that repeated a call with the same answer",
    "unseen": "that made a change with values no look-up or user message held",
    "rule": "that broke this rule", "went-through": "whose change with this tool went through",
    "hand-off": "that handed off with this tool", "procedure": "whose last change that went through was this call",
    "idle|lookups": "that settled nothing (they made look-ups, and any change or answer they sent failed)",
    "idle|none": "that answered without a tool call",
    "unchanged|none": "that looked nothing up and got no change through (a hand-off the task did not expect aside)",
    "unchanged|lookups": "that looked something up and got no change through (a hand-off the task did not expect aside)",
    "stopped": "that the harness stopped before any call settled the task",
    "stopped|changed": "that the harness stopped after a change of theirs went through",
    "verdict": "whose verdict's reasoning quoted words a look-up returned",
    "missed": "that left a change the task expected unmade",
    "unlooked": "that never looked up a listed item the task expected a change to",
    "untold": "that never told the user a value the task expected",
    "option": "that chose a listed option without the task's words while another held them, or none of such a choice's options",
}


# what a rule's count leaves out (compilers/consent.py): a change whose log does not settle it, such as a
# confirmation rule's change right after the user's reply in their own words, which may agree
IN_DOUBT = ("(counting the changes the log plainly shows against it, a request that names what the change acts on "
            "among them; one the log leaves in doubt, such as a change made after the user answered in their own "
            "words without naming it, is not counted)")


def met_words(pattern: str, tool: str | None = None) -> str:
    """What meeting ``pattern`` means, as a relative clause naming exactly the runs it counts
    ("this tool" read as ``tool`` when given)."""
    what = ended_with(pattern) or MET.get(pattern, MET.get(pattern.split("|", 1)[0], "that met it"))
    return what.replace("this tool", tool) if tool else what


def _of_tasks(n: int, t: int, outcome: str, repeats: bool) -> str:
    """"3 failed of 3 tasks", "2 successful of 1 task", "0 successful": a count and its own tasks,
    when ``repeats`` (some count holds several trials of a task); else the count alone."""
    return f"{n} {outcome}" + (f" of {t} task{'s' if t != 1 else ''}" if n and repeats else "")


def contrast_sentence(entry: dict) -> str:
    """What the contrast says on the insight's own page: how many runs of its task type met
    the pattern, in each outcome, and the verdict in words. The task type's totals and the
    test's p-value change with every added run, so they are shown on the index instead
    (``index_note``): a page changes only when its own counts, sources or verdict do."""
    c = entry.get("contrast")
    if c is None:
        return ("Drawn from how failed runs ended; there is no pattern a successful run could meet, so it is "
                "not contrasted with successes.")
    side = c["pattern"].split("|", 1)[0]
    tasks = c.get("tasks_met")
    tasks = tasks or {"success": c["success_met"], "failure": c["failed_met"]}
    said = met_words(c["pattern"]) + (f" {IN_DOUBT}" if side == "rule" else "")
    # tasks are said when trials of one task repeat it on either side, and then of both sides
    repeats = c["failed_met"] > tasks["failure"] or c["success_met"] > tasks["success"]
    met = (f"Runs of this task type {said}: "
           # each count with its own tasks: "3 failed, 2 successful (all trials of 1 task)" read as said of both
           f"{_of_tasks(c['failed_met'], tasks['failure'], 'failed', repeats)}, "
           f"{_of_tasks(c['success_met'], tasks['success'], 'successful', repeats)}. ")
    v = c["verdict"]
    failed_here = (entry.get("counts") or {}).get("failure", 0) > 0
    if v == "no-success":
        return met + "With no successful run of this task type to compare with, it is not named a cause."
    if v == "no-failure":
        return met + "With no failed run of this task type to compare with, it is not named a cause."
    if v == "failure" and side == "idle" and not c["success_met"]:
        # no success ended without settling: here ending so is failing, not a cause the counts found
        return met + ("No successful run of this task type ended this way, so ending so is failing here rather "
                      "than a cause the counts found; what the page says to do is how to reach an end that settles "
                      "the task.")
    if v == "failure" and c.get("as_expected"):  # a change made as the task expected failed no run by going through
        return met + (f"Runs that met it failed more often than the runs that did not, but in {c['as_expected']} of "
                      f"the {c['failed_met']} failed runs every {c['pattern'].split('|', 1)[1]} call that went through "
                      "was the one the task expected: the change going through is not named a cause of failure.")
    if v == "failure" and c.get("asked_for") and 2 * c["asked_for"] > c["failed_met"]:
        return met + (f"Runs that met it failed more often than the runs that did not, but in {c['asked_for']} of the "
                      f"{c['failed_met']} failed runs the task expected a {c['pattern'].split('|', 1)[1]} call too: "
                      "making the change was the task's own ask, so its going through is not named a cause of "
                      "failure; how it was made may be.")
    if v == "failure" and side in TROUBLE:
        return met + ("Runs that met it failed more often than the runs that did not, so it is named a likely "
                      "cause of failure.")
    if v == "failure":  # a way to settle the task that failed runs took more often: not enough by itself
        return met + ("Failed runs took this way more often than successful ones, so it is not enough by itself: "
                      "what the successful runs did before it matters.")
    if v == "success":
        return met + ("Runs that met it succeeded more often than the runs that did not"
                      + ("." if side not in TROUBLE else ", so meeting it is not by itself a cause of failure; what "
                         "the failed runs here did where they met it is on their pages." if failed_here else
                         ", so it is not a cause of failure."))
    # not significant: either both outcomes met it alike, or too few runs to tell ("1 failed,
    # 0 successful" is no proof that it separates them, nor that it does not)
    return met + ("The runs so far do not show that it separates failed from successful runs, so it is not "
                  "named a cause" + (" (successful runs met it too)." if c["success_met"] and side in TROUBLE else "."))


def index_note(entry: dict) -> str:
    """The contrast's figures that depend on the whole task type (its totals, the p-value),
    for the insight index, which changes with every run anyway."""
    c = entry.get("contrast")
    if c is None:
        return "not contrasted"
    figures = f"met in {c['failed_met']} of {c['failed']} failed, {c['success_met']} of {c['success']} successful"
    if c.get("p") is not None:
        figures += f"; one-sided Fisher p = {c['p']:.2g}"
    side = c["pattern"].split("|", 1)[0]
    verdict = {"failure": "no successful run ended so" if side == "idle" and not c["success_met"] else
               "a likely cause of failure" if side in TROUBLE and not c.get("as_expected")
               and not 2 * c.get("asked_for", 0) > c["failed_met"]
               else "taken more often by failed runs",
               "success": "met more often by successful runs", "none": "not shown to separate the outcomes"}
    return figures + (f"; {verdict[c['verdict']]}" if c["verdict"] in verdict else "")
