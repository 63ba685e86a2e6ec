"""Running TLC on the specs in tlaplus/ and reading its output."""
