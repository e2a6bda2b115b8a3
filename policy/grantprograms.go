package policy

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The programs a prefix grant can cover, each with the options askops
// knows it by: what it reads, what it writes and what it runs. Options
// that run another program (gpg --photo-viewer, openssl -engine), name
// another home, configuration or server (gpg --homedir, kubectl
// --context), or write somewhere no operand says (sort -T, gpg
// --log-file) are left out on purpose; so is every mode that writes
// files whose names the input chooses (unzip extracting, patch).

// grantModelFor returns the model of the program words run, or nil with
// why there is none ("" when simply unknown).
func grantModelFor(words []string) (*grantModel, string) {
	name := path.Base(words[0])
	sub := func(i int) string {
		if i < len(words) {
			return words[i]
		}
		return ""
	}
	one := func(opt func(string) (grantValue, bool), operands func(*grantCheck, *grantArgs) string, note string) *grantModel {
		return &grantModel{words: words[:1], style: gsGetopt, opt: opt, operands: operands, note: note}
	}
	switch name {
	case "gpg", "gpg2":
		return one(grantGpgOption, grantGpgOperands, ""), ""
	case "openssl":
		return grantOpensslModel(words)
	case "unzip":
		m := one(grantUnzipOption, grantUnzipOperands, "listing, testing or printing, never extracting")
		m.noDashDash = true
		return m, ""
	case "patch":
		return nil, "patch writes the files its input names (and hands ed-style diffs to ed), which askops cannot read in advance"
	case "chmod":
		return one(grantChmodOption, grantChmodOperands, "not recursive, no set-id; files in the workspace, not .git or on PATH"), ""
	case "chown", "chgrp":
		return one(grantChownOption, grantChownOperands(name), "not recursive; files in the workspace, not .git or on PATH"), ""
	case "git":
		return grantGitModel(sub(1), words)
	case "kubectl", "oc":
		return grantKubectlModel(sub(1), words)
	case "docker", "podman":
		return grantDockerModel(sub(1), words)
	case "gh":
		return grantGhModel(sub(1), sub(2), words)
	case "go":
		return grantGoModel(sub(1), words)
	case "ls":
		return one(grantLsOption, grantLsOperands, ""), ""
	case "cat":
		return one(grantCatOption, grantOperandsAre(gvPathIn), ""), ""
	case "head", "tail":
		m := one(grantHeadTailOption(name), grantOperandsAre(gvPathIn), "")
		m.counts = true
		return m, ""
	case "wc":
		return one(grantWcOption, grantOperandsAre(gvPathIn), ""), ""
	case "grep", "egrep", "fgrep":
		m := one(grantGrepOption, grantGrepOperands, "")
		m.counts = true
		return m, ""
	case "diff":
		return one(grantDiffOption, grantDiffOperands, ""), ""
	case "sort":
		return one(grantSortOption, grantOperandsAre(gvPathIn), ""), ""
	}
	return nil, ""
}

// grantModelsUnder reports whether some model's words start with words:
// a prefix naming only the program of programs with subcommands (openssl,
// gh, gh pr).
func grantModelsUnder(words []string) bool {
	name := path.Base(words[0])
	switch len(words) {
	case 1:
		return name == "openssl" || name == "gh"
	case 2:
		return name == "gh" && (words[1] == "pr" || words[1] == "issue")
	}
	return false
}

// grantNoteFor is what a prefix grant on words covers beyond its words,
// as the approver reads it (short: it joins the scope in a confirm dialog
// of 300 characters).
func grantNoteFor(words []string) string {
	const files = "files in the workspace, not .git"
	m, _ := grantModelFor(words)
	switch {
	case m == nil:
		return "known subcommands and options only; " + files
	case m.note == "":
		return "known options only; " + files
	}
	return "known options only; " + m.note
}

