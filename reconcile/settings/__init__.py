"""The settings of a pass, as one table of rows grouped by what they govern (reconcile/settings/table.py)."""
