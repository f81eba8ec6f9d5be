; Signatures of a Rust file: top-level items and the members of top-level
; `impl` and `trait` blocks. Function bodies (@body) are left out; struct, union
; and enum bodies (@body.inline) are kept when the item is short.

; Outer doc comments (`///`, `/** */`) attach to the item below them;
; attributes (`#[derive(…)]`) may sit in between.
(line_comment outer: (outer_doc_comment_marker)) @doc
(block_comment outer: (outer_doc_comment_marker)) @doc
(attribute_item) @attribute

(source_file
  (function_item
    name: (identifier) @name
    body: (block) @body) @definition.function)

(source_file
  (struct_item
    name: (type_identifier) @name
    body: (_)? @body.inline) @definition.struct)

(source_file
  (union_item
    name: (type_identifier) @name
    body: (_) @body.inline) @definition.struct)

(source_file
  (enum_item
    name: (type_identifier) @name
    body: (_) @body.inline) @definition.enum)

(source_file (type_item name: (type_identifier) @name) @definition.type)
(source_file (const_item name: (identifier) @name) @definition.constant)
(source_file (static_item name: (identifier) @name) @definition.variable)

(source_file
  (macro_definition
    name: (identifier) @name
    .
    (macro_rule) @body) @definition.macro)

(source_file
  (trait_item
    name: (type_identifier) @name
    body: (declaration_list) @body) @definition.trait)

(source_file
  (impl_item
    type: [
      (type_identifier) @name
      (generic_type type: (_) @name)
      (scoped_type_identifier name: (type_identifier) @name)
      (_) @name
    ]
    body: (declaration_list) @body) @definition.implementation)

(source_file
  (impl_item
    body: (declaration_list
      [
        (function_item
          name: (identifier) @name
          body: (block) @body)
      ] @definition.method)))

(source_file
  (impl_item
    body: (declaration_list
      (type_item name: (type_identifier) @name) @definition.type)))

(source_file
  (impl_item
    body: (declaration_list
      (const_item name: (identifier) @name) @definition.constant)))

(source_file
  (trait_item
    body: (declaration_list
      [
        (function_item
          name: (identifier) @name
          body: (block) @body)
        (function_signature_item name: (identifier) @name)
      ] @definition.method)))

(source_file
  (trait_item
    body: (declaration_list
      (associated_type name: (type_identifier) @name) @definition.type)))

(source_file
  (trait_item
    body: (declaration_list
      (const_item name: (identifier) @name) @definition.constant)))
