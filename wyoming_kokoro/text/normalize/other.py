"""Spanish, French, Italian, Brazilian Portuguese and Hindi: numbers, times, money, percent.

Number words come from num2words (Hindi from normalize_hi). The Romance languages
write a decimal comma ("21,5") and group thousands with dots ("1.234"); a dot
before anything but three digits is still read as a decimal point, because Home
Assistant often prints "21.5" whatever the language.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import MappingProxyType

from num2words import num2words

from wyoming_kokoro.text.charsets import SPACE_RUN
from wyoming_kokoro.text.normalize.hi import hindi_cardinal
from wyoming_kokoro.text.normalize.other_forms import (
    AMP_RE,
    DATE_RE,
    EU,
    FR_GROUPS_RE,
    FR_HOUR_RE,
    HI,
    SYMBOLS,
    THOUSANDS_RE,
    TIME_RE,
    UNITS,
)
from wyoming_kokoro.text.normalize.other_words import (
    FIRST_DAY,
    LANGS,
    MONTHS,
    OF,
    TEMPERATURE,
    TEMPERATURE_HI,
)
from wyoming_kokoro.text.normalize.passes import run_passes

# Agreement of "one" (and Spanish/Portuguese hundreds) with the noun that follows.
_ES_THOUSANDS_RE = re.compile(r"\b(veinti)?uno(?= mil)")  # num2words says "veintiuno mil"
_ES_MASC_RE = re.compile(r"\b(veinti)?uno$")
_ES_FEM_RE = re.compile(r"uno$|ientos\b")
_FR_FEM_RE = re.compile(r"\bun$")
_PT_FEM_RE = re.compile(r"\bum\b|\bdois\b|entos\b")
_PT_FEM = MappingProxyType({"um": "uma", "dois": "duas", "entos": "entas"})
_MILLIONS_RE = re.compile(
    r"\b(?:mill[oó]n|millones|millions?|milliards?|milion[ei]|miliard[oi]|milh(?:ão|ões)"
    r"|bill[oó]n|billones|bilh(?:ão|ões))$"
)

# Past num2words' limits (and anyone's ear) a number is read digit by digit; written
# digits that long never become an int (Python refuses past 4,300 of them).
_MOST_DIGITS = 15


_LONG_RUN = re.compile(rf"\d{{{_MOST_DIGITS + 1},}}")


def _digits(text: str, lang: str) -> str:
    return " ".join(_cardinal(int(d), lang) for d in text if d.isdigit())


def _whole(text: str, lang: str) -> str:
    """The words for a run of digits: a number, or digit by digit when too long."""
    text = text.lstrip("0") or "0"
    return _digits(text, lang) if len(text) > _MOST_DIGITS else _cardinal(int(text), lang)


def _cardinal(n: int, lang: str) -> str:
    spec = LANGS[lang]
    if n >= 10**_MOST_DIGITS:
        return _digits(str(n), lang)
    if not spec.n2w:
        return hindi_cardinal(n)
    words = num2words(n, lang=spec.n2w).replace(",", "")
    if lang == "es":
        words = _ES_THOUSANDS_RE.sub(lambda m: "veintiún" if m[1] else "un", words)
    return words


def _agree(words: str, n: int, lang: str, feminine: bool) -> str:
    """Make a cardinal agree with its noun: "veintiún euros", "vingt et une heures"."""
    if lang == "es":
        if feminine:
            return _ES_FEM_RE.sub(lambda m: "una" if m[0] == "uno" else "ientas", words)
        return _ES_MASC_RE.sub(lambda m: "veintiún" if m[1] else "un", words)
    if lang == "fr" and feminine:
        return _FR_FEM_RE.sub("une", words)
    if lang == "it" and words == "uno":
        return "una" if feminine else "un"
    if lang == "pt-br" and feminine and n < 1_000_000:  # millions themselves stay masculine
        return _PT_FEM_RE.sub(lambda m: _PT_FEM[m[0]], words)
    return words


def _split(text: str, lang: str) -> tuple[str, str]:
    """Whole part and fraction digits of a written number ("0" for no whole part)."""
    if lang == "hi":
        whole, _, frac = text.replace(",", "").partition(".")
    elif "," in text:
        whole, _, frac = text.partition(",")
        whole = whole.replace(".", "")
    elif THOUSANDS_RE.fullmatch(text):
        whole, frac = text.replace(".", ""), ""
    else:
        whole, _, frac = text.partition(".")
    return whole.lstrip("0") or "0", frac


def _value(whole: str) -> int | None:
    """A whole part as a number, or None when it is read digit by digit."""
    return None if len(whole) > _MOST_DIGITS else int(whole)


def _say(text: str, lang: str, feminine: bool | None = None) -> str:
    """Read a written number; with ``feminine`` set it is followed by a noun."""
    whole_text, frac = _split(text, lang)
    words, whole = _whole(whole_text, lang), _value(whole_text)
    if not frac:
        # Read digit by digit (whole is None), no noun agrees with the number.
        return words if feminine is None or whole is None else _agree(words, whole, lang, feminine)
    if lang != "hi" and len(frac) <= 2 and frac[0] != "0":
        tail = _cardinal(int(frac), lang)  # "tres coma catorce"
    else:
        tail = " ".join(_cardinal(int(d), lang) for d in frac)  # Hindi: digit by digit
    return f"{words} {LANGS[lang].point} {tail}"


def _with_noun(words: str, noun: str, lang: str) -> str:
    """Put a noun after a number: "un millón de euros", "un million d'euros"."""
    if not _MILLIONS_RE.search(words) or lang not in OF:
        return f"{words} {noun}"
    if lang == "fr" and noun[0] in "aeiouéh":
        return f"{words} d'{noun}"
    return f"{words}{OF[lang]}{noun}"


def _money(m: re.Match[str], lang: str) -> str:
    code = SYMBOLS[m["sym"]] if m["sym"] else m["code"]
    if code not in LANGS[lang].money:
        return m[0]
    return _say_money(code, m["num"], bool(m["neg"]), lang)


def _money_range(m: re.Match[str], lang: str) -> str:
    """ "$1.25-$1.50": each end money; "5-10 €": "cinco a diez euros"."""
    spec, code = LANGS[lang], SYMBOLS[m["sym"]] if m["sym"] else m["code"]
    if code not in spec.money:
        return m[0]
    second = _say_money(code, m["b"], False, lang)
    if _split(m["a"], lang)[1] or _split(m["b"], lang)[1]:
        return f"{_say_money(code, m['a'], bool(m['neg']), lang)} {spec.to} {second}"
    sign = spec.minus + " " if m["neg"] else ""
    return f"{sign}{_say(m['a'], lang, spec.money[code][4])} {spec.to} {second}"


def _say_money(code: str, num: str, neg: bool, lang: str) -> str:
    spec = LANGS[lang]
    one, many, cent, cents, feminine = spec.money[code]
    sign = spec.minus + " " if neg else ""
    whole_text, frac = _split(num, lang)
    whole = _value(whole_text)
    if cent is None or cents is None or len(frac) > 2 or whole is None:
        words = _say(num, lang, None if frac else feminine)
        return sign + _with_noun(words, one if (whole, frac) == (1, "") else many, lang)
    minor = int(frac.ljust(2, "0")) if frac else 0
    parts = []
    if whole or not minor:
        words = _agree(_cardinal(whole, lang), whole, lang, feminine)
        parts.append(_with_noun(words, one if whole == 1 else many, lang))
    if minor:
        words = _agree(_cardinal(minor, lang), minor, lang, False)
        parts.append(f"{words} {cent if minor == 1 else cents}")
    return sign + (f" {spec.conj} " if spec.conj else " ").join(parts)


def _quantity(m: re.Match[str], lang: str) -> str:
    spec = LANGS[lang]
    sign = {"-": spec.minus + " ", "+": spec.plus + " "}.get(m["sign"] or "", "")
    unit = UNITS[m["unit"]]
    single = m["a"] in ("1", "1,0") and not m["b"]
    if unit == "%":
        noun = spec.percent
        words = _say(m["a"], lang)
    else:
        noun = spec.degree[0 if single else 1]
        if unit:
            noun += " " + (TEMPERATURE_HI if lang == "hi" else TEMPERATURE)[unit]
        words = _say(m["a"], lang, None if m["b"] else False)
    if m["b"]:
        words += f" {spec.to} " + _say(m["b"], lang, None if unit == "%" else False)
    return f"{sign}{words} {noun}"


def _number(m: re.Match[str], lang: str) -> str:
    spec = LANGS[lang]
    sign = {"-": spec.minus + " ", "+": spec.plus + " "}.get(m["sign"] or "", "")
    words = sign + _say(m["a"], lang)
    return words + (f" {spec.to} {_say(m['b'], lang)}" if m["b"] else "")


def _time(hour: int, minute: int, lang: str) -> str:
    h, mi = _cardinal(hour, lang), _cardinal(minute, lang)
    if lang == "hi":
        return f"{h} बजे" if not minute else f"{h} बजकर {mi} मिनट"
    if lang == "fr":  # "heure" is feminine, and so is "minute"
        words = f"{_agree(h, hour, lang, True)} heure{'s' if hour > 1 else ''}"
        return words + (f" {_agree(mi, minute, lang, True)}" if minute else "")
    hour_words = _agree(h, hour, lang, True)  # "la una", "l'una", "uma hora"
    if not minute:
        return {"es": f"{hour_words} en punto", "it": f"{hour_words} in punto"}.get(
            lang, f"{hour_words} hora{'s' if hour > 1 else ''}"
        )
    return f"{hour_words} {'y' if lang == 'es' else 'e'} {mi}"


def _date(m: re.Match[str], lang: str) -> str:
    month_text, day_text = m["ym"] or m["m"], m["yd"] or m["md"] or m["d"]
    month = int(month_text) if month_text else None
    day = int(day_text) if day_text else None
    if (month is not None and not 1 <= month <= 12) or (day is not None and not 1 <= day <= 31):
        return m[0]
    # "5 de marzo de 2024" in Spanish and Portuguese; "5 mars 2024", "5 मार्च 2024" else.
    of = OF[lang] if lang in ("es", "pt-br") else " "
    words = []
    if day is not None:
        words.append(FIRST_DAY[lang] if day == 1 and lang in FIRST_DAY else _cardinal(day, lang))
    if month is not None:
        words.append(MONTHS[lang][month - 1])
    if m["y"]:
        words.append(_cardinal(int(m["y"]), lang))
    return of.join(words)


def _amp(text: str, lang: str) -> str:
    return AMP_RE.sub(f" {LANGS[lang].and_} ", text) if "&" in text else text


def _french_groups(text: str, lang: str) -> str:
    # French groups thousands with spaces, plain ones when typed by hand.
    return FR_GROUPS_RE.sub(lambda m: m[0].replace(" ", ""), text) if lang == "fr" else text


def _dates(text: str, lang: str) -> str:
    return DATE_RE.sub(lambda m: _date(m, lang), text) if "-" in text else text


def _times(text: str, lang: str) -> str:
    text = TIME_RE.sub(lambda m: _time(int(m[1]), int(m[2]), lang), text)
    if lang == "fr":
        text = FR_HOUR_RE.sub(lambda m: _time(int(m[1]), 0, lang), text)
    return text


def _sub(pattern: str, say: Callable[[re.Match[str], str], str]) -> Callable[[str, str], str]:
    """A pass of one of a language's number patterns, read by `say`."""
    return lambda text, lang: getattr(HI if lang == "hi" else EU, pattern).sub(
        lambda m: say(m, lang), text
    )


