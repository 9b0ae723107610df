"""Push one pass's outcome to a Prometheus Pushgateway, because a CronJob pod lives too briefly to scrape.

Every pass pushes the same metric families under one grouping key (the job name plus, e.g., the shard),
so a dashboard always shows the latest pass:

- `kube_rehash_workloads{action}` — workloads per report action (rollout, adopt, in-sync, ...);
- `kube_rehash_configs_fetched` — ConfigMaps and Secrets read;
- `kube_rehash_api_requests{verb,code}` — API requests by verb and HTTP status;
- `kube_rehash_pass_duration_seconds` — wall time of the pass;
- `kube_rehash_deferred{reason}` — workloads left for later passes, by why: `pass budget` (the time
  budget ran out), `max-rollouts`, `min-interval`, `window` (outside a restart window), `stopped`
  (SIGTERM). A `pass budget` backlog that never drains is the alert (README, Operate: time budget);
- `kube_rehash_skipped{reason}` — workloads the last pass left alone, by why: bad input their owners can
  fix (`malformed annotation`, `missing source`, `unreadable source`, `no pod template`, `cannot evict`: the
  alert) or by design (`ignored`, `owned`, `suspended`, `hash key`, `not mounted`, `gone`);
- `kube_rehash_rollouts_stalled` — rollouts kube-rehash started that the last pass found stalled (the
  report's `summary.stalled`); alert on `kube_rehash_rollouts_stalled > 0` (README, Operate);
- `kube_rehash_restarts_not_effective` — restarts kube-rehash started that the last pass found not effective
  by their deadline (the report's `summary.not-effective`: the pods did not restart, by the kind's own
  evidence); alert on `kube_rehash_restarts_not_effective > 0` (deploy/monitoring/);
- `kube_rehash_notifications_undelivered` — notifications (workloads in notify mode) the notify webhook
  did not take in the last pass; the next pass sends them again (README, Operate: alerts);
- `kube_rehash_last_success_timestamp_seconds` — when a pass last completed successfully;
- opt-in (`metricsPerWorkload`), `kube_rehash_workload_last_rollout_timestamp_seconds{namespace,kind,name}` —
  when this pass rolled the workload, one series per workload it rolled (the next pass's PUT drops those it
  did not roll again): `changes()` over an hour counts a workload's rollouts, the restart-loop alert.

The alert rules and the Grafana dashboard over these names are in deploy/monitoring/ (the chart installs them
on request); tests/test_monitoring.py takes the names from this module's registry.

Why two HTTP methods: a PUT replaces *every* metric of the group, a POST ("pushadd") replaces only the
metric names it carries. A successful pass PUTs, so series from older passes (a status code seen once,
an action that no longer occurs) disappear. A failed pass POSTs without the last-success gauge, so the
gateway keeps the previous success time: alerting on `time() - kube_rehash_last_success_timestamp_seconds`
then fires when passes keep failing, instead of the failure erasing the evidence. The gateway also adds
its own `push_time_seconds` and `push_failure_time_seconds` per group.

Sharded passes must use a distinct grouping (e.g. `{"shard": "2"}`), or shards overwrite each other.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from prometheus_client import CollectorRegistry, Gauge, push_to_gateway, pushadd_to_gateway
from prometheus_client.exposition import basic_auth_handler, default_handler

from reconcile.errors import RehashError
from reconcile.policy.decision import Deferral, Skip

_TOTAL_KEY = "workloads"  # the report summary's total, not an action
_STALLED_KEY = "stalled"  # the report summary's count of stalled rollouts, not an action
_NOT_EFFECTIVE_KEY = "not-effective"  # the report summary's count of restarts not effective, not an action
_MAX_MESSAGE = 200


class MetricsPushError(RehashError):
    """The Pushgateway could not be reached or refused the push. Reported, never fails the pass."""


def redact_url(url: str) -> str:
    """The URL without user:password, safe for a log line."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def build_registry(
    *,
    summary: Mapping[str, int],
    api_requests: Mapping[tuple[str, int], int],
    configs_fetched: int,
    duration_seconds: float,
    success: bool,
    deferred: Mapping[Deferral, int],
    skipped: Mapping[Skip, int] | None = None,
    notifications_undelivered: int = 0,
    rolled: Iterable[tuple[str, str, str]] | None = None,
    now: float | None = None,
) -> CollectorRegistry:
    """A fresh registry holding one pass's metrics (the last-success gauge only when `success`; the
    per-workload rollout gauge only when `rolled`, the (namespace, kind, name) of the workloads rolled, is
    given, even empty: so that the family replaces the previous pass's)."""
    registry = CollectorRegistry()
    at = time.time() if now is None else now
    workloads = Gauge(
        "kube_rehash_workloads", "Workloads by action in the last pass.", ["action"], registry=registry
    )
    for action, count in sorted(summary.items()):
        if action not in (_TOTAL_KEY, _STALLED_KEY, _NOT_EFFECTIVE_KEY):
            workloads.labels(action=action).set(count)
    Gauge(
        "kube_rehash_rollouts_stalled",
        "Rollouts started by kube-rehash that the last pass found stalled.",
        registry=registry,
    ).set(summary.get(_STALLED_KEY, 0))
    Gauge(
        "kube_rehash_restarts_not_effective",
        "Restarts started by kube-rehash that the last pass found not effective by their deadline.",
        registry=registry,
    ).set(summary.get(_NOT_EFFECTIVE_KEY, 0))
    Gauge(
        "kube_rehash_configs_fetched", "ConfigMaps and Secrets read in the last pass.", registry=registry
    ).set(configs_fetched)
    requests = Gauge(
        "kube_rehash_api_requests",
        "Kubernetes API requests in the last pass by verb and HTTP status code.",
        ["verb", "code"],
        registry=registry,
    )
    for (verb, code), count in sorted(api_requests.items()):
        requests.labels(verb=verb, code=str(code)).set(count)
    Gauge(
        "kube_rehash_pass_duration_seconds", "Wall time of the last pass in seconds.", registry=registry
    ).set(duration_seconds)
    _by_reason(
        registry,
        "kube_rehash_deferred",
        "Workloads deferred to later passes by the last pass, by reason.",
        Deferral,
        deferred,
    )
    _by_reason(
        registry,
        "kube_rehash_skipped",
        "Workloads the last pass skipped (left alone, nothing written), by reason.",
        Skip,
        skipped or {},
    )
    Gauge(
        "kube_rehash_notifications_undelivered",
        "Notifications the notify webhook did not take in the last pass (sent again by the next pass).",
        registry=registry,
    ).set(notifications_undelivered)
    if rolled is not None:
        per_workload = Gauge(
            "kube_rehash_workload_last_rollout_timestamp_seconds",
            "Unix time at which this pass rolled the workload (opt-in: metricsPerWorkload).",
            ["namespace", "kind", "name"],
            registry=registry,
        )
        for namespace, kind, name in sorted(rolled):
            per_workload.labels(namespace=namespace, kind=kind, name=name).set(at)
    if success:
        Gauge(
            "kube_rehash_last_success_timestamp_seconds",
            "Unix time at which the last successful pass finished.",
            registry=registry,
        ).set(at)
    return registry


