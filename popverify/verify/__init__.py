"""`popverify verify`: every technique on defaults, one report (summary.json, report.html)."""
