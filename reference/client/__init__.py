"""The client half of the reference model: allocation, push consumer, ProcessQueue, offset stores, POP client."""
