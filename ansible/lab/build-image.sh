#!/usr/bin/env bash
# Build the lab's base image from a Debian rootfs (no registry can be pulled from here):
# debootstrap minbase, then systemd, a JRE and python3 so Ansible and the roles have a normal
# Debian host to work on. The tag carries a hash of this script, so editing it rebuilds.
# Usage: build-image.sh IMAGE_NAME   (prints the full tag it built or found)
set -euo pipefail
name=${1:-localhost/kafkakit-lab-base}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
tag="$name:$(sha256sum "$0" | cut -c1-12)"
if podman image exists "$tag"; then echo "$tag"; exit 0; fi
root=$(mktemp -d /var/tmp/kafkakit-rootfs.XXXX)
chmod 0755 "$root"  # mktemp makes it 0700: package scripts run as other users (postgres) need /
cleanup() { umount -R "$root/proc" 2>/dev/null || true; rm -rf "$root"; }
trap cleanup EXIT
echo "image: debootstrap bookworm into $root" >&2
debootstrap --variant=minbase bookworm "$root" "$mirror" >&2
# A host as a stock Debian image has it, plus what the roles install on the lab's hosts
# (tests/unit/test_lab_image.py keeps the second part to packages a role names): the roles then find
# them installed, as a pre-built machine image would give them, instead of a container fetching the
# package lists and unpacking them while site.yml waits.
base=(systemd systemd-sysv dbus python3 python3-apt procps iproute2 iputils-ping netcat-openbsd
  ca-certificates less openssh-server)
from_roles=(openjdk-17-jre-headless e2fsprogs fscrypt python3-cryptography openssl
  prometheus-node-exporter prometheus prometheus-postgres-exporter python3-venv sshfs
  postgresql-15 python3-psycopg2)
packages=("${base[@]}" "${from_roles[@]}")
mount -t proc proc "$root/proc"
echo "image: installing ${packages[*]}" >&2
chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get -qq update >&2
# The locale Ansible's modules run with: PostgreSQL's package makes its cluster (UTF8) with it.
chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 LC_ALL=C.UTF-8 \
  apt-get -qq install -y --no-install-recommends "${packages[@]}" >&2
chroot "$root" apt-get clean
umount "$root/proc"
# Installed but off: the roles configure each service (TLS, logins) and start it on the hosts
# that run it, and nowhere else.
for unit in prometheus-node-exporter.service prometheus.service prometheus-postgres-exporter.service \
  postgresql.service; do
  chroot "$root" systemctl disable "$unit" >/dev/null 2>&1
done
# Units that make no sense in a container, and a fixed machine-id per container at boot.
for unit in systemd-networkd-wait-online.service getty@tty1.service console-getty.service \
  systemd-logind.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
  e2scrub_reap.service fstrim.timer; do
  chroot "$root" systemctl mask "$unit" >/dev/null 2>&1 || true
done
: > "$root/etc/machine-id"
# Each container makes its own SSH host keys at first boot instead of sharing the image's.
rm -f "$root"/etc/ssh/ssh_host_*
cat > "$root/etc/systemd/system/ssh-hostkeys.service" <<'UNIT'
[Unit]
Description=Generate SSH host keys for this container
Before=ssh.service
ConditionPathExists=!/etc/ssh/ssh_host_ed25519_key
[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -A
[Install]
WantedBy=multi-user.target
UNIT
chroot "$root" systemctl enable ssh-hostkeys.service ssh.service >/dev/null
install -d -m 0700 "$root/root/.ssh"
rm -rf "$root/var/lib/apt/lists/"*
echo "image: importing as $tag" >&2
tar -C "$root" -c . | podman import --change 'CMD ["/sbin/init"]' \
  --change 'ENV container=podman' - "$tag" >&2
echo "$tag"
