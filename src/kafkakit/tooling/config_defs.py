"""Kafka's own definitions of the properties the kit lets users set, printed from a Kafka archive.

`python -m kafkakit.tooling.config_defs build/artifacts/kafka_2.13-4.4.0.tgz` prints, per
component, each property's ConfigDef type and validator as Kafka itself reports them: the table
kafkakit.rules.property_values reads (src/kafkakit/rules/kafka_configs/kafka-<line>.tsv, a line per
kafkakit.rules.topology.definitions_line: 3, 4.3, 4.4). A component whose class the archive lacks
(MirrorMaker 2's in the Maven-assembled 4.4.0, which has no connect-mirror) is left out. It runs a
small Java program against the archive's jars (java's single-file source launcher), so it needs a
JDK; the preflight only reads the stored table. tests/unit/rules/test_property_values.py runs it
on every archive in build/artifacts and compares.

With `name=value` lines on stdin, each prefixed by its component and a tab, it also prints OK or
BAD for each, as Kafka parses and validates it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

# component -> the class and the static member (method or field) holding its ConfigDef.
COMPONENTS: dict[str, tuple[str, str]] = {
    # server.properties and controller.properties: both are read by KafkaConfig.
    "broker": ("kafka.server.KafkaConfig", "configDef"),
    # connect-distributed.properties.
    "connect": ("org.apache.kafka.connect.runtime.distributed.DistributedConfig", "config"),
    # mm2.properties: MirrorMaker's own settings, and its three connectors'.
    "mirrormaker": ("org.apache.kafka.connect.mirror.MirrorMakerConfig", "config"),
    "source": ("org.apache.kafka.connect.mirror.MirrorSourceConfig", "CONNECTOR_CONFIG_DEF"),
    "checkpoint": ("org.apache.kafka.connect.mirror.MirrorCheckpointConfig", "CONNECTOR_CONFIG_DEF"),
    "heartbeat": ("org.apache.kafka.connect.mirror.MirrorHeartbeatConfig", "CONNECTOR_CONFIG_DEF"),
    # The clients a worker opens (its producer., consumer. and admin. settings).
    "producer": ("org.apache.kafka.clients.producer.ProducerConfig", "configDef"),
    "consumer": ("org.apache.kafka.clients.consumer.ConsumerConfig", "configDef"),
    "admin": ("org.apache.kafka.clients.admin.AdminClientConfig", "configDef"),
}
PROGRAM = "PrintConfigDefs"
SOURCE = """
import java.lang.reflect.*;
import java.util.*;
import org.apache.kafka.common.config.ConfigDef;
public class PrintConfigDefs {
  // The ConfigDef a class holds in a static method (a private one too) or a static field.
  static ConfigDef def(String cls, String member) throws Exception {
    Class<?> c = Class.forName(cls);
    for (Method m : c.getDeclaredMethods())
      if (m.getName().equals(member) && Modifier.isStatic(m.getModifiers()) && m.getReturnType() == ConfigDef.class) {
        m.setAccessible(true);
        Object[] args = new Object[m.getParameterCount()];
        // DistributedConfig.config(Crypto): the JVM's own crypto, as the worker uses.
        if (args.length == 1) args[0] = m.getParameterTypes()[0].getField("SYSTEM").get(null);
        return (ConfigDef) m.invoke(null, args);
      }
    Field f = c.getDeclaredField(member);
    f.setAccessible(true);
    return (ConfigDef) f.get(null);
  }
  // A validator without a toString of its own prints its identity hash: keep its class only.
  static String shown(Object validator) {
    return Objects.toString(validator, "").replaceAll("@[0-9a-f]+$", "").replace('\\t', ' ');
  }
  public static void main(String[] args) throws Exception {
    Map<String, Map<String, ConfigDef.ConfigKey>> all = new LinkedHashMap<>();
    for (String a : args) {
      String[] p = a.split("=", 2), w = p[1].split("#");
      Map<String, ConfigDef.ConfigKey> keys;
      try {
        keys = def(w[0], w[1]).configKeys();
      } catch (ClassNotFoundException e) {
        System.err.println("not in this archive: " + p[0] + " (" + w[0] + ")");
        continue;
      }
      all.put(p[0], keys);
      for (String n : new TreeSet<>(keys.keySet()))
        System.out.println(p[0] + "\\t" + n + "\\t" + keys.get(n).type + "\\t" + shown(keys.get(n).validator));
    }
    Scanner in = new Scanner(System.in);
    while (in.hasNextLine()) {
      String line = in.nextLine();
      String[] p = line.split("\\t", 2);
      String n = p[1].substring(0, p[1].indexOf('=')), v = p[1].substring(n.length() + 1);
      ConfigDef.ConfigKey k = all.get(p[0]).get(n);
      try {
        Object parsed = ConfigDef.parseType(n, v, k.type);
        if (k.validator != null) k.validator.ensureValid(n, parsed);
        System.out.println("OK\\t" + line);
      } catch (Exception e) {
        System.out.println("BAD\\t" + line);
      }
    }
  }
}
"""


def print_config_defs(archive: Path, work: Path, samples: str = "") -> str:
    """The table of `archive` (component, name, type, validator; one per line), then a verdict
    line per sample ("component<TAB>name=value")."""
    with tarfile.open(archive) as tar:
        # KafkaConfig loads Scala, ZooKeeper (3.x) and more: the whole of libs/.
        members = [m for m in tar.getmembers() if "/libs/" in m.name]
        tar.extractall(work, members=members, filter="data")
    program = work / f"{PROGRAM}.java"
    program.write_text(SOURCE)
    libs = next(work.glob("*/libs"))
    args = [f"{name}={cls}#{member}" for name, (cls, member) in COMPONENTS.items()]
    done = subprocess.run(
        ["java", "-cp", f"{libs}/*", str(program), *args],
        input=samples,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive", type=Path, help="a Kafka archive, kafka_2.13-<version>.tgz")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        sys.stdout.write(print_config_defs(args.archive, Path(work)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
