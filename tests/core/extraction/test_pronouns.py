"""First and second person become names, so a fact stands on its own and reads correctly."""

import pytest

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


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("I live in Lisbon.", "Bob lives in Lisbon."),
        ("I love hiking.", "Bob loves hiking."),
        ("I am a nurse.", "Bob is a nurse."),
        ("I have two cats.", "Bob has two cats."),
        ("I do pilates on Sundays.", "Bob does pilates on Sundays."),
        ("I was born in Accra.", "Bob was born in Accra."),
        ("I can play the cello.", "Bob can play the cello."),
        ("I would rather stay home.", "Bob would rather stay home."),
        ("I don't drink coffee.", "Bob doesn't drink coffee."),
        ("I haven't been to Peru.", "Bob hasn't been to Peru."),
        ("I usually go swimming.", "Bob usually goes swimming."),
        ("I really enjoy my job.", "Bob really enjoys Bob's job."),
        ("I kind of want a dog.", "Bob kind of wants a dog."),
        ("I watch cooking shows.", "Bob watches cooking shows."),
        ("I try to run daily.", "Bob tries to run daily."),
        ("I need a new bike.", "Bob needs a new bike."),
        ("I first met Ola in 2019.", "Bob first met Ola in 2019."),
        ("I went to Oslo and bought a sweater.", "Bob went to Oslo and bought a sweater."),
        ("I guess I'll stay.", "Bob guesses Bob will stay."),
        ("I'm from Chile and I've got a brother.", "Bob is from Chile and Bob has got a brother."),
        ("That is what I miss most.", "That is what Bob misses most."),
    ],
)
def test_the_verb_agrees_with_the_name_that_replaced_i(said: str, stored: str) -> None:
    assert first_person(said, "Bob") == stored


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("I taught myself to knit.", "Bob taught themself to knit."),
        ("I made it by myself.", "Bob made it by themself."),
        ("My sister lives nearby.", "Bob's sister lives nearby."),
        ("The blue mug is mine.", "The blue mug is Bob's."),
        ("My partner and I have a boat.", "Bob's partner and Bob have a boat."),
        ("Jo and I love jazz.", "Jo and Bob love jazz."),
        ("When my wife and I travel, we fly.", "When Bob's wife and Bob travel, we fly."),
        ("Both my wife and I love jazz.", "Both Bob's wife and Bob love jazz."),
    ],
)
def test_reflexives_possessives_and_compound_subjects(said: str, stored: str) -> None:
    assert first_person(said, "Bob") == stored


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("I'm a vegetarian and I live in Lisbon.", "Bob is a vegetarian and lives in Lisbon."),
        ("I cook and I clean and I sing.", "Bob cooks and cleans and sings."),
        ("I'm tired and I'm hungry.", "Bob is tired and is hungry."),
        ("I like tea, and I really love coffee.", "Bob likes tea, and really loves coffee."),
        # The name stays where "I" joins another subject, or the sentence opened otherwise.
        ("I know you and I are friends.", "Bob knows you and Bob are friends."),
        ("I think he and I agree.", "Bob thinks he and Bob agree."),
        ("I think my wife and I are happy.", "Bob thinks Bob's wife and Bob are happy."),
        ("I met Sam and I left.", "Bob met Sam and Bob left."),
        ("Yesterday I ran and I swam.", "Yesterday Bob ran and Bob swam."),
        ("I went home and I.", "Bob went home and Bob."),
        # "my wife", "the dog", "you" after a verb are its object, not half a subject.
        (
            "I love my wife and I think she loves me.",
            "Bob loves Bob's wife and thinks she loves Bob.",
        ),
        ("I saw the dog and I ran.", "Bob saw the dog and ran."),
        ("I love you and I miss you.", "Bob loves you and misses you."),
        (
            "Sometimes I hug my kids and I feel calm.",
            "Sometimes Bob hugs Bob's kids and Bob feels calm.",
        ),
        (
            "I relax when work is calm and I'm rested.",
            "Bob relaxes when work is calm and Bob is rested.",
        ),
    ],
)
def test_a_sentence_that_opens_with_i_names_the_speaker_once(said: str, stored: str) -> None:
    assert first_person(said, "Bob") == stored


def test_curly_apostrophes_and_capitalised_i_only() -> None:
    assert first_person("I’ve known them for years", "Jon") == "Jon has known them for years"
    assert first_person("the i-th item", "Jon") == "the i-th item"


def test_second_person_becomes_the_addressee() -> None:
    assert second_person("You'd be a great counselor! Your empathy helps.", "Caroline") == (
        "Caroline would be a great counselor! Caroline's empathy helps."
    )


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("You look happy.", "Ana looks happy."),
        ("You are brave.", "Ana is brave."),
        ("You were right.", "Ana was right."),
        ("You don't eat fish.", "Ana doesn't eat fish."),
        ("I think you need a holiday.", "I think Ana needs a holiday."),
        ("If you go, take your scarf.", "If Ana goes, take Ana's scarf."),
        ("I told you everything.", "I told Ana everything."),
        ("I saw you last week.", "I saw Ana last week."),
        ("You taught yourself.", "Ana taught themself."),
        ("You should rest.", "Ana should rest."),
        ("Sounds like you know the trail well.", "Sounds like Ana knows the trail well."),
        ("Call me anytime you need a ride.", "Call me anytime Ana needs a ride."),
    ],
)
def test_the_verb_agrees_with_the_addressee_only_where_you_is_the_subject(
    said: str, stored: str
) -> None:
    assert second_person(said, "Ana") == stored
