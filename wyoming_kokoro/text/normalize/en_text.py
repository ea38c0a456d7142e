"""English addresses and codes (URLs, e-mail, IPs, phones, versions) and abbreviations."""

from __future__ import annotations

import re
from types import MappingProxyType

from wyoming_kokoro.text.normalize.en_words import cardinal, digits, keep_period, number, year

_TLDS = (
    "com|org|net|io|dev|app|ai|co|uk|de|fr|es|it|nl|eu|be|ch|at|se|dk|fi|pl|pt|br|ca|au|us|jp|"
    "cn|ru|info|biz|gov|edu|local|lan|home|arpa|tv|me|xyz|site|online|cloud|tech|email|shop"
)
_TAIL = r"(?:[^\s<>\"'()]*[^\s<>\"'().,;:!?])?"  # a path, without the sentence's own punctuation
_URL_RE = re.compile(rf"\b(?:https?|ftp)://{_TAIL}|\bwww\.{_TAIL}")
_DOMAIN_RE = re.compile(
    rf"(?<![\w@./-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+(?:{_TLDS})(?![\w-])"
    rf"(?::\d{{1,5}})?(?:/{_TAIL})?"
)
_DOMAIN_HINT_RE = re.compile(rf"\.(?:{_TLDS})\b")
_EMAIL_RE = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_SCHEME_RE = re.compile(r"^[a-z]+://")
_URL_PART_RE = re.compile(r":(?=\d)|[./_?=&#@+-]|\d+")
_URL_WORDS = MappingProxyType(
    {":": " port ", ".": " dot ", "/": " slash ", "_": " underscore ", "?": " question mark ",
     "=": " equals ", "&": " and ", "#": " hash ", "@": " at ", "+": " plus ", "-": " "}
)  # fmt: skip

_IP_RE = re.compile(
    r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?(?:/(\d{1,2}))?(?![\w]|\.\d)"
)
_IP_HINT_RE = re.compile(r"\d\.\d{1,3}\.\d")
_PHONE_RE = re.compile(
    r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w]|[.,-]?\d)"  # +1 555 123 4567
    r"|(?<![\w(-])(?:1[ .-])?(?:\(\d{3}\)\s?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w-])"  # US
    r"|(?<![\w-])\d{3}-\d{4}(?![\w-])"  # 555-1234
    r"|(?<![\w-])0\d{2,4}[ -]\d{3,4}(?:[ -]?\d{3,4})?(?![\w-])"  # 020 7946 0958
    r"|(?<=[Cc]all )\d{3,}(?![\w-]|[.,]\d)|(?<=[Dd]ial )\d{3,}(?![\w-]|[.,]\d)"  # "call 911"
)
_DIGIT_RUN_RE = re.compile(r"\d+")
_PHONE_HINT_RE = re.compile(r"\d{3}")  # every phone pattern has a run of three digits
_VERSION_HINT_RE = re.compile(r"[vV](?:ersion\s+)?\d|\d\.\d+\.\d")
_VERSION_RE = re.compile(
    r"(?<![\w.])(?:(?P<word>[Vv]ersion\s+|v|V(?=\d+\.\d))(?P<a>\d+(?:\.\d+)*)"
    r"|(?P<b>\d+\.\d+\.\d+(?:\.\d+)*))(?![\w]|\.\d)"
)

# Abbreviation -> words. Those in _ENDS_SENTENCE may also close a sentence.
_ABBREVIATIONS = MappingProxyType(
    {"Mr": "Mister", "Mrs": "Missus", "Ms": "Miz", "Prof": "Professor", "Mt": "Mount",
     "Jr": "Junior", "Sr": "Senior", "Capt": "Captain", "Lt": "Lieutenant", "Sgt": "Sergeant",
     "Rev": "Reverend", "Ave": "Avenue", "Rd": "Road", "Blvd": "Boulevard", "Ln": "Lane",
     "Hwy": "Highway", "Apt": "Apartment", "Dept": "Department", "Inc": "Incorporated",
     "Ltd": "Limited", "Corp": "Corporation", "Co": "Company", "Bros": "Brothers",
     "etc": "et cetera", "vs": "versus", "Vs": "versus", "approx": "approximately",
     "Approx": "approximately", "avg": "average", "Avg": "average"}
)  # fmt: skip
_ENDS_SENTENCE = frozenset(
    {"Jr", "Sr", "Ave", "Rd", "Blvd", "Ln", "Hwy", "Dept", "Inc", "Ltd", "Corp", "Co", "Bros",
     "etc", "approx", "Approx", "avg", "Avg", "St", "Dr"}
)  # fmt: skip
_TITLES = MappingProxyType(
    {"Mr": "Mister", "Mrs": "Missus", "Ms": "Miz", "Dr": "Doctor", "St": "Saint", "Mt": "Mount",
     "Prof": "Professor"}
)  # fmt: skip
_BEFORE_NUMBER = MappingProxyType(
    {"No": "number", "no": "number", "Nr": "number", "nr": "number", "Fig": "figure",
     "fig": "figure", "Vol": "volume", "vol": "volume"}
)  # fmt: skip
_ABBR_RE = re.compile(
    r"(?<![\w.])(?:"
    rf"(?P<a>{'|'.join(sorted([*_ABBREVIATIONS, 'St', 'Dr'], key=len, reverse=True))})\."
    rf"|(?P<t>{'|'.join(_TITLES)})(?=\s+[A-Z])"  # GB writes titles without the period
    r"|(?P<st>St)(?=[\s,;:!?]|$)"
    r"|(?P<w>vs|Vs|etc|approx|Approx)\b(?!\.)"
    rf"|(?P<n>{'|'.join(_BEFORE_NUMBER)})\.(?=\s?\d)"
    r"|(?P<eg>[Ee]\.\s?[Gg]\.)|(?P<ie>[Ii]\.\s?[Ee]\.)|(?P<num>№\s?))"
)
_CAPITAL_NEXT = re.compile(r"\s+[A-Z]")
_CAPITAL_BEFORE = re.compile(r"[A-Z][a-z]+\s+$")


