"""Errors the engine raises on input it cannot size. Messages are one line and name the bad option."""


class SizingError(ValueError):
    """A scenario or spec the engine cannot compute (bad option, non-dividing tensor parallel, ...)."""


class ConfigError(SizingError):
    """A config.json that is malformed or describes an architecture the engine does not know."""
