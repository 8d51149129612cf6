"""General rules that replace dataset word lists: nicknames of participants, query aliases."""

from wikitrace.dialogue.text import alias_map


def test_participant_nicknames_merge_but_third_parties_stay_apart():
    names = ["Mel", "Caro", "Carol", "Ann", "Anna", "Jo", "Maxwell", "Max"]
    aliases = alias_map(names, ["Caroline Smith", "Melanie"])
    assert aliases["Mel"] == "Melanie"
    assert aliases["Caro"] == "Caroline Smith" and aliases["Carol"] == "Caroline Smith"
    # too short, or only the prefix of another third party's name: not merged
    assert "Jo" not in aliases and "Ann" not in aliases and "Max" not in aliases


def test_ambiguous_prefix_is_not_an_alias():
    # "Sam" starts both participants' names: it could be either, so it stays its own name
    assert "Sam" not in alias_map(["Sam"], ["Samantha", "Samuel"])
