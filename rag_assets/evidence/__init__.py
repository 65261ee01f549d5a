"""Evidence as character spans of document revisions: what a golden item is answered by and what a
system retrieved, in the same coordinates whatever anyone's chunking (domain code: no Dagster, no SQL)."""
