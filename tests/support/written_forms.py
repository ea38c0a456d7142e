"""Hypothesis strategies for the text an LLM or Home Assistant writes: the written forms
the normalizers read (numbers, ranges, money, times, dates, units, codes), markup,
emoji, other scripts and odd characters, mixed into sentences (tests/text/test_total.py).
"""

from __future__ import annotations

from hypothesis import strategies as st

LANGUAGES = ("en-us", "en-gb", "es", "fr-fr", "it", "pt-br", "hi", "ja", "zh")

# Decimal digits of other scripts, and other characters with a digit value (①, ², ๓).
OTHER_DIGITS = st.characters(categories=["Nd", "No"]).filter(lambda c: not c.isascii())
_ODD_SPACES = st.sampled_from(["\u00a0", "\u202f", "\u2009", "\u2007", "\u3000", "\t", "\n"])

_digits = st.text("0123456789", min_size=1, max_size=25)
_small = st.integers(0, 9999).map(str)
_grouped = st.integers(1000, 10**15).map(lambda n: f"{n:,}")
_dotted_groups = st.integers(1000, 10**12).map(lambda n: f"{n:,}".replace(",", "."))
_decimal = st.builds(
    lambda whole, frac: f"{whole}.{frac}", _small, st.text("0123456789", min_size=1, max_size=6)
)
# Prices and readings: "1.25", "21.5", "0.30", the decimals text is full of.
_price = st.builds(lambda w, c: f"{w}.{c:02d}", st.integers(0, 99), st.integers(0, 99))
_reading = st.builds(lambda w, c: f"{w}.{c}", st.integers(0, 99), st.integers(0, 9))
_comma_decimal = _decimal.map(lambda d: d.replace(".", ","))
# Past any number word, past runs.py's bound, past Python's int() of a string.
_huge = st.builds(lambda digit, n: digit * n, st.sampled_from("1790"), st.integers(19, 5000))
_any_other_digits = st.text(OTHER_DIGITS, min_size=1, max_size=6)
NUMBER = st.one_of(
    _small, _price, _reading, _digits, _grouped, _dotted_groups, _decimal, _comma_decimal, _huge
)
SIGNED = st.builds(lambda sign, n: sign + n, st.sampled_from(["-", "+", "−", "±", ""]), NUMBER)

_MARK = st.sampled_from(["-", "–", "—", " - ", " – ", " — ", " to ", "~", "〜", "..", " bis "])
_END = st.one_of(_price, _reading, SIGNED)
RANGE = st.builds(lambda a, mark, b: f"{a}{mark}{b}", _END, _MARK, _END)

_SYMBOL = st.sampled_from(["$", "€", "£", "¥", "₹", "R$", "US$", "C$", "Rs.", "₩", "₽", "₿", "¢"])
_CODE = st.sampled_from(["USD", "EUR", "GBP", "JPY", "CHF", "BRL", "INR", "BTC", "XYZ"])
_SCALE = st.sampled_from(["", "k", "K", "m", "M", "bn", " million", " billion", "万", "亿"])
MONEY = st.one_of(
    st.builds(lambda s, n, k: f"{s}{n}{k}", _SYMBOL, st.one_of(NUMBER, RANGE), _SCALE),
    st.builds(lambda n, s: f"{n} {s}", st.one_of(NUMBER, RANGE), st.one_of(_SYMBOL, _CODE)),
    st.builds(lambda c, n: f"{c} {n}", _CODE, NUMBER),
    st.builds(lambda a, s, b: f"{s}{a}-{s}{b}", NUMBER, _SYMBOL, NUMBER),
)

_UNIT = st.sampled_from(
    ["%", " %", "°C", "° C", "℃", "°F", "°", "km/h", "mph", "m/s", "kWh", "kW", "W", "V", "A",
     "mAh", "µg/m³", "ug/m3", "m²", "m³", "mm", "cm", "km", "m", "kg", "g", "lb", "oz", "ml",
     "L", "hPa", "dB", "Hz", "GHz", "ms", "s", "min", "h", "GB", "MB", "TB", "Mbps", "rpm",
     "人", "円", "分", "度", "个"]
)  # fmt: skip
QUANTITY = st.builds(
    lambda n, space, u: f"{n}{space}{u}",
    st.one_of(SIGNED, RANGE),
    st.sampled_from(["", " "]),
    _UNIT,
)

