"""Shared helpers of the kit's Spark jobs (smoke.py, pipeline.py); driver-side only."""
