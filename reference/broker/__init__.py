"""The broker half of the reference model: store, POP, ack, checkpoint merge, revive, offsets."""
