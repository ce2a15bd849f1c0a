/**
 * The grammar of `q` (docs/contract.md §13), in Peggy's notation. It gives the shape of a query and the
 * character offset of each part; what the parts may say (which fields exist, what a time is) is
 * judged by search-query.ts, which names the offending offset too.
 *
 *   q          = ws* (term (ws+ term)*)? ws*
 *   term       = "-"? field ":" (comparison timeValue / value "*"?)
 *   field      = "context" ("." segment)+ / name
 *   value      = quoted / bare          quoted = '"' (char / '\"' / '\\')* '"'
 */
export const SEARCH_GRAMMAR = String.raw`
Query
  = _ head:Term tail:(__ @Term)* _ { return [head, ...tail]; }
  / _ { return []; }

Term
  = negated:"-"? field:Field ":" condition:Condition {
      return { negated: negated !== null, field, ...condition, offset: location().start.offset };
    }

Field
  = "context" path:("." @Segment)+ { return { name: "context", path, offset: location().start.offset }; }
  / name:FieldName { return { name, path: [], offset: location().start.offset }; }

FieldName "a field name"
  = $[A-Za-z0-9_]+

Segment "a context path segment"
  = $[^ \t\r\n.:"\\]+

Condition
  = comparison:Comparison value:TimeValue { return { comparison, value, prefix: false }; }
  / value:Value prefix:"*"? { return { comparison: null, value, prefix: prefix !== null }; }

Comparison "a comparison"
  = ">=" / "<=" / ">" / "<"

TimeValue
  = Quoted
  / text:$[^ \t\r\n"]+ { return { text, quoted: false, offset: location().start.offset }; }

Value
  = Quoted
  / text:$(!("*" (Space / !.)) [^ \t\r\n":\\])+ { return { text, quoted: false, offset: location().start.offset }; }

Quoted
  = '"' chars:('\\' @["\\] / [^"\\])* '"' { return { text: chars.join(""), quoted: true, offset: location().start.offset }; }

Space "a space"
  = [ \t\r\n]

_ = Space*
__ = Space+
`;
