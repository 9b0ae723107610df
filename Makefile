# Every target sets itself up from scratch: a fresh machine needs only python3 (>= 3.11) and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo check quick test unit lint typecheck bench chaos clean lock debian-deps image config \
	control-plane cluster helm test-versions

# The tiers (docs/testing.md says which to run when, with their measured times):
#   make check  before every commit: lint, types, import contracts, the unit and stage tests; builds nothing.
#   make quick  every test that needs nothing built (check's tests plus those marked `slow`).
#   make test   everything CI runs (.ci/run): builds the control plane, helm and the image first.
# pytest-xdist workers for the tests that share no server (`auto`: one per CPU).
TEST_WORKERS ?= auto

# The setup is silent (pip --quiet, no echo): `make demo` prints only the walk-through.
$(BIN)/python:
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip

# Hash-pinned install of one locked set (demo, test or bench), then the project and the API simulator
# (./simulator, distribution kube-rehash-simulator: the `simulator` extra) from the working tree without deps.
$(VENV)/.installed-%: requirements/%.txt setup.cfg pyproject.toml simulator/setup.cfg simulator/pyproject.toml | $(BIN)/python
	@$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r $<
	@$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e . -e ./simulator
	@rm -f $(VENV)/.installed-*
	@touch $@

# The test and bench sets include the demo set (runtime, simulator, kubectl for the README's Quick start),
# so whichever of them is installed serves `demo` (brought up to date first); otherwise the demo set.
DEMO_SET := $(firstword $(patsubst $(VENV)/.installed-%,%,$(wildcard $(VENV)/.installed-test $(VENV)/.installed-bench)) demo)

demo: $(VENV)/.installed-$(DEMO_SET)
	@$(BIN)/kube-rehash demo

lint: $(VENV)/.installed-test
	$(BIN)/ruff check reconcile simulator tests $(wildcard benchmarks)
	$(BIN)/ruff format --check reconcile simulator tests $(wildcard benchmarks)
	$(BIN)/lint-imports --no-cache

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy --strict reconcile simulator/rehash_simulator

# Debian packages some tests run for real (a Prometheus Pushgateway; podman with runc to build and run the
# image, debootstrap for its base).
DEBIAN_TEST_PACKAGES := prometheus-pushgateway podman runc debootstrap

debian-deps:
	bash scripts/ensure-debian-packages.sh $(DEBIAN_TEST_PACKAGES)

# `make test`'s tests, in three independent parts that all always run (make fails if any failed), each
# printing its slowest tests: those that share no server on $(TEST_WORKERS) xdist workers (CPU-bound, no
# shared state); those that need the real control plane or the image in one process (one control plane for
# the session: one per worker would cost a core each, and the image tests share one podman store), on the
# newest supported Kubernetes (or KUBE_VERSION's); then the real-server end-to-end, RBAC, conformance and
# fault suites again on the oldest supported minor (OLDEST_SUITES; `make test-versions` runs the core
# suites on every minor).
unit: $(VENV)/.installed-test debian-deps
	@status=0; \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope --durations=25 -m "not chaos and not real and not image" || status=$$?; \
	$(BIN)/python -m pytest -q --durations=25 -m "not chaos and (real or image)" || status=$$?; \
	echo "== the same real-server suites on the oldest supported Kubernetes, $(OLDEST_MINOR)"; \
	KUBE_VERSION=$(OLDEST_MINOR) $(BIN)/python -m pytest -q --durations=10 -m "real and not chaos and not image" \
		$(OLDEST_SUITES) || status=$$?; \
	exit $$status

test: lint typecheck unit

# The fast tier: no cluster, no image, no helm or promtool, no Go, no Debian packages (a test that needs the Pushgateway
# skips without it, or fails under CI=true); the tests marked `slow` (the longest, found with --durations) are
# left to `make quick` and `make test`.
check: lint typecheck
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) -m "not chaos and not real and not image and not helm and not promtool and not slow"

