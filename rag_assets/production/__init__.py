"""Production monitoring: read served-query logs, sample a day, detect metric drift, find golden-set gaps."""
