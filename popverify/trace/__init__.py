"""Run traces in the Informal Trace Format (ITF) of the TLA+ tool ecosystem."""