_h = st.integers(0, 29)
_m = st.integers(0, 69)
TIME = st.one_of(
    st.builds(lambda h, m: f"{h}:{m:02d}", _h, _m),
    st.builds(lambda h, m, s: f"{h}:{m:02d}:{s:02d}", _h, _m, _m),
    st.builds(lambda h, m, ap: f"{h}.{m:02d}{ap}", _h, _m, st.sampled_from(["pm", " am", " p.m."])),
    st.builds(lambda h, ap: f"{h}{ap}", _h, st.sampled_from([" AM", "pm", " a.m.", "PM."])),
    st.builds(lambda a, b: f"{a}:00-{b}:30", _h, _h),
    st.builds(lambda h, m: f"{h}h{m:02d}", _h, _m),
)
_MONTHS = st.sampled_from(["Jan", "February", "Sept", "Dec.", "MAY", "marzo", "août"])
_WEEKDAYS = st.sampled_from(["Mon", "Tue", "Thurs", "Fri.", "Sunday", "Sat"])
_y = st.integers(0, 2999)
_d = st.integers(0, 40)
DATE = st.one_of(
    st.builds(lambda y, m, d: f"{y:04d}-{m:02d}-{d:02d}", _y, _d, _d),
    st.builds(lambda y, m: f"{y:04d}-{m:02d}", _y, _d),
    st.builds(lambda m, d: f"--{m:02d}-{d:02d}", _d, _d),
    st.builds(lambda d: f"---{d:02d}", _d),
    st.builds(lambda a, b, y, sep: f"{a}{sep}{b}{sep}{y}", _d, _d, _y, st.sampled_from("/.-")),
    st.builds(lambda a, b: f"{a}/{b}", _d, _d),
    st.builds(lambda d, m, y: f"{d} {m} {y}", _d, _MONTHS, _y),
    st.builds(lambda m, d: f"{m} {d}th", _MONTHS, _d),
    st.builds(lambda w, d: f"{w} {d}", _WEEKDAYS, _d),
    st.builds(lambda w, v: f"{w}-{v}", _WEEKDAYS, _WEEKDAYS),
    st.builds(lambda y: f"in {y}s", _y),
    st.builds(lambda y: f"'{y % 100:02d}s", _y),
    st.builds(lambda y, m, d: f"{y}/{m}/{d}", _y, _d, _d),
)
ORDINAL = st.builds(
    lambda n, suffix: f"{n}{suffix}", st.one_of(_small, _grouped, _digits),
    st.sampled_from(["st", "nd", "rd", "th", "TH", "º", "ª", "e", "er"]),
)  # fmt: skip
PHONE = st.one_of(
    st.builds(lambda a, b, c: f"+{a} {b} {c}", _small, _small, _digits),
    st.builds(lambda a, b, c: f"({a}) {b}-{c}", _small, _small, _small),
    st.builds(lambda a, b: f"0{a} {b}", _small, _digits),
    st.builds(lambda n: f"call {n}", _digits),
)
VERSION = st.builds(
    lambda p, parts: p + ".".join(parts), st.sampled_from(["v", "V", "version ", ""]),
    st.lists(_small, min_size=1, max_size=5),
)  # fmt: skip
IP = st.builds(
    lambda parts, port, mask: ".".join(parts) + port + mask,
    st.lists(st.integers(0, 999).map(str), min_size=4, max_size=4),
    st.sampled_from(["", ":8123", ":99999"]), st.sampled_from(["", "/24", "/99"]),
)  # fmt: skip
FRACTION = st.one_of(
    st.builds(lambda a, b: f"{a}/{b}", _small, _small),
    st.builds(lambda a, b, c: f"{a} {b}/{c}", _small, _small, _small),
    st.builds(
        lambda a, v: f"{a}{v}", st.sampled_from(["", "1", "2 ", "10"]), st.sampled_from("½¼⅞")
    ),
)
SCIENTIFIC = st.builds(
    lambda m, e, s: f"{m}{e}{s}", _decimal, st.sampled_from(["e", "E", "×10^", "x10"]), SIGNED
)
ROMAN = st.builds(
    lambda w, r: f"{w} {r}", st.sampled_from(["Chapter", "Henry", "World War", "Size", "Louis"]),
    st.text("IVXLCDM", min_size=1, max_size=8),
)  # fmt: skip
EMOJI = st.sampled_from(["☀️", "🌡️", "👍🏽", "🇺🇸", "👨‍👩‍👧", "1️⃣", "❤", "™", "®", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "⬆", "⭐"])
MARKDOWN = st.sampled_from(
    ["**bold**", "*it*", "`code`", "~~old~~", "[link](https://x.io/a_(b))", "![img](a.png)",
     "# Heading", "- item", "1. item", "> quote", "| a | b |", "|---|---|", "```", "---",
     "<b>html</b>", "<br/>", "&amp;", "\\*", "_under_", "***"]
)  # fmt: skip
ADDRESS = st.sampled_from(
    ["https://www.home-assistant.io/integrations/wyoming/?a=1&b=2#x", "www.example.com",
     "mail me@example.co.uk", "home-assistant.local:8123", "ftp://10.0.0.1/a", "a.b.c.d.io",
     "http://[::1]:80/", "user@localhost", "http://", "www."]
)  # fmt: skip
CODE = st.sampled_from(
    ["light.turn_on", "sensor.temp_2", "x = y + 3*4;", "if (a < b && c >= 2) {}", "a->b", "0x1F",
     "def f(x): return x**2", "SELECT * FROM t;", "C:\\Windows\\system32", "~/.config", "$HOME",
     "#include <stdio.h>", "a_b-c.d/e", "i++", "--flag=1", "e.g.", "i.e.", "Dr.", "St.", "No. 5",
     "№5", "#5", "<= 5", ">=5", "~5", "≈5", "10 x 20", "3×4", "16:9", "PM2.5", "CO₂", "A4", "3D"]
)  # fmt: skip
WORDS = st.sampled_from(
    ["The", "price", "is", "about", "and", "it", "costs", "Hace", "il fait", "costa", "custa",
     "तापमान", "है", "今日は", "気温は", "です", "今天", "温度是", "度", "Ελλάδα", "Москва",
     "مرحبا", "שלום", "ภาษาไทย", "한국어", "Ǆ", "ﬁ", "İ", "ß", "é", "ñ", "ç", "…", "—", "!", "?",
     "。", "、", "「", "」", "（", "）", ".", ",", ";", ":", "'", "\"", "(", ")", "[", "]", "/",
     "\\", "&", "@", "=", "<", ">", "*", "_", "|", "^", "%", "#", "+", "-"]
)  # fmt: skip
ODD = st.one_of(
    _ODD_SPACES, _any_other_digits,
    st.sampled_from(["\u200b", "\u200d", "\ufeff", "\u00ad", "\u0301", "\ufe0f", "\ufe0e",
                     "\u2028", "\r", "\x00", "\x07", "\ud7ff", "\U0010ffff", "\uffff"]),
)  # fmt: skip

