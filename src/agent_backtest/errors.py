"""The two kinds of mistake a user can make, on the ground floor so every layer can raise them.

:class:`UserError` names the parameter at fault by its Python name (``model``, ``judge``,
``out``); the command line shows it as its flag through one table in ``cli/``. :class:`InputError`
names a file and the place in it. Neither is ever shown as a traceback. :class:`RecordError` is
one record inside a readable file that cannot be used; readers count it under its reason.
:class:`Terminated` is a stop asked for with SIGTERM: like Ctrl-C's ``KeyboardInterrupt``, not
an ``Exception``, and apart from it, so the command line can exit 143 rather than 130.
"""

from __future__ import annotations

import threading
from pathlib import Path

MAX_MESSAGE = 600
"""Characters of a message shown at most: a value quoted in one (an 8 MB field of a hostile
input) is cut, so an error stays one readable line."""


def bounded(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text``, cut to ``limit`` characters with a note of its length when longer."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


class UserError(Exception):
    """A mistake the user can fix; the message says what is wrong and how to fix it."""

    def __init__(self, message: str, parameter: str | None = None) -> None:
        self.message = bounded(message)
        self.parameter = parameter
        super().__init__(str(self))

    def subject(self) -> str | None:
        """What the error is about, as a Python user names it (the parameter)."""
        return self.parameter

    def __str__(self) -> str:
        subject = self.subject()
        return f"{subject}: {self.message}" if subject else self.message

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled with its fields, whatever its class's arguments: an error raised in a
        worker process reaches the command line as it was raised."""
        return _rebuilt, (type(self), dict(self.__dict__))


def _rebuilt(kind: type[UserError], fields: dict[str, object]) -> UserError:
    """A :class:`UserError` of class ``kind`` with ``fields``, as it was pickled."""
    error = kind.__new__(kind)
    error.__dict__.update(fields)
    Exception.__init__(error, str(error))
    return error


class InputError(UserError):
    """A file that cannot be used; the message names the file, the location and the fix."""

    def __init__(
        self, file: str | Path, location: str | None, message: str, parameter: str | None = None
    ) -> None:
        self.file = bounded(str(file), 300)
        self.location = bounded(location, 200) if location is not None else None
        super().__init__(message, parameter)

    def subject(self) -> str:
        return f"{self.file}: {self.location}" if self.location else self.file


class RecordError(Exception):
    """One record that cannot become a step or unit: a named reason and what was wrong."""

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = bounded(detail, 300)
        super().__init__(f"{reason}: {detail}")


class Terminated(BaseException):
    """The process was asked to stop (SIGTERM); a run it was writing is marked interrupted.

    A signal handler's exception can be lost (Python ignores one raised while a finaliser
    runs, and asyncio logs and drops one raised in a plain callback), so the request is also
    kept in :data:`TERMINATION`, which the replay loop and the command line check.
    """


TERMINATION = threading.Event()
"""Set once SIGTERM arrived: a stop asked for is never lost, even when its exception was."""
