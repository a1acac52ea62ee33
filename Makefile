# kafkakit: `make lab` deploys and verifies the local two-DC lab; `make test` runs every test.
# Each target installs what it needs on a fresh Debian 12 machine (apt, venv, Maven artifacts,
# lab image), and is safe to run again.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

VENV        := .venv
PY          := $(VENV)/bin/python
# Component versions are pinned once, in the roles' defaults (`make versions` lists them all).
role_default = $(shell sed -n 's/^$(2): *//p' roles/$(1)/defaults/main.yml)
KAFKA_VERSION     ?= $(call role_default,kafka_common,kafka_version)
# KRaft data centres run Kafka 4.x (the lab's dc2: inventories/local/group_vars/dc2.yml).
KAFKA_KRAFT_VERSION ?= $(call role_default,kafka_common,kafka_kraft_version)
# The previous minor release of it: the upgrade test takes dc2 (KRaft) from it to KAFKA_KRAFT_VERSION
# (a minor upgrade: metadata.version moves); the lab's MirrorMaker 2 in dc2 runs it too (connect-mirror
# 4.4.0 is not on Maven Central: inventories/local/group_vars/dc2.yml, mirrormaker_kafka_version).
KAFKA_PREVIOUS    ?= 4.3.1
ZOOKEEPER_VERSION ?= $(call role_default,zookeeper,zookeeper_version)
SPARK_VERSION     ?= $(call role_default,spark,spark_version)
JMX_EXPORTER_VERSION ?= $(call role_default,monitoring,monitoring_jmx_exporter_version)
# The lag exporter's client on the monitoring hosts: the same confluent-kafka as the venv's.
CONFLUENT_KAFKA_VERSION := $(shell sed -n 's/^confluent-kafka==//p' requirements.lock)
ARTIFACTS   := build/artifacts/kafka_2.13-$(KAFKA_VERSION).tgz build/artifacts/apache-zookeeper-$(ZOOKEEPER_VERSION)-bin.tgz \
               build/artifacts/kafka_2.13-$(KAFKA_PREVIOUS).tgz build/artifacts/kafka_2.13-$(KAFKA_KRAFT_VERSION).tgz \
               build/artifacts/spark-$(SPARK_VERSION)-bin-hadoop3.tgz \
               build/artifacts/jmx_prometheus_javaagent-$(JMX_EXPORTER_VERSION).jar \
               build/artifacts/confluent_kafka-$(CONFLUENT_KAFKA_VERSION)-cp311-cp311-manylinux_2_28_x86_64.whl
# Kafka Connect plugins (ansible/artifacts/build-connect-plugin.sh, NAME-VERSION): those the lab's
# workers carry (inventories/local/group_vars/dc1.yml) and the older release a plugin change starts from.
CONNECT_PLUGINS := debezium-postgres-3.6.1.Final debezium-postgres-3.6.0.Final
ARTIFACTS   += $(addprefix build/artifacts/connect-plugins/,$(addsuffix .tgz,$(CONNECT_PLUGINS)))
APT_PACKAGES := podman runc debootstrap openjdk-17-jdk-headless maven kcat e2fsprogs fscrypt prometheus
ANSIBLE     := cd ansible && ANSIBLE_CONFIG=ansible.cfg ../$(VENV)/bin/ansible-playbook
PYTEST_ARGS ?=
# Extra arguments of verify.yml. `make test` leaves out its Spark smoke job: test_spark.py submits
# the same job (spark-jobs/smoke.py) and checks more of its result minutes later.
VERIFY_ARGS ?=
# uv installs the lock into the venv: it fetches and unpacks the wheels side by side and compiles
# their bytecode on every core (compiled at install: PYTHONDONTWRITEBYTECODE machines never would).
UV_VERSION := 0.13.9
# actionlint checks .github/workflows; built from the Go module proxy only (no direct VCS, no
# toolchain download), into a versioned path so a second run is a no-op and a bump rebuilds.
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT  := build/tools/actionlint-$(ACTIONLINT_VERSION)/actionlint
GO          ?= $(firstword $(shell command -v go 2>/dev/null) /usr/local/go/bin/go)

export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

# The scenario tier: the long proofs, all of them or one at a time (src/kafkakit/tooling/tiers.py maps
# each to its test files and, from them, to the code it exercises).
SCENARIOS := rotation upgrade scale faults controllers migration dr connect disk-full alerts drift spark-pipeline
SCENARIO_TARGETS := $(addprefix test-,$(SCENARIOS))

