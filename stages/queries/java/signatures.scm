; Signatures of a Java file: its top-level types, the types declared in their
; bodies, and the constructors, methods, enum constants and `static final`
; constants of both. Annotations and modifiers are part of the signature.
; Class and method bodies (@body) are left out.

; Javadoc comments (`/** … */`) attach to the declaration below them.
((block_comment) @doc
  (#match? @doc "^/\\*\\*"))

(program
  [
    (class_declaration name: (identifier) @name body: (_) @body)
    (record_declaration name: (identifier) @name body: (_) @body)
  ] @definition.class)

(program
  [
    (interface_declaration name: (identifier) @name body: (_) @body)
    (annotation_type_declaration name: (identifier) @name body: (_) @body)
  ] @definition.interface)

(program
  (enum_declaration name: (identifier) @name body: (_) @body) @definition.enum)

; Types nested in a top-level type.
(program
  [
    (_ body: (_
      [
        (class_declaration name: (identifier) @name body: (_) @body)
        (record_declaration name: (identifier) @name body: (_) @body)
      ] @definition.class))
    (_ body: (_ (enum_body_declarations
      [
        (class_declaration name: (identifier) @name body: (_) @body)
        (record_declaration name: (identifier) @name body: (_) @body)
      ] @definition.class)))
  ])

(program
  [
    (_ body: (_ (interface_declaration name: (identifier) @name body: (_) @body) @definition.interface))
    (_ body: (_ (enum_body_declarations (interface_declaration name: (identifier) @name body: (_) @body) @definition.interface)))
  ])

(program
  [
    (_ body: (_ (enum_declaration name: (identifier) @name body: (_) @body) @definition.enum))
    (_ body: (_ (enum_body_declarations (enum_declaration name: (identifier) @name body: (_) @body) @definition.enum)))
  ])

; Constructors and methods of top-level and nested types.
(program
  [
    (_ body: (_
      [
        (method_declaration name: (identifier) @name body: (_)? @body)
        (constructor_declaration name: (identifier) @name body: (_) @body)
        (compact_constructor_declaration name: (identifier) @name body: (_) @body)
      ] @definition.method))
    (_ body: (_ (enum_body_declarations
      [
        (method_declaration name: (identifier) @name body: (_)? @body)
        (constructor_declaration name: (identifier) @name body: (_) @body)
      ] @definition.method)))
    (_ body: (_ (_ body: (_
      [
        (method_declaration name: (identifier) @name body: (_)? @body)
        (constructor_declaration name: (identifier) @name body: (_) @body)
        (compact_constructor_declaration name: (identifier) @name body: (_) @body)
      ] @definition.method))))
    (_ body: (_ (_ body: (_ (enum_body_declarations
      [
        (method_declaration name: (identifier) @name body: (_)? @body)
        (constructor_declaration name: (identifier) @name body: (_) @body)
      ] @definition.method)))))
    (_ body: (_ (enum_body_declarations (_ body: (_
      [
        (method_declaration name: (identifier) @name body: (_)? @body)
        (constructor_declaration name: (identifier) @name body: (_) @body)
        (compact_constructor_declaration name: (identifier) @name body: (_) @body)
      ] @definition.method)))))
  ])

; Enum constants of top-level and nested enums.
(program
  [
    (enum_declaration body: (enum_body (enum_constant name: (identifier) @name) @definition.constant))
    (_ body: (_ (enum_declaration body: (enum_body (enum_constant name: (identifier) @name) @definition.constant))))
  ])

; `static final` fields and interface constants of top-level and nested types.
(program
  [
    (_ body: (_
      [
        (field_declaration (modifiers "static" "final") declarator: (variable_declarator name: (identifier) @name))
        (constant_declaration declarator: (variable_declarator name: (identifier) @name))
      ] @definition.constant))
    (_ body: (_ (_ body: (_
      [
        (field_declaration (modifiers "static" "final") declarator: (variable_declarator name: (identifier) @name))
        (constant_declaration declarator: (variable_declarator name: (identifier) @name))
      ] @definition.constant))))
  ])
