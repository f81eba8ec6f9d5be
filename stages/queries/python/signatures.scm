; Signatures of a Python file: top-level functions and classes and the methods
; of top-level classes, decorators included. The body (@body) is left out; the
; docstring (@doc, the first statement of the body when it is a string) is
; rendered under the signature in the with-docs tier.

(module
  (function_definition
    name: (identifier) @name
    body: (block . (expression_statement (string) @doc)?) @body) @definition.function)

(module
  (decorated_definition
    definition: (function_definition
      name: (identifier) @name
      body: (block . (expression_statement (string) @doc)?) @body)) @definition.function)

(module
  (class_definition
    name: (identifier) @name
    body: (block . (expression_statement (string) @doc)?) @body) @definition.class)

(module
  (decorated_definition
    definition: (class_definition
      name: (identifier) @name
      body: (block . (expression_statement (string) @doc)?) @body)) @definition.class)

(module
  [
    (class_definition
      body: (block
        (function_definition
          name: (identifier) @name
          body: (block . (expression_statement (string) @doc)?) @body) @definition.method))
    (class_definition
      body: (block
        (decorated_definition
          definition: (function_definition
            name: (identifier) @name
            body: (block . (expression_statement (string) @doc)?) @body)) @definition.method))
    (decorated_definition
      definition: (class_definition
        body: (block
          (function_definition
            name: (identifier) @name
            body: (block . (expression_statement (string) @doc)?) @body) @definition.method)))
    (decorated_definition
      definition: (class_definition
        body: (block
          (decorated_definition
            definition: (function_definition
              name: (identifier) @name
              body: (block . (expression_statement (string) @doc)?) @body)) @definition.method)))
  ])

(module
  (expression_statement
    (assignment left: (identifier) @name)) @definition.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