# make bench (issue #8): the knobs. BENCH_CASES is the default subset of the plan that still
# holds every comparison the issue asks for (empty = the whole plan, about twice as long);
# BENCH_COLD_LAB_SECONDS, when set, is a cold `make lab` time measured beforehand.
BENCH_REPETITIONS ?= 3
BENCH_SECONDS     ?= 20
BENCH_TIMING_RUNS ?= 1
BENCH_PLAINTEXT_PORT ?= 9095
BENCH_DC          ?= dc1
BENCH_COLD_LAB_SECONDS ?=
# kraft-vs-zk (issue #14): ZooKeeper-mode BENCH_ZK_DC vs KRaft BENCH_KRAFT_DC, side by side
# (src/kafkakit/bench/modes.py), the longest case of the plan (docs/benchmark.md). Leave it out
# of BENCH_CASES to skip it. cdc-<rate> (issue #48), asked for by name (it starts a Spark job of
# its own): rows committed to the lab's PostgreSQL at BENCH_CDC_RATE rows/s for BENCH_CDC_SECONDS,
# timed into Kafka and Spark (src/kafkakit/bench/cdc.py); `make bench BENCH_CASES=cdc-500` runs it alone.
BENCH_CDC_RATE    ?= 500
BENCH_CDC_SECONDS ?= 60
# leader-failover (issue #47), asked for by name (it adds a spare broker to dc2): the host of a
# partition leader SIGKILLed under an acks=all producer and back 10 s later, in both modes; dc2 gets
# its spare broker dc2-kafka3 for the case (src/kafkakit/bench/leader_cases.py, spare.py).
# `make bench BENCH_CASES=leader-failover` runs it alone; the settings it measures are the lab's:
# LAB_VARS below deploys others first (docs/benchmark.md, the before/after commands).
BENCH_CASES ?= producer-sasl_ssl-tuned-none-100 producer-sasl_ssl-stock-none-100 \
               producer-sasl_ssl-fetchers2-none-1024 producer-sasl_ssl-fewthreads-none-1024 \
               producer-sasl_ssl-tuned-none-1024 producer-sasl_ssl-stock-none-1024 \
               producer-sasl_ssl-tuned-lz4-1024 producer-sasl_ssl-tuned-zstd-1024 \
               consumer-sasl_ssl-tuned-none-1024 latency-sasl_ssl-1024 \
               producer-plaintext-tuned-none-1024 latency-plaintext-1024 \
               kraft-vs-zk
BENCH_ZK_DC       ?= dc1
BENCH_KRAFT_DC    ?= dc2
BENCH_ARGS  ?=
# A YAML file of extra variables for site.yml in `make lab` (and so in `make bench`, whose spare
# brokers get them too), e.g. session settings to measure; a later `make lab` without it deploys
# the inventory's own values again.
LAB_VARS    ?=
BENCH_KAFKA := build/bench/kafka_2.13-$(KAFKA_VERSION)
BENCH_LISTENER = (cd ansible && ANSIBLE_CONFIG=ansible.cfg ../$(VENV)/bin/ansible-playbook lab/bench-listener.yml \
                  -e bench_dc=$(BENCH_DC) -e bench_port=$(BENCH_PLAINTEXT_PORT) -e bench_listener=$(1))

.PHONY: help setup apt venv artifacts image lab lab-up lab-down lab-clean lab-dc3 lab-dc3-down site verify test \
        test-scenarios test-affected $(SCENARIO_TARGETS) unit integration lint actionlint bench versions

help:
	@echo "make lab       deploy the local two-DC lab (podman) with site.yml and verify it"
	@echo "make test      lint, unit tests, the lab, and the contract tests (CI's per-change tier)"
	@echo "make test-scenarios  every long proof under load (rolls, rotation, upgrade, migration, faults, DR, ...)"
	@echo "make test-<name>     one scenario: $(SCENARIOS)"
	@echo "make test-affected BASE=<rev>  the scenarios whose code changed since <rev>"
	@echo "make lab-down  remove the lab's containers, network and files (the base image stays for the next lab)"
	@echo "make lab-clean lab-down, and the lab's base images too"
	@echo "make lab-dc3   add a third, ZooKeeper-mode data centre to the running lab (migration rehearsals)"
	@echo "make lab-dc3-down  remove it again (dc1 and dc2 untouched)"
	@echo "make versions  every component's pinned version (the README's table)"
	@echo "make lint      ruff, yamllint, ansible-lint (production profile), actionlint"
	@echo "make bench     Kafka's perf tools, MirrorMaker 2 and playbook timings on the lab -> build/bench/report.md"

