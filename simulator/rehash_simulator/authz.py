"""Authentication (bearer tokens, client certificates) and an RBAC authorizer like the API server's.

The authorizer evaluates Role/ClusterRole rules through RoleBindings/ClusterRoleBindings for the
request's user and groups, and words its 403 exactly as kube-apiserver does, so the project's RBAC
manifests can be tested by loading them, removing a rule, and watching the right request fail.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import ApiError

AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"


@dataclass(frozen=True)
class User:
    """An authenticated identity."""

    name: str
    groups: tuple[str, ...] = ()
    admin: bool = False


@dataclass(frozen=True)
class Attributes:
    """What a request wants: verb on (group, resource[, name]) in a namespace ("" = cluster scope)."""

    verb: str
    group: str
    resource: str
    namespace: str = ""
    name: str = ""


UNAUTHORIZED = ApiError(401, "Unauthorized", reason="Unauthorized")


def verb_for(method: str, has_name: bool, watch: bool = False) -> str:
    """Map an HTTP method to the RBAC verb, as the API server's request-info resolver does."""
    method = method.upper()
    if method in ("GET", "HEAD"):
        if watch:
            return "watch"
        return "get" if has_name else "list"
    if method == "DELETE":
        return "delete" if has_name else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


def forbidden(user: User, attrs: Attributes) -> ApiError:
    """403 with kube-apiserver's wording."""
    qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    scope = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    message = (
        f'{subject} is forbidden: User "{user.name}" cannot {attrs.verb} resource "{attrs.resource}" '
        f'in API group "{attrs.group}" {scope}'
    )
    details: dict[str, Any] = {"kind": attrs.resource}
    if attrs.name:
        details = {"name": attrs.name, **details}
    if attrs.group:
        details["group"] = attrs.group
    return ApiError(403, message, details=details)


@dataclass(frozen=True)
class Rule:
    """One PolicyRule."""

    verbs: frozenset[str]
    api_groups: frozenset[str]
    resources: frozenset[str]
    resource_names: frozenset[str] = frozenset()

    def allows(self, attrs: Attributes) -> bool:
        if "*" not in self.verbs and attrs.verb not in self.verbs:
            return False
        if "*" not in self.api_groups and attrs.group not in self.api_groups:
            return False
        if "*" not in self.resources and attrs.resource not in self.resources:
            return False
        return not self.resource_names or attrs.name in self.resource_names

    @classmethod
    def from_dict(cls, rule: Mapping[str, Any]) -> Rule:
        return cls(
            frozenset(rule.get("verbs") or ()),
            frozenset(rule.get("apiGroups") or ()),
            frozenset(rule.get("resources") or ()),
            frozenset(rule.get("resourceNames") or ()),
        )


@dataclass
class _Binding:
    namespace: str  # "" for a ClusterRoleBinding
    role_kind: str
    role_name: str
    subjects: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, name, namespace)


def _subject_matches(subject: tuple[str, str, str], user: User, binding_ns: str) -> bool:
    kind, name, namespace = subject
    if kind == "User":
        return name == user.name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        return user.name == f"system:serviceaccount:{namespace or binding_ns}:{name}"
    return False


def parse_documents(source: str | Mapping[str, Any] | Iterable[Any]) -> list[dict[str, Any]]:
    """YAML text (multi-document), one manifest dict, a `List`, or an iterable of those, as flat dicts."""
    if isinstance(source, str):
        docs: list[Any] = [d for d in yaml.safe_load_all(source) if d]
    elif isinstance(source, Mapping):
        docs = [source]
    else:
        docs = []
        for item in source:
            docs.extend(parse_documents(item))
        return docs
    flat: list[dict[str, Any]] = []
    for doc in docs:
        if isinstance(doc, Mapping) and str(doc.get("kind", "")).endswith("List") and "items" in doc:
            flat.extend(parse_documents(doc["items"]))
        elif isinstance(doc, Mapping):
            flat.append(dict(doc))
    return flat


