"""Text from data as Markdown: :func:`escape` (the same text, never HTML, a link, a role,
emphasis or math) and :func:`paper_math` (a paper's value with its formulas as inline math)."""

import re

__all__ = ["clip", "escape", "paper_math", "quoted"]

_SPECIAL = re.compile(r"([\\`*_\[\]<>|$#~^{}&])")


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters for a one-line message, saying how long it was.

    >>> clip("abc", 5), clip("abcdefgh", 3)
    ('abc', 'abc... (8 characters)')
    """
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def quoted(value, limit: int = 60) -> str:
    """``repr(value)`` for a one-line message: its first line, at most ``limit`` characters.

    >>> quoted("x" * 100, 10), quoted("a\\nb")
    ("'xxxxxxxxxx... (100 characters)", "'a... (2 lines)")
    """
    text = str(value)
    lines = text.splitlines() or [""]
    if len(lines[0]) > limit:
        return repr(lines[0][:limit])[:-1] + f"... ({len(text)} characters)"
    if len(lines) > 1:
        return repr(lines[0])[:-1] + f"... ({len(lines)} lines)"
    return repr(text)


def escape(text) -> str:
    """Plain text as Markdown that renders as the same text (no emphasis, math, links, HTML).

    >>> escape("H(n-1)+1 <= 3^L, r_e = 1 | 2")
    'H(n-1)+1 \\\\<= 3\\\\^L, r\\\\_e = 1 \\\\| 2'
    >>> escape("<script>")
    '\\\\<script\\\\>'
    """
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


# -- the paper's values as math ----------------------------------------------------------------
_MATH_WORDS = {"log": r"\log", "log3": r"\log_3", "sep": r"\operatorname{sep}",
               "rank": r"\operatorname{rank}", "min": r"\min", "max": r"\max",
               "floor": "floor", "Theta": r"\Theta", "eps": r"\epsilon", "infinity": r"\infty"}
_ALWAYS_MATH = {"log", "sep", "eps", "infinity", "Theta"}  # math wherever they stand
_OPERATORS = {"<=", ">=", ">~", "~", "->", "=", "<", ">", "+", "-", "x", "/"}
_STRONG = re.compile(r"[\^_=<>/]|[A-Za-z0-9)]\(")


def _token_kind(token: str) -> str:
    """'strong' (surely a formula), 'weak' (a formula's part: a variable, a number, an
    operator) or 'word'."""
    if token in _OPERATORS:
        return "weak"
    bare = token.rstrip(",")
    for run in re.finditer(r"(?<![_A-Za-z])([A-Za-z]+)\d*(\(?)", bare):
        w, call = run.group(1), run.group(2)
        if len(w) > 1 and w not in _ALWAYS_MATH and not (call and w in _MATH_WORDS):
            return "word"
    if _STRONG.search(bare) or any(w in _ALWAYS_MATH for w in re.findall(r"[A-Za-z]+", bare)):
        return "strong"
    core = bare.strip("()")
    if re.fullmatch(r"[A-HJ-Za-z]\d*|\d+(\.\d+)?", core) and core not in ("a", "A"):
        return "weak"
    return "word"


def _group(text: str, i: int) -> int:
    """Index just past the parenthesized group that starts at ``text[i] == '('``."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j + 1
    return len(text)


def _top_split(text: str) -> list[str]:
    parts, depth, last = [], 0, 0
    for j, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[last:j])
            last = j + 1
    return parts + [text[last:]]


