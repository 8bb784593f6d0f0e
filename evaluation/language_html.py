"""A language's name for pages, its endonym marked with its own BCP 47 tag (for screen readers and fonts)."""

from __future__ import annotations

from django.utils.html import format_html
from django.utils.safestring import SafeString

from evaluation.engine.languages import LanguageInfo


def name_with_native_html(info: LanguageInfo) -> SafeString:
    """'Hindi · <span lang="hi">हिन्दी</span>': read in Hindi by a screen reader, not as English."""
    if not info.native or info.native == info.name:
        return format_html("{}", info.name)
    return format_html('{} · <span lang="{}">{}</span>', info.name, info.bcp47, info.native)
