"""English money and measurements: "$3.99", "10 USD", "21.5 °C", "5-10 km", "50 km/h"."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import NamedTuple

from wyoming_kokoro.text.normalize.en_words import (
    MOST_DIGITS,
    NUMBER,
    RANGE_MARK,
    cardinal,
    number,
    range_end,
)


class _Money(NamedTuple):
    one: str
    many: str
    sub_one: str | None = None  # None: the amount is read with "point"
    sub_many: str | None = None


_CURRENCIES = MappingProxyType(
    {
        "USD": _Money("dollar", "dollars", "cent", "cents"),
        "EUR": _Money("euro", "euros", "cent", "cents"),
        "GBP": _Money("pound", "pounds", "penny", "pence"),
        "JPY": _Money("yen", "yen"),
        "CNY": _Money("yuan", "yuan"),
        "INR": _Money("rupee", "rupees", "paisa", "paise"),
        "BRL": _Money("real", "reais", "centavo", "centavos"),
        "CAD": _Money("Canadian dollar", "Canadian dollars", "cent", "cents"),
        "AUD": _Money("Australian dollar", "Australian dollars", "cent", "cents"),
        "CHF": _Money("Swiss franc", "Swiss francs", "centime", "centimes"),
        "SEK": _Money("Swedish krona", "Swedish kronor", "ore", "ore"),
        "NOK": _Money("Norwegian krone", "Norwegian kroner", "ore", "ore"),
        "DKK": _Money("Danish krone", "Danish kroner", "ore", "ore"),
        "PLN": _Money("zloty", "zlotys", "grosz", "groszy"),
        "MXN": _Money("Mexican peso", "Mexican pesos", "centavo", "centavos"),
        "KRW": _Money("won", "won"),
        "RUB": _Money("ruble", "rubles", "kopek", "kopeks"),
        "BTC": _Money("bitcoin", "bitcoins"),
    }
)
_SYMBOLS = MappingProxyType(
    {"US$": "USD", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "Rs.": "INR",
     "Rs": "INR", "R$": "BRL", "C$": "CAD", "CA$": "CAD", "A$": "AUD", "AU$": "AUD", "₩": "KRW",
     "₽": "RUB", "₿": "BTC"}
)  # fmt: skip
SCALES = MappingProxyType(
    {"k": "thousand", "K": "thousand", "thousand": "thousand", "m": "million", "M": "million",
     "mn": "million", "million": "million", "B": "billion", "bn": "billion",
     "billion": "billion", "trillion": "trillion"}
)  # fmt: skip

# symbol -> (singular, plural). US spelling; GB respells "meter"/"liter" below.
_UNITS = MappingProxyType(
    {
        "°C": ("degree Celsius", "degrees Celsius"),
        "° C": ("degree Celsius", "degrees Celsius"),
        "℃": ("degree Celsius", "degrees Celsius"),
        "°F": ("degree Fahrenheit", "degrees Fahrenheit"),
        "° F": ("degree Fahrenheit", "degrees Fahrenheit"),
        "℉": ("degree Fahrenheit", "degrees Fahrenheit"),
        "°": ("degree", "degrees"),
        "%": ("percent", "percent"),
        "km/h": ("kilometer per hour", "kilometers per hour"),
        "kph": ("kilometer per hour", "kilometers per hour"),
        "mph": ("mile per hour", "miles per hour"),
        "m/s": ("meter per second", "meters per second"),
        "mm/h": ("millimeter per hour", "millimeters per hour"),
        "m³/h": ("cubic meter per hour", "cubic meters per hour"),
        "L/min": ("liter per minute", "liters per minute"),
        "l/min": ("liter per minute", "liters per minute"),
        "W/m²": ("watt per square meter", "watts per square meter"),
        "kWh": ("kilowatt hour", "kilowatt hours"),
        "MWh": ("megawatt hour", "megawatt hours"),
        "Wh": ("watt hour", "watt hours"),
        "kW": ("kilowatt", "kilowatts"),
        "MW": ("megawatt", "megawatts"),
        "W": ("watt", "watts"),
        "kV": ("kilovolt", "kilovolts"),
        "mV": ("millivolt", "millivolts"),
        "V": ("volt", "volts"),
        "mAh": ("milliamp hour", "milliamp hours"),
        "mA": ("milliamp", "milliamps"),
        "A": ("amp", "amps"),
        "ppm": ("part per million", "parts per million"),
        "ppb": ("part per billion", "parts per billion"),
        "µg/m³": ("microgram per cubic meter", "micrograms per cubic meter"),
        "μg/m³": ("microgram per cubic meter", "micrograms per cubic meter"),
        "µg/m3": ("microgram per cubic meter", "micrograms per cubic meter"),
        "ug/m3": ("microgram per cubic meter", "micrograms per cubic meter"),
        "ug/m³": ("microgram per cubic meter", "micrograms per cubic meter"),
        "mg/m³": ("milligram per cubic meter", "milligrams per cubic meter"),
        "m²": ("square meter", "square meters"),
        "km²": ("square kilometer", "square kilometers"),
        "m³": ("cubic meter", "cubic meters"),
        "mm": ("millimeter", "millimeters"),
        "cm": ("centimeter", "centimeters"),
        "km": ("kilometer", "kilometers"),
        "m": ("meter", "meters"),
        "mi": ("mile", "miles"),
        "ft": ("foot", "feet"),
        "kg": ("kilogram", "kilograms"),
        "mg": ("milligram", "milligrams"),
        "g": ("gram", "grams"),
        "lbs": ("pound", "pounds"),
        "lb": ("pound", "pounds"),
        "oz": ("ounce", "ounces"),
        "ml": ("milliliter", "milliliters"),
        "mL": ("milliliter", "milliliters"),
        "L": ("liter", "liters"),
        "l": ("liter", "liters"),
        "gal": ("gallon", "gallons"),
        "hPa": ("hectopascal", "hectopascals"),
        "kPa": ("kilopascal", "kilopascals"),
        "Pa": ("pascal", "pascals"),
        "mbar": ("millibar", "millibars"),
        "bar": ("bar", "bar"),
        "inHg": ("inch of mercury", "inches of mercury"),
        "dBm": ("decibel milliwatt", "decibel milliwatts"),
        "dB": ("decibel", "decibels"),
        "Hz": ("hertz", "hertz"),
        "kHz": ("kilohertz", "kilohertz"),
        "MHz": ("megahertz", "megahertz"),
        "GHz": ("gigahertz", "gigahertz"),
        "lx": ("lux", "lux"),
        "lm": ("lumen", "lumens"),
        "ms": ("millisecond", "milliseconds"),
        "sec": ("second", "seconds"),
        "s": ("second", "seconds"),
        "min": ("minute", "minutes"),
        "mins": ("minute", "minutes"),
        "secs": ("second", "seconds"),
        "hrs": ("hour", "hours"),
        "hr": ("hour", "hours"),
        "h": ("hour", "hours"),
        "kB": ("kilobyte", "kilobytes"),
        "KB": ("kilobyte", "kilobytes"),
        "MB": ("megabyte", "megabytes"),
        "GB": ("gigabyte", "gigabytes"),
        "TB": ("terabyte", "terabytes"),
        "kbps": ("kilobit per second", "kilobits per second"),
        "Mbps": ("megabit per second", "megabits per second"),
        "Mbit/s": ("megabit per second", "megabits per second"),
        "Gbps": ("gigabit per second", "gigabits per second"),
        "rpm": ("revolution per minute", "revolutions per minute"),
        "RPM": ("revolution per minute", "revolutions per minute"),
        "kcal": ("kilocalorie", "kilocalories"),
        "k": ("thousand", "thousand"),
        "M": ("million", "million"),
        "bn": ("billion", "billion"),
    }
)
# Symbols that mean a unit even without a number in front ("speed in km/h").
_STANDALONE = (
    "km/h", "m/s", "mm/h", "m³/h", "W/m²", "kWh", "MWh", "µg/m³", "μg/m³", "µg/m3", "ug/m3",
    "ug/m³", "mg/m³", "°C", "℃", "°F", "℉", "mph", "kph", "hPa", "ppm", "ppb", "Mbps", "Gbps",
    "dBm", "inHg",
)  # fmt: skip


def _alt(keys: tuple[str, ...] | list[str]) -> str:
    return "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))


CODES = _alt(list(_CURRENCIES))
SYM = _alt(list(_SYMBOLS))
SCALE = _alt(list(SCALES))
_PREFIX_MONEY_RE = re.compile(
    rf"(?<![\w$])(?P<neg>-)?(?:(?P<sym>{SYM})|\b(?P<code>{CODES})\b)\s?"
    rf"(?P<num>{NUMBER})(?:\s?(?P<scale>{SCALE})(?![\w]))?(?![\w])"
)
_SUFFIX_MONEY_RE = re.compile(
    rf"(?<![\w.,])(?P<neg>-)?(?P<num>{NUMBER})(?:\s?(?P<scale>{SCALE})(?![\w]))?\s?"
    rf"(?:(?P<sym>[€£¥₹₽₩$])|(?P<code>{CODES})\b)"
)
_CENTS_RE = re.compile(r"(?<![\w.,])(\d{1,2})(?:\s?(¢)|(p))(?![\w])")
_QUANTITY_RE = re.compile(
    rf"(?<![\w.,:/-])(?:(?P<sign>[-+])(?=\d))?(?P<a>{NUMBER})"
    rf"(?:{RANGE_MARK}(?P<b>{NUMBER}))?\s?(?P<unit>{_alt(list(_UNITS))})(?![\w])"
)
_PER_UNIT_RE = re.compile(rf"/\s?(?P<unit>{_alt(_STANDALONE)})(?![\w])")  # "€0.30/kWh"
_STANDALONE_RE = re.compile(rf"(?P<unit>{_alt(_STANDALONE)})(?![\w])")


# Cheap pre-scans (literal alternations and leading character classes scan fast).
_MONEY_HINT_RE = re.compile(f"{SYM}|{CODES}")
_CENTS_HINT_RE = re.compile(r"\d(?:\s?¢|p\b)")
_DIGIT_RE = re.compile(r"\d")


def _unit_name(name: str, gb: bool) -> str:
    return name.replace("meter", "metre").replace("liter", "litre") if gb else name


def currency(m: re.Match[str]) -> str:
    """The currency code of a match with a `sym` or a `code` group."""
    return _SYMBOLS[m["sym"]] if m["sym"] else m["code"]


def _money(m: re.Match[str], gb: bool) -> str:
    return say_money(currency(m), m["num"], gb, bool(m["neg"]), m["scale"])


def say_money(code: str, amount: str, gb: bool, neg: bool = False, scale: str | None = None) -> str:
    """ "1.25" dollars -> "one dollar and twenty-five cents"; `scale`: "k", "million"..."""
    money = _CURRENCIES[code]
    text = amount.replace(",", "")
    sign = "minus " if neg else ""
    if scale:
        return f"{sign}{number(text, gb)} {SCALES[scale]} {money.many}"
    whole, _, frac = text.partition(".")
    if money.sub_one is None or len(frac) > 2 or len(whole) > MOST_DIGITS:
        return f"{sign}{number(text, gb)} {money.one if text == '1' else money.many}"
    major, minor = int(whole), int(frac.ljust(2, "0")) if frac else 0
    parts = []
    if major or not minor:
        parts.append(f"{cardinal(major, gb)} {money.one if major == 1 else money.many}")
    if minor:
        parts.append(f"{cardinal(minor, gb)} {money.sub_one if minor == 1 else money.sub_many}")
    return sign + " and ".join(parts)


def _cents(m: re.Match[str], gb: bool) -> str:
    n = int(m[1])
    if m[2]:
        return f"{cardinal(n, gb)} {'cent' if n == 1 else 'cents'}"
    return f"{cardinal(n, gb)} {'penny' if n == 1 else 'pence'}"


def _quantity(m: re.Match[str], gb: bool) -> str:
    one, many = _UNITS[m["unit"]]
    sign = {"-": "minus ", "+": "plus "}.get(m["sign"] or "", "")
    if m["b"]:
        words = f"{sign}{number(range_end(m['a']), gb)} to {number(range_end(m['b']), gb)}"
    else:
        words = sign + number(m["a"], gb)
    name = one if m["a"] == "1" and not m["b"] else many
    return f"{words} {_unit_name(name, gb)}"


def _standalone(m: re.Match[str], gb: bool) -> str:
    start, one, many = m.start(), *_UNITS[m["unit"]]
    if m[0][0] == "/":
        return " per " + _unit_name(one, gb)
    if start and m.string[start - 1].isalnum():
        return m[0]  # inside a longer word
    # Singular after "per" ("price per kWh"), plural otherwise ("in km/h").
    if m.string[max(0, start - 4) : start].lower() == "per ":
        return _unit_name(one, gb)
    return _unit_name(many, gb)


def money(text: str, gb: bool) -> str:
    """Amounts of money (before units: "$5 m" is money, "5 m" a length)."""
    if _MONEY_HINT_RE.search(text):
        text = _PREFIX_MONEY_RE.sub(lambda m: _money(m, gb), text)
        text = _SUFFIX_MONEY_RE.sub(lambda m: _money(m, gb), text)
    if _CENTS_HINT_RE.search(text):
        text = _CENTS_RE.sub(lambda m: _cents(m, gb), text)
    return text


def units(text: str, gb: bool) -> str:
    """Numbers with units, then units standing alone."""
    if _DIGIT_RE.search(text):
        text = _QUANTITY_RE.sub(lambda m: _quantity(m, gb), text)
    if _STANDALONE_RE.search(text):
        text = _PER_UNIT_RE.sub(lambda m: _standalone(m, gb), text)
        text = _STANDALONE_RE.sub(lambda m: _standalone(m, gb), text)
    return text
