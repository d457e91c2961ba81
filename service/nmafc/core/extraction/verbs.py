"""Third-person agreement for the verb after a name that replaced "I" or "you".

Hand rules, no tagger: a short list of irregular and modal forms, the past tense left as
it is (regular "-ed" and the common irregular pasts), and the spelling rules of the third
person singular (go → goes, try → tries, watch → watches, love → loves). A word that is not
a verb (a preposition, a pronoun, a determiner) comes back unchanged.
"""

from __future__ import annotations

_IRREGULAR = {
    "am": "is", "are": "is", "were": "was", "have": "has", "do": "does", "be": "is",
    "aren't": "isn't", "weren't": "wasn't", "haven't": "hasn't", "don't": "doesn't",
    "ain't": "isn't",
}  # fmt: skip
_MODALS_AND_AGREED = frozenset(
    """can could will would shall should may might must ought cannot can't couldn't won't
    wouldn't shan't shouldn't mightn't mustn't didn't wasn't isn't doesn't hasn't hadn't
    is was has had did does gotta gonna wanna used""".split()
)
IRREGULAR_PASTS = frozenset(
    """went got saw made took came gave found thought told said knew felt left kept met ran
    began bought brought caught taught fought sought drove wrote rode spoke broke chose woke
    wore swore tore won sang swam drank sank rang forgot ate fell held heard lost meant paid
    sent spent built lent slept stood understood sat spun hung stuck struck dug shot lit led
    fed fled bled bred sped slid hid bit became overcame flew grew threw drew blew shook
    forgave mistook undertook withdrew bound bent dealt dreamt learnt burnt spelt knelt leapt
    crept swept wept sold shone froze stole rose arose dove strove""".split()
)
# Present and past alike ("I read", "I put"): leaving them is right either way.
_PRESENT_OR_PAST = frozenset(
    "put set let cut hit hurt read quit cost spread shut bet split burst cast fit".split()
)
# Not verbs: what can follow a subject without being its verb.
_NOT_VERBS = frozenset(
    """and or nor but so if to too either neither a an the this that these those my your his
    her its our their me myself yourself him them us it you i we they he she who which what
    when where why how all both each every everything something nothing anything everyone
    someone anyone no not at in on of for with from by about as than guys folks""".split()
)
_UNCHANGED = _MODALS_AND_AGREED | IRREGULAR_PASTS | _PRESENT_OR_PAST | _NOT_VERBS
# Base forms that end in "-eed" (every other "-ed" word is taken for a past form).
_EED_BASE = frozenset("need feed seed bleed breed speed proceed succeed exceed heed weed".split())
_SIBILANT_ENDINGS = ("s", "sh", "ch", "x", "z", "o")


def agree(verb: str) -> str:
    """``verb`` in the third person singular present, or unchanged if it is not a base form."""
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _match_case(_IRREGULAR[lower], verb)
    if lower in _UNCHANGED or not lower.isalpha() or verb[0].isupper() or len(lower) < 2:
        return verb
    if lower.endswith("ed") and lower not in _EED_BASE:
        return verb
    if lower.endswith("s") and not lower.endswith("ss"):
        return verb  # a plural noun or a verb that already agrees ("you guys", "she knows")
    if lower.endswith(_SIBILANT_ENDINGS):
        return verb + "es"
    if lower.endswith("y") and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _match_case(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word