def _tex(span: str) -> str:
    """An ASCII formula in TeX: ``(d/r)^(1/eps)`` -> ``(d/r)^{1/\\epsilon}`` and so on."""
    out, i = [], 0
    while i < len(span):
        ch = span[i]
        if span.startswith("((", i):  # multiset coefficient ((n, k))
            end = _group(span, i)
            inner = span[i + 2:end - 2]
            parts = _top_split(inner)
            if span[end - 2:end] == "))" and len(parts) == 2:
                top, bottom = (_tex(part.strip()) for part in parts)
                out.append(r"\left(\!\!\binom{" + top + "}{" + bottom + r"}\!\!\right)")
                i = end
                continue
        if ch == "^":
            j = i + 1
            if j < len(span) and span[j] == "(":
                end = _group(span, j)
                out.append("^{" + _tex(span[j + 1:end - 1]) + "}")
            else:
                m = re.match(r"[A-Za-z0-9]+(_[A-Za-z0-9]+)?(\([^()]*\))?", span[j:])
                end = j + (m.end() if m else 0)
                out.append("^{" + _tex(span[j:end]) + "}")
            i = end
            continue
        if ch == "_":
            m = re.match(r"[A-Za-z0-9]+", span[i + 1:])
            end = i + 1 + (m.end() if m else 0)
            out.append("_{" + span[i + 1:end] + "}")
            i = end
            continue
        m = re.match(r"[A-Za-z]+\d*", span[i:])
        if m and (i == 0 or not span[i - 1].isalnum()):
            word = m.group()
            if word == "floor" and span[i + len(word):i + len(word) + 1] == "(":
                end = _group(span, i + len(word))
                out.append(r"\lfloor " + _tex(span[i + len(word) + 1:end - 1]) + r" \rfloor")
                i = end
                continue
            if word == "Theta" and span[i + 5:i + 6] == "~":
                out.append(r"\tilde{\Theta}")
                i += 6
                continue
            if word == "x" and span[i - 1:i] == " " and span[i + 1:i + 2] == " ":
                out.append(r"\times")
            else:
                out.append(_MATH_WORDS.get(word, word) + (" " if word in _MATH_WORDS
                                                          and word != "floor" else ""))
            i += len(word)
            continue
        for op, tex in (("<=", r"\le "), (">=", r"\ge "), (">~", r"\gtrsim "), ("->", r"\to "),
                        ("~", r"\sim ")):
            if span.startswith(op, i):
                out.append(tex)
                i += len(op)
                break
        else:
            # text from the ledger stays text inside the formula: nothing closes the math or
            # reads as HTML
            out.append({"%": r"\%", "{": r"\{", "}": r"\}", "<": r"\lt ", ">": r"\gt ",
                        "&": r"\&", "$": r"\$", "\\": r"\backslash ", "`": "'",
                        "#": r"\#"}.get(ch, ch))
            i += 1
    return re.sub(r" +", " ", "".join(out)).strip()


def _math_run(run: list, kinds: list) -> list:
    """Tokens with no word among them: the formula in ``$...$``, operators at its ends and an
    unmatched opening parenthesis left as text."""
    lo, hi = 0, len(run)
    while lo < hi and run[lo] in _OPERATORS:
        lo += 1
    while hi > lo and run[hi - 1] in _OPERATORS:
        hi -= 1
    if lo >= hi or "strong" not in kinds[lo:hi]:
        return [_word(t) for t in run]
    core = " ".join(run[lo:hi])
    if core.count("(") > core.count(")"):  # "V (V=500": the parenthesis opens a remark
        for i in range(hi - 1, lo - 1, -1):
            if run[i].startswith("(") and i > lo:
                rest = run[i][1:]
                after = _math_run([rest, *run[i + 1:]], [_token_kind(rest), *kinds[i + 1:]])
                return _math_run(run[:i], kinds[:i]) + ["(" + after[0], *after[1:]]
    comma = core.endswith(",")
    core, close = core.removesuffix(","), ""
    while core.count(")") > core.count("(") and core.endswith(")"):  # "(4.4 and 5.22 x H+1)":
        core, close = core[:-1], close + ")"  # the parenthesis closes a remark opened in words
    return ([_word(t) for t in run[:lo]] + [f"${_tex(core)}${close}" + ("," if comma else "")]
            + [_word(t) for t in run[hi:]])


def _word(token: str) -> str:
    """A token of the paper's value left as text: escaped, but for a bare operator (``~``,
    ``<=``), which Markdown reads as itself."""
    return token if token in _OPERATORS else escape(token)


def paper_math(text: str) -> str:
    """The paper's value as MyST Markdown, its formulas as inline math (``$...$``), its words
    as they are.

    >>> paper_math("H >~ (d/r)^(1/eps)")
    '$H \\\\gtrsim (d/r)^{1/\\\\epsilon}$'
    >>> paper_math("degree 3^L; C(L)=(3^L-1)/2")
    'degree $3^{L}$; $C(L)=(3^{L}-1)/2$'
    >>> paper_math("monotone increasing in n")
    'monotone increasing in n'
    >>> paper_math("n=32 (4.4 and 5.22 x H(n-1)+1)")  # the last parenthesis closes the words
    '$n=32$ (4.4 and $5.22 \\\\times H(n-1)+1$)'
    """
    out = []
    for seg in re.split(r"(; |: )", str(text)):
        if seg in ("; ", ": "):
            out.append(seg)
            continue
        seg = " ".join(seg.splitlines())
        tokens = seg.split(" ")
        kinds = [_token_kind(t) for t in tokens]
        pieces, k = [], 0
        while k < len(tokens):
            if kinds[k] == "word":
                pieces.append(_word(tokens[k]))
                k += 1
                continue
            j = k
            while j < len(tokens) and kinds[j] != "word":
                j += 1
                if tokens[j - 1].endswith(",") and tokens[j - 1].count("(") <= tokens[
                        j - 1].count(")") and " ".join(tokens[k:j]).count("(") <= " ".join(
                        tokens[k:j]).count(")"):
                    break  # a comma between formulas, not inside one
            pieces += _math_run(tokens[k:j], kinds[k:j])
            k = j
        out.append(" ".join(pieces))
    return "".join(out)
