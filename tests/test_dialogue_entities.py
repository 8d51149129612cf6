"""Entity pages a person would keep, on a dialogue written for it: people, pets, places and things
- never a greeting, an interjection or a pronoun ("Bye Joanna", "Woah Nate", "I’ll"), and a
nickname used to address a participant ("Jo") merged with them."""

from pathlib import Path

from wikitrace.dialogue.build import compile_sample
from wikitrace.dialogue.load import load_inputs

FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "greetings-and-names.json"


def _memory():
    return compile_sample(load_inputs([FIXTURE])[0])


def test_entities_are_names_not_greetings_interjections_or_pronouns():
    mem = _memory()
    names = {e for s in mem["snapshots"] for e in s["entities"]}
    assert {"Max", "Pixel", "Portland"} <= names
    for junk in ("Bye Joanna", "Bye Nate", "Woah Nate", "Woah Joanna", "Woah", "Bye", "I’ll", "I'll",
                 "Thanks Nate", "Congrats", "Sorry", "Hey Jo", "Hi Nate"):
        assert junk not in names, junk
    pages = {p["title"] for p in mem["pages"] if p["type"] == "entity"}
    assert not any(t.split(" - ")[0].split(":")[0] in ("Bye Joanna", "Woah Nate", "Woah", "I’ll", "Jo", "Congrats")
                   for t in pages), pages


def test_a_two_letter_nickname_is_its_participant():
    mem = _memory()
    assert mem["stats"]["extraction"]["aliases"].get("Jo") == "Joanna"
    names = {e for s in mem["snapshots"] for e in s["entities"]}
    assert "Jo" not in names
