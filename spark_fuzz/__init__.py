"""Distributed fuzz campaigns of the reference model on Apache Spark."""
