"""An ASCII spelling of any text, close to the Rust ``deunicode`` crate Zola's slugs use
(:func:`deunicode`), and the self-filling ``str.translate`` table the slug rules share
(:class:`CharTable`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from types import MappingProxyType

from studykb.runtime import process


class CharTable(dict[int, str | None]):
    """A ``str.translate`` table that works out each code point once, on first sight."""

    def __init__(self, decide: Callable[[str], str | None]) -> None:
        super().__init__()
        self._decide = decide

    def __missing__(self, code: int) -> str | None:
        value = self._decide(chr(code))
        self[code] = value
        return value


# Transliteration for Zola's ``slug`` crate (deunicode). Latin letters come from Unicode
# decomposition; these letters do not decompose, or deunicode spells them otherwise.
_SPECIAL_LATIN = MappingProxyType(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "ø": "o",
        "Ø": "O",
        "œ": "oe",
        "Œ": "OE",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "þ": "th",
        "Þ": "TH",
        "ł": "l",
        "Ł": "L",
        "ı": "i",
        "ħ": "h",
        "Ħ": "H",
        "ŋ": "ng",
        "Ŋ": "NG",
        "ĸ": "q",
        "ſ": "s",
        "‘": "'",
        "’": "'",
        "“": '"',
        "”": '"',
        "–": "-",
        "—": "--",
        "…": "...",
        "€": "EUR",
        "£": "PS",
        "¥": "Y",
        "©": "(c)",
        "®": "(r)",
        "™": "tm",
        "×": "x",
        "÷": "/",
        "°": "deg",
    }
)
_CYRILLIC = MappingProxyType(
    dict(
        zip(
            "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґў",
            [
                "a",
                "b",
                "v",
                "g",
                "d",
                "e",
                "io",
                "zh",
                "z",
                "i",
                "i",
                "k",
                "l",
                "m",
                "n",
                "o",
                "p",
                "r",
                "s",
                "t",
                "u",
                "f",
                "kh",
                "ts",
                "ch",
                "sh",
                "shch",
                "",
                "y",
                "'",
                "e",
                "iu",
                "ia",
                "i",
                "i",
                "ie",
                "g",
                "u",
            ],
            strict=True,
        )
    )
)
_GREEK = MappingProxyType(
    dict(
        zip(
            "αβγδεζηθικλμνξοπρσςτυφχψω",
            [
                "a",
                "b",
                "g",
                "d",
                "e",
                "z",
                "e",
                "th",
                "i",
                "k",
                "l",
                "m",
                "n",
                "x",
                "o",
                "p",
                "r",
                "s",
                "s",
                "t",
                "u",
                "ph",
                "kh",
                "ps",
                "o",
            ],
            strict=True,
        )
    )
)
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def _deunicode_char(ch: str) -> str | None:
    if ch in _SPECIAL_LATIN:
        return _SPECIAL_LATIN[ch]
    low = ch.lower()
    spelled = _CYRILLIC[low] if low in _CYRILLIC else _GREEK.get(low)
    if spelled is not None:
        return spelled.capitalize() if low != ch else spelled
    decomposed = unicodedata.normalize("NFKD", ch)
    ascii_part = decomposed.encode("ascii", "ignore").decode("ascii")
    return ascii_part if ascii_part else " "


def _deunicode_table() -> CharTable:
    """The process's transliteration table, each character decided on first sight."""
    return process.once("deunicode", lambda: CharTable(_deunicode_char))


@process.memo(maxsize=1 << 14)
def _pinyin(run: str) -> str:
    try:
        # deferred: pypinyin loads only to spell Chinese names
        from pypinyin import lazy_pinyin
    except ImportError:  # pragma: no cover - pypinyin is a dependency
        return " "
    # deunicode gives each Han character its first Mandarin reading followed by a space
    return " " + " ".join(lazy_pinyin(run, v_to_u=True)) + " "


def deunicode(text: str) -> str:
    """An ASCII spelling of ``text``, close to the Rust ``deunicode`` crate Zola uses.

    Latin letters lose their accents, Cyrillic and Greek are romanized, Han characters
    become pinyin (``日本`` -> ``ri ben``); what has no spelling becomes a space.
    """
    if text.isascii():
        return text
    if _HAN.search(text):
        text = _HAN.sub(lambda run: _pinyin(run.group(0)), text)
    return text.translate(_deunicode_table()).encode("ascii", "ignore").decode("ascii")
