; Imports of a Go file: one ImportRef per import spec, the path without quotes.

(source_file
  (import_declaration
    [
      (import_spec
        path: [
          (interpreted_string_literal (interpreted_string_literal_content) @import.source)
          (raw_string_literal (raw_string_literal_content) @import.source)
        ]) @import
      (import_spec_list
        (import_spec
          path: [
            (interpreted_string_literal (interpreted_string_literal_content) @import.source)
            (raw_string_literal (raw_string_literal_content) @import.source)
          ]) @import)
    ]))