// gpg: reading, signing, encrypting, verifying and listing, with output
// where -o says or next to its input. Never: --homedir, --options,
// --photo-viewer, --exec-path, --agent-program, --dirmngr-program,
// --keyserver, --import, --recv-keys, --log-file, --status-file, …
func grantGpgOption(n string) (grantValue, bool) {
	switch n {
	case "--verify", "--list-keys", "-k", "--list-public-keys", "--list-secret-keys", "-K", "--list-signatures",
		"--list-sigs", "--check-signatures", "--check-sigs", "--fingerprint", "--list-packets", "--decrypt", "-d",
		"--sign", "-s", "--clear-sign", "--clearsign", "--detach-sign", "-b", "--encrypt", "-e", "--symmetric", "-c",
		"--export", "--enarmor", "--dearmor", "--print-mds", "--version", "--help",
		"--armor", "-a", "--batch", "--no-batch", "--no-tty", "--yes", "--quiet", "-q", "--verbose", "-v",
		"--with-colons", "--with-fingerprint", "--with-subkey-fingerprint", "--with-keygrip", "--no-auto-key-retrieve",
		"--no-greeting", "--textmode", "-t", "--no-textmode":
		return gvFlag, true
	case "--output", "-o":
		return gvPathOut, true
	case "--recipient", "-r", "--hidden-recipient", "-R", "--local-user", "-u", "--default-key", "--encrypt-to",
		"--digest-algo", "--cipher-algo", "--compress-algo", "--keyid-format", "--print-md", "--compress-level", "-z":
		return gvWord, true
	case "--status-fd":
		return gvFD, true
	}
	return 0, false
}

// gpgOperands: one command; its operands are files, or key names for
// the listing and export commands; a command that writes without -o
// writes next to its input (FILE.gpg, FILE.asc, FILE.sig).
func grantGpgOperands(g *grantCheck, a *grantArgs) string {
	keys := a.has("--list-keys", "-k", "--list-public-keys", "--list-secret-keys", "-K", "--list-signatures",
		"--list-sigs", "--check-signatures", "--check-sigs", "--fingerprint", "--export")
	writes := a.has("--sign", "-s", "--clear-sign", "--clearsign", "--detach-sign", "-b", "--encrypt", "-e",
		"--symmetric", "-c", "--enarmor", "--dearmor")
	command := keys || writes || a.has("--verify", "--decrypt", "-d", "--list-packets", "--print-md", "--print-mds",
		"--version", "--help")
	if !command && !g.prefix {
		return "gpg without a command (--verify, --decrypt, --sign, …) guesses what to do with its files"
	}
	output := a.has("--output", "-o")
	if a.has("--verify") && len(a.operands) == 1 {
		// gpg --verify x.sig checks the signature against x.
		o := a.operands[0]
		for _, ext := range []string{".sig", ".sign", ".asc", ".gpg", ".pgp"} {
			if data, ok := strings.CutSuffix(o, ext); ok && data != "" && !strings.HasSuffix(data, "/") {
				if why := g.path(data, false); why != "" {
					return "gpg --verify reads " + data + ": " + why
				}
			}
		}
	}
	for _, o := range a.operands {
		if keys {
			if why := g.value(gvText, o); why != "" {
				return why
			}
			continue
		}
		if why := g.path(o, false); why != "" {
			return why
		}
		if writes && !output && o != "-" {
			for _, ext := range []string{".gpg", ".asc", ".sig"} {
				if why := g.path(o+ext, true); why != "" {
					return "gpg writes " + o + ext + ": " + why
				}
			}
		}
	}
	return ""
}