def _long_runs(text: str, lang: str) -> str:
    # What no pass read ("123th", "A1234…"): a run this long is said digit by digit.
    return _LONG_RUN.sub(lambda m: f" {_digits(m[0], lang)} ", text)


# The passes in order (dates before the numbers and ranges they are written with);
# each is contained (passes.py).
_PASSES: tuple[tuple[str, Callable[[str, str], str]], ...] = (
    ("ampersands", _amp),
    ("French groups", _french_groups),
    ("dates", _dates),
    ("times", _times),
    ("money ranges before", _sub("prefix_range", _money_range)),
    ("money ranges after", _sub("suffix_range", _money_range)),
    ("money before", _sub("prefix_money", _money)),
    ("money after", _sub("suffix_money", _money)),
    ("quantities", _sub("quantity", _quantity)),
    ("numbers", _sub("number", _number)),
    ("long runs", _long_runs),
)


def normalize_other(text: str, lang: str) -> str:
    """Normalize text for one of the languages in LANGS (keys as given by normalize())."""
    passes = _PASSES if any(c.isdigit() for c in text) else _PASSES[:1]
    text = run_passes(text, [(name, _in(apply, lang)) for name, apply in passes], lang)
    return SPACE_RUN.sub(" ", text).strip()


def _in(apply: Callable[[str, str], str], lang: str) -> Callable[[str], str]:
    return lambda text: apply(text, lang)
