; Imports of a Python file: at module level and in the blocks of top-level
; statements, functions, classes and methods (lazy imports), at the nesting
; levels listed below; deeper ones are not read, which keeps matching from
; walking every expression. The source keeps relative dots as written:
; `from ..pkg.mod import z` → `..pkg.mod`.

; Module level.
(module
  [
    (import_statement
      name: [
        (dotted_name) @import.source
        (aliased_import name: (dotted_name) @import.source)
      ]) @import
    (import_from_statement module_name: (_) @import.source) @import
    (import_from_statement
      name: [
        (dotted_name) @import.symbol
        (aliased_import name: (dotted_name) @import.symbol)
      ]) @import
    (import_from_statement (wildcard_import) @import.symbol) @import
  ])

; In a top-level function, class, `if`, `try`, `with` or loop.
(module
  (_ (block
    [
      (import_statement
        name: [
          (dotted_name) @import.source
          (aliased_import name: (dotted_name) @import.source)
        ]) @import
      (import_from_statement module_name: (_) @import.source) @import
      (import_from_statement
        name: [
          (dotted_name) @import.symbol
          (aliased_import name: (dotted_name) @import.symbol)
        ]) @import
      (import_from_statement (wildcard_import) @import.symbol) @import
    ])))

; In a decorated top-level function, or an `else`, `except` or `finally`.
(module
  (_ (_ (block
    [
      (import_statement
        name: [
          (dotted_name) @import.source
          (aliased_import name: (dotted_name) @import.source)
        ]) @import
      (import_from_statement module_name: (_) @import.source) @import
      (import_from_statement
        name: [
          (dotted_name) @import.symbol
          (aliased_import name: (dotted_name) @import.symbol)
        ]) @import
      (import_from_statement (wildcard_import) @import.symbol) @import
    ]))))

; In a method.
(module
  (_ (block (_ (block
    [
      (import_statement
        name: [
          (dotted_name) @import.source
          (aliased_import name: (dotted_name) @import.source)
        ]) @import
      (import_from_statement module_name: (_) @import.source) @import
      (import_from_statement
        name: [
          (dotted_name) @import.symbol
          (aliased_import name: (dotted_name) @import.symbol)
        ]) @import
      (import_from_statement (wildcard_import) @import.symbol) @import
    ])))))

; In a decorated method, or an `except` in a function.
(module
  (_ (block (_ (_ (block
    [
      (import_statement
        name: [
          (dotted_name) @import.source
          (aliased_import name: (dotted_name) @import.source)
        ]) @import
      (import_from_statement module_name: (_) @import.source) @import
      (import_from_statement
        name: [
          (dotted_name) @import.symbol
          (aliased_import name: (dotted_name) @import.symbol)
        ]) @import
      (import_from_statement (wildcard_import) @import.symbol) @import
    ]))))))

; In a method of a decorated class.
(module
  (_ (_ (block (_ (block
    [
      (import_statement
        name: [
          (dotted_name) @import.source
          (aliased_import name: (dotted_name) @import.source)
        ]) @import
      (import_from_statement module_name: (_) @import.source) @import
      (import_from_statement
        name: [
          (dotted_name) @import.symbol
          (aliased_import name: (dotted_name) @import.symbol)
        ]) @import
      (import_from_statement (wildcard_import) @import.symbol) @import
    ]))))))
