package logstore

// plural is many when pl, else one: messages that name one thing or
// several say "is" or "are" to match.
func plural(pl bool, one, many string) string {
	if pl {
		return many
	}
	return one
}
