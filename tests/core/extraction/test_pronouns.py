"""First and second person become names, so a fact stands on its own."""

from nmafc.core.extraction.pronouns import first_person, second_person


def test_first_person_becomes_the_speaker() -> None:
    assert (
        first_person("I'm keen on counseling - my mentor said I'd be good at it.", "Caroline")
        == "Caroline is keen on counseling - Caroline's mentor said Caroline would be good at it."
    )
    assert (
        first_person("They gave me a gift; it's mine.", "Ana")
        == "They gave Ana a gift; it's Ana's."
    )


def test_curly_apostrophes_and_capitalised_i_only() -> None:
    assert first_person("I’ve known them for years", "Jon") == "Jon has known them for years"
    assert first_person("the i-th item", "Jon") == "the i-th item"


def test_second_person_becomes_the_addressee() -> None:
    assert second_person("You'd be a great counselor! Your empathy helps.", "Caroline") == (
        "Caroline would be a great counselor! Caroline's empathy helps."
    )
