"""Helpers shared by the unit tests (no tests here): ansible-playbook and plugin runs, task and
template readers, the bench's fakes, a loopback listener that records connections, one wait."""
