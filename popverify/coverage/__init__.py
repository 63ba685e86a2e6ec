"""Coverage of RocketMQ's own consumption-path classes while the model's cases and schedules
run on the Java harnesses (issue 16 item 2): JaCoCo attached to the harness JVMs, its XML
report read per class, tables for the terminal, spec/ and the verify report."""
