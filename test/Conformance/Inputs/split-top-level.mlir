func.func private @a()
// -----
func.func private @b()
func.func private @c()
