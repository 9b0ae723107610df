"""Write the chart's install notes, charts/kube-rehash/templates/NOTES.txt, and their copy in the chart's
README from one text, TEXT below.

Why generated: what `helm install` prints and what the chart's README says it prints must be the same words,
and both must say what the tool does. The text names each part that depends on the release by a
<placeholder>; FIELDS says how Helm fills it in, what it is for the README's example install and what it
means (the README's legend). `--check` (tests/test_chart_notes.py) fails when either file is stale; the same
test runs the example's commands against the simulator, and tests/test_chart.py compares the example with
what the real helm prints.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "charts" / "kube-rehash"
NOTES = CHART / "templates" / "NOTES.txt"
README = CHART / "README.md"
BEGIN = "<!-- BEGIN notes (scripts/gen-chart-notes.py): edit the text there -->"
END = "<!-- END notes -->"

TEXT = """\
kube-rehash <version> is installed in namespace <namespace>: the CronJob kube-rehash runs one pass on the
schedule "<schedule>", <scope>. Only opted-in workloads are considered:

  kubectl annotate deployment/web <prefix>/watch=true

Run a pass now and read its report (one row per opted-in workload, and a summary):

  kubectl -n <namespace> create job --from=cronjob/kube-rehash kube-rehash-now
  kubectl -n <namespace> wait --for=condition=complete job/kube-rehash-now --timeout=5m
  kubectl -n <namespace> logs <logs>

The pod runs the image <image>.

Plan or explain from a laptop (the kube-rehash CLI, your own kubeconfig) with the key the CronJob hashes
with, read from its Secret with your own access (`get` on that one Secret):

  kube-rehash plan --hash-key-secret <namespace>/<key-secret><namespace-flags>

Without the key, the workloads hashed with it are skipped ("run with the cluster's key"), never rolled.
A new key restarts nothing either: the next pass re-records each watched workload's hash under it (action
refresh); a source that changed as well still rolls its workloads, once.
"""

# The Helm variables the expressions below use, set at the top of NOTES.txt.
HELM_PREAMBLE = """\
{{- /* Generated from TEXT in scripts/gen-chart-notes.py, as is the chart README's copy: edit TEXT there
and run the script. */ -}}
{{- $namespaces := fromJsonArray (include "kube-rehash.namespaces" .) -}}
{{- $key := .Values.hashKey.existingSecret | default "kube-rehash-hash-key" -}}
"""

EXAMPLE_INSTALL = (
    "helm install kube-rehash charts/kube-rehash -n kube-rehash "
    "--set image.repository=registry.example.com/platform/kube-rehash"
)
"""The install whose notes `example()` gives (every other value at its default)."""


@dataclass(frozen=True)
class Field:
    """One part of TEXT that depends on the release."""

    placeholder: str
    helm: str
    """The Helm template expression NOTES.txt has in its place."""
    example: str
    """What Helm prints there for EXAMPLE_INSTALL."""
    meaning: str
    """What it is, for the README's legend (Markdown)."""


def _app_version() -> str:
    match = re.search(r'^appVersion:\s*"?([^"\s]+)"?', (CHART / "Chart.yaml").read_text(), re.MULTILINE)
    assert match, "Chart.yaml has no appVersion"
    return match.group(1)


FIELDS = (
    Field("<version>", "{{ .Chart.AppVersion }}", _app_version(), "the chart's `appVersion`"),
    Field("<namespace>", "{{ .Release.Namespace }}", "kube-rehash", "the release's namespace"),
    Field("<schedule>", "{{ .Values.schedule }}", "*/5 * * * *", "`schedule`"),
    Field(
        "<scope>",
        '{{ if $namespaces }}in the namespaces {{ join ", " $namespaces }}{{ else }}cluster-wide{{ end }}',
        "cluster-wide",
        "`cluster-wide`, or `in the namespaces team-a, team-b` "
        "(`scope.namespaces`, else `config.namespaces`)",
    ),
    Field("<prefix>", "{{ .Values.config.annotationPrefix }}", "kube-rehash.io", "`config.annotationPrefix`"),
    Field(
        "<logs>",
        "{{ if gt (int .Values.shards) 1 }}-l job-name=kube-rehash-now --prefix{{ else }}"
        "job/kube-rehash-now{{ end }}",
        "job/kube-rehash-now",
        "`job/kube-rehash-now`; with `shards` above 1, `-l job-name=kube-rehash-now --prefix` "
        "(every pod's log)",
    ),
    Field(
        "<image>",
        '{{ include "kube-rehash.image" . }}',
        f"registry.example.com/platform/kube-rehash:{_app_version()}",
        "`image.repository`, then `:image.tag` (default: the `appVersion`) or `@image.digest`",
    ),
    Field(
        "<key-secret>",
        "{{ $key }}",
        "kube-rehash-hash-key",
        "`hashKey.existingSecret`, else the Secret the chart generates, `kube-rehash-hash-key`",
    ),
    Field(
        "<namespace-flags>",
        "{{ range $namespaces }} -n {{ . }}{{ end }}",
        "",
        "` -n NS` for each namespace of a namespaced install; nothing for a cluster-wide one",
    ),
)


def _fill(text: str, value: dict[str, str]) -> str:
    """TEXT with each placeholder replaced; every <...> in TEXT must be a field."""
    unknown = sorted(set(re.findall(r"<[a-z-]+>", text)) - set(value))
    assert not unknown, f"TEXT has placeholders without a field: {unknown}"
    return re.sub(r"<[a-z-]+>", lambda m: value[m.group(0)], text)


def render_notes() -> str:
    return HELM_PREAMBLE + _fill(TEXT, {f.placeholder: f.helm for f in FIELDS})


def example() -> str:
    """The notes Helm prints for EXAMPLE_INSTALL."""
    return _fill(TEXT, {f.placeholder: f.example for f in FIELDS})


def render_readme(current: str) -> str:
    """The README with the text and its legend between the markers."""
    start, end = current.index(BEGIN) + len(BEGIN), current.index(END)
    legend = "\n".join(f"- `{f.placeholder}`: {f.meaning}." for f in FIELDS)
    block = f"\n```text\n{TEXT}```\n\n{legend}\n"
    return current[:start] + block + current[end:]


def outputs() -> dict[Path, str]:
    return {NOTES: render_notes(), README: render_readme(README.read_text(encoding="utf-8"))}


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print("usage: gen-chart-notes.py [--check]", file=sys.stderr)
        return 2
    stale = []
    for path, text in outputs().items():
        if path.read_text(encoding="utf-8") == text:
            continue
        stale.append(str(path.relative_to(ROOT)))
        if not check:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if check and stale:
        print(f"stale: {', '.join(stale)}; run python scripts/gen-chart-notes.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
