"""The one property checker shared by simulate, replay, the stateful machines and the fuzz campaigns.

Property IDs and their definitions are in spec/properties.md; each check here is named by
its ID. The checker reads the model's history (events the driver reports) and the broker's
read-only inspection; it never changes model state.
"""
