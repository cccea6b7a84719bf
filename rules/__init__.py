"""rocmlint's rules: one module per rule, each with its metadata, doc, check, fix and examples."""
