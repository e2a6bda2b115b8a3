package policy

import "testing"

// Finding 2 (trust round 3): constructs bash reads otherwise than the
// parser while its printing shows nothing. Each is asked with the reason,
// and what bash runs is seen by deny rules.
func TestBashOnlyReadingsAreRefused(t *testing.T) {
	runShellCases(t, []shellCase{
		// Named file descriptors assign the variable, with every operator.
		{"echo {HOME}>/dev/null; npm test", Ask, "named file descriptor {HOME}"},
		{"echo {PATH}>/dev/null; ls", Ask, "named file descriptor {PATH}"},
		{"ls {fd}>out/x", Ask, "named file descriptor"},
		{"ls {fd}>>out/x", Ask, "named file descriptor"},
		{"ls {fd}<out/x", Ask, "named file descriptor"},
		{"ls {fd}<>out/x", Ask, "named file descriptor"},
		{"ls {fd}>|out/x", Ask, "named file descriptor"},
		{"ls {fd}>&-", Ask, "named file descriptor"},
		{"ls {fd}<&-", Ask, "named file descriptor"},
		{"ls {fd}>&2", Ask, "named file descriptor"},
		{"ls {fd}<<<x", Ask, "named file descriptor"},
		{"ls {fd}<<EOF\nx\nEOF", Ask, "named file descriptor"},
		{"ls 2>/dev/null {GIT_DIR}>/dev/null", Ask, "named file descriptor"},
		{"{HOME}>/dev/null ls", Ask, "named file descriptor"},
		{"echo {a[1]}>&-", Ask, "named file descriptor"},
		{"echo }>out/x", Ask, "a word ending in }"},
		{"echo {a,b}>out/x", Ask, ""},
		{"echo {a['$(rm -rf x)']}>/dev/null", Deny, `deny bash "rm"`},
		{`echo {a["$(rm -rf x)"]}>/dev/null`, Deny, `deny bash "rm"`},
		// A group's closing brace is no word.
		{"{ ls; }>out/x", Allow, ""},
		{"{ ls;}>out/x", Allow, ""},
		{"echo {x} >out/x", Allow, ""},
		// time after | is the program time (which can write with -o).
		{"ls | time -p echo x", Ask, "time right after |"},
		{"ls |& time echo x", Ask, "time right after |"},
		{"ls |\ntime echo x", Ask, "time right after |"},
		{"ls | time -o .git/hooks/pre-commit echo x", Ask, "time -o writes .git/hooks/pre-commit"},
		{"ls | time time echo x", Ask, "time right after |"},
		{"ls | time rm -rf x", Deny, `deny bash "rm"`},
		// time -- cmd: bash skips the --.
		{"time -- rm -rf /tmp/x", Deny, `deny bash "rm"`},
		{"time -p -- rm -rf x", Deny, `deny bash "rm"`},
		{"time -p -- ls", Ask, "time --"},
		{"! time ls", Ask, "`! time`"},
		// A bare time before an operator: bash rejects the line.
		{"time | sort", Ask, "time with nothing to time"},
		{"time |& echo x", Ask, "time with nothing to time"},
		{"time || true", Ask, "time with nothing to time"},
		{"grep x; time | sort", Ask, "time with nothing to time"},
		{"time", Ask, "no command found"},
		{"time; ls", Allow, ""},
		// Reserved words as command names.
		{"ls\nin echo x", Ask, "reserved word in"},
		{"else echo x", Ask, "reserved word else"},
		// Where bash and the parser agree, keywords stay allowed.
		{"time ls", Allow, ""},
		{"time -p ls", Allow, ""},
		{"ls && time ls", Allow, ""},
		{"! ls", Allow, ""},
		{"ls | ! grep x", Ask, ""},
		{"echo in else time", Allow, ""},
	})
}