// openssl: a few subcommands, each with its own options. Never -engine,
// -provider, -provider-path, -propquery, -config, -rand, -writerand,
// -keyform, -passin; openssl with no subcommand reads commands from its
// input.
func grantOpensslModel(words []string) (*grantModel, string) {
	if len(words) < 2 {
		return nil, "openssl with no subcommand reads commands from its input"
	}
	sub := words[1]
	var opt func(string) (grantValue, bool)
	var operands func(*grantCheck, *grantArgs) string // nil: none
	switch sub {
	case "version":
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-a", "-v", "-b", "-o", "-f", "-p", "-d", "-e", "-m", "-r", "-c":
				return gvFlag, true
			}
			return 0, false
		}
	case "dgst", "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "sha3-256", "sha3-512":
		opt = func(n string) (grantValue, bool) {
			switch {
			case n == "-hex" || n == "-binary" || n == "-r" || n == "-c" || grantOpensslDigest(n):
				return gvFlag, true
			case n == "-out":
				return gvPathOut, true
			case n == "-sign" || n == "-verify" || n == "-prverify" || n == "-signature":
				return gvPathIn, true
			case n == "-hmac":
				return gvText, true
			}
			return 0, false
		}
		operands = grantOperandsAre(gvPathIn)
	case "x509", "req", "rsa", "pkey", "ec", "verify":
		opt = grantOpensslCertOption(sub)
		if sub == "verify" {
			operands = grantOperandsAre(gvPathIn)
		}
	case "rand":
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-hex", "-base64":
				return gvFlag, true
			case "-out":
				return gvPathOut, true
			}
			return 0, false
		}
		operands = grantOperandsAre(gvCount)
	case "enc", "base64":
		opt = func(n string) (grantValue, bool) {
			switch {
			case n == "-d" || n == "-e" || n == "-a" || n == "-A" || n == "-base64" || n == "-pbkdf2" || n == "-salt" ||
				n == "-nosalt" || n == "-p" || n == "-P" || n == "-nopad" || grantOpensslCipher(n):
				return gvFlag, true
			case n == "-in":
				return gvPathIn, true
			case n == "-out":
				return gvPathOut, true
			case n == "-iter":
				return gvCount, true
			case n == "-md":
				return gvWord, true
			case n == "-pass":
				return gvPass, true
			}
			return 0, false
		}
	case "genrsa", "genpkey":
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-out":
				return gvPathOut, true
			case "-algorithm", "-pkeyopt":
				return gvWord, sub == "genpkey"
			}
			return 0, false
		}
		if sub == "genrsa" {
			operands = grantOperandsAre(gvCount)
		}
	default:
		return nil, "askops has no model of openssl " + clip(sub, 40) + "'s options, so a prefix grant could not tell what it loads or writes"
	}
	return &grantModel{words: words[:2], style: gsDash, opt: opt, operands: operands}, ""
}

func grantOpensslDigest(n string) bool {
	switch n {
	case "-sha1", "-sha224", "-sha256", "-sha384", "-sha512", "-sha512-256", "-sha3-256", "-sha3-384", "-sha3-512",
		"-md5", "-blake2b512", "-blake2s256":
		return true
	}
	return false
}

func grantOpensslCipher(n string) bool {
	switch n {
	case "-aes-128-cbc", "-aes-192-cbc", "-aes-256-cbc", "-aes-128-ctr", "-aes-192-ctr", "-aes-256-ctr", "-chacha20":
		return true
	}
	return false
}

// opensslCertOption is x509, req, rsa, pkey, ec and verify: reading and
// printing certificates and keys, making a key or a request with -out.
func grantOpensslCertOption(sub string) func(string) (grantValue, bool) {
	return func(n string) (grantValue, bool) {
		switch {
		case grantOpensslDigest(n):
			return gvFlag, true
		case n == "-in":
			return gvPathIn, true
		case n == "-out":
			return gvPathOut, true
		case n == "-inform" || n == "-outform":
			return gvCertForm, true
		case n == "-noout" || n == "-text":
			return gvFlag, true
		}
		switch sub {
		case "x509":
			switch n {
			case "-fingerprint", "-subject", "-issuer", "-dates", "-startdate", "-enddate", "-serial", "-hash",
				"-subject_hash", "-issuer_hash", "-pubkey", "-modulus", "-email", "-purpose", "-ocspid", "-ocsp_uri":
				return gvFlag, true
			case "-checkend":
				return gvCount, true
			case "-nameopt", "-certopt", "-ext":
				return gvWord, true
			}
		case "req":
			switch n {
			case "-new", "-x509", "-nodes", "-noenc", "-verify", "-pubkey", "-batch", "-subject":
				return gvFlag, true
			case "-key":
				return gvPathIn, true
			case "-keyout":
				return gvPathOut, true
			case "-newkey":
				return gvKeySpec, true
			case "-subj", "-addext":
				return gvText, true
			case "-days":
				return gvCount, true
			}
		case "rsa", "pkey", "ec":
			switch n {
			case "-pubout", "-pubin", "-check":
				return gvFlag, true
			}
		case "verify":
			switch n {
			case "-verbose", "-show_chain", "-x509_strict", "-partial_chain", "-crl_check", "-no-CAfile", "-no-CApath",
				"-no-CAstore":
				return gvFlag, true
			case "-CAfile", "-CApath", "-untrusted":
				return gvPathIn, true
			case "-purpose", "-verify_hostname":
				return gvWord, true
			}
		}
		return 0, false
	}
}

