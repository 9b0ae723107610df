"""The only package that speaks HTTP to the Kubernetes API: authentication (auth.py), the transport
(transport.py) and the typed verbs a pass uses (client.py)."""
