"""A property violation: the record every checker produces (and a run's result carries)."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Violation:
    """A property violated at a step of a run (step == steps: in the final drain)."""

    property_id: str
    message: str
    step: int

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property_id, "message": self.message, "step": self.step}