# --- set-up ----------------------------------------------------------------------------------
# prometheus is here for promtool (rule tests); its package starts a server under systemd, which
# this machine does not need: it is stopped and disabled right after a fresh install.
build/.apt-done:
	@echo "==> [$$(date +%T)] apt packages: $(APT_PACKAGES)"
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  if [[ " $$missing " == *" prometheus "* && -d /run/systemd/system ]]; then systemctl disable --now prometheus >/dev/null 2>&1 || true; fi; \
	fi
	@mkdir -p build && touch $@

apt: build/.apt-done

$(VENV)/.done: requirements.lock pyproject.toml
	@echo "==> [$$(date +%T)] virtualenv $(VENV) (pinned requirements.lock, through uv $(UV_VERSION))"
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q uv==$(UV_VERSION)
	@$(VENV)/bin/uv pip install -q --native-tls --compile-bytecode --python $(PY) -r requirements.lock
	@$(PY) -m pip install -q --no-deps -e .
	@touch $@

venv: $(VENV)/.done

$(ACTIONLINT):
	@echo "==> [$$(date +%T)] actionlint $(ACTIONLINT_VERSION) (Go module proxy)"
	@test -x "$(GO)" || { echo "actionlint needs Go (set GO=/path/to/go)" >&2; exit 1; }
	@GOBIN=$(abspath $(dir $@)) GOPROXY=https://proxy.golang.org GOTOOLCHAIN=local CGO_ENABLED=0 \
	  $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)

actionlint: $(ACTIONLINT)

build/artifacts/kafka_2.13-%.tgz: | build/.apt-done
	@ansible/artifacts/build.sh kafka $*

build/artifacts/apache-zookeeper-%-bin.tgz: | build/.apt-done
	@ansible/artifacts/build.sh zookeeper $*

# Spark: the PySpark distribution (PyPI, through the venv's pip) plus the Kafka connector (Maven).
build/artifacts/spark-%-bin-hadoop3.tgz: | build/.apt-done $(VENV)/.done
	@ansible/artifacts/build-spark.sh $*

# The Prometheus JMX exporter java agent (one jar, Maven Central, sha256-pinned).
build/artifacts/jmx_prometheus_javaagent-%.jar: | build/.apt-done
	@ansible/artifacts/build-jmx-exporter.sh $*

