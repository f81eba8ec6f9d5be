; Names a Go file defines: top-level functions, methods, types, constants and
; variables.

(source_file (function_declaration name: (identifier) @name) @definition.function)
(source_file (method_declaration name: (field_identifier) @name) @definition.method)

(source_file
  (type_declaration
    (type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct))

(source_file
  (type_declaration
    (type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface))

(source_file
  (type_declaration
    [
      (type_spec name: (type_identifier) @name)
      (type_alias name: (type_identifier) @name)
    ] @definition.type))

(source_file
  (const_declaration
    (const_spec name: (identifier) @name) @definition.constant))

(source_file
  (var_declaration
    [
      (var_spec name: (identifier) @name)
      (var_spec_list (var_spec name: (identifier) @name))
    ] @definition.variable))
