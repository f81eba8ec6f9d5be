; Names a JavaScript file defines: its top-level declarations, exported or not,
; and the methods of its top-level classes. `const f = () => …` is a function.

(program
  [
    (function_declaration name: (identifier) @name)
    (generator_function_declaration name: (identifier) @name)
    (export_statement
      [
        (function_declaration name: (identifier) @name)
        (generator_function_declaration name: (identifier) @name)
      ])
  ] @definition.function)

(program
  [
    (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        value: [(arrow_function) (function_expression) (generator_function)]))
    (export_statement
      (lexical_declaration
        (variable_declarator
          name: (identifier) @name
          value: [(arrow_function) (function_expression) (generator_function)])))
  ] @definition.function)

(program
  [
    (class_declaration name: (identifier) @name)
    (export_statement (class_declaration name: (identifier) @name))
  ] @definition.class)

; Other top-level constants and variables; `require` bindings are imports.
(program
  [
    (lexical_declaration
      "const"
      (variable_declarator name: (identifier) @name value: (_) @_value))
    (export_statement
      (lexical_declaration
        "const"
        (variable_declarator name: (identifier) @name value: (_) @_value)))
  ] @definition.constant
  (#not-match? @_value "^require\\("))

(program
  [
    (lexical_declaration
      "let"
      (variable_declarator name: (identifier) @name))
    (variable_declaration
      (variable_declarator name: (identifier) @name value: (_) @_value))
    (export_statement
      [
        (lexical_declaration "let" (variable_declarator name: (identifier) @name))
        (variable_declaration (variable_declarator name: (identifier) @name value: (_) @_value))
      ])
  ] @definition.variable
  (#not-match? @_value "^require\\("))

(program
  [
    (class_declaration
      body: (class_body (method_definition name: (_) @name) @definition.method))
    (export_statement
      (class_declaration
        body: (class_body (method_definition name: (_) @name) @definition.method)))
  ]
  (#not-eq? @name "constructor"))
