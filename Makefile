# kafkakit: `make lab` deploys and verifies the local two-DC lab; `make test` runs every test.
# Each target installs what it needs on a fresh Debian 12 machine (apt, venv, Maven artifacts,
# lab image), and is safe to run again.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

VENV        := .venv
PY          := $(VENV)/bin/python
KAFKA_VERSION     ?= 3.9.2
# The previous patch release: the upgrade test rolls dc2 from it to KAFKA_VERSION.
KAFKA_PREVIOUS    ?= 3.9.1
ZOOKEEPER_VERSION ?= 3.8.4
SPARK_VERSION     ?= 3.5.7
JMX_EXPORTER_VERSION ?= 1.0.1
ARTIFACTS   := build/artifacts/kafka_2.13-$(KAFKA_VERSION).tgz build/artifacts/apache-zookeeper-$(ZOOKEEPER_VERSION)-bin.tgz \
               build/artifacts/kafka_2.13-$(KAFKA_PREVIOUS).tgz \
               build/artifacts/spark-$(SPARK_VERSION)-bin-hadoop3.tgz \
               build/artifacts/jmx_prometheus_javaagent-$(JMX_EXPORTER_VERSION).jar
APT_PACKAGES := podman runc debootstrap openjdk-17-jdk-headless maven kcat e2fsprogs fscrypt prometheus
ANSIBLE     := cd ansible && ANSIBLE_CONFIG=ansible.cfg ../$(VENV)/bin/ansible-playbook
PYTEST_ARGS ?=
# actionlint checks .github/workflows; built from the Go module proxy only (no direct VCS, no
# toolchain download), into a versioned path so a second run is a no-op and a bump rebuilds.
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT  := build/tools/actionlint-$(ACTIONLINT_VERSION)/actionlint
GO          ?= $(firstword $(shell command -v go 2>/dev/null) /usr/local/go/bin/go)

export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: help setup apt venv artifacts image lab lab-up lab-down site verify test unit integration lint actionlint

help:
	@echo "make lab       deploy the local two-DC lab (podman) with site.yml and verify it"
	@echo "make test      the whole test suite: lint-free unit tests, then the lab-backed integration tests"
	@echo "make lab-down  remove every container, network, image and file the lab made"
	@echo "make lint      ruff, yamllint, ansible-lint (production profile), actionlint"

# --- set-up ----------------------------------------------------------------------------------
# prometheus is here for promtool (rule tests); its package starts a server under systemd, which
# this machine does not need: it is stopped and disabled right after a fresh install.
build/.apt-done:
	@echo "==> apt packages: $(APT_PACKAGES)"
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  if [[ " $$missing " == *" prometheus "* && -d /run/systemd/system ]]; then systemctl disable --now prometheus >/dev/null 2>&1 || true; fi; \
	fi
	@mkdir -p build && touch $@

apt: build/.apt-done

$(VENV)/.done: requirements.lock pyproject.toml
	@echo "==> virtualenv $(VENV) (pinned requirements.lock)"
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q -r requirements.lock
	@$(PY) -m pip install -q --no-deps -e .
	@touch $@

venv: $(VENV)/.done

$(ACTIONLINT):
	@echo "==> actionlint $(ACTIONLINT_VERSION) (Go module proxy)"
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

artifacts: $(ARTIFACTS)

image: apt
	@echo "==> lab base image"
	@ansible/lab/build-image.sh > build/lab-image.tag && echo "    $$(cat build/lab-image.tag)"

setup: apt venv artifacts image

# --- the lab ---------------------------------------------------------------------------------
lab-up: setup
	@echo "==> lab containers and inventory"
	@$(ANSIBLE) lab-up.yml -e lab_image=$$(cat ../build/lab-image.tag)

site: lab-up
	@echo "==> site.yml on the lab"
	@$(ANSIBLE) site.yml

verify: site
	@echo "==> verify"
	@$(ANSIBLE) verify.yml

lab: verify
	@$(PY) -m kafkakit.labinfo build/lab

lab-down: venv
	@echo "==> removing the lab"
	@$(ANSIBLE) lab-down.yml

# --- tests -----------------------------------------------------------------------------------
unit: venv
	@echo "==> unit tests"
	@$(PY) -m pytest -q tests/unit $(PYTEST_ARGS)

test: lint lab
	@echo "==> all tests (unit + integration against the lab)"
	@$(PY) -m pytest tests $(PYTEST_ARGS)

lint: venv actionlint
	@echo "==> lint"
	@$(VENV)/bin/ruff check .
	@$(VENV)/bin/yamllint -s .
	@cd ansible && PYTHONWARNINGS=ignore::DeprecationWarning ANSIBLE_CONFIG=ansible.cfg ../$(VENV)/bin/ansible-lint --profile production -q
	@$(ACTIONLINT)
