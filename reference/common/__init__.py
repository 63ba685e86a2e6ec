"""The ground floor of the model: records both halves exchange (messages, queues, codes, POP
records, exceptions), Java semantics, virtual time, profile names. Imports nothing above it."""
