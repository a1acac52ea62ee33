"""The lab's base image (ansible/lab/build-image.sh) carries, beyond a stock Debian host, only
packages a role installs: otherwise the lab would hide a package the roles forgot to install."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "ansible/lab/build-image.sh"


def image_list(name: str) -> list[str]:
    found = re.search(rf"^{name}=\(([^)]*)\)", SCRIPT.read_text(), re.M)
    assert found, f"no {name}=(...) in {SCRIPT}"
    return found.group(1).split()


def role_packages() -> set[str]:
    """Every package a role's packages_names names, its role defaults resolved."""
    defaults: dict[str, object] = {}
    for path in sorted(ROOT.glob("roles/*/defaults/main.yml")):
        defaults.update(yaml.safe_load(path.read_text()) or {})
    names: set[str] = set()
    for path in sorted(ROOT.glob("roles/*/tasks/*.yml")):
        for line in re.findall(r"packages_names:\s*\[(.*)\]", path.read_text()):
            for item in (i.strip().strip("\"'") for i in line.split(",")):
                names.add(re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: str(defaults[m.group(1)]), item))
    return names


def test_the_image_adds_only_packages_a_role_installs() -> None:
    extra = image_list("from_roles")
    assert "prometheus-node-exporter" in extra and "openjdk-17-jre-headless" in extra
    assert set(extra) - role_packages() == set()


def test_a_package_no_role_names_would_be_found() -> None:
    # The control: the roles' list is read, not empty, and lacks what no role installs.
    names = role_packages()
    assert {"prometheus-node-exporter", "openjdk-17-jre-headless", "fscrypt"} <= names
    assert "openssh-server" not in names and "less" not in names


def test_the_services_a_role_starts_are_installed_off() -> None:
    # Only the hosts that run a service start it (the roles do): in the image every one is off.
    found = re.search(r"^for unit in ([^;]*); do\n\s*chroot \"\$root\" systemctl disable", SCRIPT.read_text(), re.M)
    assert found, "no loop disabling the roles' services"
    units = set(found.group(1).replace("\\\n", " ").split())
    assert units == {
        "prometheus-node-exporter.service",
        "prometheus.service",
        "prometheus-postgres-exporter.service",
        "postgresql.service",
    }
