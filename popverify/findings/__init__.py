"""Findings that explain themselves: model errors as findings, root-cause attribution of
violations to known findings (F1..F6) through the model's mechanism switches, and triage of
fuzz/verify output folders (``popverify findings DIR``). See spec/findings/README.md."""
