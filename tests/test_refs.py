"""Table-driven tests of reference discovery: every pod-spec form and every annotation rule."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.model.references import (
    MAX_PROBLEMS,
    Discovery,
    DiscoverySettings,
    Reference,
    SourceKind,
    discover,
    opt_in_keys,
    references_from_pod_spec,
    source_ignored,
    source_matches,
)

OWN = DiscoverySettings()
ALL_COMPAT = DiscoverySettings(compat=frozenset({"reloader", "wave", "pod-reloader"}))
WATCH = {"kube-rehash.io/watch": "true"}


def ref(kind: SourceKind, name: str, keys: set[str] | None = None, optional: bool = False) -> Reference:
    return Reference(kind, name, None if keys is None else frozenset(keys), optional)


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "image": "busybox", **fields}


def key_ref(selector: str, name: Any, key: Any = "k", **extra: Any) -> dict[str, Any]:
    return {"name": "V", "valueFrom": {selector: {"name": name, "key": key, **extra}}}


def spec_with(*containers: dict[str, Any], volumes: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": list(containers), **extra}
    if volumes is not None:
        spec["volumes"] = volumes
    return spec


# --- pod spec forms -------------------------------------------------------------------------------------

POD_SPEC_CASES = [
    pytest.param(
        spec_with(container(env=[key_ref("configMapKeyRef", "app", "level")])),
        [ref("configmap", "app", {"level"})],
        [],
        id="env-configmapkeyref-uses-that-key-only",
    ),
    pytest.param(
        spec_with(container(env=[key_ref("secretKeyRef", "db", "password")])),
        [ref("secret", "db", {"password"})],
        [],
        id="env-secretkeyref-uses-that-key-only",
    ),
    pytest.param(
        spec_with(container(envFrom=[{"configMapRef": {"name": "app"}}])),
        [ref("configmap", "app")],
        [],
        id="envfrom-configmapref-uses-whole-object",
    ),
    pytest.param(
        spec_with(container(envFrom=[{"prefix": "X_", "secretRef": {"name": "db"}}])),
        [ref("secret", "db")],
        [],
        id="envfrom-secretref-uses-whole-object",
    ),
    pytest.param(
        spec_with(container(), volumes=[{"name": "v", "configMap": {"name": "app"}}]),
        [ref("configmap", "app")],
        [],
        id="volume-configmap-without-items-uses-whole-object",
    ),
    pytest.param(
        spec_with(
            container(),
            volumes=[{"configMap": {"name": "app", "items": [{"key": "a", "path": "x"}, {"key": "b"}]}}],
        ),
        [ref("configmap", "app", {"a", "b"})],
        [],
        id="volume-configmap-with-items-uses-listed-keys",
    ),
    pytest.param(
        spec_with(container(), volumes=[{"secret": {"secretName": "tls"}}]),
        [ref("secret", "tls")],
        [],
        id="volume-secret-without-items-uses-whole-object",
    ),
    pytest.param(
        spec_with(container(), volumes=[{"secret": {"secretName": "tls", "items": [{"key": "tls.crt"}]}}]),
        [ref("secret", "tls", {"tls.crt"})],
        [],
        id="volume-secret-with-items-uses-listed-keys",
    ),
    pytest.param(
        spec_with(container(), volumes=[{"projected": {"sources": [{"configMap": {"name": "app"}}]}}]),
        [ref("configmap", "app")],
        [],
        id="projected-configmap-without-items-uses-whole-object",
    ),
    pytest.param(
        spec_with(
            container(),
            volumes=[{"projected": {"sources": [{"configMap": {"name": "app", "items": [{"key": "a"}]}}]}}],
        ),
        [ref("configmap", "app", {"a"})],
        [],
        id="projected-configmap-with-items-uses-listed-keys",
    ),
    pytest.param(
        spec_with(container(), volumes=[{"projected": {"sources": [{"secret": {"name": "db"}}]}}]),
        [ref("secret", "db")],
        [],
        id="projected-secret-without-items-uses-whole-object",
    ),
    pytest.param(
        spec_with(
            container(),
            volumes=[{"projected": {"sources": [{"secret": {"name": "db", "items": [{"key": "u"}]}}]}}],
        ),
        [ref("secret", "db", {"u"})],
        [],
        id="projected-secret-with-items-uses-listed-keys",
    ),
    pytest.param(
        spec_with(
            container(),
            initContainers=[container(envFrom=[{"configMapRef": {"name": "init-cfg"}}])],
        ),
        [ref("configmap", "init-cfg")],
        [],
        id="init-containers-are-scanned",
    ),
    pytest.param(
        spec_with(
            container(),
            ephemeralContainers=[container(env=[key_ref("secretKeyRef", "debug", "token")])],
        ),
        [ref("secret", "debug", {"token"})],
        [],
        id="ephemeral-containers-are-scanned",
    ),
    pytest.param(
        spec_with(container(env=[key_ref("configMapKeyRef", "app", "a", optional=True)])),
        [ref("configmap", "app", {"a"}, optional=True)],
        [],
        id="optional-keyref-is-optional",
    ),
    pytest.param(
        spec_with(container(envFrom=[{"secretRef": {"name": "db", "optional": True}}])),
        [ref("secret", "db", optional=True)],
        [],
        id="optional-envfrom-is-optional",
    ),
    pytest.param(
        spec_with(container(), volumes=[{"configMap": {"name": "app", "optional": True}}]),
        [ref("configmap", "app", optional=True)],
        [],
        id="optional-volume-is-optional",
    ),
    pytest.param(
        spec_with(
            container(),
            volumes=[{"projected": {"sources": [{"secret": {"name": "db", "optional": True}}]}}],
        ),
        [ref("secret", "db", optional=True)],
        [],
        id="optional-projected-is-optional",
    ),
    pytest.param(
        spec_with(container(envFrom=[{"secretRef": {"name": "db", "optional": "true"}}])),
        [ref("secret", "db")],
        [],
        id="optional-as-string-is-not-optional",
    ),
    pytest.param(
        spec_with(
            container(env=[key_ref("configMapKeyRef", "app", "a")]),
            volumes=[{"configMap": {"name": "app"}}],
        ),
        [ref("configmap", "app")],
        [],
        id="merge-whole-and-keys-gives-whole-object",
    ),
    pytest.param(
        spec_with(
            container(env=[key_ref("configMapKeyRef", "app", "a"), key_ref("configMapKeyRef", "app", "b")]),
            volumes=[{"configMap": {"name": "app", "items": [{"key": "c"}, {"key": "a"}]}}],
        ),
        [ref("configmap", "app", {"a", "b", "c"})],
        [],
        id="merge-keys-and-keys-gives-union",
    ),
    pytest.param(
        spec_with(
            container(envFrom=[{"secretRef": {"name": "db", "optional": True}}]),
            initContainers=[container(env=[key_ref("secretKeyRef", "db", "p")])],
        ),
        [ref("secret", "db")],
        [],
        id="merge-optional-and-required-gives-required",
    ),
    pytest.param(
        spec_with(
            container(envFrom=[{"secretRef": {"name": "db", "optional": True}}]),
            volumes=[{"secret": {"secretName": "db", "optional": True}}],
        ),
        [ref("secret", "db", optional=True)],
        [],
        id="merge-optional-and-optional-stays-optional",
    ),
    pytest.param(
        spec_with(
            container(envFrom=[{"configMapRef": {"name": "same"}}, {"secretRef": {"name": "same"}}]),
        ),
        [ref("configmap", "same"), ref("secret", "same")],
        [],
        id="same-name-of-two-kinds-stays-separate",
    ),
    pytest.param(
        spec_with(
            container(envFrom=[{"secretRef": {"name": "b"}}, {"configMapRef": {"name": "z"}}]),
            volumes=[{"secret": {"secretName": "a"}}, {"configMap": {"name": "y"}}],
        ),
        [ref("configmap", "y"), ref("configmap", "z"), ref("secret", "a"), ref("secret", "b")],
        [],
        id="references-sorted-by-kind-then-name",
    ),
    pytest.param(
        spec_with(container(), imagePullSecrets=[{"name": "registry"}]),
        [],
        [],
        id="imagepullsecrets-ignored",
    ),
    pytest.param(
        spec_with(
            container(),
            volumes=[
                {
                    "projected": {
                        "sources": [
                            {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                            {"downwardAPI": {"items": [{"path": "labels"}]}},
                            {"clusterTrustBundle": {"name": "bundle", "path": "ca"}},
                        ]
                    }
                }
            ],
        ),
        [],
        [],
        id="serviceaccounttoken-downwardapi-trustbundle-projections-ignored",
    ),
    pytest.param(
        spec_with(
            container(),
            volumes=[{"downwardAPI": {"items": []}}, {"emptyDir": {}}, {"csi": {"driver": "x"}}],
        ),
        [],
        [],
        id="other-volume-types-ignored",
    ),
    pytest.param(
        spec_with(container(envFrom=[{"configMapRef": {}}, {"secretRef": {"name": ""}}])),
        [],
        [
            "containers[0].envFrom[0].configMapRef: missing name",
            "containers[0].envFrom[1].secretRef: missing name",
        ],
        id="missing-or-empty-name-skipped-and-reported",
    ),
    pytest.param(
        spec_with(container(), volumes=[{"secret": {"name": "db"}}]),
        [],
        ["volumes[0].secret: missing name"],
        id="volume-secret-needs-secretname-not-name",
    ),
    pytest.param(
        spec_with(container(env=[key_ref("configMapKeyRef", 7)])),
        [],
        ["env[0].valueFrom.configMapKeyRef: missing name"],
        id="non-string-name-skipped-and-reported",
    ),
    pytest.param(
        spec_with(container(), volumes=[{"configMap": {"name": "Bad_Name"}}, {"configMap": {"name": "ok"}}]),
        [ref("configmap", "ok")],
        ['volumes[0].configMap: "Bad_Name" is not a valid name'],
        id="invalid-name-skipped-and-reported",
    ),
    pytest.param(
        spec_with(container(env=[key_ref("secretKeyRef", "db", None), key_ref("secretKeyRef", "db", "")])),
        [],
        ["env[0].valueFrom.secretKeyRef: missing key", "env[1].valueFrom.secretKeyRef: missing key"],
        id="keyref-without-key-skipped-and-reported",
    ),
    pytest.param(
        spec_with(container(), volumes=[{"configMap": {"name": "app", "items": []}}]),
        [ref("configmap", "app")],
        [],
        id="empty-items-list-uses-whole-object",
    ),
    pytest.param(
        spec_with(
            container(), volumes=[{"configMap": {"name": "app", "items": [{"path": "p"}, {"key": "a"}]}}]
        ),
        [ref("configmap", "app", {"a"})],
        ["volumes[0].configMap.items[0]: missing key"],
        id="item-without-key-reported-other-keys-kept",
    ),
    pytest.param(
        spec_with(container(), volumes=[{"secret": {"secretName": "db", "items": [{"path": "p"}, "x"]}}]),
        [ref("secret", "db")],
        ["volumes[0].secret.items[0]: missing key", "volumes[0].secret.items[1]: missing key"],
        id="items-without-any-key-fall-back-to-whole-object",
    ),
    pytest.param(
        {
            "containers": "nope",
            "initContainers": [None, 3, {"env": "x", "envFrom": [None, {"configMapRef": "x"}]}],
            "volumes": [1, {"configMap": None}, {"projected": {"sources": "x"}}],
        },
        [],
        [],
        id="malformed-lists-and-entries-ignored",
    ),
    pytest.param(None, [], [], id="null-spec-has-no-references"),
    pytest.param({}, [], [], id="empty-spec-has-no-references"),
    pytest.param(
        ["containers"], [], ["pod spec: expected an object, got array"], id="non-object-spec-reported"
    ),
]


@pytest.mark.parametrize(("pod_spec", "expected", "problems"), POD_SPEC_CASES)
def test_pod_spec_forms(pod_spec: Any, expected: list[Reference], problems: list[str]) -> None:
    found = discover(WATCH, pod_spec, OWN)
    assert list(found.references) == expected
    assert len(found.problems) == len(problems)
    for message, fragment in zip(found.problems, problems, strict=True):
        assert fragment in message
    assert list(references_from_pod_spec(pod_spec)) == expected


# --- annotation rules -----------------------------------------------------------------------------------

SPEC = spec_with(
    container(
        envFrom=[{"configMapRef": {"name": "app-config"}}],
        env=[key_ref("secretKeyRef", "db", "password")],
    )
)
SPEC_REFS = [ref("configmap", "app-config"), ref("secret", "db", {"password"})]
SPEC_CM_ONLY = [ref("configmap", "app-config")]
SPEC_SECRET_ONLY = [ref("secret", "db", {"password"})]
NOT_OPTED: dict[str, Any] = {"opted_in": False, "references": [], "via": (), "problems": ()}
BOTH = frozenset({"configmap", "secret"})

ANNOTATION_CASES = [
    pytest.param({}, OWN, SPEC, None, NOT_OPTED, id="no-annotations-not-opted-in"),
    pytest.param(None, OWN, SPEC, None, NOT_OPTED, id="null-annotations-not-opted-in"),
    pytest.param(
        ["kube-rehash.io/watch"],
        OWN,
        SPEC,
        None,
        {**NOT_OPTED, "problems": ("annotations: expected an object, got array",)},
        id="non-object-annotations-reported",
    ),
    pytest.param(
        WATCH,
        OWN,
        SPEC,
        None,
        {"opted_in": True, "via": ("kube-rehash.io/watch",), "references": SPEC_REFS, "problems": ()},
        id="own-watch-discovers-pod-spec",
    ),
    pytest.param(
        {"kube-rehash.io/watch": " True\n"},
        OWN,
        SPEC,
        None,
        {
            **NOT_OPTED,
            "malformed_opt_in": True,
            "problems": ('kube-rehash.io/watch: " True\\n" is not "true" or "false"',),
        },
        id="own-watch-other-case-or-whitespace-is-malformed",
    ),
    pytest.param({"kube-rehash.io/watch": "false"}, OWN, SPEC, None, NOT_OPTED, id="own-watch-false"),
    pytest.param(
        {"kube-rehash.io/watch": "yes"},
        OWN,
        SPEC,
        None,
        {
            **NOT_OPTED,
            "malformed_opt_in": True,
            "problems": ('kube-rehash.io/watch: "yes" is not "true" or "false"',),
        },
        id="own-watch-yes-is-malformed-not-an-opt-out",
    ),
    pytest.param(
        {"kube-rehash.io/watch": True},
        OWN,
        SPEC,
        None,
        {**NOT_OPTED, "problems": ("kube-rehash.io/watch: expected a string, got boolean",)},
        id="own-watch-non-string-value-reported",
    ),
    pytest.param(
        {
            "kube-rehash.io/watch": None,
            "kube-rehash.io/configmaps": ["a"],
            "kube-rehash.io/secrets": {"a": 1},
        },
        OWN,
        SPEC,
        None,
        {
            **NOT_OPTED,
            "problems": (
                "kube-rehash.io/watch: expected a string, got null",
                "kube-rehash.io/configmaps: expected a string, got array",
                "kube-rehash.io/secrets: expected a string, got object",
            ),
        },
        id="own-non-string-values-reported",
    ),
    pytest.param(
        {"kube-rehash.io/configmaps": "extra"},
        OWN,
        SPEC,
        None,
        {
            "opted_in": True,
            "via": ("kube-rehash.io/configmaps",),
            "references": [ref("configmap", "app-config"), ref("configmap", "extra"), *SPEC_SECRET_ONLY],
        },
        id="own-configmaps-list-opts-in-and-adds-to-discovered",
    ),
    pytest.param(
        {"kube-rehash.io/secrets": "db"},
        OWN,
        SPEC,
        None,
        {
            "opted_in": True,
            "via": ("kube-rehash.io/secrets",),
            "references": [*SPEC_CM_ONLY, ref("secret", "db")],
        },
        id="own-secrets-list-whole-object-wins-over-keyref",
    ),
    pytest.param(
        {"kube-rehash.io/configmaps": " a , ,b,a,,\tc "},
        OWN,
        None,
        None,
        {"references": [ref("configmap", "a"), ref("configmap", "b"), ref("configmap", "c")], "problems": ()},
        id="own-list-whitespace-empty-items-and-duplicates",
    ),
    pytest.param(
        {"kube-rehash.io/configmaps": "opt"},
        OWN,
        spec_with(container(envFrom=[{"configMapRef": {"name": "opt", "optional": True}}])),
        None,
        {"references": [ref("configmap", "opt")]},
        id="own-list-makes-optional-use-required",
    ),
    pytest.param(
        {"kube-rehash.io/configmaps": "ok,Bad_Name,-x,a..b,x-", "kube-rehash.io/secrets": "s/t"},
        OWN,
        None,
        None,
        {
            "opted_in": True,
            "references": [ref("configmap", "ok")],
            "problems": (
                'kube-rehash.io/configmaps: "Bad_Name" is not a valid name',
                'kube-rehash.io/configmaps: "-x" is not a valid name',
                'kube-rehash.io/configmaps: "a..b" is not a valid name',
                'kube-rehash.io/configmaps: "x-" is not a valid name',
                'kube-rehash.io/secrets: "s/t" is not a valid name',
            ),
        },
        id="own-list-invalid-names-left-out-and-reported",
    ),
    pytest.param(
        {"kube-rehash.io/configmaps": ("a" * 253) + "," + ("b" * 254)},
        OWN,
        None,
        None,
        {
            "references": [ref("configmap", "a" * 253)],
            "problems": (f'kube-rehash.io/configmaps: "{"b" * 64}"… is not a valid name',),
        },
        id="own-list-name-length-limit-253",
    ),
    pytest.param(
        {"kube-rehash.io/configmaps": " , ,", "kube-rehash.io/secrets": ""},
        OWN,
        SPEC,
        None,
        NOT_OPTED,
        id="own-list-empty-does-not-opt-in",
    ),
    pytest.param(
        {"kube-rehash.io/secrets": "Bad"},
        OWN,
        SPEC,
        None,
        {
            "opted_in": True,
            "references": SPEC_REFS,
            "problems": ('kube-rehash.io/secrets: "Bad" is not a valid name',),
        },
        id="own-list-of-only-invalid-names-still-opts-in",
    ),
    pytest.param(
        {"kube-rehash.io/search": "true"},
        OWN,
        SPEC,
        None,
        {
            "opted_in": True,
            "via": ("kube-rehash.io/search",),
            "match_annotations": frozenset({"kube-rehash.io/match"}),
            "search_kinds": BOTH,
            "references": SPEC_REFS,
        },
        id="own-search-matches-and-discovers-pod-spec",
    ),
    pytest.param(
        WATCH,
        OWN,
        SPEC,
        None,
        {"match_annotations": frozenset(), "search_kinds": frozenset()},
        id="no-search-means-no-match-annotations",
    ),
    pytest.param(
        {"kube-rehash.io/ignore": "true"},
        OWN,
        SPEC,
        None,
        {**NOT_OPTED, "ignored": True},
        id="own-ignore-without-opt-in",
    ),
    pytest.param(
        {"kube-rehash.io/ignore": "TRUE"},
        OWN,
        SPEC,
        None,
        {**NOT_OPTED, "problems": ('kube-rehash.io/ignore: "TRUE" is not "true" or "false"',)},
        id="own-ignore-other-case-is-malformed-not-ignored",
    ),
    pytest.param(
        {**WATCH, "kube-rehash.io/ignore": "true"},
        OWN,
        SPEC,
        None,
        {"opted_in": True, "ignored": True, "references": SPEC_REFS},
        id="own-ignore-with-opt-in-keeps-opted-in",
    ),
    pytest.param(
        {**WATCH, "kube-rehash.io/ignore": "false"},
        OWN,
        SPEC,
        None,
        {"ignored": False},
        id="own-ignore-false",
    ),
    pytest.param(
        {"example.com/watch": "true", "kube-rehash.io/watch": "true"},
        DiscoverySettings(prefix="example.com"),
        SPEC,
        None,
        {"opted_in": True, "via": ("example.com/watch",), "references": SPEC_REFS},
        id="custom-prefix-replaces-default",
    ),
    # Reloader
    pytest.param({"reloader.stakater.com/auto": "true"}, OWN, SPEC, None, NOT_OPTED, id="reloader-auto-off"),
    pytest.param(
        {"reloader.stakater.com/auto": "true"},
        ALL_COMPAT,
        SPEC,
        None,
        {"opted_in": True, "via": ("reloader.stakater.com/auto",), "references": SPEC_REFS},
        id="reloader-auto-discovers-both-kinds",
    ),
    pytest.param(
        {"configmap.reloader.stakater.com/auto": "true"},
        ALL_COMPAT,
        SPEC,
        None,
        {"opted_in": True, "references": SPEC_CM_ONLY},
        id="reloader-configmap-auto-discovers-configmaps-only",
    ),
    pytest.param(
        {"secret.reloader.stakater.com/auto": "true"},
        ALL_COMPAT,
        SPEC,
        None,
        {"opted_in": True, "references": SPEC_SECRET_ONLY},
        id="reloader-secret-auto-discovers-secrets-only",
    ),
    pytest.param(
        {"configmap.reloader.stakater.com/auto": "true"},
        ALL_COMPAT,
        spec_with(container(envFrom=[{"secretRef": {"name": "Bad"}}, {"configMapRef": {"name": "Bad"}}])),
        None,
        {
            "references": [],
            "problems": ('pod spec containers[0].envFrom[1].configMapRef: "Bad" is not a valid name',),
        },
        id="reloader-typed-auto-reports-only-its-kind",
    ),
    pytest.param(
        {"configmap.reloader.stakater.com/auto": "true", "kube-rehash.io/watch": "true"},
        ALL_COMPAT,
        SPEC,
        None,
        {"references": SPEC_REFS, "via": ("configmap.reloader.stakater.com/auto", "kube-rehash.io/watch")},
        id="reloader-typed-auto-plus-own-watch-discovers-both",
    ),
    pytest.param(
        {"configmap.reloader.stakater.com/reload": "a, b", "secret.reloader.stakater.com/reload": "c"},
        ALL_COMPAT,
        SPEC,
        None,
        {
            "opted_in": True,
            "via": ("configmap.reloader.stakater.com/reload", "secret.reloader.stakater.com/reload"),
            "references": [
                ref("configmap", "a", optional=True),
                ref("configmap", "b", optional=True),
                ref("secret", "c", optional=True),
            ],
        },
        id="reloader-reload-lists-exactly-those-without-pod-spec-none-of-them-required",
    ),
    pytest.param(
        {"configmap.reloader.stakater.com/reload": "app-.*"},
        ALL_COMPAT,
        SPEC,
        None,
        {
            "opted_in": True,
            "references": [],
            "problems": (
                'configmap.reloader.stakater.com/reload: "app-.*": '
                "regex patterns are not supported; list names",
            ),
        },
        id="reloader-reload-regex-not-supported-reported",
    ),
    pytest.param(
        {"configmap.reloader.stakater.com/reload": "a", "secret.reloader.stakater.com/reload": "c"},
        OWN,
        SPEC,
        None,
        NOT_OPTED,
        id="reloader-reload-lists-off",
    ),
    pytest.param(
        {"reloader.stakater.com/search": "true"},
        ALL_COMPAT,
        SPEC,
        None,
        {
            "opted_in": True,
            "via": ("reloader.stakater.com/search",),
            "match_annotations": frozenset({"reloader.stakater.com/match"}),
            "search_kinds": BOTH,
            "references": [],
            "searched": tuple(SPEC_REFS),
        },
        id="reloader-search-follows-only-the-sources-the-pod-spec-references",
    ),
    pytest.param(
        {"reloader.stakater.com/search": "true", "kube-rehash.io/search": "true"},
        ALL_COMPAT,
        None,
        None,
        {
            "match_annotations": frozenset({"reloader.stakater.com/match", "kube-rehash.io/match"}),
            "searched": None,
        },
        id="reloader-and-own-search-match-either-annotation-namespace-wide",
    ),
    pytest.param(
        {"reloader.stakater.com/search": "true"}, OWN, SPEC, None, NOT_OPTED, id="reloader-search-off"
    ),
    pytest.param(
        {"reloader.stakater.com/search": "true", "reloader.stakater.com/reload": "x"},
        ALL_COMPAT,
        SPEC,
        None,
        {"references": [], "searched": tuple(SPEC_REFS)},
        id="reloader-search-beside-a-misspelt-list-still-follows-the-pod-spec",
    ),
    pytest.param(
        {"reloader.stakater.com/auto": 1},
        ALL_COMPAT,
        SPEC,
        None,
        {**NOT_OPTED, "problems": ("reloader.stakater.com/auto: expected a string, got number",)},
        id="reloader-non-string-value-reported-when-on",
    ),
    pytest.param(
        {"reloader.stakater.com/auto": 1}, OWN, SPEC, None, NOT_OPTED, id="compat-values-not-read-when-off"
    ),
    # wave
    pytest.param(
        {"wave.pusher.com/update-on-config-change": "true"},
        ALL_COMPAT,
        SPEC,
        None,
        {"opted_in": True, "via": ("wave.pusher.com/update-on-config-change",), "references": SPEC_REFS},
        id="wave-update-on-config-change-discovers-pod-spec",
    ),
    pytest.param(
        {"wave.pusher.com/update-on-config-change": "true"}, OWN, SPEC, None, NOT_OPTED, id="wave-off"
    ),
    pytest.param(
        {
            "wave.pusher.com/update-on-config-change": "true",
            "wave.pusher.com/extra-configmaps": "extra, prod/also",
            "wave.pusher.com/extra-secrets": "prod/token",
        },
        ALL_COMPAT,
        None,
        "prod",
        {
            "references": [
                ref("configmap", "also", optional=True),
                ref("configmap", "extra", optional=True),
                ref("secret", "token", optional=True),
            ],
            "problems": (),
            "via": ("wave.pusher.com/update-on-config-change",),
        },
        id="wave-extras-name-or-own-namespace-are-optional",
    ),
    pytest.param(
        {"wave.pusher.com/update-on-config-change": "true", "wave.pusher.com/extra-configmaps": "app-config"},
        ALL_COMPAT,
        SPEC,
        None,
        {"references": SPEC_REFS},
        id="wave-extra-also-used-in-pod-spec-is-required",
    ),
    pytest.param(
        {"wave.pusher.com/update-on-config-change": "true", "wave.pusher.com/extra-secrets": "other/token"},
        ALL_COMPAT,
        None,
        "prod",
        {
            "references": [],
            "problems": (
                'wave.pusher.com/extra-secrets: "other/token" is outside the workload\'s namespace "prod"',
            ),
        },
        id="wave-extras-cross-namespace-reported",
    ),
    pytest.param(
        {"wave.pusher.com/update-on-config-change": "true", "wave.pusher.com/extra-secrets": "prod/token"},
        ALL_COMPAT,
        None,
        None,
        {
            "references": [],
            "problems": (
                'wave.pusher.com/extra-secrets: "prod/token" '
                "names a namespace but the workload's is unknown",
            ),
        },
        id="wave-extras-namespace-unknown-reported",
    ),
    pytest.param(
        {
            "wave.pusher.com/update-on-config-change": "true",
            "wave.pusher.com/extra-configmaps": "a/b/c,/x,y/,Bad",
        },
        ALL_COMPAT,
        None,
        "prod",
        {
            "references": [],
            "problems": (
                'wave.pusher.com/extra-configmaps: "a/b/c" is not a name or namespace/name',
                'wave.pusher.com/extra-configmaps: "/x" is not a name or namespace/name',
                'wave.pusher.com/extra-configmaps: "y/" is not a name or namespace/name',
                'wave.pusher.com/extra-configmaps: "Bad" is not a valid name',
            ),
        },
        id="wave-extras-malformed-reported",
    ),
    pytest.param(
        {"wave.pusher.com/extra-configmaps": "extra"},
        ALL_COMPAT,
        SPEC,
        "prod",
        NOT_OPTED,
        id="wave-extras-alone-do-not-opt-in",
    ),
    pytest.param(
        {**WATCH, "wave.pusher.com/extra-configmaps": "extra"},
        OWN,
        None,
        "prod",
        {"references": []},
        id="wave-extras-off",
    ),
    # SAP pod-reloader
    pytest.param(
        {"pod-reloader.cs.sap.com/configmaps": "a,b", "pod-reloader.cs.sap.com/secrets": " c "},
        ALL_COMPAT,
        SPEC,
        None,
        {
            "opted_in": True,
            "via": ("pod-reloader.cs.sap.com/configmaps", "pod-reloader.cs.sap.com/secrets"),
            "references": [ref("configmap", "a"), ref("configmap", "b"), ref("secret", "c")],
        },
        id="pod-reloader-lists-exactly-those-without-pod-spec",
    ),
    pytest.param(
        {"pod-reloader.cs.sap.com/configmaps": "a"}, OWN, SPEC, None, NOT_OPTED, id="pod-reloader-off"
    ),
    pytest.param(
        {"pod-reloader.cs.sap.com/secrets": "c", "kube-rehash.io/configmaps": "a"},
        ALL_COMPAT,
        SPEC,
        None,
        {
            "via": ("kube-rehash.io/configmaps", "pod-reloader.cs.sap.com/secrets"),
            "references": [ref("configmap", "a"), *SPEC_CM_ONLY, ref("secret", "c"), *SPEC_SECRET_ONLY],
        },
        id="own-and-compat-combine-via-sorted",
    ),
    pytest.param(
        {
            "kube-rehash.io/watch": "true",
            "reloader.stakater.com/auto": "true",
            "wave.pusher.com/update-on-config-change": "true",
        },
        DiscoverySettings(compat=frozenset({"wave"})),
        SPEC,
        None,
        {"via": ("kube-rehash.io/watch", "wave.pusher.com/update-on-config-change")},
        id="only-enabled-compat-rules-apply",
    ),
]


@pytest.mark.parametrize(("annotations", "settings", "pod_spec", "namespace", "expected"), ANNOTATION_CASES)
def test_annotation_rules(
    annotations: Any,
    settings: DiscoverySettings,
    pod_spec: Any,
    namespace: str | None,
    expected: dict[str, Any],
) -> None:
    found = discover(annotations, pod_spec, settings, namespace=namespace)
    actual = {name: getattr(found, name) for name in expected}
    if "references" in actual:
        actual["references"] = list(actual["references"])
    assert actual == expected


def test_enormous_list_caps_problems() -> None:
    names = ",".join(f"Bad{i}" for i in range(10_000)) + ",good"
    found = discover({"kube-rehash.io/configmaps": names}, None, OWN)
    assert found.references == (ref("configmap", "good"),)
    assert len(found.problems) == MAX_PROBLEMS + 1
    assert found.problems[0] == 'kube-rehash.io/configmaps: "Bad0" is not a valid name'
    assert found.problems[-1] == "and 9990 more problems"


def test_huge_single_item_is_quoted_short() -> None:
    found = discover({"kube-rehash.io/secrets": "X" * 1_000_000}, None, OWN)
    assert found.references == ()
    assert len(found.problems[0]) < 200


def test_discovery_is_a_value_equal_and_hashed_on_its_fields() -> None:
    """Shared between workloads (`discover_listed`'s cache): read-only to mypy (tests/test_values.py)."""
    first = discover(WATCH, SPEC, OWN)
    assert first == discover(dict(WATCH), SPEC, OWN)
    assert hash(first) == hash(discover(dict(WATCH), SPEC, OWN))
    assert isinstance(first, Discovery)
    assert not hasattr(first, "__dict__")


# --- source side ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "settings", "expected"),
    [
        pytest.param({"kube-rehash.io/ignore": "true"}, OWN, True, id="own-ignore"),
        pytest.param({"kube-rehash.io/ignore": " True "}, OWN, True, id="own-ignore-any-case"),
        pytest.param({"kube-rehash.io/ignore": "false"}, OWN, False, id="own-ignore-false"),
        pytest.param({"kube-rehash.io/ignore": True}, OWN, False, id="own-ignore-non-string"),
        pytest.param(
            {"example.com/ignore": "true"}, DiscoverySettings(prefix="example.com"), True, id="custom-prefix"
        ),
        pytest.param({"reloader.stakater.com/ignore": "true"}, ALL_COMPAT, True, id="reloader-ignore-on"),
        pytest.param({"reloader.stakater.com/ignore": "true"}, OWN, False, id="reloader-ignore-off"),
        pytest.param(None, OWN, False, id="null-annotations"),
        pytest.param("kube-rehash.io/ignore", OWN, False, id="non-object-annotations"),
    ],
)
def test_source_ignored(annotations: Any, settings: DiscoverySettings, expected: bool) -> None:
    assert source_ignored(annotations, settings) is expected


