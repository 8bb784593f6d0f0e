"""The benchmark's languages and scripts. Plain data, no Django, so the engine can use it too."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class LanguageInfo:
    code: str  # ISO 639-3
    name: str
    script: str  # ISO 15924
    script_name: str
    family: str
    rtl: bool = False
    is_source: bool = False
    # The language's name in its own script (its endonym), shown beside the English name.
    native: str = ""

    @property
    def bcp47(self) -> str:
        """The tag a page's `lang` attribute takes (BCP 47: the shortest ISO 639 code, `hi` not `hin`)."""
        return BCP47.get(self.code, self.code)

    @property
    def name_with_native(self) -> str:
        return self.name if not self.native or self.native == self.name else f"{self.name} · {self.native}"


LANGUAGES: tuple[LanguageInfo, ...] = (
    LanguageInfo("eng", "English", "Latn", "Latin", "Germanic", is_source=True, native="English"),
    LanguageInfo("asm", "Assamese", "Beng", "Bengali–Assamese", "Indo-Aryan", native="অসমীয়া"),
    LanguageInfo("ben", "Bengali", "Beng", "Bengali–Assamese", "Indo-Aryan", native="বাংলা"),
    LanguageInfo("guj", "Gujarati", "Gujr", "Gujarati", "Indo-Aryan", native="ગુજરાતી"),
    LanguageInfo("hin", "Hindi", "Deva", "Devanagari", "Indo-Aryan", native="हिन्दी"),
    LanguageInfo("kan", "Kannada", "Knda", "Kannada", "Dravidian", native="ಕನ್ನಡ"),
    LanguageInfo("mal", "Malayalam", "Mlym", "Malayalam", "Dravidian", native="മലയാളം"),
    LanguageInfo("mar", "Marathi", "Deva", "Devanagari", "Indo-Aryan", native="मराठी"),
    LanguageInfo("ory", "Odia", "Orya", "Odia", "Indo-Aryan", native="ଓଡ଼ିଆ"),
    LanguageInfo("pan", "Punjabi", "Guru", "Gurmukhi", "Indo-Aryan", native="ਪੰਜਾਬੀ"),
    LanguageInfo("tam", "Tamil", "Taml", "Tamil", "Dravidian", native="தமிழ்"),
    LanguageInfo("tel", "Telugu", "Telu", "Telugu", "Dravidian", native="తెలుగు"),
    LanguageInfo("urd", "Urdu", "Arab", "Perso-Arabic (Nastaliq)", "Indo-Aryan", rtl=True, native="اردو"),
)
# BCP 47 asks for the two-letter ISO 639-1 code where a language has one; screen readers and browsers
# (hyphenation, font choice) know `hi`, not `hin`. Odia's two-letter code is `or`.
BCP47: dict[str, str] = {
    "eng": "en",
    "asm": "as",
    "ben": "bn",
    "guj": "gu",
    "hin": "hi",
    "kan": "kn",
    "mal": "ml",
    "mar": "mr",
    "ory": "or",
    "pan": "pa",
    "tam": "ta",
    "tel": "te",
    "urd": "ur",
}
BY_CODE: dict[str, LanguageInfo] = {lang.code: lang for lang in LANGUAGES}
BY_NAME: dict[str, LanguageInfo] = {lang.name.lower(): lang for lang in LANGUAGES}
TARGET_CODES: tuple[str, ...] = tuple(lang.code for lang in LANGUAGES if not lang.is_source)

# Unicode blocks of each script, used to check that a file's text is in the script its name claims.
SCRIPT_RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "Latn": ((0x0041, 0x005A), (0x0061, 0x007A), (0x00C0, 0x024F)),
    "Beng": ((0x0980, 0x09FF),),
    "Gujr": ((0x0A80, 0x0AFF),),
    "Deva": ((0x0900, 0x097F), (0xA8E0, 0xA8FF)),
    "Knda": ((0x0C80, 0x0CFF),),
    "Mlym": ((0x0D00, 0x0D7F),),
    "Orya": ((0x0B00, 0x0B7F),),
    "Guru": ((0x0A00, 0x0A7F),),
    "Taml": ((0x0B80, 0x0BFF),),
    "Telu": ((0x0C00, 0x0C7F),),
    "Arab": ((0x0600, 0x06FF), (0x0750, 0x077F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)),
}

DATASET_FILE_PATTERN = re.compile(r"^nirdesha_(?P<code>[a-z]{3})_(?P<script>[A-Z][a-z]{3})\.jsonl$")


# One character class per script: the regular expression engine counts letters in C, about a
# thousand times faster than testing every character against every range in Python.
_SCRIPT_PATTERNS: dict[str, re.Pattern[str]] = {
    script: re.compile("[" + "".join(f"{re.escape(chr(low))}-{re.escape(chr(high))}" for low, high in ranges) + "]")
    for script, ranges in SCRIPT_RANGES.items()
}


def dominant_script(text: str) -> str | None:
    """The script with the most letters in `text`, or None when it has no letters of a known script.

    A tie goes to the script whose first letter comes first in the text.
    """
    found: list[tuple[int, int, str]] = []
    for script, pattern in _SCRIPT_PATTERNS.items():
        first = pattern.search(text)
        if first is not None:
            found.append((first.start(), len(pattern.findall(text, first.start())), script))
    if not found:
        return None
    found.sort()
    # max() keeps the first of equal counts, and `found` is in order of each script's first letter.
    return max(found, key=lambda entry: entry[1])[2]
