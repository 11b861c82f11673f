"""Conformance kits: cases any store of a kind must pass. `object_cases` holds the object store kit;
`memory.MemoryObjectStore` is a small reference store that passes it."""
