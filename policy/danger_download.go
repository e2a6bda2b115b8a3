package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// stmtDangers flags downloaded code run by a shell or interpreter through
// the plumbing of one statement: fed on stdin from a substitution
// (bash < <(curl …), sh <<< "$(wget -O- …)", source /dev/stdin <<< "$(curl …)",
// a here-document holding $(curl …)), or through a pipeline whose earlier
// stage downloads anywhere inside it (cat <(curl …) | sh).
func (z *analyzer) stmtDangers(st *syntax.Stmt) {
	z.endlessSpawn(st)
	if bc, ok := st.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) {
		z.pipedDownload(bc)
		return
	}
	names := z.stageNames(st)
	if !anyInterpreter(names) {
		return
	}
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.RdrIn, syntax.DplIn, syntax.WordHdoc, syntax.Hdoc, syntax.DashHdoc, syntax.RdrInOut:
		default:
			continue
		}
		if (r.Word != nil && z.downloads(r.Word)) || (r.Hdoc != nil && z.downloads(r.Hdoc)) {
			z.a.danger("runs code downloaded from the network (" + orUnknown(names[0]) + " reads a download on its input)")
			return
		}
	}
}

func anyInterpreter(names []string) bool {
	for _, n := range names {
		if isInterpreter(n) {
			return true
		}
	}
	return false
}

// pipedDownload flags a pipeline in which a stage after one that downloads
// (as its command, or in a substitution or redirection of it) is an
// interpreter.
//
// An inner pipeline already flattened is not looked at again (see
// pipelineStages): a 5,000-stage pipeline took 38 s to judge before.
func (z *analyzer) pipedDownload(b *syntax.BinaryCmd) {
	if z.dlPiped[b] {
		return
	}
	if z.dlPiped == nil {
		z.dlPiped = map[*syntax.BinaryCmd]bool{}
	}
	downloaded := false
	for _, st := range pipelineStages(b, z.dlPiped) {
		names := z.stageNames(st)
		if downloaded && anyInterpreter(names) {
			z.a.danger("pipes a download into " + orUnknown(names[0]))
			return
		}
		for _, n := range names {
			downloaded = downloaded || isDownloader(n)
		}
		downloaded = downloaded || z.downloads(st)
	}
}

// downloadThenRun flags, within one command line, a program or script run
// after something was downloaded (curl -o x.sh …; sh x.sh, X=$(curl …);
// eval "$X"): the download may be what runs. Called for every simple
// command in order.
func (z *analyzer) downloadThenRun(ws []word) {
	name := cmdName(ws[0])
	if isDownloader(name) {
		z.dz.downloaded = true
		return
	}
	if !z.dz.downloaded {
		return
	}
	first := ws[0].loose
	local := strings.Contains(first, "/") && !strings.HasPrefix(first, "/usr/") && !strings.HasPrefix(first, "/bin/") &&
		!strings.HasPrefix(first, "/sbin/")
	if isInterpreter(name) || local || name == "" {
		z.a.danger("runs " + printable(first) + " after a download in the same command (the download may be what runs)")
	}
}
