"""The words Spanish, French, Italian, Brazilian Portuguese and Hindi read numbers with:
decimal point, signs, ranges, percent, degrees, money, months (other.py applies them)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

Money = tuple[str, str, str | None, str | None, bool]  # one, many, cent, cents, feminine


class Lang(NamedTuple):
    n2w: str  # num2words code; "" for Hindi
    point: str  # word for the decimal separator
    minus: str
    plus: str
    to: str  # ranges: "5-10"
    percent: str
    degree: tuple[str, str]
    conj: str  # between whole units and cents
    and_: str  # "&"
    money: Mapping[str, Money]


LANGS = MappingProxyType(
    {
        "es": Lang("es", "coma", "menos", "más", "a", "por ciento", ("grado", "grados"), "con",
                   "y", MappingProxyType({
                       "EUR": ("euro", "euros", "céntimo", "céntimos", False),
                       "USD": ("dólar", "dólares", "centavo", "centavos", False),
                       "BRL": ("real", "reales", "centavo", "centavos", False),
                       "GBP": ("libra", "libras", "penique", "peniques", True),
                       "INR": ("rupia", "rupias", "paisa", "paisas", True),
                       "JPY": ("yen", "yenes", None, None, False)})),
        "fr": Lang("fr", "virgule", "moins", "plus", "à", "pour cent", ("degré", "degrés"), "et",
                   "et", MappingProxyType({
                       "EUR": ("euro", "euros", "centime", "centimes", False),
                       "USD": ("dollar", "dollars", "cent", "cents", False),
                       "BRL": ("réal", "réais", "centavo", "centavos", False),
                       "GBP": ("livre", "livres", "penny", "pence", True),
                       "INR": ("roupie", "roupies", "paisa", "paisas", True),
                       "JPY": ("yen", "yens", None, None, False),
                       "CHF": ("franc", "francs", "centime", "centimes", False)})),
        "it": Lang("it", "virgola", "meno", "più", "a", "per cento", ("grado", "gradi"), "e",
                   "e", MappingProxyType({
                       "EUR": ("euro", "euro", "centesimo", "centesimi", False),
                       "USD": ("dollaro", "dollari", "centesimo", "centesimi", False),
                       "BRL": ("real", "reais", "centavo", "centavos", False),
                       "GBP": ("sterlina", "sterline", "penny", "pence", True),
                       "INR": ("rupia", "rupie", "paisa", "paise", True),
                       "JPY": ("yen", "yen", None, None, False),
                       "CHF": ("franco", "franchi", "centesimo", "centesimi", False)})),
        "pt-br": Lang("pt_BR", "vírgula", "menos", "mais", "a", "por cento", ("grau", "graus"),
                      "e", "e", MappingProxyType({
                          "BRL": ("real", "reais", "centavo", "centavos", False),
                          "EUR": ("euro", "euros", "centavo", "centavos", False),
                          "USD": ("dólar", "dólares", "centavo", "centavos", False),
                          "GBP": ("libra", "libras", "pêni", "pence", True),
                          "INR": ("rupia", "rupias", "paisa", "paisas", True),
                          "JPY": ("iene", "ienes", None, None, False)})),
        "hi": Lang("", "दशमलव", "माइनस", "प्लस", "से", "प्रतिशत", ("डिग्री", "डिग्री"), "",
                   "और", MappingProxyType({
                       "INR": ("रुपया", "रुपये", "पैसा", "पैसे", False),
                       "USD": ("डॉलर", "डॉलर", "सेंट", "सेंट", False),
                       "EUR": ("यूरो", "यूरो", "सेंट", "सेंट", False),
                       "GBP": ("पाउंड", "पाउंड", "पेंस", "पेंस", False),
                       "JPY": ("येन", "येन", None, None, False)})),
    }
)  # fmt: skip

TEMPERATURE = MappingProxyType({"C": "Celsius", "F": "Fahrenheit"})
TEMPERATURE_HI = MappingProxyType({"C": "सेल्सियस", "F": "फ़ारेनहाइट"})
# "un millón de euros": what joins a number of millions to its noun.
OF = MappingProxyType({"es": " de ", "fr": " de ", "it": " di ", "pt-br": " de "})

# Month names, and how a day and a year join them ("5 de marzo de 2024", "5 mars 2024").
MONTHS = MappingProxyType(
    {
        "es": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
               "septiembre", "octubre", "noviembre", "diciembre"),
        "fr": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
               "septembre", "octobre", "novembre", "décembre"),
        "it": ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto",
               "settembre", "ottobre", "novembre", "dicembre"),
        "pt-br": ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto",
                  "setembro", "outubro", "novembro", "dezembro"),
        "hi": ("जनवरी", "फ़रवरी", "मार्च", "अप्रैल", "मई", "जून", "जुलाई", "अगस्त", "सितंबर",
               "अक्टूबर", "नवंबर", "दिसंबर"),
    }
)  # fmt: skip
FIRST_DAY = MappingProxyType({"fr": "premier", "it": "primo", "pt-br": "primeiro"})