# A Connect plugin: its jars from Maven Central, each checked against its lock file.
build/artifacts/connect-plugins/%.tgz: | build/.apt-done
	@s=$*; n=$${s%%-[0-9]*}; ansible/artifacts/build-connect-plugin.sh $$n $${s#$$n-}

build/artifacts/confluent_kafka-%-cp311-cp311-manylinux_2_28_x86_64.whl: | $(VENV)/.done
	@ansible/artifacts/build-wheel.sh $*

artifacts: $(ARTIFACTS)

image: apt
	@echo "==> [$$(date +%T)] lab base image"
	@ansible/lab/build-image.sh > build/lab-image.tag && echo "    $$(cat build/lab-image.tag)"

# Two sub-makes side by side, each running its own goals in order ($(1), $(2)); either failing
# fails the step once both have ended. $(3), when given, takes the first one's output, printed at
# the end instead of interleaved. `make -j` is not used: two Maven runs must not share ~/.m2 at once.
BESIDE = $(MAKE) --no-print-directory $(1) $(if $(3),> $(3) 2>&1) & first=$$!; rc=0; \
	$(MAKE) --no-print-directory $(2) || rc=$$?; \
	wait $$first || rc=$$?; $(if $(3),cat $(3);) exit $$rc

# The artifacts (Maven and PyPI downloads) and the base image (debootstrap, apt in a chroot) are
# built side by side: both mostly wait on the network.
setup: apt venv
	@$(call BESIDE,artifacts,image)

# --- the lab ---------------------------------------------------------------------------------
lab-up: setup
	@echo "==> [$$(date +%T)] lab containers and inventory"
	@$(ANSIBLE) lab/lab-up.yml -e lab_image=$$(cat ../build/lab-image.tag)
	@echo "==> [$$(date +%T)] the lab's source database (PostgreSQL)"
	@$(ANSIBLE) lab/source-db.yml

site: lab-up
	@echo "==> [$$(date +%T)] site.yml on the lab$(if $(LAB_VARS), with $(LAB_VARS))"
	@$(ANSIBLE) site.yml $(if $(LAB_VARS),-e @$(abspath $(LAB_VARS)))

verify: site
	@echo "==> [$$(date +%T)] verify"
	@$(ANSIBLE) verify.yml $(VERIFY_ARGS)

lab: verify
	@$(PY) -m kafkakit.tooling.labinfo build/lab

# The optional third data centre (ZooKeeper mode, Kafka 3.9.x) to rehearse the migration on;
# needs the lab (make lab). Only dc3's hosts and the monitoring hosts (they scrape every DC)
# run site.yml: dc1 and dc2 are not touched. lab-up.yml without lab_dc3 removes it again.
lab-dc3: setup
	@echo "==> [$$(date +%T)] dc3: containers, then site.yml and verify.yml on dc3 and the monitoring hosts"
	@$(ANSIBLE) lab/lab-up.yml -e lab_image=$$(cat ../build/lab-image.tag) -e lab_dc3=true
	@$(ANSIBLE) site.yml --limit 'dc3:monitoring:localhost'
	@$(ANSIBLE) verify.yml --limit 'dc3:monitoring:localhost'

lab-dc3-down: setup
	@echo "==> [$$(date +%T)] dc3: containers removed, the monitoring hosts forget it"
	@$(ANSIBLE) lab/lab-up.yml -e lab_image=$$(cat ../build/lab-image.tag)
	@$(ANSIBLE) site.yml --limit 'monitoring:localhost'
	@rm -rf build/lab/dc3 build/lab/pki/kraft/dc3.yml

lab-down: venv
	@echo "==> [$$(date +%T)] removing the lab (the base image stays)"
	@$(ANSIBLE) lab/lab-down.yml

lab-clean: venv
	@echo "==> [$$(date +%T)] removing the lab and its base images"
	@$(ANSIBLE) lab/lab-down.yml -e lab_remove_images=true

# --- benchmark (issue #8) ---------------------------------------------------------------------
# The perf tools run on this machine (the controller) from the kit's own archive: libs/ only,
# started with java -cp by the harness.
$(BENCH_KAFKA)/.done: build/artifacts/kafka_2.13-$(KAFKA_VERSION).tgz
	@echo "==> [$$(date +%T)] Kafka tools for the bench: $(BENCH_KAFKA)"
	@mkdir -p build/bench && tar -xzf $< -C build/bench && touch $@

# The BENCH PLAINTEXT listener exists only while the bench runs: a per-broker dynamic overlay
# (ansible/lab/bench-listener.yml, no restart, server.properties untouched). The EXIT trap turns
# it off whatever happens (a failed run, a failed step on the way on, Ctrl-C), and keeps the exit code.
bench: lab $(BENCH_KAFKA)/.done
	@echo "==> [$$(date +%T)] bench: BENCH listener on in $(BENCH_DC), then clients, kraft-vs-zk, leader-failover and cdc, MirrorMaker 2, timings; listener off"
	@trap 'rc=$$?; echo "==> bench: BENCH listener off"; $(call BENCH_LISTENER,off) || rc=1; exit $$rc' EXIT; \
	trap 'exit 130' INT TERM; \
	$(call BENCH_LISTENER,on); \
	sasl=$$($(PY) -m kafkakit.bench.lab property build/lab/$(BENCH_DC)/client.properties bootstrap.servers); \
	plain=$$($(PY) -m kafkakit.bench.lab plaintext-bootstrap build/lab/hosts.yml --dc $(BENCH_DC) --port $(BENCH_PLAINTEXT_PORT)); \
	$(PY) -m kafkakit.bench --kafka-home $(CURDIR)/$(BENCH_KAFKA) \
	  --bootstrap "$$sasl" --client-config $(CURDIR)/build/lab/$(BENCH_DC)/client.properties \
	  --plaintext-bootstrap "$$plain" \
	  --client-dir build/lab --dc $(BENCH_DC) --ansible-playbook $(CURDIR)/$(VENV)/bin/ansible-playbook \
	  --repetitions $(BENCH_REPETITIONS) --seconds $(BENCH_SECONDS) --timing-runs $(BENCH_TIMING_RUNS) \
	  --zk-dc $(BENCH_ZK_DC) --kraft-dc $(BENCH_KRAFT_DC) --zk-version $(KAFKA_VERSION) --kraft-version $(KAFKA_KRAFT_VERSION) \
	  --cdc-rate $(BENCH_CDC_RATE) --cdc-seconds $(BENCH_CDC_SECONDS) \
	  --lab-config ansible/lab/lab-config.yml --image-tag-file build/lab-image.tag \
	  $(if $(LAB_VARS),--lab-vars $(abspath $(LAB_VARS))) \
	  $(if $(BENCH_COLD_LAB_SECONDS),--cold-lab-seconds $(BENCH_COLD_LAB_SECONDS)) \
	  $(if $(strip $(BENCH_CASES)),--only $(foreach c,$(BENCH_CASES),'$(c)')) \
	  --out build/bench $(BENCH_ARGS)

# --- tests -----------------------------------------------------------------------------------
# The unit tier runs its files on UNIT_WORKERS processes (pytest-xdist; a file's tests stay on one
# worker, so its module fixtures are built once): most of its time is ansible-playbook and Pulumi
# runs, one core each.
UNIT_WORKERS ?= $(shell nproc)

unit: venv
	@echo "==> [$$(date +%T)] unit tests ($(UNIT_WORKERS) workers)"
	@$(PY) -m pytest -q -n $(UNIT_WORKERS) --dist loadfile tests/unit $(PYTEST_ARGS)
	@echo "==> [$$(date +%T)] unit tests passed"

# While the set-up waits on downloads (Maven, PyPI, debootstrap), lint and the unit tests run beside
# it: one sub-make builds the artifacts and then runs the unit tests (some read the Kafka archives),
# the other builds the base image and then lints. Nothing runs beside the lab's deploy or its
# tests: they keep the machine's 2 cores busy most of the time, and work beside them, even at
# nice 19, slows them (docs/benchmark.md).
test: apt venv
	@mkdir -p build/test-logs
	@$(call BESIDE,artifacts unit,image lint,build/test-logs/unit.log)
	@$(MAKE) --no-print-directory integration VERIFY_ARGS="-e verify_spark_smoke=false"

# The contract tier: every test file of tests/integration outside scenarios/.
integration: lab
	@echo "==> [$$(date +%T)] contract tests against the lab"
	@$(PY) -m pytest tests/integration --ignore=tests/integration/scenarios $(PYTEST_ARGS)

# The scenario tier (SCENARIOS above).
test-scenarios: lab
	@echo "==> [$$(date +%T)] every scenario against the lab"
	@$(PY) -m pytest tests/integration/scenarios $(PYTEST_ARGS)

$(SCENARIO_TARGETS): lab
	@echo "==> [$$(date +%T)] scenario $(@:test-%=%)"
	@$(PY) -m pytest $$($(PY) -m kafkakit.tooling.tiers files $(@:test-%=%)) $(PYTEST_ARGS)

# The scenarios whose code changed since BASE (a commit, a branch): make test-affected BASE=main
test-affected: venv
	@test -n "$(BASE)" || { echo "make test-affected needs BASE=<rev>" >&2; exit 2; }
	@names=$$($(PY) -m kafkakit.tooling.tiers affected --base '$(BASE)'); \
	if [ -z "$$names" ]; then echo "==> no scenario reaches what changed since $(BASE)"; exit 0; fi; \
	echo "==> scenarios affected since $(BASE): $$names"; \
	$(MAKE) --no-print-directory lab && \
	$(PY) -m pytest $$($(PY) -m kafkakit.tooling.tiers files $$names) $(PYTEST_ARGS)

versions: venv
	@$(PY) -m kafkakit.tooling.versions

# docs/variables.md from the roles' meta/argument_specs.yml (a unit test fails when it is stale).
.PHONY: docs
docs: venv
	@$(PY) -m kafkakit.tooling.specdoc --write docs/variables.md

lint: venv actionlint
	@echo "==> [$$(date +%T)] lint"
	@$(VENV)/bin/ruff check .
	@$(VENV)/bin/yamllint -s .
	@cd ansible && PYTHONWARNINGS=ignore::DeprecationWarning ANSIBLE_CONFIG=ansible.cfg ../$(VENV)/bin/ansible-lint --profile production -q
	@$(ACTIONLINT)
	@echo "==> [$$(date +%T)] lint passed"