def _by_reason(
    registry: CollectorRegistry, name: str, doc: str, reasons: Iterable[StrEnum], counts: Mapping[Any, int]
) -> None:
    """One gauge labelled `reason` with every one of `reasons`, 0 when none, so an alert's series never
    vanishes."""
    gauge = Gauge(name, doc, ["reason"], registry=registry)
    for reason in reasons:
        gauge.labels(reason=reason.value).set(counts.get(reason, 0))


def push_metrics(
    url: str,
    *,
    job: str,
    grouping: Mapping[str, str],
    summary: Mapping[str, int],
    api_requests: Mapping[tuple[str, int], int],
    configs_fetched: int,
    duration_seconds: float,
    success: bool,
    deferred: Mapping[Deferral, int],
    skipped: Mapping[Skip, int] | None = None,
    notifications_undelivered: int = 0,
    rolled: Iterable[tuple[str, str, str]] | None = None,
    timeout: float = 5.0,
) -> None:
    """Push one pass's metrics to the Pushgateway at `url` under `job` and `grouping`.

    A `user:password@` part of the URL becomes HTTP basic authentication (never part of a message).

    `summary` is the report's summary (action -> count; its `workloads` total is not exported, it is the
    sum of the actions; its `stalled` count becomes `kube_rehash_rollouts_stalled`). `api_requests` maps
    (verb, HTTP status) to a count. On success the whole group is replaced (PUT); on failure only the
    pushed names are (POST), which keeps the previous `kube_rehash_last_success_timestamp_seconds`.
    `notifications_undelivered` counts the notifications a failed webhook delivery left for the next pass;
    `rolled` (opt-in) names the workloads the pass rolled.

    Raises MetricsPushError with a one-line message when the push fails. The caller reports it (a log
    line) but does not fail the pass: metrics are an observation of the pass, not part of its work.
    """
    registry = build_registry(
        summary=summary,
        api_requests=api_requests,
        configs_fetched=configs_fetched,
        duration_seconds=duration_seconds,
        success=success,
        deferred=deferred,
        skipped=skipped,
        notifications_undelivered=notifications_undelivered,
        rolled=rolled,
    )
    push = push_to_gateway if success else pushadd_to_gateway
    parts = urlsplit(url)
    handler: Any = default_handler
    if parts.username is not None:  # urllib ignores credentials in a URL: send them as basic auth
        username, password = unquote(parts.username), unquote(parts.password or "")

        def handler(**kwargs: Any) -> Any:
            return basic_auth_handler(username=username, password=password, **kwargs)

    try:
        gateway = redact_url(url)
    except ValueError as exc:  # e.g. a non-numeric port
        raise MetricsPushError("cannot push metrics: the Pushgateway URL is malformed") from exc
    try:
        push(
            gateway, job=job, registry=registry, grouping_key=dict(grouping), timeout=timeout, handler=handler
        )
    except Exception as exc:  # urllib raises URLError, HTTPError, OSError, ValueError...
        detail = " ".join(str(exc).split()) or type(exc).__name__
        message = f"cannot push metrics to {gateway}: {detail}"
        if len(message) > _MAX_MESSAGE:
            message = message[: _MAX_MESSAGE - 3] + "..."
        raise MetricsPushError(message) from exc
