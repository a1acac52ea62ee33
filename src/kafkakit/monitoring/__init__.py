"""Monitoring: Prometheus targets and thresholds, and the consumer-lag exporter."""
