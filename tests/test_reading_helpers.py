"""The offline compiler's small readers give the answers their plain definitions give.

``_occurs`` tests a value as a whole word by hand before it pays to compile a regex, and
``leaves`` walks nested JSON into a list: every lesson that quotes a value or follows an
argument rests on them, so both are held to the definitions they replaced.
"""

import re

from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from wikitrace.compilers.reading import _head_word, _occurs, leaves


def _occurs_by_regex(value: str, low: str) -> bool:
    if not value:
        return True
    return re.search(r"(?<![\w.])" + re.escape(value.lower()) + r"(?![\w])", low) is not None


# letters, digits and the characters the word test turns on, a few non-ASCII ones included
_CHARS = st.sampled_from(list("ab1_. -/:é٣ßİx"))


@settings(max_examples=examples(2000, everyday=300), deadline=None)
@given(value=st.text(_CHARS, max_size=3), text=st.text(_CHARS, max_size=40))
def test_occurs_is_the_whole_word_regex(value, text):
    low = text.lower()
    assert _occurs(value, low) == _occurs_by_regex(value, low)


def test_occurs_past_many_places_inside_words():
    """A value met inside other words more often than the places tested by hand is still found
    (or not) as the regex finds it."""
    low = "xa1 " * 20 + "a1."
    assert _occurs("a1", low) and _occurs_by_regex("a1", low)
    assert not _occurs("a1", "xa1 " * 20 + ".a1")
    assert _occurs("hat123", "booked hat123, then hat1234")
    assert not _occurs("hat12", "hat123 and xhat12 and hat12_b and res.hat12")


def _leaves_by_generators(value, path=""):
    if isinstance(value, dict):
        for k in value:
            yield from _leaves_by_generators(value[k], f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves_by_generators(v, f"{path}[{i}]")
    else:
        yield path, value


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
                     max_leaves=20)


@settings(max_examples=examples(500, everyday=100), deadline=None)
@given(value=_JSON)
def test_leaves_match_the_recursive_definition(value):
    assert leaves(value) == list(_leaves_by_generators(value))
    assert leaves(value, "args") == list(_leaves_by_generators(value, "args"))


def test_leaves_of_a_booking():
    args = {"user_id": "mia_1", "passengers": [{"first_name": "Mia", "dob": None}], "flights": [], "n": {1: 2}}
    assert leaves(args) == [("user_id", "mia_1"), ("passengers[0].first_name", "Mia"), ("passengers[0].dob", None),
                            ("n.1", 2)]


def test_head_word():
    assert _head_word("  Get_User") == "get"
    assert _head_word("searchFlights") == "searchflights"
    assert _head_word("ls -la /tmp") == "ls"
    assert _head_word("") == "" and _head_word("1abc") == ""


# keys as JSON answers have them, and the ones that make path strings ambiguous
_KEYS = st.sampled_from(["origin", "flight_number", "a", "x1", "", "a.b", "c[0]", "d]", "[", "é"])
_ANSWER = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["JFK", "", "HAT001"]),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
                       max_leaves=25)


@settings(max_examples=examples(1500, everyday=200), deadline=None)
@given(data=_ANSWER)
def test_fields_in_one_walk_are_those_of_the_path_strings(data):
    """The one-walk reading of an answer's fields gives the tuples the path strings define
    (or declines, for keys the path strings cannot tell apart)."""
    import json

    from wikitrace.compilers.picked_values import _fields_at_depth
    from wikitrace.compilers.json_fields import fields_at_depth

    text = json.dumps(data)
    if not text.startswith(("{", "[")):
        return
    walked = fields_at_depth(json.loads(text))
    if walked is None:
        assert any(k == "" or any(c in k for c in ".[]") for k in _keys(data))
    else:
        assert walked == _fields_at_depth(text)


