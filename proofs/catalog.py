"""Every proof, by name, in the order `popverify prove` runs them."""

from __future__ import annotations

from proofs import allocation, checkpoint, keys, offsets
from proofs.framework import Proof

ALL: dict[str, Proof] = {p.name: p for p in (*allocation.PROOFS, *checkpoint.PROOFS, *offsets.PROOFS, *keys.PROOFS)}
