"""The pure nouns of a pass: workload kinds and their shapes, a workload's bookkeeping annotations, the
references from a pod template to its ConfigMaps and Secrets, source identities, hashing, windows, rollout
health. No I/O, no decisions: values and the functions that read or build them."""