// unzip: listing (-l, -v), testing (-t), the comment (-z) and printing
// members to standard output (-p, -c) only. Extracting is never covered:
// the archive's members choose the paths it writes (../x, .git/hooks/x,
// a member that is a symlink, then a member written through it), and
// askops does not read archives.
func grantUnzipOption(n string) (grantValue, bool) {
	switch n {
	case "-l", "-v", "-t", "-z", "-p", "-c", "-q":
		return gvFlag, true
	}
	return 0, false
}

func grantUnzipOperands(g *grantCheck, a *grantArgs) string {
	if !a.has("-l", "-v", "-t", "-z", "-p", "-c") && !g.prefix {
		return "unzip extracts: the archive's members choose the paths it writes, which askops does not read"
	}
	for i, o := range a.operands {
		if i == 0 {
			// unzip x reads x, else x.zip, else x.ZIP.
			for _, name := range []string{o, o + ".zip", o + ".ZIP"} {
				if why := g.path(name, false); why != "" {
					return why
				}
			}
			continue
		}
		if why := g.value(gvText, o); why != "" || strings.HasPrefix(o, "-") {
			return "unzip: " + clip(o, 40) + " is not a member name"
		}
	}
	return ""
}

// chmod and chown: one mode or owner, then files; never recursive (-R
// reaches .git and whatever links lead to), never set-id bits, never a
// file in .git, outside the workspace, with another name, or on PATH.
func grantChmodOption(n string) (grantValue, bool) {
	switch n {
	case "-v", "--verbose", "-c", "--changes", "-f", "--silent", "--quiet":
		return gvFlag, true
	case "--reference":
		return gvPathIn, true
	}
	return 0, false
}

func grantChownOption(n string) (grantValue, bool) { return grantChmodOption(n) }

func grantChmodOperands(g *grantCheck, a *grantArgs) string {
	files := a.operands
	if !a.has("--reference") && len(files) > 0 {
		if why := grantChmodMode(files[0]); why != "" {
			return why
		}
		files = files[1:]
	}
	return grantAttrFiles(g, "chmod", files)
}

func grantChownOperands(name string) func(*grantCheck, *grantArgs) string {
	return func(g *grantCheck, a *grantArgs) string {
		files := a.operands
		if !a.has("--reference") && len(files) > 0 {
			if why := grantOwnerShape(name, files[0]); why != "" {
				return why
			}
			files = files[1:]
		}
		return grantAttrFiles(g, name, files)
	}
}

func grantAttrFiles(g *grantCheck, name string, files []string) string {
	if len(files) == 0 && !g.prefix {
		return name + " with no file"
	}
	for _, f := range files {
		if f == "-" {
			return name + " -: not a file"
		}
		if why := g.path(f, true); why != "" {
			return why
		}
	}
	return ""
}

// chmodMode accepts an octal mode without set-id bits (sticky allowed) or
// symbolic clauses of r, w, x and X.
func grantChmodMode(m string) string {
	bad := "chmod " + clip(m, 30) + ": not a mode askops knows (no set-id bits, no copied permissions)"
	if grantIsOctal(m) {
		if len(m) > 4 || len(m) == 4 && m[0] != '0' && m[0] != '1' {
			return bad
		}
		return ""
	}
	for _, clause := range strings.Split(m, ",") {
		i := 0
		for i < len(clause) && strings.IndexByte("ugoa", clause[i]) >= 0 {
			i++
		}
		if i == len(clause) {
			return bad
		}
		for i < len(clause) {
			if strings.IndexByte("+-=", clause[i]) < 0 {
				return bad
			}
			i++
			for i < len(clause) && strings.IndexByte("rwxX", clause[i]) >= 0 {
				i++
			}
		}
	}
	return ""
}

func grantIsOctal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

// ownerShape accepts OWNER, OWNER:GROUP, :GROUP (chown) or GROUP (chgrp),
// each a plain name or number.
func grantOwnerShape(name, o string) string {
	names := []string{o}
	if name == "chown" {
		u, gr, _ := strings.Cut(o, ":")
		names = []string{u, gr}
	}
	for _, n := range names {
		for i := 0; i < len(n); i++ {
			c := n[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' && i > 0 || c == '.' && i > 0) {
				return name + " " + clip(o, 40) + ": not an owner askops knows"
			}
		}
	}
	if o == "" || o == ":" {
		return name + ": an empty owner"
	}
	return ""
}

