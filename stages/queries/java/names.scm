; Names a Java file defines: its top-level types (classes, records,
; interfaces, annotation types, enums), the types declared in their bodies,
; the methods of both and their `static final` constants.

(program
  [
    (class_declaration name: (identifier) @name)
    (record_declaration name: (identifier) @name)
  ] @definition.class)
(program [(interface_declaration name: (identifier) @name) (annotation_type_declaration name: (identifier) @name)] @definition.interface)
(program (enum_declaration name: (identifier) @name) @definition.enum)

(program
  [
    (class_declaration body: (_ [(class_declaration name: (identifier) @name) (record_declaration name: (identifier) @name)] @definition.class))
    (record_declaration body: (_ [(class_declaration name: (identifier) @name) (record_declaration name: (identifier) @name)] @definition.class))
    (interface_declaration body: (_ [(class_declaration name: (identifier) @name) (record_declaration name: (identifier) @name)] @definition.class))
    (enum_declaration body: (_ (enum_body_declarations [(class_declaration name: (identifier) @name) (record_declaration name: (identifier) @name)] @definition.class)))
  ])

(program
  [
    (class_declaration body: (_ (interface_declaration name: (identifier) @name) @definition.interface))
    (record_declaration body: (_ (interface_declaration name: (identifier) @name) @definition.interface))
    (interface_declaration body: (_ (interface_declaration name: (identifier) @name) @definition.interface))
    (enum_declaration body: (_ (enum_body_declarations (interface_declaration name: (identifier) @name) @definition.interface)))
  ])

(program
  [
    (class_declaration body: (_ (enum_declaration name: (identifier) @name) @definition.enum))
    (record_declaration body: (_ (enum_declaration name: (identifier) @name) @definition.enum))
    (interface_declaration body: (_ (enum_declaration name: (identifier) @name) @definition.enum))
    (enum_declaration body: (_ (enum_body_declarations (enum_declaration name: (identifier) @name) @definition.enum)))
  ])

; Methods of top-level types and of the types nested in them.
(program
  [
    (_ body: (_ (method_declaration name: (identifier) @name) @definition.method))
    (_ body: (_ (enum_body_declarations (method_declaration name: (identifier) @name) @definition.method)))
    (_ body: (_ (_ body: (_ (method_declaration name: (identifier) @name) @definition.method))))
    (_ body: (_ (_ body: (_ (enum_body_declarations (method_declaration name: (identifier) @name) @definition.method)))))
    (_ body: (_ (enum_body_declarations (_ body: (_ (method_declaration name: (identifier) @name) @definition.method)))))
  ])

(program
  [
    (_ body: (_ (field_declaration (modifiers "static" "final") declarator: (variable_declarator name: (identifier) @name)) @definition.constant))
    (_ body: (_ (_ body: (_ (field_declaration (modifiers "static" "final") declarator: (variable_declarator name: (identifier) @name)) @definition.constant))))
  ])
