"""Text from data (the ledger, a stored result, the manifest) as Markdown that renders as the
same text: never as HTML, a link, a role, emphasis or math. The chapters' verdicts and the
generated pages use it alike."""

import re

__all__ = ["escape"]

_SPECIAL = re.compile(r"([\\`*_\[\]<>|$#~^{}&])")


def escape(text) -> str:
    """Plain text as Markdown that renders as the same text (no emphasis, math, links, HTML).

    >>> escape("H(n-1)+1 <= 3^L, r_e = 1 | 2")
    'H(n-1)+1 \\\\<= 3\\\\^L, r\\\\_e = 1 \\\\| 2'
    >>> escape("<script>")
    '\\\\<script\\\\>'
    """
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