SEARCHING = discover({"kube-rehash.io/search": "true"}, None, OWN)
SEARCHING_BOTH = discover(
    {"kube-rehash.io/search": "true", "reloader.stakater.com/search": "true"}, None, ALL_COMPAT
)


@pytest.mark.parametrize(
    ("annotations", "discovery", "expected"),
    [
        pytest.param({"kube-rehash.io/match": "true"}, SEARCHING, True, id="own-match"),
        pytest.param({"kube-rehash.io/match": "TRUE "}, SEARCHING, True, id="own-match-any-case"),
        pytest.param({"kube-rehash.io/match": "false"}, SEARCHING, False, id="own-match-false"),
        pytest.param({"kube-rehash.io/match": 1}, SEARCHING, False, id="own-match-non-string"),
        pytest.param(
            {"reloader.stakater.com/match": "true"}, SEARCHING, False, id="reloader-match-not-searched"
        ),
        pytest.param(
            {"reloader.stakater.com/match": "true"}, SEARCHING_BOTH, True, id="reloader-match-searched"
        ),
        pytest.param(
            {"kube-rehash.io/match": "true"}, discover(WATCH, None, OWN), False, id="no-search-mode"
        ),
        pytest.param(None, SEARCHING, False, id="null-annotations"),
        pytest.param([1], SEARCHING, False, id="non-object-annotations"),
    ],
)
def test_source_matches(annotations: Any, discovery: Discovery, expected: bool) -> None:
    assert source_matches(annotations, discovery) is expected


