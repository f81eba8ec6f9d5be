; Imports of a Rust file: `use` trees, `extern crate` and `mod foo;`
; declarations, at the top level and in top-level inline modules (`mod tests`).
; `use` inside function bodies is not read. A `use` tree is captured whole as
; @import.tree; the provider flattens it into one ImportRef per module path
; (`use a::b::{C, D}` → `a::b` with `C`, `D`).

(source_file
  [
    (use_declaration argument: (_) @import.tree) @import
    (mod_item
      body: (declaration_list
        (use_declaration argument: (_) @import.tree) @import))
  ])

(source_file
  [
    (use_declaration (visibility_modifier) argument: (_) @import.tree) @import.reexport
    (mod_item
      body: (declaration_list
        (use_declaration (visibility_modifier) argument: (_) @import.tree) @import.reexport))
  ])

(source_file
  (extern_crate_declaration name: (identifier) @import.source) @import)

; `mod foo;` without a body; an inline `mod foo { … }` is not an import.
(source_file
  (mod_item name: (identifier) @import.source !body) @import.module)
