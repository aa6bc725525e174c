// expected-error-re {{ {{(}} }}

// -----

// expected-error-re {{a{{}}b}}

// -----

// expected-error-re {{x{{[}}}}

// -----

func.func @f() -> i32 {
  // expected-error-re@+1 {{returns {{[[:digit:]]+}}}}
  return
}
