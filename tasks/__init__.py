"""Prefect tasks: one unit of orchestrated work each, thin wrappers over ``dialogbench``."""
