func.func private @first() // -----
func.func private @second()
// ----
func.func private @still_second()
// -----// -----
func.func private @third()
