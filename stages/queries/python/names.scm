; Names a Python file defines: top-level functions and classes, the methods of
; top-level classes and UPPER_CASE module constants.

(module (function_definition name: (identifier) @name) @definition.function)
(module (decorated_definition definition: (function_definition name: (identifier) @name)) @definition.function)
(module (class_definition name: (identifier) @name) @definition.class)
(module (decorated_definition definition: (class_definition name: (identifier) @name)) @definition.class)

(module
  [
    (class_definition body: (block (function_definition name: (identifier) @name) @definition.method))
    (class_definition body: (block (decorated_definition definition: (function_definition name: (identifier) @name)) @definition.method))
    (decorated_definition definition: (class_definition body: (block (function_definition name: (identifier) @name) @definition.method)))
    (decorated_definition definition: (class_definition body: (block (decorated_definition definition: (function_definition name: (identifier) @name)) @definition.method)))
  ])

(module
  (expression_statement
    (assignment left: (identifier) @name)) @definition.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
