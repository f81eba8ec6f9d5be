; Signatures of a TypeScript (and TSX) file: top-level functions, classes,
; interfaces, type aliases, enums and function-valued constants, exported or
; not, exported constants, and the members of top-level classes. `export` and
; decorators are part of the signature. Function and class bodies (@body) are
; left out; interface and enum bodies (@body.inline) are kept when short.

; JSDoc comments (`/** … */`) attach to the declaration below them.
((comment) @doc
  (#match? @doc "^/\\*\\*"))

(program
  [
    (function_declaration name: (identifier) @name body: (_) @body)
    (generator_function_declaration name: (identifier) @name body: (_) @body)
    (function_signature name: (identifier) @name)
    (ambient_declaration (function_signature name: (identifier) @name))
    (export_statement
      [
        (function_declaration name: (identifier) @name body: (_) @body)
        (generator_function_declaration name: (identifier) @name body: (_) @body)
        (function_signature name: (identifier) @name)
      ])
  ] @definition.function)

(program
  [
    (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        value: [
          (arrow_function body: (_) @body)
          (function_expression body: (_) @body)
        ]))
    (export_statement
      (lexical_declaration
        (variable_declarator
          name: (identifier) @name
          value: [
            (arrow_function body: (_) @body)
            (function_expression body: (_) @body)
          ])))
  ] @definition.function)

(program
  [
    (class_declaration name: (type_identifier) @name body: (class_body) @body)
    (abstract_class_declaration name: (type_identifier) @name body: (class_body) @body)
    (export_statement
      [
        (class_declaration name: (type_identifier) @name body: (class_body) @body)
        (abstract_class_declaration name: (type_identifier) @name body: (class_body) @body)
      ])
  ] @definition.class)

(program
  [
    (interface_declaration name: (type_identifier) @name body: (_) @body.inline)
    (export_statement
      (interface_declaration name: (type_identifier) @name body: (_) @body.inline))
  ] @definition.interface)

(program
  [
    (type_alias_declaration name: (type_identifier) @name)
    (export_statement (type_alias_declaration name: (type_identifier) @name))
  ] @definition.type)

(program
  [
    (enum_declaration name: (identifier) @name body: (_) @body.inline)
    (export_statement (enum_declaration name: (identifier) @name body: (_) @body.inline))
  ] @definition.enum)

(program
  (export_statement
    (lexical_declaration
      (variable_declarator name: (identifier) @name))) @definition.constant)

(program
  [
    ; `class_declaration` and `abstract_class_declaration`, the only
    ; top-level nodes with a `class_body` body. One wildcard pattern compiles
    ; in a third of the time of one pattern per class kind.
    (_
      body: (class_body
        [
          (method_definition name: (_) @name body: (_) @body)
          (abstract_method_signature name: (_) @name)
          (method_signature name: (_) @name)
        ] @definition.method))
    (export_statement
      declaration: (_
        body: (class_body
          [
            (method_definition name: (_) @name body: (_) @body)
            (abstract_method_signature name: (_) @name)
            (method_signature name: (_) @name)
          ] @definition.method)))
  ])
