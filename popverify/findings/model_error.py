"""Model errors (issue 17 item 2): an exception raised inside ``reference/`` is a finding.

Before the model is called, the engine checks a schedule entry's arguments against the
action's declaration (popverify/sim/actions.py: arity, int/bool, bounds): a foreign schedule
is rejected with a clear ValueError, never skipped silently. An exception whose traceback
reaches a frame in ``reference/`` ends the run as a violation of the pseudo-property
``MODEL-ERROR``; its message names the exception type and the innermost ``reference/`` frame, and the full
traceback is kept in the run's result. Anything else (a driver bug) propagates.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import attrs

MODEL_ERROR = "MODEL-ERROR"
REFERENCE_DIR = Path(__file__).resolve().parent.parent.parent / "reference"


@attrs.frozen
class ModelError:
    """What a model exception left: the one-line message and the full traceback text."""

    message: str
    traceback: str


def _in_reference(filename: str) -> bool:
    try:
        Path(filename).resolve().relative_to(REFERENCE_DIR)
    except ValueError:
        return False
    return True


def model_error_of(err: BaseException) -> ModelError | None:
    """The ModelError of ``err`` if its traceback passes through ``reference/``, else None."""
    tb: TracebackType | None = err.__traceback__
    innermost = None
    while tb is not None:
        if _in_reference(tb.tb_frame.f_code.co_filename):
            innermost = tb
        tb = tb.tb_next
    if innermost is None:
        return None
    code = innermost.tb_frame.f_code
    where = Path(code.co_filename).resolve().relative_to(REFERENCE_DIR.parent)
    message = f"{type(err).__name__}: {err} (at {where}:{innermost.tb_lineno} in {code.co_name})"
    # Paths relative to the checkout: a replay elsewhere gives the same bytes.
    text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    text = text.replace(str(REFERENCE_DIR.parent) + "/", "")
    return ModelError(message, text)


def call_model(call: Callable[[], Any]) -> tuple[Any, ModelError | None]:
    """Run ``call`` (a driver step that calls the model); a model exception becomes a ModelError.

    The catch is broad on purpose and narrowed at once: only an exception that passed through
    ``reference/`` is turned into a finding, every other one is re-raised unchanged.
    """
    try:
        return call(), None
    except Exception as err:  # noqa: BLE001 -- re-raised below unless it came from reference/
        found = model_error_of(err)
        if found is None:
            raise
        return None, found
