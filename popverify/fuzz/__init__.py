"""Fuzz campaigns of the reference model: one planner (plan.py: seeds, swarm configurations,
rounds, offspring of the corpus; campaign.py: resume, summary, shrinking, report) run by an
executor (executors.py: the plain loop, or Spark through spark_fuzz/).

Kept free of imports: the CLI reads ENGINES when it builds its parsers.
"""

ENGINES = ("spark", "python")  # how a campaign's runs are executed: same plan, same rows