def _speak_address(text: str) -> str:
    """Spell out an address: "a-b.io/x_y" -> "a b dot io slash x underscore y"."""
    words = _URL_PART_RE.sub(lambda m: _URL_WORDS.get(m[0]) or f" {digits(m[0])} ", text)
    return " ".join(words.split())


def _url(m: re.Match[str]) -> str:
    return _speak_address(_SCHEME_RE.sub("", m[0]).rstrip("/"))  # nobody says "https"


def _ip(m: re.Match[str]) -> str:
    parts = m[1].split(".")
    if any(int(p) > 255 for p in parts):
        return m[0]
    words = " dot ".join(digits(p) for p in parts)
    if m[2]:
        words += " port " + digits(m[2])
    if m[3]:
        words += " slash " + cardinal(int(m[3]))
    return words


def _phone(m: re.Match[str]) -> str:
    groups = _DIGIT_RUN_RE.findall(m[0])
    if len(groups) > 1 and not 7 <= sum(len(g) for g in groups) <= 15:
        return m[0]
    words = ", ".join(digits(g) for g in groups)  # commas give the listener the grouping
    return ("plus " + words) if m[0].startswith("+") else words


def _version(m: re.Match[str], gb: bool) -> str:
    parts = (m["a"] or m["b"]).split(".")
    # A 4-digit first part is a calendar version ("2025.12.1"), said like a year.
    first = parts[0]
    spoken = [year(int(first), gb) if len(first) == 4 else number(first, gb)]
    spoken += [number(p, gb) for p in parts[1:]]
    word = m["word"] or ""
    prefix = word.strip() + " " if word.lower().startswith("version") else "version "
    return ("" if m["b"] else prefix) + " point ".join(spoken)


def _abbreviation(m: re.Match[str]) -> str:
    if m["n"] or m["num"]:
        return "number " if m["num"] else _BEFORE_NUMBER[m["n"]]
    if m["eg"] or m["ie"]:
        return "for example" if m["eg"] else "that is"
    if m["t"]:
        return _TITLES[m["t"]]
    if m["w"]:
        return _ABBREVIATIONS[m["w"]]
    named_before = bool(_CAPITAL_BEFORE.search(m.string[max(0, m.start() - 40) : m.start()]))
    if m["st"]:  # "Main St" without a period
        return "Street" if named_before else m[0]
    abbr = m["a"]
    if abbr in ("St", "Dr"):
        if _CAPITAL_NEXT.match(m.string, m.end()):  # "St. Louis", "Dr. Smith"
            return _TITLES[abbr]
        if abbr == "Dr" and not named_before:
            return "Doctor"
        words = "Street" if abbr == "St" else "Drive"  # "Main St.", "Elm Dr."
    else:
        words = _ABBREVIATIONS[abbr]
    return words + (keep_period(m) if abbr in _ENDS_SENTENCE else "")


# URLs, e-mail and IP addresses are read before anything else reads their dots, in
# passes of their own so that a request can turn each off (normalization_options).


def urls(text: str) -> str:
    """Addresses with a scheme or www. (before e-mail: a URL may hold an @)."""
    if "." in text and ("://" in text or "www." in text):
        text = _URL_RE.sub(_url, text)
    return text


def emails(text: str) -> str:
    """E-mail addresses (before bare domains: the domain after the @ is the address's)."""
    if "." in text and "@" in text:
        text = _EMAIL_RE.sub(lambda m: _speak_address(m[0]), text)
    return text


def domains(text: str) -> str:
    """Bare domain names, with a port or a path."""
    if "." in text and _DOMAIN_HINT_RE.search(text):
        text = _DOMAIN_RE.sub(_url, text)
    return text


def ip_addresses(text: str) -> str:
    if "." in text and _IP_HINT_RE.search(text):
        text = _IP_RE.sub(_ip, text)
    return text


def phones(text: str) -> str:
    """Phone numbers digit by digit in their groups."""
    if _PHONE_HINT_RE.search(text):
        text = _PHONE_RE.sub(_phone, text)
    return text


def versions(text: str, gb: bool) -> str:
    """Versions part by part (after phones, whose groups are not versions)."""
    if _VERSION_HINT_RE.search(text):
        text = _VERSION_RE.sub(lambda m: _version(m, gb), text)
    return text


def abbreviations(text: str) -> str:
    """Titles, street names and Latin shorthand: "Dr. Smith", "Main St.", "e.g."."""
    return _ABBR_RE.sub(_abbreviation, text)
