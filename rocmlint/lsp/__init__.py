"""`rocmlint lsp`: a language server over stdio (needs the `lsp` extra: `pip install rocmlint[lsp]`).

`text` (editor text to rocmlint's bytes, positions in LSP code units) has no dependency beyond
rocmlint; `server` needs pygls and is imported only when the server starts.
"""
