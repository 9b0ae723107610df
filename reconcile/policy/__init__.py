"""Pure policy of a pass: how it reads (one read strategy) and in which order it spends its budget.

Nothing here does I/O or imports `kube/`: the stages ask, these modules answer from counts alone, so every
rule is a unit-tested table.
"""
