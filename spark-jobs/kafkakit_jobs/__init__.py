"""Shared helpers of the kit's Spark jobs (smoke.py, pipeline.py, cdc.py); driver-side only."""