// kubectl and oc get, describe and logs, in the cluster and namespace
// the configuration names: never --context, --server, --as, --token,
// --kubeconfig, -f, --raw, nor -o read from a file.
func grantKubectlModel(sub string, words []string) (*grantModel, string) {
	common := func(n string) (grantValue, bool) {
		switch n {
		case "-n", "--namespace", "-l", "--selector":
			return gvWord, true
		case "-A", "--all-namespaces":
			return gvFlag, true
		}
		return 0, false
	}
	var opt func(string) (grantValue, bool)
	switch sub {
	case "get":
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-w", "--watch", "--watch-only", "--show-labels", "--no-headers", "--show-kind", "--ignore-not-found":
				return gvFlag, true
			case "-o", "--output":
				return gvKubeOutput, true
			case "--field-selector", "-L", "--label-columns", "--request-timeout":
				return gvWord, true
			case "--sort-by":
				return gvText, true
			case "--chunk-size":
				return gvCount, true
			}
			return common(n)
		}
	case "describe":
		opt = func(n string) (grantValue, bool) {
			if n == "--show-events" {
				return gvFlag, true
			}
			return common(n)
		}
	case "logs":
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-f", "--follow", "-p", "--previous", "--timestamps", "--all-containers", "--prefix", "--ignore-errors":
				return gvFlag, true
			case "-c", "--container", "--tail", "--since":
				return gvWord, true
			case "--limit-bytes", "--max-log-requests":
				return gvCount, true
			}
			return common(n)
		}
	default:
		return nil, ""
	}
	return &grantModel{words: words[:2], style: gsGetopt, opt: opt, boolEq: true, operands: grantOperandsAre(gvWord)}, ""
}

// docker and podman ps, images, logs and inspect, on the engine the
// environment names: never -H, --context, --config.
func grantDockerModel(sub string, words []string) (*grantModel, string) {
	var opt func(string) (grantValue, bool)
	operands := grantOperandsAre(gvWord)
	switch sub {
	case "ps":
		operands = nil
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-a", "--all", "-q", "--quiet", "--no-trunc", "-s", "--size", "-l", "--latest":
				return gvFlag, true
			case "-n", "--last":
				return gvCount, true
			case "-f", "--filter":
				return gvWord, true
			case "--format":
				return gvText, true
			}
			return 0, false
		}
	case "images":
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-a", "--all", "-q", "--quiet", "--no-trunc", "--digests":
				return gvFlag, true
			case "-f", "--filter":
				return gvWord, true
			case "--format":
				return gvText, true
			}
			return 0, false
		}
	case "logs":
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-f", "--follow", "-t", "--timestamps", "--details":
				return gvFlag, true
			case "-n", "--tail", "--since", "--until":
				return gvWord, true
			}
			return 0, false
		}
	case "inspect":
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-s", "--size":
				return gvFlag, true
			case "-f", "--format":
				return gvText, true
			case "--type":
				return gvWord, true
			}
			return 0, false
		}
	default:
		return nil, ""
	}
	return &grantModel{words: words[:2], style: gsGetopt, opt: opt, boolEq: true, operands: operands}, ""
}

// gh pr and issue view and list (and pr diff), in the repository of the
// working directory: never -R/--repo, never --web (it starts a browser).
func grantGhModel(noun, verb string, words []string) (*grantModel, string) {
	if noun != "pr" && noun != "issue" {
		return nil, ""
	}
	var opt func(string) (grantValue, bool)
	operands := grantGhItem
	switch verb {
	case "view":
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-c", "--comments":
				return gvFlag, true
			case "--json":
				return gvWord, true
			case "-q", "--jq", "-t", "--template":
				return gvText, true
			}
			return 0, false
		}
	case "list":
		operands = nil
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-d", "--draft":
				return gvFlag, noun == "pr"
			case "-s", "--state", "-l", "--label", "-A", "--author", "-a", "--assignee", "-B", "--base", "-H", "--head",
				"--json", "--mention", "-m", "--milestone":
				return gvWord, true
			case "-L", "--limit":
				return gvCount, true
			case "-S", "--search", "-q", "--jq", "-t", "--template":
				return gvText, true
			}
			return 0, false
		}
	case "diff":
		if noun != "pr" {
			return nil, ""
		}
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "--name-only", "--patch":
				return gvFlag, true
			}
			return 0, false
		}
	default:
		return nil, ""
	}
	return &grantModel{words: words[:3], style: gsGetopt, opt: opt, boolEq: true, operands: operands}, ""
}