def _keys(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def test_fields_of_a_reservation_listing():
    from wikitrace.compilers.json_fields import fields_at_depth

    answer = {"reservation_id": "R1", "origin": "JFK",
              "flights": [{"origin": "JFK", "flight_number": "HAT001"}, {"origin": "LAX", "flight_number": "HAT002"}],
              "tags": [["x"]]}
    assert fields_at_depth(answer) == [
        ("reservation_id", 0, "R1", "reservation_id"), ("origin", 0, "JFK", "origin"),
        ("origin", 2, "JFK", "flights[0]"), ("flight_number", 2, "HAT001", "flights[0]"),
        ("origin", 2, "LAX", "flights[1]"), ("flight_number", 2, "HAT002", "flights[1]"),
        ("0]", 2, "x", "tags[0]")]
    assert fields_at_depth({"a.b": 1}) is None and fields_at_depth(3) == [("", 0, 3, "")]


@settings(max_examples=examples(800, everyday=150), deadline=None)
@given(data=_ANSWER)
def test_answer_index_is_the_scan_it_replaced(data):
    """What picked() looks up per value (the places holding it, each place's listing, the
    names of the records holding it) is what scanning every field for it gave."""
    import json

    from wikitrace.compilers.arguments import _as_text
    from wikitrace.compilers.picked_values import _fields_at_depth, _fields_index

    text = json.dumps(data)
    fields = _fields_at_depth(text)
    index = _fields_index(text)
    for value in {_as_text(v) for _k, _d, v, _h in fields} | {"absent"}:
        holding = [(k, d, home) for k, d, v, home in fields if _as_text(v) == value]
        assert index.holding.get(value, []) == holding
        listings = {(k, d): list(dict.fromkeys(_as_text(v) for f, e, v, _h in fields
                                               if (f, e) == (k, d) and v not in (None, "")))
                    for k, d, _h in holding}
        assert {key: index.listing(*key) for key in listings} == listings
        homes = {h for _k, _d, h in holding}
        scanned = sorted(v for _k, _d, v, h in fields if h in homes and isinstance(v, str) and len(v) >= 3)
        assert sorted(v for h in homes for v in index.names(h)) == scanned


def test_where_a_free_text_query_took_its_words():
    """A query's words come from the task, from an earlier answer (one with an error too: its
    text, such as a list of similar names, was read), or from neither; an answer counts only
    for the queries after it."""
    from wikitrace.compilers.reading import read_run
    from wikitrace.compilers.run_patterns import decisions_of
    from wikitrace.runs.model import Outcome, Run, Task, Turn

    def call(n, args, result, error=False):
        return Turn(turn=n, type="function_call", role="assistant", name="Search", arguments=args, result=result,
                    is_error=error)

    turns = [Turn(turn=0, type="message", role="user", content="Who directed Wallace?"),
             call(1, "Wallace", "Wallace is a film by Nick Park."),
             call(2, "Nick Park", "Nick Park is an animator. Error: Gromit page missing", error=True),
             call(3, "Gromit", "Gromit is a dog."),
             call(4, "Nick Park studio", "Aardman."),
             call(5, "Wallace Gromit", "A duo.")]
    run = Run(run_id="r", task=Task(id="t", instruction="Who directed Wallace?"), turns=turns,
              outcome=Outcome(success=True, steps=5))
    found = {k for k in decisions_of(read_run(run)) if k.startswith("query|")}
    # 1: task words; 2: shown by 1; 3: shown by the failed answer 2; 4: "studio" nowhere; 5: shown by 3
    assert found == {"query|Search|task", "query|Search|shown", "query|Search|own"}
    per_call = []
    for k in range(1, 6):
        part = Run(run_id="r", task=run.task, turns=turns[:k + 1], outcome=Outcome(success=True, steps=k))
        before = {x for x in decisions_of(read_run(part)) if x.startswith("query|")}
        per_call.append(before)
    assert per_call[0] == {"query|Search|task"}
    assert per_call[1] == {"query|Search|task", "query|Search|shown"}
    assert per_call[2] == {"query|Search|task", "query|Search|shown"}
    assert per_call[3] == {"query|Search|task", "query|Search|shown", "query|Search|own"}


def test_words_a_retry_s_reflections_gave_are_task_text_not_the_run_s_own():
    """A Reflexion retry starts from the question and its reflections on earlier trials, in one
    message: an answer a reflection names ("... when in fact it was Tybalt") was given to the run,
    and a page saying no task text held it was false. It is told apart from an answer in the
    statement's own words: the rest of what it was given, not the statement."""
    from wikitrace.compilers.reading import read_run
    from wikitrace.compilers.run_patterns import decisions_of
    from wikitrace.runs.model import Outcome, Run, Task, Turn

    question = "Which character does Benvolio slay?"
    prompt = question + "\nReflections:\n- I assumed Benvolio was slain, when in fact it was Tybalt."
    turns = [Turn(turn=0, type="message", role="user", content=prompt),
             Turn(turn=1, type="function_call", role="assistant", name="Search", arguments="Benvolio",
                  result="Benvolio is a character in Romeo and Juliet."),
             Turn(turn=2, type="function_call", role="assistant", name="Finish", arguments="Tybalt", result="")]
    run = Run(run_id="r", task=Task(id="t", instruction=question), turns=turns, outcome=Outcome(success=True, steps=2))
    said = {k for k in decisions_of(read_run(run)) if k.startswith("said|")}
    assert said == {"said|Finish|given"}, said
    own_words = turns[:2] + [Turn(turn=2, type="function_call", role="assistant", name="Finish", arguments="Benvolio",
                                  result="")]
    run = Run(run_id="r", task=Task(id="t", instruction=question), turns=own_words,
              outcome=Outcome(success=True, steps=2))
    assert {k for k in decisions_of(read_run(run)) if k.startswith("said|")} == {"said|Finish|task"}
    later = [Turn(turn=0, type="message", role="user", content=question), turns[1],
             Turn(turn=2, type="message", role="user", content="Maybe Tybalt?"),
             Turn(turn=3, type="function_call", role="assistant", name="Finish", arguments="Tybalt", result="")]
    run = Run(run_id="r", task=Task(id="t", instruction=question), turns=later,
              outcome=Outcome(success=True, steps=2))
    # only the messages before the first call are the prompt: a later message is no task text
    assert {k for k in decisions_of(read_run(run)) if k.startswith("said|")} == {"said|Finish|own"}
