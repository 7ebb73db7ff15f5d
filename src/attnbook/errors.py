"""The one family of user-facing errors: every bad input ends in one clear line."""

__all__ = ["AttnbookError", "ParameterError"]


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