// ghItem: a number or a branch name, never a URL (another repository).
func grantGhItem(g *grantCheck, a *grantArgs) string {
	for _, o := range a.operands {
		if why := grantWordShape(o); why != "" {
			return why
		}
		if strings.Contains(o, ":") {
			return "gh: " + clip(o, 60) + " names another repository"
		}
	}
	return ""
}

// go list and version: reading the module's packages and the toolchain's
// version. Never go build or go vet: they compile the workspace's code,
// and compiling reads whatever the code names. A cgo preamble's
// #include "/home/u/.aws/credentials" or an assembly file's #include
// (with cgo off too) makes the C compiler or the assembler read a file
// anywhere on this machine and print it in its errors (checked with go
// 1.26 and gcc: the first line of a file outside the workspace came out),
// and a dependency the module names can hold such code. No model of
// flags can see that; the exact command stays grantable.
func grantGoModel(sub string, words []string) (*grantModel, string) {
	var opt func(string) (grantValue, bool)
	operands := grantOperandsAre(gvPathIn)
	switch sub {
	case "build", "vet":
		return nil, "go " + sub + " compiles the workspace's code, whose C and assembly #include directives read any file on this machine (outside the workspace too) and print it in their errors"
	case "list":
		operands = grantGoListOperands
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-m", "-u", "-versions", "-deps", "-test", "-e", "-find", "-retracted":
				return gvFlag, true
			case "-json":
				return gvOptWord, true
			case "-f":
				return gvText, true
			case "-mod", "-tags":
				return gvWord, true
			}
			return 0, false
		}
	case "version":
		opt = func(n string) (grantValue, bool) {
			switch n {
			case "-m", "-v", "-json":
				return gvFlag, true
			}
			return 0, false
		}
	default:
		return nil, ""
	}
	return &grantModel{words: words[:2], style: gsGo, opt: opt, operands: operands}, ""
}

// goListOperands: packages in the workspace, or module patterns (all,
// std, a module path with @version).
func grantGoListOperands(g *grantCheck, a *grantArgs) string {
	for _, o := range a.operands {
		if strings.HasPrefix(o, ".") || strings.HasPrefix(o, "/") {
			if why := g.path(o, false); why != "" {
				return why
			}
			continue
		}
		if why := grantWordShape(o); why != "" {
			return why
		}
	}
	return ""
}

func grantLsOption(n string) (grantValue, bool) {
	switch n {
	case "-a", "-A", "-l", "-h", "-R", "-t", "-r", "-S", "-1", "-d", "-F", "-i", "-s", "-n", "-g", "-o", "-G", "-p",
		"-C", "-x", "-m", "-Q", "-U", "-X", "-v", "-c", "-u", "-k", "-N", "-b", "-q",
		"--all", "--almost-all", "--human-readable", "--recursive", "--reverse", "--size", "--directory",
		"--classify", "--inode", "--numeric-uid-gid", "--full-time", "--group-directories-first", "--no-group",
		"--literal", "--escape", "--hide-control-chars", "--show-control-chars", "--si", "--author":
		return gvFlag, true
	case "--color", "--colour", "--indicator-style", "--quoting-style", "--time-style", "--sort", "--time",
		"--format", "--hyperlink":
		return gvOptWord, true
	case "-w", "--width", "-T", "--tabsize":
		return gvCount, true
	case "-I", "--ignore", "--hide", "--block-size":
		return gvWord, true
	}
	return 0, false
}

func grantCatOption(n string) (grantValue, bool) {
	switch n {
	case "-n", "-b", "-A", "-e", "-E", "-s", "-t", "-T", "-v", "-u", "--number", "--number-nonblank", "--show-all",
		"--squeeze-blank", "--show-ends", "--show-tabs", "--show-nonprinting":
		return gvFlag, true
	}
	return 0, false
}

