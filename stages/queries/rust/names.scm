; Names a Rust file defines: its top-level items, `pub` or not, and the methods
; of its top-level `impl` and `trait` blocks. Test modules are left out.

(source_file (function_item name: (identifier) @name) @definition.function)
(source_file (struct_item name: (type_identifier) @name) @definition.struct)
(source_file (union_item name: (type_identifier) @name) @definition.struct)
(source_file (enum_item name: (type_identifier) @name) @definition.enum)
(source_file (type_item name: (type_identifier) @name) @definition.type)
(source_file (const_item name: (identifier) @name) @definition.constant)
(source_file (static_item name: (identifier) @name) @definition.variable)
(source_file (trait_item name: (type_identifier) @name) @definition.trait)
(source_file (macro_definition name: (identifier) @name) @definition.macro)

(source_file
  (mod_item name: (identifier) @name) @definition.module
  (#not-any-of? @name "test" "tests"))

(source_file
  (impl_item
    body: (declaration_list
      (function_item name: (identifier) @name) @definition.method)))

(source_file
  (trait_item
    body: (declaration_list
      [
        (function_item name: (identifier) @name)
        (function_signature_item name: (identifier) @name)
      ] @definition.method)))
