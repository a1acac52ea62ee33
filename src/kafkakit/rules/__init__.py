"""Inventory rules: what the preflight checks in the declared inventory before anything changes."""
