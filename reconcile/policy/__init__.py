"""The pure verbs of a pass: triage (what each workload needs), the decision table, the patches it writes,
sharding, the read strategy and the order in which a pass spends its budget.

Nothing here does I/O or imports `kube/` or `pipeline/`: the stages ask, these modules answer from values,
so every rule is a unit-tested table.
"""
