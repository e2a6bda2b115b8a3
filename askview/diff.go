package askview

import "strings"

// maxDiffCells bounds the LCS table; beyond it the diff falls back to
// trimming the common head and tail, which is still correct, only coarser.
const maxDiffCells = 1 << 20

// diffContext is how many unchanged lines are kept around a change.
const diffContext = 2

// LineDiff shows how old becomes new, line by line: "- " removed, "+ "
// added, "  " unchanged context (at most diffContext lines around a change;
// longer unchanged runs collapse to "  …").
func LineDiff(oldS, newS string) string {
	a := splitLines(oldS)
	b := splitLines(newS)
	type op struct {
		kind byte // ' ', '-', '+'
		line string
	}
	var ops []op
	// Common head and tail first: cheap, and keeps the LCS table small.
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	for _, l := range a[:head] {
		ops = append(ops, op{' ', l})
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	if (len(ma)+1)*(len(mb)+1) <= maxDiffCells {
		// lcs[i][j] = LCS length of ma[i:], mb[j:]
		lcs := make([][]int32, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				ops = append(ops, op{' ', ma[i]})
				i++
				j++
			case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, op{'-', ma[i]})
				i++
			default:
				ops = append(ops, op{'+', mb[j]})
				j++
			}
		}
	} else {
		for _, l := range ma {
			ops = append(ops, op{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, op{'+', l})
		}
	}
	for _, l := range a[len(a)-tail:] {
		ops = append(ops, op{' ', l})
	}

	// Keep context lines near a change only.
	near := make([]bool, len(ops))
	for i, o := range ops {
		if o.kind == ' ' {
			continue
		}
		for k := max(0, i-diffContext); k <= min(len(ops)-1, i+diffContext); k++ {
			near[k] = true
		}
	}
	var out strings.Builder
	skipped := false
	for i, o := range ops {
		if o.kind == ' ' && !near[i] {
			if !skipped {
				out.WriteString("  …\n")
				skipped = true
			}
			continue
		}
		skipped = false
		out.WriteByte(o.kind)
		out.WriteByte(' ')
		out.WriteString(o.line)
		out.WriteByte('\n')
	}
	return strings.TrimRight(out.String(), "\n")
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
