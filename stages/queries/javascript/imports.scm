; Imports of a JavaScript file: `import … from "x"`, `import "x"`,
; `export … from "x"` (re-exports), `require("x")` and dynamic `import("x")`.

(import_statement
  source: (string (string_fragment) @import.source)) @import

(import_statement
  (import_clause (identifier) @import.symbol)) @import

; A list of names is captured whole and read in code: a pattern per name
; keeps one partial match per name alive to the statement's end, which made a
; list of hundreds of names quadratic.
(import_statement
  (import_clause (named_imports) @import.symbols)) @import

(export_statement
  source: (string (string_fragment) @import.source)) @import.reexport

(export_statement
  (export_clause) @import.symbols
  source: (string)) @import.reexport

(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @import.source))
  (#eq? @_require "require")) @import

(variable_declarator
  name: (object_pattern (shorthand_property_identifier_pattern) @import.symbol)
  value: (call_expression
    function: (identifier) @_require
    (#eq? @_require "require")) @import)

(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @import.source))) @import