func grantHeadTailOption(name string) func(string) (grantValue, bool) {
	return func(n string) (grantValue, bool) {
		switch n {
		case "-q", "--quiet", "--silent", "-v", "--verbose", "-z", "--zero-terminated":
			return gvFlag, true
		case "-n", "--lines", "-c", "--bytes":
			return gvWord, true
		}
		if name == "tail" {
			switch n {
			case "-f", "-F", "--retry":
				return gvFlag, true
			case "--follow":
				return gvOptWord, true
			case "-s", "--sleep-interval":
				return gvWord, true
			}
		}
		return 0, false
	}
}

func grantWcOption(n string) (grantValue, bool) {
	switch n {
	case "-l", "-w", "-c", "-m", "-L", "--lines", "--words", "--bytes", "--chars", "--max-line-length":
		return gvFlag, true
	}
	return 0, false
}

// grep: -r, never -R (it follows every link, out of the workspace);
// never --exclude-from, --devices.
func grantGrepOption(n string) (grantValue, bool) {
	switch n {
	case "-i", "-y", "-v", "-n", "-l", "-L", "-c", "-w", "-x", "-E", "-F", "-G", "-P", "-o", "-q", "-s", "-H", "-h",
		"-r", "-I", "-a", "-z", "-Z", "-b", "-U", "-T",
		"--ignore-case", "--no-ignore-case", "--invert-match", "--line-number", "--files-with-matches",
		"--files-without-match", "--count", "--word-regexp", "--line-regexp", "--extended-regexp", "--fixed-strings",
		"--basic-regexp", "--perl-regexp", "--only-matching", "--quiet", "--silent", "--no-messages",
		"--with-filename", "--no-filename", "--recursive", "--null", "--null-data", "--text", "--byte-offset",
		"--initial-tab", "--line-buffered":
		return gvFlag, true
	case "--color", "--colour", "--binary-files":
		return gvOptWord, true
	case "-e", "--regexp":
		return gvText, true
	case "-f", "--file":
		return gvPathIn, true
	case "-m", "--max-count", "-A", "-B", "-C", "--after-context", "--before-context", "--context":
		return gvCount, true
	case "--include", "--exclude", "--exclude-dir", "--label":
		return gvWord, true
	}
	return 0, false
}

// grepOperands: the pattern (unless -e or -f gave it), then files. With
// -r each directory is searched whole (the working directory when no
// file is named), so none may hold .git unless --exclude-dir=.git leaves
// it out.
func grantGrepOperands(g *grantCheck, a *grantArgs) string {
	files := a.operands
	if !a.has("-e", "--regexp", "-f", "--file") && len(files) > 0 {
		if why := g.value(gvText, files[0]); why != "" {
			return why
		}
		files = files[1:]
	}
	recursive := a.has("-r", "--recursive")
	if recursive && len(files) == 0 {
		files = []string{"."}
	}
	return grantReadTrees(g, files, recursive, a.value(".git", "--exclude-dir"), true)
}

// lsOperands: files and directories listed; with -R each directory whole
// (the working directory when none is named), so none may hold .git
// unless -I .git (--ignore=.git) leaves it out.
func grantLsOperands(g *grantCheck, a *grantArgs) string {
	files := a.operands
	recursive := a.has("-R", "--recursive")
	if recursive && len(files) == 0 {
		files = []string{"."}
	}
	return grantReadTrees(g, files, recursive, a.value(".git", "-I", "--ignore"), false)
}

// readTrees judges files read, and with recursive the trees under them.
func grantReadTrees(g *grantCheck, files []string, recursive, skipGit, contents bool) string {
	for _, f := range files {
		if why := g.path(f, false); why != "" {
			return why
		}
		if recursive {
			if why := g.tree(f, skipGit, contents); why != "" {
				return why
			}
		}
	}
	return ""
}

// diffOperands: files, or directories whose files diff reads too: DIR
// and DIR compares every name the two share, DIR and FILE reads
// DIR/FILE's name. Each file of a directory operand (one level: diff
// without -r does not descend) is judged as a file it reads, so a link
// in it out of the workspace or into .git, or a hard link, is not
// covered; the operand's own check never looked inside.
func grantDiffOperands(g *grantCheck, a *grantArgs) string {
	for _, o := range a.operands {
		if why := g.path(o, false); why != "" {
			return why
		}
		if why := g.dirFiles(o); why != "" {
			return why
		}
	}
	return ""
}

