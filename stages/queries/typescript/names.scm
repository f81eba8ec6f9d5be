; Names a TypeScript file defines: its top-level declarations, exported or not,
; and the methods of its top-level classes. `const f = () => …` is a function.

(program
  [
    (function_declaration name: (identifier) @name)
    (generator_function_declaration name: (identifier) @name)
    (function_signature name: (identifier) @name)
    (export_statement
      [
        (function_declaration name: (identifier) @name)
        (generator_function_declaration name: (identifier) @name)
        (function_signature name: (identifier) @name)
      ])
    (ambient_declaration (function_signature name: (identifier) @name))
  ] @definition.function)

(program
  [
    (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        value: [(arrow_function) (function_expression)]))
    (export_statement
      (lexical_declaration
        (variable_declarator
          name: (identifier) @name
          value: [(arrow_function) (function_expression)])))
  ] @definition.function)

(program
  [
    (class_declaration name: (type_identifier) @name)
    (abstract_class_declaration name: (type_identifier) @name)
    (export_statement
      [
        (class_declaration name: (type_identifier) @name)
        (abstract_class_declaration name: (type_identifier) @name)
      ])
  ] @definition.class)

(program
  [
    (interface_declaration name: (type_identifier) @name)
    (export_statement (interface_declaration name: (type_identifier) @name))
  ] @definition.interface)

(program
  [
    (type_alias_declaration name: (type_identifier) @name)
    (export_statement (type_alias_declaration name: (type_identifier) @name))
  ] @definition.type)

(program
  [
    (enum_declaration name: (identifier) @name)
    (export_statement (enum_declaration name: (identifier) @name))
  ] @definition.enum)

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
      (variable_declarator name: (identifier) @name))
    (export_statement
      [
        (lexical_declaration "let" (variable_declarator name: (identifier) @name))
        (variable_declaration (variable_declarator name: (identifier) @name))
      ])
  ] @definition.variable)

(program
  [
    ; Class and abstract class declarations: the only top-level nodes with a
    ; `class_body` body (one wildcard pattern compiles faster than one per kind).
    (_ body: (class_body [(method_definition name: (_) @name) (abstract_method_signature name: (_) @name) (method_signature name: (_) @name)] @definition.method))
    (export_statement
      declaration: (_ body: (class_body [(method_definition name: (_) @name) (abstract_method_signature name: (_) @name) (method_signature name: (_) @name)] @definition.method)))
  ]
  (#not-eq? @name "constructor"))
