"""Use cases: one function per step a person or a schedule asks for, over the domain core and the store.

The Dagster assets, the CLI and the Python API call these, so the same step gives the same result
from each entry point.
"""
