"""Deterministic scenario drivers over the reference model (POP mode; push mode when present)."""
