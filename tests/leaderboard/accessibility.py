"""axe-core's audit of the page a browser test has open.

axe-core is vendored under tests/assets/axe-core/ (from the npm registry; nothing is fetched while the
tests run). It is evaluated through Playwright, not added as a script tag: the site's
Content-Security-Policy forbids inline scripts, and code evaluated by the driver is not the page's,
so a page is audited under the policy it is served with.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

AXE = Path(__file__).resolve().parent.parent / "assets" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


@cache
def axe_source() -> str:
    return AXE.read_text(encoding="utf-8")


def serious_violations(page) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now, one line per element."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        # An indirect eval runs the bundle in the page's global scope, where it defines window.axe.
        page.evaluate("source => { (0, eval)(source); }", axe_source())
    violations = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [
        f"{violation['id']} ({violation['impact']}): {node['target']} {node['failureSummary'][:160]!r}"
        for violation in violations
        if violation["impact"] in SERIOUS
        for node in violation["nodes"]
    ]
