"""popverify: the verification suite for Apache RocketMQ 5.x message consumption.

This package holds the tools (CLI, drivers, checkers, reports); the executable model of
RocketMQ itself lives in the ``reference`` package and knows nothing of this one.
"""

__version__ = "0.1.0"
