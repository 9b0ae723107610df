"""The control plane under test is the Kubernetes release this run asked for.

Why: `make test` and `make test-versions` run the same real-server suites on several supported minors
(tests/cluster/versions.txt, picked by KUBE_VERSION); a green run proves a version only if the server that
answered was that version, not a binary left in a cache by another build.
"""

from __future__ import annotations

from tests.cluster.controlplane import ControlPlane
from tests.cluster.versions import selected_version


def test_the_server_is_the_selected_release(control: ControlPlane) -> None:
    wanted = selected_version()
    served = control.version()
    assert served["gitVersion"] == wanted.kubernetes, (served["gitVersion"], wanted)
    assert f"{served['major']}.{served['minor']}" == wanted.minor, served
