"""Errors the engine raises on input it cannot size. Messages are one line and name the bad option."""


class SizingError(ValueError):
    """A scenario or spec the engine cannot compute (bad option, non-dividing tensor parallel, ...).

    ``str(error)`` is the command line's message (the estimate contract). Errors a web visitor can reach through
    the configurator also carry a ``code`` and ``params``, so the site can say the same in the visitor's language
    and with the configurator's words (reports/engine_messages.py).
    """

    def __init__(self, message: str, *, code: str = "", params: dict | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.params = params or {}


class ConfigError(SizingError):
    """A config.json that is malformed or describes an architecture the engine does not know."""
