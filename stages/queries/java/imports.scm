; Imports of a Java file: `import a.b.C;` (source `a.b.C`, symbol `C`), static
; imports (`import static a.b.C.m;` → source `a.b.C.m`, symbol `m`) and
; wildcards (`import a.b.*;` → source `a.b`, symbol `*`).

(program
  (import_declaration
    (scoped_identifier name: (identifier) @import.symbol) @import.source
    .) @import)

(program
  (import_declaration
    (identifier) @import.source
    .) @import)

(program
  (import_declaration
    [(scoped_identifier) (identifier)] @import.source
    .
    (asterisk) @import.symbol) @import)