# --- small pieces ---------------------------------------------------------------------------------------


def test_reference_label() -> None:
    assert ref("configmap", "app").label() == "configmap/app"
    assert ref("secret", "db", {"k"}).label() == "secret/db"


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"compat": frozenset({"kustomize"})}, id="unknown-compat-rule"),
        pytest.param({"prefix": ""}, id="empty-prefix"),
        pytest.param({"prefix": "a/b"}, id="prefix-with-slash"),
    ],
)
def test_settings_rejects_bad_values(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        DiscoverySettings(**kwargs)


@pytest.mark.parametrize("settings", [OWN, ALL_COMPAT, DiscoverySettings(prefix="acme.io")])
def test_each_opt_in_key_can_opt_a_workload_in_alone(settings: DiscoverySettings) -> None:
    for key in opt_in_keys(settings):
        assert (
            discover({key: "true"}, None, settings).opted_in
            or discover({key: "app"}, None, settings).opted_in
        )


@pytest.mark.parametrize("settings", [OWN, ALL_COMPAT])
def test_no_workload_without_an_opt_in_key_is_opted_in(settings: DiscoverySettings) -> None:
    """The list pass skips such workloads before discovery: this is what makes that skip safe."""
    others = {
        "kube-rehash.io/ignore": "true",
        "kube-rehash.io/match": "true",
        "kube-rehash.io/min-interval": "5m",
        "wave.pusher.com/extra-configmaps": "shop/app",
        "reloader.stakater.com/match": "true",
        "deployment.kubernetes.io/revision": "3",
        "acme.io/watch": "true",
    }
    assert not opt_in_keys(settings) & others.keys()
    for key, value in others.items():
        assert not discover({key: value}, None, settings).opted_in
    assert not discover(
        others, {"containers": [{"envFrom": [{"configMapRef": {"name": "a"}}]}]}, settings
    ).opted_in
