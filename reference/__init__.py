"""The reference model: an executable, sans-IO model of Apache RocketMQ 5.x consumption.

No threads, sockets or wall clock: time is a VirtualClock the driver advances and all
randomness comes from one seeded JavaRandom. This package imports nothing from popverify,
Hypothesis, Spark or TLC.
"""
