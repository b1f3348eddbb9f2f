"""Logging configuration files copied into every resolved Kafka distribution."""