FORM = st.one_of(
    NUMBER, SIGNED, RANGE, MONEY, QUANTITY, TIME, DATE, ORDINAL, PHONE, VERSION, IP, FRACTION,
    SCIENTIFIC, ROMAN, EMOJI, MARKDOWN, ADDRESS, CODE, WORDS, ODD,
)  # fmt: skip
_GLUE = st.sampled_from([" ", " ", " ", "", ", ", ". ", "\n", "\n\n", " - ", "/", "-"])


@st.composite
def sentences(draw: st.DrawFn, max_forms: int = 8) -> str:
    """A few written forms and words, glued as text is written (or not quite)."""
    parts = draw(st.lists(st.tuples(FORM, _GLUE), min_size=1, max_size=max_forms))
    return "".join(form + glue for form, glue in parts)


@st.composite
def numeric_sentences(draw: st.DrawFn) -> str:
    """Ordinary numeric forms only, as an answer about prices, times and weather has them."""
    numeric = st.one_of(NUMBER, SIGNED, RANGE, MONEY, QUANTITY, TIME, DATE, ORDINAL, FRACTION)
    forms = draw(st.lists(numeric, min_size=1, max_size=6))
    return draw(st.sampled_from(["Now ", "", "It is "])) + " and ".join(forms) + "."


# Written forms and anything at all: what the text path must never raise on.
TEXT = st.one_of(sentences(), numeric_sentences(), st.text(max_size=80))