# Every file that lists settings, written from the one settings table (reconcile/settings/): the config
# schema, the shipped config files, the cronjob/ copies, the chart's config values and values schema; and the
# chart's NOTES.txt from its one text (scripts/gen-chart-notes.py). tests/test_config_drift.py and
# tests/test_chart.py (in `make test`) fail naming any stale one.
config: $(VENV)/.installed-test
	$(BIN)/python scripts/gen-config.py
	$(BIN)/python scripts/gen-chart-notes.py

# The real Kubernetes control plane tests/real runs against (needs Go). KUBE_VERSION=1.34 picks a supported
# minor of tests/cluster/versions.txt (pinned release and etcd; default the newest) for control-plane,
# cluster and the tests. Cached in .cache/control-plane/<version>/, one per version: a no-op when built.
KUBE_VERSION ?=
export KUBE_VERSION
SUPPORTED_MINORS := $(shell awk '!/^\#/ && NF {print $$1}' tests/cluster/versions.txt)
control-plane:
	@bash scripts/build-control-plane.sh

# The core real-server suites (end-to-end [real], conformance, RBAC, rollouts, fresh pods, rollout health, Argo
# Rollouts with the real Argo controller: `make argo-rollouts`, built once for every version) on
# every supported minor, oldest first, each on its own control plane (built when missing: ~5 min each cold).
CORE_REAL_SUITES := tests/e2e tests/conformance tests/real/test_server_version.py tests/real/test_list_order.py \
	tests/real/test_streamed_walk.py tests/real/test_rbac.py tests/real/test_rollouts.py tests/real/test_fresh_pods.py tests/real/test_rollout_health.py \
	tests/real/test_argo_rollouts.py
test-versions: $(VENV)/.installed-test argo-rollouts
	@for minor in $(SUPPORTED_MINORS); do \
		echo "== Kubernetes $$minor"; \
		KUBE_VERSION=$$minor bash scripts/build-control-plane.sh || exit 1; \
		KUBE_VERSION=$$minor CI=true $(BIN)/python -m pytest -q --durations=10 -m "real and not chaos" \
			$(CORE_REAL_SUITES) || exit 1; \
	done

unit: control-plane control-plane-oldest

# The oldest supported minor's control plane, which `make test` runs OLDEST_SUITES on: the suites whose
# server answers differ between minors (continue tokens under compaction, admission policies, list order,
# discovery, RBAC); the other fault suites run on the newest (the core suites on every minor: `make test-versions`).
OLDEST_MINOR := $(firstword $(SUPPORTED_MINORS))
OLDEST_SUITES := tests/e2e tests/conformance tests/chaos_real/test_compaction.py tests/chaos_real/test_admission.py \
	tests/real/test_server_version.py tests/real/test_list_order.py tests/real/test_rbac.py
.PHONY: control-plane-oldest
control-plane-oldest:
	@KUBE_VERSION=$(OLDEST_MINOR) bash scripts/build-control-plane.sh

# The pinned helm the chart tests use (helm.sh/helm/v4, version in tools/helm/go.mod; needs Go).
# Cached in .cache/helm/<version>/: a no-op when already built.
helm:
	@bash scripts/build-helm.sh

unit: helm

# The pinned promtool the monitoring tests use (github.com/prometheus/prometheus, version in tools/promtool/go.mod;
# needs Go, about 5 minutes cold). Cached in .cache/promtool/<version>/: a no-op when already built.
.PHONY: promtool monitoring
promtool:
	@bash scripts/build-promtool.sh

unit: promtool

# The pinned Prometheus server the OTLP tests push to (tests/test_otlp_receiver.py; the same release as promtool,
# its own go.sum in tools/prometheus/). Cached in .cache/prometheus/<version>/: a no-op when already built.
.PHONY: prometheus
prometheus:
	@bash scripts/build-prometheus.sh

unit: prometheus

# The copies of deploy/monitoring/ the chart (charts/kube-rehash/files/) and the Prometheus Operator
# (deploy/monitoring/prometheusrule.yaml) need; tests/test_monitoring.py fails naming a stale one.
monitoring: $(VENV)/.installed-test
	$(BIN)/python scripts/gen-monitoring.py

