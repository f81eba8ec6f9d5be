; Signatures of a Go file: top-level functions, methods, type declarations,
; constants and variables. Function bodies (@body) are left out; struct and
; interface bodies and grouped declarations (@body.inline) are kept when short.

; Comments directly above a declaration are its doc comment.
(comment) @doc

(source_file
  (function_declaration
    name: (identifier) @name
    body: (block)? @body) @definition.function)

(source_file
  (method_declaration
    name: (field_identifier) @name
    body: (block)? @body) @definition.method)

(source_file
  (type_declaration
    .
    (type_spec
      name: (type_identifier) @name
      type: (struct_type (field_declaration_list) @body.inline))
    .) @definition.struct)

(source_file
  (type_declaration
    .
    (type_spec
      name: (type_identifier) @name
      type: (interface_type "{" @body.inline))
    .) @definition.interface)

(source_file
  (type_declaration
    .
    [
      (type_spec name: (type_identifier) @name)
      (type_alias name: (type_identifier) @name)
    ]
    .) @definition.type)

; Grouped declarations: `type ( … )`, `const ( … )`, `var ( … )`, named after
; their first name.
(source_file
  (type_declaration
    "(" @body.inline
    [
      (type_spec name: (type_identifier) @name)
      (type_alias name: (type_identifier) @name)
    ]) @definition.type)

(source_file
  (const_declaration
    "("? @body.inline
    (const_spec name: (identifier) @name)) @definition.constant)

(source_file
  (var_declaration
    [
      (var_spec name: (identifier) @name)
      (var_spec_list "(" @body.inline (var_spec name: (identifier) @name))
    ]) @definition.variable)
