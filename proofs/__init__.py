"""z3 proofs about the reference model's rules (allocation, checkpoint encoding, offsets)."""