class RBACAuthorizer:
    """Authorizes requests from loaded RBAC objects; `enabled=False` (nothing loaded) allows everyone.

    `load()` replaces the whole policy atomically, so a test can reload edited manifests at runtime.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.enabled = False
        self._roles: dict[tuple[str, str], list[Rule]] = {}
        self._bindings: list[_Binding] = []
        self.documents: list[dict[str, Any]] = []

    def load(self, source: str | Mapping[str, Any] | Iterable[Any]) -> None:
        """Replace the policy with the Role/ClusterRole/RoleBinding/ClusterRoleBinding documents given.

        Other kinds in the source are ignored, so a whole deploy manifest can be passed.
        """
        docs = parse_documents(source)
        roles: dict[tuple[str, str], list[Rule]] = {}
        bindings: list[_Binding] = []
        for doc in docs:
            kind = doc.get("kind")
            meta = doc.get("metadata") or {}
            if kind in ("Role", "ClusterRole"):
                ns = meta.get("namespace", "default") if kind == "Role" else ""
                roles[(ns, f"{kind}/{meta.get('name')}")] = [
                    Rule.from_dict(r) for r in doc.get("rules") or ()
                ]
            elif kind in ("RoleBinding", "ClusterRoleBinding"):
                ref = doc.get("roleRef") or {}
                ns = meta.get("namespace", "default") if kind == "RoleBinding" else ""
                subjects = [
                    (str(s.get("kind")), str(s.get("name")), str(s.get("namespace") or ""))
                    for s in doc.get("subjects") or ()
                ]
                bindings.append(_Binding(ns, str(ref.get("kind")), str(ref.get("name")), subjects))
        with self._lock:
            self._roles, self._bindings, self.documents, self.enabled = roles, bindings, docs, True

    def reset(self) -> None:
        """Back to allow-all (no policy loaded)."""
        with self._lock:
            self._roles, self._bindings, self.documents, self.enabled = {}, [], [], False

    def allowed(self, user: User, attrs: Attributes) -> bool:
        if user.admin or MASTERS in user.groups:
            return True
        with self._lock:
            if not self.enabled:
                return True
            roles, bindings = self._roles, self._bindings
        for binding in bindings:
            if binding.namespace and binding.namespace != attrs.namespace:
                continue
            if not any(_subject_matches(s, user, binding.namespace) for s in binding.subjects):
                continue
            role_ns = binding.namespace if binding.role_kind == "Role" else ""
            rules = roles.get((role_ns, f"{binding.role_kind}/{binding.role_name}"), [])
            if any(rule.allows(attrs) for rule in rules):
                return True
        return False

    def check(self, user: User, attrs: Attributes) -> None:
        """Raise the 403 when the request is not allowed."""
        if not self.allowed(user, attrs):
            raise forbidden(user, attrs)


class Authenticator:
    """Bearer tokens and client certificates (CN = user, O = groups) mapped to `User`s."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, User] = {}

    def add_token(self, token: str, user: str, groups: Iterable[str] = (), *, admin: bool = False) -> None:
        groups = tuple(groups)
        parts = user.split(":")
        if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"]:
            groups = (*groups, *(g for g in service_account_groups(parts[2]) if g not in groups))
        with self._lock:
            self._tokens[token] = User(user, _with_authenticated(groups), admin)

    def remove_token(self, token: str) -> None:
        with self._lock:
            self._tokens.pop(token, None)

    def authenticate(self, authorization: str | None, peer_cert: Mapping[str, Any] | None) -> User:
        """The request's user, or the 401 ApiError; a bearer token wins over a client certificate."""
        if authorization:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise UNAUTHORIZED
            with self._lock:
                user = self._tokens.get(token.strip())
            if user is None:
                raise UNAUTHORIZED
            return user
        if peer_cert:
            names: dict[str, list[str]] = {}
            for rdn in peer_cert.get("subject", ()):
                for attr, value in rdn:
                    names.setdefault(attr, []).append(value)
            common = names.get("commonName")
            if common:
                return User(common[0], _with_authenticated(names.get("organizationName", [])))
        raise UNAUTHORIZED


def _with_authenticated(groups: Iterable[str]) -> tuple[str, ...]:
    result = tuple(groups)
    return result if AUTHENTICATED in result else (*result, AUTHENTICATED)


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """The groups a service account token carries."""
    return ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED)
