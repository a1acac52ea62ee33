# kafkakit: `make lab` deploys and verifies the local two-DC lab; `make test` runs every test.
# Each target installs what it needs on a fresh Debian 12 machine (apt, venv, Maven artifacts,
# lab image), and is safe to run again.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

VENV        := .venv
PY          := $(VENV)/bin/python
KAFKA_VERSION     ?= 3.9.2
ZOOKEEPER_VERSION ?= 3.8.4
ARTIFACTS   := build/artifacts/kafka_2.13-$(KAFKA_VERSION).tgz build/artifacts/apache-zookeeper-$(ZOOKEEPER_VERSION)-bin.tgz
APT_PACKAGES := podman runc debootstrap openjdk-17-jdk-headless maven kcat e2fsprogs fscrypt
ANSIBLE     := cd ansible && ANSIBLE_CONFIG=ansible.cfg ../$(VENV)/bin/ansible-playbook
PYTEST_ARGS ?=

export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: help setup apt venv artifacts image lab lab-up lab-down site verify test unit integration lint

help:
	@echo "make lab       deploy the local two-DC lab (podman) with site.yml and verify it"
	@echo "make test      the whole test suite: lint-free unit tests, then the lab-backed integration tests"
	@echo "make lab-down  remove every container, network, image and file the lab made"
	@echo "make lint      ruff, yamllint, ansible-lint (production profile)"

# --- set-up ----------------------------------------------------------------------------------
build/.apt-done:
	@echo "==> apt packages: $(APT_PACKAGES)"
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
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

build/artifacts/kafka_2.13-%.tgz: | build/.apt-done
	@ansible/artifacts/build.sh kafka $*

build/artifacts/apache-zookeeper-%-bin.tgz: | build/.apt-done
	@ansible/artifacts/build.sh zookeeper $*

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

lint: venv
	@echo "==> lint"
	@$(VENV)/bin/ruff check .
	@$(VENV)/bin/yamllint -s .
	@cd ansible && PYTHONWARNINGS=ignore::DeprecationWarning ANSIBLE_CONFIG=ansible.cfg ../$(VENV)/bin/ansible-lint --profile production -q
