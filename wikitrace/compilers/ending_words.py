"""How a run's last free-text call settled it, in words, by where its text came from (the source
part of a ``procedure|<call>:<source>`` key): the procedure lesson's title and step,
and the contrast sentence that counts the runs which ended that way. Kept small and free of
imports so the insight layer's sentences can name the exact set of runs a key counts."""

from __future__ import annotations

# source -> (title phrase, step)
ENDING = {
    "label": ("giving the verdict", "giving the verdict the look-ups support, once each thing the question or "
              "claim names was looked up and what it asks was read off each one's page"),
    "looked-up": ("giving a value a look-up returned", "giving the value a look-up returned, in the words it used"),
    # counted across runs only: a success ending so teaches no procedure (success_insights.py), since its log
    # shows no way to the answer another run could copy (a guess, or what the model knew)
    "own": ("giving an answer no look-up held word for word", "giving an answer no look-up held word for word"),
    # words the question itself holds (a date it states, an option it names outside a "which of" question)
    # that no look-up held as written
    "task": ("giving words only the question held, no look-up word for word", "giving words the question itself "
             "holds only once the look-ups support it"),
    # one of the things a question asking which of them names ("Which of A and B ...?"), as it spells it
    "option": ("giving one of the options the question asks between",
               "giving the option the look-ups favour, spelled as the question spells it, once each option it "
               "names was looked up and their pages compared on what it asks"),
    "shown": ("sending text a look-up's answer showed", "sending text a look-up's answer showed, in its words"),
    "unshown": ("sending text no look-up's answer showed", "sending text no look-up's answer showed word for word"),
}
# a title says what to do (a success whose answer no look-up held teaches no procedure: success_insights.py)
TITLE = {"task": "giving words the question itself holds, once the look-ups support it",
         "option": "naming the option the look-ups favour, as the question spells it"}

# a coding run's ending (``file-<place>[+tested]``): where it found the file it changed
# (insight_parts.edit_place), and whether a command that failed before its last edit passed after it
FILE_PLACE = {"task": "a file the task names", "shown": "a file an earlier call's answer showed",
              "new": "a file neither the task nor an earlier answer named"}
TESTED = "+tested"


def ended_with(pattern: str) -> str | None:
    """Which runs a ``procedure|`` key with a free-text source counts, as a relative clause: the
    call and where its text came from. None for other keys."""
    fields = pattern.split("|")
    if len(fields) != 2 or fields[0] != "procedure" or ":" not in fields[1]:
        return None
    call, source = fields[1].rsplit(":", 1)
    place = source.removeprefix("file-").removesuffix(TESTED)
    if source.startswith("file-") and place in FILE_PLACE:
        tested = (", and a command that had failed before its last edit passed after it" if source.endswith(TESTED)
                  else ", with no command that had failed before its last edit passing after it")
        return f"that ended with {call} after changing {FILE_PLACE[place]}{tested}"
    if source not in ENDING:
        return None
    return f"that ended with {call}, {ENDING[source][0]}"
