"""What a sentence does in the conversation: states something, asks, or only keeps it going.

A question ("Do you only play old games?") is the speaker's turn, not a fact: the turn is
stored verbatim, but rewriting its "you" would state something nobody said. A statement
wrapped in a question ("Did I tell you I adopted a cat?") is unwrapped; a tag question
("I love it here, you know?") loses its tag. Discourse fillers at a sentence's start
("Actually, ...", "Well, ...", "Oh ...") are dropped from the fact. An assistant's
pleasantries, offers and remarks about itself ("Sure, here you go", "Happy to help", "Let
me check") say nothing about the user or the world.
"""

from __future__ import annotations

import re

# Sentence adverbs and interjections: dropped before whatever follows ("Actually pretty
# busy", "Oh nice"). The others only before punctuation or the sentence's subject, since
# "So excited!" and "Well done" do not open anything.
_ALWAYS = (
    r"actually|honestly|anyway|anyways|basically|frankly|oh|ohh|yeah|yea|yep|yup|um+|uh+|"
    r"er+m?|hmm+|ah+|aw+|wow|lol|haha+|btw|omg|tbh|to be honest|by the way|oh my (?:god|gosh)"
)
_BEFORE_SUBJECT = (
    r"well|so|yes|ok|okay|hey|sure|right|man|dude|you know|i mean|alright|all right|"
    r"seriously|to be fair|gosh|whew|phew|oof|ha"
)
_SUBJECT = (
    r"I|I'm|I've|I'll|I'd|we|we're|we've|my|our|you|your|he|she|they|it|it's|its|the|this|"
    r"that|these|those|there|here|his|her|their|a|an"
)
_OPENER = re.compile(
    # a greeting with the name of whoever is addressed: "Hey Sam, ...", "Thanks, Jo! ..."
    r"^\s*(?:(?:hey|hi|hello|thanks|thank you)[\s,]+[A-Z][\w'-]*\s*[,!.]+\s*|"
    rf"(?:{_ALWAYS})(?:\s*[,!.…:;\u2013\u2014-]+\s*|\s+)|(?:{_BEFORE_SUBJECT})"
    rf"(?:\s*[,!.…:;\u2013\u2014-]+\s*|\s+(?=(?:{_SUBJECT})\b)))",
    re.IGNORECASE,
)
_TAG_QUESTION = re.compile(
    r"[,\s]+(?:right|you know|ya know|isn't it|don't you think|wouldn't you say|huh|eh|"
    r"no|yeah|ok|okay|lol)\s*\?+\s*$",
    re.IGNORECASE,
)
# "I can bring it tomorrow, how does that sound?": a statement with a short question
# tacked on after a comma; the statement is kept when it does not itself ask.
_TACKED_ON = re.compile(r"^(?P<said>.+?),\s*(?P<asked>(?:[\w']+\s+){0,5}[\w']+)\s*\?[^\w]*$")
_ASKS = re.compile(
    r"^(?:what|how|why|when|where|who|whom|whose|which|do|does|did|don't|doesn't|didn't|are|"
    r"aren't|is|isn't|was|wasn't|were|weren't|have|haven't|has|hasn't|had|can|can't|could|"
    r"couldn't|would|wouldn't|will|won't|should|shall|may|might|any|anything|anyone|or)\b",
    re.IGNORECASE,
)
_TOLD_YOU = re.compile(
    r"^(?:did|have)\s+I\s+(?:ever\s+|already\s+|even\s+)?(?:tell|told|mention|mentioned)"
    r"(?:\s+(?:to\s+)?you)?(?:\s+that)?\s+(?P<rest>.+?)\s*\?+\s*$",
    re.IGNORECASE,
)
_QUESTION_END = re.compile(r"\?[^\w]*$")

_ASSISTANT_CHATTER = re.compile(
    r"^(?:here(?:'s| is| are| you go| it is)|happy to|glad to|glad I could|hope (?:this|that)|"
    r"I hope|let me|let's|feel free|you're welcome|you are welcome|my pleasure|any ?time|"
    r"of course|certainly|absolutely|sure thing|no problem|no worries|great question|"
    r"good question|please (?:let|note|feel)|if you (?:have|need|want|'d like|would like)|"
    r"would you like|do you want|I(?:'m| am) (?:happy|glad|here|sorry|unable|not able|an AI|"
    r"a language model|just an?)|I (?:can(?:not|'t)?|could|will|'ll|would|'d|am able to) "
    r"(?:help|assist|try|do that|look|check|find out|be happy|be glad|walk you)|"
    r"I understand|I see|I apologi[sz]e|as an AI|thanks for|thank you for)\b",
    re.IGNORECASE,
)


def strip_openers(sentence: str) -> str:
    """``sentence`` without the discourse fillers it opens with, capitalised again."""
    text = sentence
    while True:
        stripped = _OPENER.sub("", text, count=1)
        if stripped == text or not stripped.strip():
            break
        text = stripped
    if text is sentence:
        return sentence
    return text[:1].upper() + text[1:]


def as_statement(sentence: str) -> str | None:
    """The statement ``sentence`` makes, or None if it only asks something."""
    told = _TOLD_YOU.match(sentence.strip())
    if told:
        rest = told.group("rest")
        if rest.lower().startswith("about "):
            return f"I told you {rest}."
        return rest[:1].upper() + rest[1:] + "."
    untagged = _TAG_QUESTION.sub(".", sentence)
    if untagged != sentence:
        return untagged
    tacked = _TACKED_ON.match(sentence.strip())
    if (
        tacked
        and len(tacked.group("said").split()) >= 3
        and not _ASKS.match(tacked.group("said"))
        and _ASKS.match(tacked.group("asked"))
    ):
        return tacked.group("said") + "."
    if _QUESTION_END.search(sentence):
        return None
    return sentence


def is_assistant_chatter(sentence: str) -> bool:
    """True for an assistant's pleasantry, offer or remark about itself."""
    return bool(_ASSISTANT_CHATTER.match(strip_openers(sentence).strip()))
