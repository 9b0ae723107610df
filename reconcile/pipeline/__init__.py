"""The orchestration of one pass: list → triage → read → decide → write, batch by batch, under one time
budget (`run`). The stages here do the I/O (through `kube/`) and hand values down; every rule they apply
lives in `policy/` and every noun in `model/`."""