# The release artefacts in dist/ (docs/release.md): wheel, sdist, the packaged chart, the kubectl plugin archives
# (linux/amd64 frozen by PyInstaller, the others zipapps), their krew manifest and SHA256SUMS (dist-python, cached
# by a stamp of its inputs, dist/.stamp: a no-op when unchanged); then the image as an OCI archive and an SPDX SBOM
# per artefact (scripts/dist-extras.py), added to SHA256SUMS.
.PHONY: dist dist-python image-archive sbom krew
dist: image-archive sbom

dist-python: $(VENV)/.installed-test helm
	$(BIN)/python scripts/build-dist.py

# dist/kube-rehash-image-<version>.oci.tar: `make image`'s image, `podman save --format oci-archive` (cached by ID).
image-archive: dist-python image
	$(BIN)/python scripts/dist-extras.py image-archive

# dist/<artefact>.spdx.json, written by the pinned syft (cached by the artefact's sha256).
sbom: dist-python image-archive syft
	$(BIN)/python scripts/dist-extras.py sbom

# The pinned syft (github.com/anchore/syft, version in tools/syft/go.mod; needs Go, about 8 minutes cold on the
# loaded 2-core machine) that writes the SBOMs. Cached in .cache/syft/<version>/: a no-op when built.
.PHONY: syft
syft:
	@bash scripts/build-syft.sh

unit: syft

# Sign dist/SHA256SUMS with cosign and a key: `make sign-dist COSIGN_KEY=cosign.key` (COSIGN_PASSWORD in the
# environment); the bundle is dist/SHA256SUMS.sigstore.json (docs/release.md).
.PHONY: sign-dist cosign
sign-dist: dist cosign
	$(BIN)/python scripts/sign-dist.py

# Sign the pushed image by digest and attest its SBOM: `make sign-image IMAGE_REF=<registry>/kube-rehash@sha256:<digest>
# COSIGN_KEY=cosign.key` (COSIGN_PASSWORD in the environment; docs/release.md, scripts/sign-image.py).
.PHONY: sign-image
sign-image: sbom cosign
	@test -n "$(IMAGE_REF)" || { echo "sign-image: set IMAGE_REF=<registry>/kube-rehash@sha256:<digest>" >&2; exit 2; }
	$(BIN)/python scripts/sign-image.py "$(IMAGE_REF)"

# The pinned CNCF Distribution registry (github.com/distribution/distribution/v3, version in tools/registry/go.mod;
# needs Go, about 5 minutes cold) tests/test_image_signing.py pushes to and signs in on 127.0.0.1. Cached in
# .cache/registry/<version>/: a no-op when built.
.PHONY: registry
registry:
	@bash scripts/build-registry.sh

unit: registry

# The pinned cosign (github.com/sigstore/cosign/v3, version in tools/cosign/go.mod; needs Go, minutes cold) that
# signs and verifies in tests/test_dist_signing.py. Cached in .cache/cosign/<version>/: a no-op when built.
cosign:
	@bash scripts/build-cosign.sh

unit: cosign

# The pinned krew tests/test_dist.py installs the plugin archive with (sigs.k8s.io/krew, version in
# tools/krew/go.mod; needs Go, about 15 s cold). Cached in .cache/krew/<version>/: a no-op when already built.
krew:
	@bash scripts/build-krew.sh

unit: krew

# The pinned Argo Rollouts controller and its CRDs tests/real/test_argo_rollouts.py runs on the control plane
# (github.com/argoproj/argo-rollouts, version in tools/argo-rollouts/go.mod; needs Go, and fetches the newer Go
# toolchain that release needs from the module proxy). Cached in .cache/argo-rollouts/<version>/: a no-op when built.
.PHONY: argo-rollouts
argo-rollouts:
	@bash scripts/build-argo-rollouts.sh

unit: argo-rollouts

# The image (Dockerfile): the CLI frozen by PyInstaller on an empty base, built with podman from a Debian bookworm
# build stage made with debootstrap (no registry needed); localhost/kube-rehash:dev; prints its size. Cached in
# .cache/image/: a no-op when its inputs are unchanged.
# KUBE_REHASH_NO_PODMAN=1 skips it (and the image tests skip, except under CI=true).
image: debian-deps
	@bash scripts/build-image.sh

