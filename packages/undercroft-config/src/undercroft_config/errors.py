"""Typed errors of `undercroft_config`."""

__all__ = ["Error", "Refused", "StartRefused", "UnknownDeclaration"]


class Error(Exception):
    """Base of every error raised by `undercroft_config` (this distribution does not depend on core)."""

    #: "run" (exit 1) or "integrity" (exit 2).
    error_class = "run"


class Refused(Error, ValueError):
    """A declaration that refuses to start: the message names the variable, the value read and what is legal.

    Raised for the class of declarations that turn a protection on, pin an outward path or name a vector
    space, where falling back to the default would silently remove what the operator asked for.
    """

    def __init__(self, name: str, shown: str, message: str) -> None:
        """Record the variable, how its value is shown (secrets are never echoed) and the full message."""
        super().__init__(message)
        self.name = name
        self.shown = shown
        self.message = message


class StartRefused(Error, ValueError):
    """The environment refuses to start: one or more declarations refused; each message names its variable.

    Raised by `undercroft_config.startup.start` before a program opens anything, with every refusal at once
    (the same entries `config check` reports), so fixing one does not reveal the next only on the next run.
    """

    def __init__(self, names: tuple[str, ...], messages: tuple[str, ...]) -> None:
        """Record the refusing variables and their messages, in name order."""
        lines = "\n".join(f"  {line}" for line in messages)
        plural = "declaration" if len(messages) == 1 else "declarations"
        super().__init__(
            f"this environment refuses to start ({len(messages)} {plural}; "
            f"undercroft config check reports every one):\n{lines}"
        )
        self.names = names
        self.messages = messages


class UnknownDeclaration(Error, KeyError):
    """A name no resolver is registered for."""

    def __str__(self) -> str:
        """Show the message, not KeyError's quoted repr."""
        return str(self.args[0]) if self.args else ""
