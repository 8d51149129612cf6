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


def test_topic_pages_are_named_by_content_words_only():
    from wikitrace.dialogue.text import hashed_embedding
    from wikitrace.dialogue.wiki import TrajInfo, plan_pages

    infos = []
    for i in range(12):
        kws = ["might", "ever", "able", "making"] if i < 3 else [f"w{i}"]
        if 3 <= i < 6:
            kws = ["kiln", "might", "ever", "able", "making"]
        # threads of no participant (a topic page is not suppressed by a participant's pages)
        infos.append(TrajInfo(id=f"traj-{i:04d}", entities=[], participants=[], families=[], keywords=kws,
                              exact_terms=[], counts=[], emb=hashed_embedding(" ".join(kws))))
    pages, _ = plan_pages(infos)
    topics = [p.keywords[0] for p in pages if p.type == "topic" and not p.rescue]
    assert topics == ["kiln"]


def test_a_possessive_is_the_same_name_not_a_second_candidate():
    assert alias_map(["Mel", "Melanie's", "Melanie"], ["Caroline", "Melanie"])["Mel"] == "Melanie"