unit: image

# That control plane for people (kubeconfig in .cache/cluster/kubeconfig), until Ctrl-C.
cluster: $(VENV)/.installed-test control-plane
	@$(BIN)/python -m tests.cluster

# Every test that needs nothing built: the tests `unit` runs, without those that need the real control plane
# (marker `real`: tests/real, tests/conformance, the [real] half of tests/e2e), the image (`image`), helm (`helm`)
# or promtool (`promtool`): no Go build, no control plane, no podman. Unlike `check`, it runs the `slow` tests too.
quick: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope -m "not chaos and not real and not image and not helm and not promtool"

# The full run of record: 1x, 4x, 10x at qps 0 (tool, floor and list floor), the same at 1x and 10x on objects
# as real clusters hold them, the shipped defaults at 1x and 10x (the passes a first install and a 5% change
# take), shards, 4x unrelated Secrets, and the committed chart.
BENCH_ARGS ?= --scales 1,4,10 --realistic-scales 1,10 --defaults 1,10 --shards 4 --unrelated-secrets 4 \
	--real-scale 0.25 --chart docs/performance.png --out benchmarks/results.json

# Then peak RSS of the first, steady and change passes at 1x, 2x, 4x and 10x (docs/memory-profile.md).
MEMORY_ARGS ?= --memory --scales 1,2,4,10 --chart docs/memory.png --out benchmarks/results-memory.json \
	--performance-chart benchmarks/results.json docs/performance.png

# And the same on realistic objects at 1x and 10x (`qps: 0` and the defaults' steady and change passes).
MEMORY_REALISTIC_ARGS ?= --memory --objects realistic --scales 1,10 --memory-first-defaults none \
	--out benchmarks/results-memory-realistic.json

# And on the named 10x shapes of benchmarks/shapes.py, with continue tokens that expire mid-walk as the varied
# answer (docs/engineering/memory-findings.md): first, steady and change at `qps: 0` and at the defaults.
MEMORY_SHAPES_ARGS ?= --memory --shapes project,independent,independent@tokens-60s,many-small,few-huge,helm-heavy,big-configmaps,long-refs,realistic \
	--out benchmarks/results-memory-shapes.json

# The editable install leaves the project's modules uncompiled (and PYTHONDONTWRITEBYTECODE keeps them so):
# compiled first, as a wheel's install (pip) and the image do, so each pass measured pays no compile.
bench: $(VENV)/.installed-bench control-plane
	$(BIN)/python -m compileall -q reconcile simulator/rehash_simulator benchmarks
	$(BIN)/python -m benchmarks $(BENCH_ARGS)
	$(BIN)/python -m benchmarks $(MEMORY_ARGS)
	$(BIN)/python -m benchmarks $(MEMORY_REALISTIC_ARGS)
	$(BIN)/python -m benchmarks $(MEMORY_SHAPES_ARGS)
	$(BIN)/python -m benchmarks.report benchmarks/results.json benchmarks/results-memory.json \
		benchmarks/results-memory-realistic.json benchmarks/results-memory-shapes.json > docs/run-of-record.md

chaos: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m chaos

# Re-resolve the hash-pinned locks (needs uv; for maintainers, never run by CI). PyInstaller's lock
# (requirements/freeze.txt: what freeze.in needs beyond runtime.txt, linux x86_64 and aarch64 wheels) is written
# with pip alone, after runtime.txt: scripts/lock-freeze.py (pip download, then each wheel's sha256 as pip hash).
lock:
	cd requirements && for f in runtime demo test bench; do uv pip compile --quiet --python-version 3.11 --generate-hashes --no-header $$f.in -o $$f.txt; done
	$(PYTHON) scripts/lock-freeze.py

clean:
	rm -rf $(VENV) build *.egg-info simulator/build simulator/*.egg-info .mypy_cache .pytest_cache .ruff_cache
