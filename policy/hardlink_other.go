//go:build !unix

package policy

// hardLinked cannot read a link count here; writes are judged by path only.
func hardLinked(string) bool { return false }
