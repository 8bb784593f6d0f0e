"""Template helpers of the error-analysis pages: a text shown in its own script, with its direction."""

from __future__ import annotations

from django import template
from django.utils.html import format_html

from evaluation.languages import BY_CODE

register = template.Library()


@register.simple_tag
def script_text(code: str, text: str | None, tag: str = "p") -> str:
    """`<p lang=… dir=… class="text script-…">text</p>`: right to left for Urdu, the script's Noto font."""
    if text is None:
        return format_html('<{} class="missing">text not in the dataset</{}>', tag, tag)
    info = BY_CODE.get(code)
    if info is None or code == "eng":
        return format_html('<{} class="text" lang="en" dir="ltr">{}</{}>', tag, text, tag)
    return format_html(
        '<{} class="text script-{}" lang="{}" dir="{}">{}</{}>',
        tag,
        info.script.lower(),
        code,
        "rtl" if info.rtl else "ltr",
        text,
        tag,
    )
