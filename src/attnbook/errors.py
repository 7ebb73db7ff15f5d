"""The one family of user-facing errors: every bad input ends in one clear line."""

__all__ = ["AttnbookError", "ParameterError", "require", "check_int"]


class AttnbookError(Exception):
    """Base class: the message is one line that says what is wrong and what is allowed."""


class ParameterError(AttnbookError, ValueError):
    """A parameter is unknown, of the wrong type, or outside its allowed range.

    >>> str(ParameterError("n", 40, "n < d = 32 (mahdavi2024, Theorem 1)"))
    'parameter n = 40 is out of range: allowed n < d = 32 (mahdavi2024, Theorem 1)'
    """

    def __init__(self, name: str, value, allowed: str, *, problem: str = "is out of range"):
        self.name, self.value, self.allowed = name, value, allowed
        super().__init__(f"parameter {name} = {value!r} {problem}: allowed {allowed}")


def require(condition: bool, name: str, value, allowed: str) -> None:
    """Raise :class:`ParameterError` naming ``name`` unless ``condition`` holds.

    >>> require(3 < 5, "n", 3, "n < d = 5")
    >>> require(7 < 5, "n", 7, "n < d = 5")
    Traceback (most recent call last):
    ...
    attnbook.errors.ParameterError: parameter n = 7 is out of range: allowed n < d = 5
    """
    if not condition:
        raise ParameterError(name, value, allowed)


def check_int(name: str, value, low: int, high: int | None = None, *, allowed: str | None = None,
              what: str = "") -> int:
    """``value`` as an int if it is an integer in [low, high], else :class:`ParameterError`.

    ``allowed`` replaces the stated range; ``what`` adds a reason in brackets.

    >>> check_int("H", 4, 1)
    4
    >>> check_int("H", 0, 1, 8)
    Traceback (most recent call last):
    ...
    attnbook.errors.ParameterError: parameter H = 0 is out of range: allowed an integer 1 <= H <= 8
    """
    import numbers

    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= low \
        and (high is None or value <= high)
    if not ok:
        if allowed is None:
            allowed = (f"an integer {low} <= {name} <= {high}" if high is not None
                       else f"an integer >= {low}")
        raise ParameterError(name, value, allowed + (f" ({what})" if what else ""))
    return int(value)
