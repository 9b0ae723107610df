"""The only package that speaks HTTP to the Kubernetes API (see client.py and auth.py)."""
