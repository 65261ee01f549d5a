"""The bundled code location as component instances: the defs.yaml here, loaded by Dagster's own loader."""
