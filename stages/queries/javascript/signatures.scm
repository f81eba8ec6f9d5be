; Signatures of a JavaScript file: top-level functions, classes and
; function-valued constants, exported or not, exported constants, and the
; methods of top-level classes. Function and class bodies (@body) are left out.

; JSDoc comments (`/** … */`) attach to the declaration below them.
((comment) @doc
  (#match? @doc "^/\\*\\*"))

(program
  [
    (function_declaration name: (identifier) @name body: (_) @body)
    (generator_function_declaration name: (identifier) @name body: (_) @body)
    (export_statement
      [
        (function_declaration name: (identifier) @name body: (_) @body)
        (generator_function_declaration name: (identifier) @name body: (_) @body)
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
          (generator_function body: (_) @body)
        ]))
    (export_statement
      (lexical_declaration
        (variable_declarator
          name: (identifier) @name
          value: [
            (arrow_function body: (_) @body)
            (function_expression body: (_) @body)
            (generator_function body: (_) @body)
          ])))
  ] @definition.function)

(program
  [
    (class_declaration name: (identifier) @name body: (class_body) @body)
    (export_statement (class_declaration name: (identifier) @name body: (class_body) @body))
  ] @definition.class)

(program
  (export_statement
    (lexical_declaration
      (variable_declarator name: (identifier) @name))) @definition.constant)

(program
  [
    (class_declaration
      body: (class_body
        (method_definition name: (_) @name body: (_) @body) @definition.method))
    (export_statement
      (class_declaration
        body: (class_body
          (method_definition name: (_) @name body: (_) @body) @definition.method)))
  ])
