// RUN: ipu-opt %s --split-input-file --verify-diagnostics

// Each designator of --verify-diagnostics, one case per chunk.

// expected-error@+1 {{expects parent op 'func.func'}}
"func.return"() : () -> ()

// -----

"func.return"() : () -> () // expected-error {{expects parent op}}

// -----

"func.return"() : () -> ()
// expected-error@above {{expects parent op}}

// -----

// expected-error@below {{expects parent op}}
"func.return"() : () -> ()

// -----

"func.return"() : () -> ()

// expected-error@-2 {{expects parent op}}

// -----

// Text outside {{...}} is literal, text inside is a regex.
// expected-error-re@+1 {{'func.return' op expects parent op '{{[a-z]+}}.func'}}
"func.return"() : () -> ()

// -----

// A location with no file position is matched with @unknown.
// expected-error@unknown {{expects parent op}}
"func.return"() : () -> () loc(unknown)
