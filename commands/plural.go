package commands

// plural is the ending of a count's noun: "" for 1, else "s".
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
