"""Pieces shared by the broker and client models: Java semantics, virtual time, profiles."""