// dirFiles judges, when p is a directory on this machine (through links,
// as a program opening it sees it), each of its entries that is not
// itself a directory as a file read: a program given a directory may
// read the files in it (diff DIR DIR). A directory of more than
// maxGrantTree entries is not covered. "" when p is not a directory, or
// at grant time.
func (g *grantCheck) dirFiles(p string) string {
	if g.prefix || p == "-" {
		return ""
	}
	abs := p
	if !path.IsAbs(abs) {
		abs = path.Join(g.cwd, abs)
	}
	fi, err := os.Stat(path.Clean(abs))
	if err != nil || !fi.IsDir() {
		return ""
	}
	entries, err := os.ReadDir(path.Clean(abs))
	if err != nil {
		return clip(p, 60) + " is a directory askops cannot read, so the files the program reads in it are unknown"
	}
	if len(entries) > maxGrantTree {
		return fmt.Sprintf("%s holds more than %d entries: askops does not look through it", clip(p, 60), maxGrantTree)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue // not descended into without -r
		}
		if why := g.path(path.Join(p, e.Name()), false); why != "" {
			return "a file in the directory " + clip(p, 60) + ": " + why
		}
	}
	return ""
}

func grantDiffOption(n string) (grantValue, bool) {
	switch n {
	case "-u", "-q", "-s", "-w", "-b", "-B", "-i", "-a", "-y", "-t", "-T", "-p", "-c", "--brief",
		"--report-identical-files", "--ignore-all-space", "--ignore-space-change", "--ignore-blank-lines",
		"--ignore-case", "--text", "--side-by-side", "--expand-tabs", "--initial-tab", "--show-c-function",
		"--strip-trailing-cr", "--minimal":
		return gvFlag, true
	case "--color", "--unified":
		return gvOptWord, true
	case "-U", "-W", "--width":
		return gvCount, true
	case "--label":
		return gvText, true
	}
	return 0, false
}

// sort: -o inside the workspace; never -T (temporary files elsewhere),
// --compress-program, --files0-from, --random-source.
func grantSortOption(n string) (grantValue, bool) {
	switch n {
	case "-b", "-d", "-f", "-g", "-i", "-M", "-h", "-n", "-R", "-r", "-V", "-c", "-C", "-m", "-s", "-u", "-z",
		"--reverse", "--unique", "--numeric-sort", "--human-numeric-sort", "--version-sort", "--ignore-case",
		"--stable", "--zero-terminated", "--check", "--merge", "--general-numeric-sort", "--month-sort",
		"--dictionary-order", "--ignore-leading-blanks", "--ignore-nonprinting", "--random-sort":
		return gvFlag, true
	case "-k", "--key", "-S", "--buffer-size":
		return gvWord, true
	case "-t", "--field-separator":
		return gvText, true
	case "-o", "--output":
		return gvPathOut, true
	case "--parallel":
		return gvCount, true
	}
	return 0, false
}

// maxKubeconfig bounds a kubeconfig file read for its credential plugins.
const maxKubeconfig = 1 << 20

// grantKubeExecCommands lists the credential plugins (users[].user.exec
// .command) the kubeconfig files kubectl reads name, as written: kubectl
// runs each by name through $PATH, or by a path. Read line by line, any
// "command:" value counts (a closed-world reading: a value that is not a
// plugin's costs an Ask). Why none can be judged when a file cannot be
// read whole.
func grantKubeExecCommands() ([]string, string) {
	files := filepath.SplitList(os.Getenv("KUBECONFIG"))
	if len(files) == 0 {
		home := os.Getenv("HOME")
		if home == "" {
			return nil, ""
		}
		files = []string{filepath.Join(home, ".kube", "config")}
	}
	var out []string
	for _, f := range files {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil || len(b) > maxKubeconfig {
			return nil, "the kubeconfig " + clip(f, 80) + " cannot be read whole, so the credential plugins kubectl runs are unknown"
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimLeft(strings.TrimSpace(line), "- ")
			v, ok := strings.CutPrefix(line, "command:")
			if !ok {
				continue
			}
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out, ""
}
