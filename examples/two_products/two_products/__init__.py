"""Two RAG products in one code location: the sample handbook and a library's help pages."""
