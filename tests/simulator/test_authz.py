"""Authentication and RBAC: rule matching, subjects, the real 403 wording, client certificates."""

from __future__ import annotations

import ssl
import urllib.request
from pathlib import Path

import pytest
from simhelpers import call, configmap, deployment

from rehash_simulator import Simulator
from rehash_simulator.authz import Attributes, RBACAuthorizer, User, forbidden, verb_for

SA = "system:serviceaccount:ops:kube-rehash"
SA_USER = User(SA, ("system:serviceaccounts", "system:serviceaccounts:ops", "system:authenticated"))

RBAC = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules:
- apiGroups: ["", "apps"]
  resources: ["configmaps", "deployments"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects:
- {kind: ServiceAccount, name: kube-rehash, namespace: ops}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: patcher, namespace: shop}
rules:
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["patch"]
  resourceNames: ["web"]
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["delete"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: patcher, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: patcher}
subjects:
- {kind: Group, name: "system:serviceaccounts:ops"}
- {kind: User, name: alice}
"""


@pytest.fixture
def authz() -> RBACAuthorizer:
    a = RBACAuthorizer()
    a.load(RBAC)
    return a


@pytest.mark.parametrize(
    ("attrs", "allowed"),
    [
        (Attributes("list", "apps", "deployments", ""), True),
        (Attributes("get", "", "configmaps", "any", "x"), True),
        (Attributes("get", "", "secrets", "any", "x"), False),
        (Attributes("patch", "apps", "deployments", "shop", "web"), True),
        (Attributes("patch", "apps", "deployments", "shop", "api"), False),
        (Attributes("patch", "apps", "deployments", "other", "web"), False),
        (Attributes("delete", "batch", "jobs", "shop", "j"), True),
        (Attributes("delete", "batch", "jobs", "", "j"), False),
        (Attributes("update", "apps", "deployments", "shop", "web"), False),
    ],
)
def test_rule_matching(authz: RBACAuthorizer, attrs: Attributes, allowed: bool) -> None:
    assert authz.allowed(SA_USER, attrs) is allowed


def test_subject_kinds(authz: RBACAuthorizer) -> None:
    patch_web = Attributes("patch", "apps", "deployments", "shop", "web")
    assert authz.allowed(User("alice", ("system:authenticated",)), patch_web)
    assert not authz.allowed(User("bob", ("system:authenticated",)), patch_web)
    other_sa = User("system:serviceaccount:ops:other", ("system:serviceaccounts:ops",))
    assert authz.allowed(other_sa, patch_web)
    assert not authz.allowed(other_sa, Attributes("list", "apps", "deployments", ""))
    assert authz.allowed(User("root", ("system:masters",)), Attributes("update", "", "secrets", "x", "y"))
    authz.reset()
    assert authz.allowed(User("bob"), Attributes("update", "", "secrets", "x", "y"))


def test_verb_mapping() -> None:
    assert [
        verb_for("GET", True),
        verb_for("GET", False),
        verb_for("POST", False),
        verb_for("PUT", True),
        verb_for("PATCH", True),
        verb_for("DELETE", True),
    ] == ["get", "list", "create", "update", "patch", "delete"]


def test_forbidden_messages() -> None:
    one = forbidden(SA_USER, Attributes("patch", "apps", "deployments", "shop", "x"))
    assert one.message == (
        'deployments.apps "x" is forbidden: User "system:serviceaccount:ops:kube-rehash" cannot patch '
        'resource "deployments" in API group "apps" in the namespace "shop"'
    )
    listing = forbidden(SA_USER, Attributes("list", "apps", "deployments"))
    assert listing.message == (
        'deployments.apps is forbidden: User "system:serviceaccount:ops:kube-rehash" cannot list resource '
        '"deployments" in API group "apps" at the cluster scope'
    )
    core = forbidden(SA_USER, Attributes("get", "", "secrets", "shop", "s"))
    assert core.message.startswith('secrets "s" is forbidden') and 'in API group ""' in core.message


def test_403_over_http_and_reload(sim: Simulator) -> None:
    sim.store.create(deployment("web"))
    sim.store.create(deployment("api"))
    sim.add_token("sa-token", SA)
    sim.load_rbac(RBAC)
    path = "/apis/apps/v1/namespaces/shop/deployments/"
    patch = {"metadata": {"labels": {"a": "b"}}}
    merge = "application/merge-patch+json"
    assert call(sim, "PATCH", path + "web", patch, token="sa-token", content_type=merge).status == 200
    denied = call(sim, "PATCH", path + "api", patch, token="sa-token", content_type=merge)
    assert denied.status == 403
    assert denied.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'deployments.apps "api" is forbidden: User "system:serviceaccount:ops:kube-rehash" cannot '
        'patch resource "deployments" in API group "apps" in the namespace "shop"',
        "reason": "Forbidden",
        "details": {"name": "api", "group": "apps", "kind": "deployments"},
        "code": 403,
    }
    assert call(sim, "GET", "/apis/apps/v1/deployments", token="sa-token").status == 200
    assert call(sim, "GET", "/apis/apps/v1", token="sa-token").status == 200
    assert call(sim, "GET", "/version", token="sa-token").status == 200
    sim.load_rbac(RBAC.replace('verbs: ["get", "list"]', 'verbs: ["get"]'))
    listing = call(sim, "GET", "/apis/apps/v1/deployments", token="sa-token")
    assert listing.status == 403 and "cannot list resource" in listing.json()["message"]
    assert call(sim, "GET", "/apis/apps/v1/deployments").status == 200  # admin token bypasses RBAC
    created = call(sim, "POST", "/api/v1/namespaces/shop/configmaps", configmap("c"), token="sa-token")
    assert created.json()["message"].startswith('configmaps is forbidden: User "system:serviceaccount')


def test_client_certificate_authentication(sim: Simulator, tmp_path: Path) -> None:
    cert, key = sim.issue_client_cert("carol", ["devs"])
    (tmp_path / "c.pem").write_bytes(cert)
    (tmp_path / "k.pem").write_bytes(key)
    sim.load_rbac(RBAC.replace("- {kind: User, name: alice}", "- {kind: Group, name: devs}"))
    context = ssl.create_default_context(cadata=sim.ca_pem.decode())
    context.load_cert_chain(tmp_path / "c.pem", tmp_path / "k.pem")
    sim.store.create(deployment("web"))
    request = urllib.request.Request(
        sim.url + "/apis/apps/v1/namespaces/shop/deployments/web",
        data=b'{"metadata":{"labels":{"a":"b"}}}',
        method="PATCH",
        headers={"Content-Type": "application/merge-patch+json"},
    )
    with urllib.request.urlopen(request, context=context, timeout=10) as response:
        assert response.status == 200
    assert sim.log.entries(method="PATCH")[-1].user == "carol"
