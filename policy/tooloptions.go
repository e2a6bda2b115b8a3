package policy

import (
	"net/url"
	"path"
	"slices"
	"strings"
)

// The option tables of common developer tools: options that write a file
// (judged as write_file of it, see writes.go), options that make the tool
// run another program or take its code from elsewhere (allow rules cannot
// cover the command, and the program is shown to deny rules), and modes
// that write files whose names nobody can read in advance (an archive's
// members, a patch's files): allow rules cannot cover those either.

// toolOptions judges the options of the tools below; name is the
// command's base name, args its words after the name.
func (z *analyzer) toolOptions(name string, args []word, depth int) {
	switch name {
	case "curl":
		z.curlWrites(args)
	case "wget":
		z.wgetWrites(args)
	case "tar", "gtar", "bsdtar":
		z.tarWrites(name, args)
	case "unzip":
		z.unzipWrites(args)
	case "cpio", "bsdcpio", "pax", "ar", "jar":
		z.extractWrites(name, args)
	case "gh":
		z.ghDownloads(args)
	case "zip":
		ops := operandsOf(zipWithoutLongValues(args), "bOntxiPZs", []string{"--output-file", "--temp-path", "--unzip-command", "--exclude",
			"--include", "--logfile-path", "--password", "--compression-method", "--split-size", "--suffixes", "--from-date", "--before-date"})
		if len(ops) > 0 {
			z.writeWord(ops[0], "zip")
		}
		if zipMoves(args) {
			// zip -m deletes every file it added (and -r directories).
			for _, o := range ops[min(1, len(ops)):] {
				z.deletes(o, "zip -m", false)
			}
			z.a.refuseAllow("zip -m deletes the files it adds")
		}
		z.optionValueWrites(name, args, "bO", 'O', []string{"--output-file"})
		z.zipLogAndTemp(args)
	case "patch":
		z.patchWrites(args)
	case "gcc", "g++", "cc", "c++", "clang", "clang++", "tcc", "gccgo", "cpp":
		z.compilerOptions(name, args, depth)
		if name != "cpp" {
			z.gccDefaultWrites(name, args)
		}
	case "make", "gmake", "bmake":
		z.makeOptions(name, args, depth)
	case "cargo":
		z.cargoOptions(args, depth)
	case "pip", "pip3", "uv":
		z.pipOptions(name, args)
	case "rsync":
		z.rsyncClosed(args)
		for _, o := range []string{"--log-file", "--write-batch", "--only-write-batch", "--backup-dir", "--partial-dir", "--temp-dir"} {
			for _, v := range longOptionValues(args, o, len(o)) {
				z.writeWord(v, "rsync "+o)
				if strings.HasSuffix(o, "write-batch") && v.known() {
					// and FILE.sh, the script that replays it
					z.writeWord(word{loose: v.loose + ".sh", lit: v.lit + ".sh", ok: v.ok}, "rsync "+o)
				}
			}
		}
		for _, v := range shortOptionValues(args, "eBcFiJlOoPST", 'T') {
			z.writeWord(v, "rsync -T")
		}
		if len(longOptionValues(args, "--rsync-path", 8)) > 0 {
			z.a.refuseAllow("rsync --rsync-path (it runs another program on the other side)")
		}
		if len(longOptionValues(args, "--remote-option", 10))+len(shortOptionValues(args, "eBcFiJlOoPSTM", 'M')) > 0 {
			// Options for the rsync on the other side, which for a copy
			// on this machine is here too (rsync -M--log-file=/tmp/x
			// src/ out/ wrote /tmp/x): not read.
			z.a.cannotRead("rsync --remote-option (options for the other side's rsync, which the policy does not read)")
		}
		for _, a := range args {
			if a.loose == "--" {
				break
			}
			n, _, _ := strings.Cut(a.loose, "=")
			switch n {
			case "--daemon":
				// A server: it accepts writes from the network and runs
				// its config's pre-xfer and post-xfer exec commands.
				z.a.cannotRead("rsync --daemon (a server that runs its config's exec commands)")
			case "--link-dest":
				// Hard links to the files of DIR: a later write to the
				// copy writes DIR's file (see cpLinks).
				z.a.cannotRead("rsync --link-dest (hard links to another directory's files)")
			case "--remove-source-files", "--remove-sent-files":
				for _, o := range operands(args) {
					if !o.known() || !strings.Contains(o.loose, ":") { // one not seen may be here
						z.deletes(o, "rsync --remove-source-files", false)
					}
				}
				z.a.refuseAllow("rsync --remove-source-files deletes what it sends")
			}
		}
	case "git":
		z.gitRepository(args)
		z.gitFetchRemotes(args)
		z.gitConfigWrites(args)
		z.gitSubcommandWrites(args, depth)
	case "docker", "podman", "nerdctl":
		z.containerOptions(name, args)
	case "kubectl", "oc":
		z.kubectlOptions(name, args)
	case "ssh":
		for _, v := range shortOptionValues(args, "BbcDEeFIiJLlmOoPpQRSWw", 'E') {
			z.writeWord(v, "ssh -E")
		}
		// -S names the control socket, which -M (a master) creates.
		for _, v := range shortOptionValues(args, "BbcDEeFIiJLlmOoPpQRSWw", 'S') {
			if v.loose != "none" {
				z.writeWord(v, "ssh -S")
			}
		}
		// A config's ProxyCommand, LocalCommand and KnownHostsCommand
		// run here, and the policy does not read the file (one written
		// by an earlier call is as unread as one this command wrote), as
		// for scp and sftp -F.
		for _, v := range shortOptionValues(args, "BbcDEeFIiJLlmOoPpQRSWw", 'F') {
			z.writtenConfig(v, "ssh -F")
			z.a.cannotRead("ssh -F (an ssh config the policy does not read: its ProxyCommand and LocalCommand run commands)")
		}
		// -o keys: the commands they hold are read with the remote
		// command (sshRemote); any key not known to be harmless is not.
		for _, v := range shortOptionValues(args, "BbcDEeFIiJLlmOoPpQRSWw", 'o') {
			z.sshOption(name, v, func(word) {})
		}
	case "ssh-keygen":
		const valued = "abCDEFfGIJKMmNnOPrSstVwYZz"
		if len(shortOptionValues(args, valued, 'D'))+len(shortOptionValues(args, valued, 'w')) > 0 {
			z.a.cannotRead("ssh-keygen -D or -w (it loads a PKCS#11 or security-key library: code)")
		}
		for _, v := range shortOptionValues(args, valued, 'f') {
			z.writeWord(v, "ssh-keygen -f")
			z.writeWord(word{loose: v.loose + ".pub", lit: v.lit + ".pub", ok: v.ok}, "ssh-keygen -f")
		}
	case "openssl":
		for i, a := range args {
			o, _, _ := strings.Cut(a.loose, "=")
			switch {
			case i == 0 && o == "engine", o == "-engine", o == "-provider", o == "-provider-path", o == "-config", o == "-conf", o == "-keyform" && i+1 < len(args) && strings.EqualFold(args[i+1].loose, "engine"):
				// An engine or provider is a shared library openssl loads,
				// and a config file may name one (and its directives).
				z.a.cannotRead("openssl " + clip(o, 20) + " (it loads an engine, a provider or a config that names one: code)")
			case (o == "-out" || o == "-keyout" || o == "-signature" || o == "-sigout" || o == "-writerand" || o == "-outdir" ||
				o == "-sess_out" || o == "-keylogfile" || o == "-CAserial" || o == "-reqout" || o == "-respout" || o == "-msgfile") && i+1 < len(args):
				z.writeWord(args[i+1], "openssl "+o)
			}
		}
	case "iconv":
		z.optionValueWrites(name, args, "oft", 'o', []string{"--output"})
	case "split", "csplit":
		z.pieceWrites(name, args)
	case "xxd":
		if ops := operandsOf(args, "cgloOsn", []string{"-cols", "-groupsize", "-len", "-seek", "-name", "-offset"}); len(ops) >= 2 {
			z.writeWord(ops[1], "xxd")
		}
	case "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "compress", "lzma":
		z.compressorWrites(name, args)
	case "awk", "gawk", "mawk", "nawk", "busybox-awk":
		z.awkOptions(name, args)
	case "sqlite3", "sqlite":
		z.sqliteFiles(name, args)
	case "psql", "mysql", "mariadb":
		z.dbClientFiles(name, args)
	case "systemctl":
		z.systemctlClosed(name, args)
	case "bat", "batcat":
		z.batClosed(name, args)
	case "perl":
		z.perlInPlace(args)
	default:
		z.programOptions(name, args, depth)
	}
	z.pagerOptions(name, args, depth)
}

// pieceWrites: split and csplit write their input in pieces named PREFIX
// and a suffix (xaa, xab …; xx00, xx01 … for csplit), and an
// --additional-suffix, in the prefix's directory. The first piece is
// judged as written (allow rules must cover it); every piece is judged
// by the deny and ask rules that may name one (out/*.pem stops
// split --additional-suffix=.pem key out/k).
func (z *analyzer) pieceWrites(name string, args []word) {
	prefix := word{loose: "x", lit: "x", ok: true}
	first := "aa"
	prefixes := longOptionValues(args, "--prefix", 5)
	if name == "csplit" {
		prefix, first = word{loose: "xx", lit: "xx", ok: true}, "00"
		prefixes = append(prefixes, shortOptionValues(args, "bfn", 'f')...)
	} else {
		if hasFlag(args, 'd', 'x', "--numeric-suffixes") || hasLong(args, "--hex-suffixes") {
			first = "00"
		}
		// split's -d, -e, -x are flags; PREFIX is the second operand.
		ops := operandsOf(args, "abClnt", []string{"--bytes", "--line-bytes", "--lines", "--number", "--suffix-length",
			"--additional-suffix", "--filter", "--prefix", "--separator"})
		if len(ops) >= 2 {
			prefixes = append(prefixes, ops[1])
		}
	}
	if len(prefixes) > 0 {
		prefix = prefixes[len(prefixes)-1]
	}
	extra := ""
	if name == "split" {
		for _, v := range longOptionValues(args, "--additional-suffix", 3) {
			if !v.ok || strings.Contains(v.lit, "/") {
				z.a.cannotRead(name + " --additional-suffix " + clip(printable(v.loose), 40) + " (pieces the policy cannot name)")
				return
			}
			extra = v.lit
		}
	}
	if !prefix.ok {
		z.writeWord(prefix, name+" prefix") // asks: where the pieces land is not known
		return
	}
	z.writePieces(prefix.lit+first+extra, prefix.lit+"*"+extra, escapeGlob(path.Base(prefix.lit))+"*"+escapeGlob(extra), name+" pieces")
	if len(longOptionValues(args, "--filter", 5)) > 0 {
		z.a.refuseAllow("split --filter (it runs a command for every piece)")
	}
}

// zipWithoutLongValues is args without zip's two-letter options that take
// a value (-lf FILE, -ds SIZE, -tt DATE, -TT CMD) and their values, which
// operandsOf would read as a cluster of flags and an operand: zip -lf
// out/log out/a.zip x writes out/a.zip, not out/log alone.
func zipWithoutLongValues(args []word) []word {
	var out []word
	for i := 0; i < len(args); i++ {
		switch args[i].loose {
		case "--":
			return append(out, args[i:]...)
		case "-lf", "-ds", "-tt", "-TT":
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// zipMoves reports zip's -m (--move, -mm): the files added are deleted.
func zipMoves(args []word) bool {
	for _, a := range args {
		l := a.loose
		if l == "--" {
			return false
		}
		if n, _, _ := strings.Cut(l, "="); len(n) >= 4 && strings.HasPrefix("--move", n) {
			return true
		}
		if len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.IndexByte(shortCluster(l, "bOntxiPZs"), 'm') >= 0 {
			return true
		}
	}
	return false
}

// optionValueWrites records the values of the short option want (read in
// clusters, with valued the short options taking a value) and of the long
// options in long (with abbreviations of five letters or more).
func (z *analyzer) optionValueWrites(name string, args []word, valued string, want byte, long []string) {
	if want != 0 {
		for _, v := range shortOptionValues(args, valued, want) {
			z.writeWord(v, name+" -"+string(want))
		}
	}
	for _, o := range long {
		for _, v := range longOptionValues(args, o, min(len(o), 5)) {
			z.writeWord(v, name+" "+o)
		}
	}
}

// curlValued lists curl's short options that take a value.
const curlValued = "AbcCdDeEFHKmoPQrtTuUwxXyYz"

// curlWrites: -o/--output, -O (a name taken from the URL), --output-dir,
// and the files curl keeps (headers, cookies, traces, HSTS and alt-svc
// caches, --libcurl source); -K/--config reads options from a file, and
// -J takes the name from the server.
func (z *analyzer) curlWrites(args []word) {
	for _, want := range []byte{'o', 'D', 'c'} {
		for _, v := range shortOptionValues(args, curlValued, want) {
			z.writeWord(v, "curl -"+string(want))
		}
	}
	for _, o := range []string{"--output", "--output-dir", "--dump-header", "--cookie-jar", "--trace", "--trace-ascii",
		"--stderr", "--etag-save", "--hsts", "--alt-svc", "--libcurl"} {
		// curl takes a long option's unambiguous abbreviation (curl --out
		// FILE is --output FILE).
		for _, v := range longOptionValues(args, o, min(len(o), 5)) {
			z.writeWord(v, "curl "+o)
		}
	}
	// -w/--write-out's %output{FILE} (%output{>>FILE} appends) sends the
	// rest of the format to FILE; -w @FILE reads the format from a file.
	for _, v := range append(shortOptionValues(args, curlValued, 'w'), longOptionValues(args, "--write-out", 5)...) {
		if strings.HasPrefix(v.loose, "@") {
			z.a.cannotRead("curl -w @FILE (a format the policy does not read: its %output{} writes a file)")
			continue
		}
		for rest := v.loose; ; {
			_, after, ok := strings.Cut(rest, "%output{")
			if !ok {
				break
			}
			name, tail, _ := strings.Cut(after, "}")
			name = strings.TrimPrefix(name, ">>")
			z.writeWord(word{loose: name, lit: name, ok: v.ok && !strings.Contains(name, anyText)}, "curl -w %output")
			rest = tail
		}
	}
	// --engine PATH loads an OpenSSL engine, a shared library: code
	// (curl --engine /tmp/e.so https://… ran e.so's constructor before
	// saying the engine was not found). "list" only lists them.
	for _, v := range longOptionValues(args, "--engine", 4) {
		if v.loose != "list" {
			z.a.cannotRead("curl --engine (it loads an OpenSSL engine, a shared library: code)")
		}
	}
	remote := false
	for _, a := range args {
		l := a.loose
		if l == "--" {
			break
		}
		if longMatches(l, "--remote-name") || longMatches(l, "--remote-name-all") || longMatches(l, "--remote-header-name") ||
			len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.ContainsAny(shortCluster(l, curlValued), "OJ") {
			remote = true
		}
		for _, o := range []string{"--unix-socket", "--abstract-unix-socket"} {
			if _, _, ok := longOption(l, o, 6); ok {
				// A local service, not a host: docker's socket runs
				// containers as root, a desktop bus starts programs.
				z.a.cannotRead("curl " + o + " (it talks to a local service, which may run programs)")
			}
		}
		if _, _, ok := longOption(l, "--config", 5); ok || len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.ContainsRune(shortCluster(l, curlValued), 'K') ||
			strings.HasPrefix(l, "-K") {
			z.a.cannotRead("curl reads options from a file (--config), which can name any output")
		}
	}
	dir := word{loose: ".", lit: ".", ok: true}
	if ds := longOptionValues(args, "--output-dir", 5); len(ds) > 0 {
		dir = ds[len(ds)-1]
	}
	globbing := !hasLong(args, "--globoff") && !slices.ContainsFunc(args, func(w word) bool {
		return len(w.loose) > 1 && w.loose[0] == '-' && w.loose[1] != '-' && strings.ContainsRune(shortCluster(w.loose, curlValued), 'g')
	})
	for _, v := range append(shortOptionValues(args, curlValued, 'o'), longOptionValues(args, "--output", 5)...) {
		if globbing && hasURLGlobRef(v.loose) {
			// -o '#1' takes its name from the URL's glob ('…/{.env,a}'):
			// names the line does not give, in the file's directory.
			z.a.refuseAllow("curl -o names a file after the URL's glob")
			z.treeWrite(word{loose: path.Dir(v.loose), lit: path.Dir(v.lit), ok: v.ok}, "curl -o #N")
		}
	}
	switch {
	case remote && (hasLong(args, "--remote-header-name") || slices.ContainsFunc(args, func(w word) bool {
		return len(w.loose) > 1 && w.loose[0] == '-' && w.loose[1] != '-' && strings.ContainsRune(shortCluster(w.loose, curlValued), 'J')
	})):
		// -J takes the name the server gives (Content-Disposition).
		z.a.refuseAllow("curl -J writes a file the server names")
		z.treeWrite(dir, "curl -J")
	case remote:
		z.urlNamedWrites("curl -O", dir, args, globbing)
	}
}

// hasURLGlobRef reports curl's #N in an output name: the text the N-th
// glob of the URL matched.
func hasURLGlobRef(l string) bool {
	for i := 0; i+1 < len(l); i++ {
		if l[i] == '#' && l[i+1] >= '0' && l[i+1] <= '9' {
			return true
		}
	}
	return false
}

// shortCluster is the part of a short-option cluster before the first
// option that takes a value, that option included.
func shortCluster(l, valued string) string {
	c := l[1:]
	if i := strings.IndexAny(c, valued); i >= 0 {
		return c[:i+1]
	}
	return c
}

// urlNamedWrites judges the files a downloader names after each URL's
// last path element, in dir. A URL that is not literal, or whose path is
// a glob the downloader expands (curl's {a,b} and [a-z], where globbing),
// names files the line does not give: a tree of dir.
func (z *analyzer) urlNamedWrites(how string, dir word, args []word, globbing bool) {
	for _, a := range args {
		l := a.loose
		if !strings.Contains(l, "://") {
			continue
		}
		u, err := url.Parse(l)
		if !a.known() || err != nil || globbing && strings.ContainsAny(l, "{[") {
			z.a.refuseAllow(how + " writes a file named after a URL the policy cannot read")
			z.treeWrite(dir, how)
			continue
		}
		base := path.Base(u.Path)
		if base == "/" || base == "." || base == "" {
			base = "index.html"
		}
		p := path.Join(dir.loose, base)
		z.writeWord(word{loose: p, lit: p, ok: dir.ok}, how)
	}
}

// wgetWrites: -O/--output-document, -o/--output-file, -a/--append-output,
// --save-cookies, --warc-file; without -O the file is named after the URL
// (under -P); -e/--execute and --config run .wgetrc commands, which can
// set any of these.
func (z *analyzer) wgetWrites(args []word) {
	const valued = "OoaPeiBtTwQUlAR"
	out := false
	for _, want := range []byte{'O', 'o', 'a'} {
		for _, v := range shortOptionValues(args, valued, want) {
			z.writeWord(v, "wget -"+string(want))
			out = out || want == 'O'
		}
	}
	for _, o := range []string{"--output-document", "--output-file", "--append-output", "--save-cookies", "--warc-file", "--rejected-log", "--hsts-file",
		"--warc-tempdir"} {
		for _, v := range longOptionValues(args, o, 6) {
			z.writeWord(v, "wget "+o)
			out = out || o == "--output-document"
		}
	}
	if len(shortOptionValues(args, valued, 'e'))+len(longOptionValues(args, "--execute", 4))+len(longOptionValues(args, "--config", 6)) > 0 {
		z.a.cannotRead("wget runs .wgetrc commands (-e, --config), which can write anywhere")
	}
	dirs := append(shortOptionValues(args, valued, 'P'), longOptionValues(args, "--directory-prefix", 5)...)
	dir := word{loose: ".", lit: ".", ok: true}
	for _, d := range dirs {
		z.writeWord(d, "wget -P") // made if missing; a destination, not read
		dir = d
	}
	if out {
		return
	}
	// Names nobody reads in advance, under dir: -r's and -m's (the
	// server's tree), -i FILE's (the URLs a file lists: wget -i list
	// wrote .env from http://…/.env), and --content-disposition's and
	// --trust-server-names' (the name the server gives).
	serverNamed := len(shortOptionValues(args, valued, 'i'))+len(longOptionValues(args, "--input-file", 4))+
		len(longOptionValues(args, "--input-metalink", 8)) > 0
	for _, a := range args {
		l := a.loose
		if l == "--" {
			break
		}
		serverNamed = serverNamed || l == "-r" || l == "-m" || longMatches(l, "--recursive") || longMatches(l, "--mirror") ||
			longMatches(l, "--content-disposition") || longMatches(l, "--trust-server-names") ||
			len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.ContainsAny(shortCluster(l, valued), "rm")
	}
	if serverNamed {
		z.a.refuseAllow("wget writes files the server or a list names")
		z.treeWrite(dir, "wget")
		return
	}
	if len(dirs) > 0 {
		z.a.refuseAllow("wget writes files named after the URLs under -P")
	}
	z.urlNamedWrites("wget", dir, args, false)
}

// tarOptions is what a tar command line asks for, read as GNU tar reads
// it: the old style ("tIf PROG FILE": each letter that takes a value
// takes the next word, in order), clusters ("-tIsh": the rest of the word
// is the value), and long options in any unambiguous abbreviation, with
// "=VALUE" or the next word.
type tarOptions struct {
	create, extract bool
	files, dirs     []word
	writes          []tarWrite // files an option writes
	runs            []word     // command lines tar runs (-I, --to-command, -F, --checkpoint-action=exec=, --rsh-command)
	remote          bool       // an archive on another host (HOST:FILE): tar runs rsh or ssh
	forceLocal      bool
	removes         bool   // --remove-files: what is archived is deleted
	namesFrom       bool   // -T, --files-from: the names to archive are in a file
	compressor      string // the program an option names to (de)compress with (-z: gzip), "" if none
	auto            bool   // -a, --auto-compress: the archive's suffix names it
}

// tarCompressor is the program GNU tar starts (through /bin/sh -c) to
// compress or decompress an archive named file: by its suffix, as tar
// -a picks one when creating and as an archive so named holds when
// reading; "" for none.
func tarCompressor(file string) string {
	for _, c := range []struct{ suffix, program string }{
		{".gz", "gzip"}, {".tgz", "gzip"}, {".taz", "gzip"}, {".Z", "compress"}, {".taZ", "compress"},
		{".bz2", "bzip2"}, {".tbz", "bzip2"}, {".tbz2", "bzip2"}, {".tz2", "bzip2"},
		{".xz", "xz"}, {".txz", "xz"}, {".zst", "zstd"}, {".tzst", "zstd"},
		{".lz", "lzip"}, {".tlz", "lzip"}, {".lzma", "lzma"}, {".lzo", "lzop"},
	} {
		if strings.HasSuffix(file, c.suffix) {
			return c.program
		}
	}
	return ""
}

// tarLongCompressor is the program a long option of tar's names to
// (de)compress with (--gzip: gzip), or "".
func tarLongCompressor(n string) string {
	for _, c := range [][2]string{{"--gzip", "gzip"}, {"--gunzip", "gzip"}, {"--ungzip", "gzip"}, {"--compress", "compress"},
		{"--uncompress", "compress"}, {"--bzip2", "bzip2"}, {"--xz", "xz"}, {"--zstd", "zstd"}, {"--lzip", "lzip"},
		{"--lzma", "lzma"}, {"--lzop", "lzop"}} {
		if tarLongIs(n, c[0]) {
			return c[1]
		}
	}
	return ""
}

// compressors are the programs tar starts to (de)compress its archives.
func (t tarOptions) compressors() []string {
	var out []string
	if t.compressor != "" {
		out = append(out, t.compressor)
	}
	if t.create && !t.auto {
		return out
	}
	for _, f := range t.files {
		if c := tarCompressor(f.loose); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

type tarWrite struct {
	how string
	w   word
}

// tarValued lists tar's short options that take a value.
const tarValued = "fbTXgKNLVCIHF"

// tarLongValued lists tar's long options that must take a value (and are
// not read below), so "--exclude --to-command" is not read as
// --to-command. Options whose value is optional (--checkpoint[=N],
// --backup[=CONTROL]) take it only after '=' and are not listed.
var tarLongValued = []string{"--exclude", "--exclude-from", "--files-from", "--transform", "--xform", "--owner", "--group",
	"--mode", "--mtime", "--newer", "--newer-mtime", "--after-date", "--blocking-factor", "--record-size", "--format",
	"--label", "--starting-file", "--tape-length", "--suffix", "--strip-components", "--quoting-style", "--quote-chars", "--no-quote-chars", "--pax-option", "--owner-map", "--group-map",
	"--exclude-tag", "--exclude-tag-under", "--exclude-tag-all", "--warning", "--sparse-version", "--hole-detection",
	"--set-mtime-format", "--sort", "--level", "--rmt-command"}

// tarLongOptions are GNU tar's long options (tar --usage, 1.34), to read
// an abbreviation as getopt_long does: an exact name is that option
// (--checkpoint is not --checkpoint-action), else the one option it is a
// prefix of.
var tarLongOptions = []string{
	"--absolute-names", "--acls", "--add-file", "--after-date", "--anchored", "--append", "--atime-preserve",
	"--auto-compress", "--backup", "--block-number", "--blocking-factor", "--bzip2", "--catenate",
	"--check-device", "--check-links", "--checkpoint", "--checkpoint-action", "--clamp-mtime", "--compare",
	"--compress", "--concatenate", "--confirmation", "--create", "--delay-directory-restore", "--delete",
	"--dereference", "--diff", "--directory", "--exclude", "--exclude-backups", "--exclude-caches",
	"--exclude-caches-all", "--exclude-caches-under", "--exclude-from", "--exclude-ignore",
	"--exclude-ignore-recursive", "--exclude-tag", "--exclude-tag-all", "--exclude-tag-under", "--exclude-vcs",
	"--exclude-vcs-ignores", "--extract", "--file", "--files-from", "--force-local", "--format", "--full-time",
	"--get", "--group", "--group-map", "--gunzip", "--gzip", "--hard-dereference", "--help", "--hole-detection",
	"--ignore-case", "--ignore-command-error", "--ignore-failed-read", "--ignore-zeros", "--incremental",
	"--index-file", "--info-script", "--interactive", "--keep-directory-symlink", "--keep-newer-files",
	"--keep-old-files", "--label", "--level", "--list", "--listed-incremental", "--lzip", "--lzma", "--lzop",
	"--mode", "--mtime", "--multi-volume", "--new-volume-script", "--newer", "--newer-mtime", "--no-acls",
	"--no-anchored", "--no-auto-compress", "--no-check-device", "--no-delay-directory-restore",
	"--no-ignore-case", "--no-ignore-command-error", "--no-null", "--no-overwrite-dir", "--no-quote-chars",
	"--no-recursion", "--no-same-owner", "--no-same-permissions", "--no-seek", "--no-selinux", "--no-unquote",
	"--no-verbatim-files-from", "--no-wildcards", "--no-wildcards-match-slash", "--no-xattrs", "--null",
	"--numeric-owner", "--occurrence", "--old-archive", "--one-file-system", "--one-top-level", "--overwrite",
	"--overwrite-dir", "--owner", "--owner-map", "--pax-option", "--portability", "--posix", "--preserve-order",
	"--preserve-permissions", "--quote-chars", "--quoting-style", "--read-full-records", "--record-size",
	"--recursion", "--recursive-unlink", "--remove-files", "--restrict", "--rmt-command", "--rsh-command",
	"--same-order", "--same-owner", "--same-permissions", "--seek", "--selinux", "--show-defaults",
	"--show-omitted-dirs", "--show-snapshot-field-ranges", "--show-stored-names", "--show-transformed-names",
	"--skip-old-files", "--sort", "--sparse", "--sparse-version", "--starting-file", "--strip-components",
	"--suffix", "--tape-length", "--test-label", "--to-command", "--to-stdout", "--totals", "--touch",
	"--transform", "--uncompress", "--ungzip", "--unlink-first", "--unquote", "--update", "--usage",
	"--use-compress-program", "--utc", "--verbatim-files-from", "--verbose", "--verify", "--version",
	"--volno-file", "--warning", "--wildcards", "--wildcards-match-slash", "--xattrs", "--xattrs-exclude",
	"--xattrs-include", "--xform", "--xz", "--zstd",
}

// tarLongIs reports whether the written long option n (before any '=')
// is full, spelled out or abbreviated. An abbreviation that fits several
// options is one tar refuses, except where all of them are full.
func tarLongIs(n, full string) bool {
	name, _, _ := strings.Cut(n, "=")
	if name == full {
		return true
	}
	if len(name) < 3 || !strings.HasPrefix(full, name) {
		return false
	}
	for _, o := range tarLongOptions {
		if o == name {
			return false // an option of its own
		}
		if o != full && strings.HasPrefix(o, name) {
			return false // ambiguous: tar refuses it
		}
	}
	return true
}

func readTar(args []word) tarOptions {
	var t tarOptions
	letter := func(c byte, v word) {
		switch c {
		case 'c', 'r', 'u', 'A':
			t.create = true
		case 'x':
			t.extract = true
		case 'f':
			t.files = append(t.files, v)
		case 'C':
			t.dirs = append(t.dirs, v)
		case 'g':
			t.writes = append(t.writes, tarWrite{"tar -g", v})
		case 'I', 'F':
			t.runs = append(t.runs, v)
		case 'T':
			t.namesFrom = true
		case 'z':
			t.compressor = "gzip"
		case 'Z':
			t.compressor = "compress"
		case 'j':
			t.compressor = "bzip2"
		case 'J':
			t.compressor = "xz"
		case 'a':
			t.auto = true
		}
	}
	for i := 0; i < len(args); i++ {
		w := args[i]
		l := w.loose
		if l == "--" {
			break
		}
		switch {
		case i == 0 && len(l) > 0 && l[0] != '-':
			next := i + 1
			for k := 0; k < len(l); k++ {
				c := l[k]
				var v word
				if strings.IndexByte(tarValued, c) >= 0 && next < len(args) {
					v = args[next]
					next++
				}
				letter(c, v)
			}
			i = next - 1
		case strings.HasPrefix(l, "--"):
			n, v, has := strings.Cut(l, "=")
			value := func() word {
				if has {
					return word{loose: v, lit: v, ok: w.ok}
				}
				if i+1 < len(args) {
					i++
					return args[i]
				}
				return word{}
			}
			switch {
			case tarLongIs(n, "--create") || tarLongIs(n, "--append") || tarLongIs(n, "--update") ||
				tarLongIs(n, "--catenate") || tarLongIs(n, "--concatenate"):
				t.create = true
			case tarLongIs(n, "--extract") || tarLongIs(n, "--get"):
				t.extract = true
			case tarLongIs(n, "--file"):
				t.files = append(t.files, value())
			case tarLongIs(n, "--directory"):
				t.dirs = append(t.dirs, value())
			case tarLongIs(n, "--force-local"):
				t.forceLocal = true
			case tarLongIs(n, "--files-from"):
				t.namesFrom = true
				value()
			case tarLongIs(n, "--remove-files"):
				t.removes = true
			case tarLongCompressor(n) != "":
				t.compressor = tarLongCompressor(n)
			case tarLongIs(n, "--auto-compress"):
				t.auto = true
			case tarLongIs(n, "--listed-incremental") || tarLongIs(n, "--index-file") || tarLongIs(n, "--volno-file"):
				t.writes = append(t.writes, tarWrite{"tar " + n, value()})
			case tarLongIs(n, "--use-compress-program") || tarLongIs(n, "--to-command") || tarLongIs(n, "--info-script") ||
				tarLongIs(n, "--new-volume-script") || tarLongIs(n, "--rsh-command"):
				t.runs = append(t.runs, value())
			case tarLongIs(n, "--checkpoint-action"):
				a := value()
				switch {
				case !a.known():
					t.runs = append(t.runs, a)
				case strings.HasPrefix(a.loose, "exec="):
					t.runs = append(t.runs, word{loose: strings.TrimPrefix(a.loose, "exec="), ok: a.ok,
						lit: strings.TrimPrefix(a.lit, "exec=")})
				}
			default:
				if !has {
					for _, o := range tarLongValued {
						if n == o {
							i++
							break
						}
					}
				}
			}
		case len(l) > 1 && l[0] == '-':
			for k := 1; k < len(l); k++ {
				c := l[k]
				if strings.IndexByte(tarValued, c) < 0 {
					letter(c, word{})
					continue
				}
				var v word
				if k+1 < len(l) {
					v = word{loose: l[k+1:], lit: l[k+1:], ok: w.ok}
				} else if i+1 < len(args) {
					i++
					v = args[i]
				}
				letter(c, v)
				break
			}
		}
	}
	for _, f := range t.files {
		// GNU tar reads HOST:FILE (a colon before any slash) as a remote
		// archive, reached with rsh or ssh, unless --force-local.
		if c := strings.IndexByte(f.loose, ':'); c > 0 && !strings.Contains(f.loose[:c], "/") {
			t.remote = true
		}
	}
	return t
}

// tarWrites: creating (c, r, u, A) writes the archive (-f, --file);
// extracting (x, --extract, --get) writes the archive's members, whose
// names nobody reads in advance, into -C (or the working directory);
// --listed-incremental, --index-file and --volno-file write too. The
// programs tar runs are read by unwrap.
func (z *analyzer) tarWrites(name string, args []word) {
	t := readTar(args)
	for _, wr := range t.writes {
		z.writeWord(wr.w, name+strings.TrimPrefix(wr.how, "tar"))
	}
	if t.removes {
		z.a.cannotRead(name + " --remove-files deletes the files it archives, which the policy does not judge as writes")
	}
	if t.namesFrom && t.create {
		z.a.unjudgedRead(name + " -T archives the files a list names")
	}
	if t.remote && !t.forceLocal {
		// rsh (or --rsh-command's program) runs unseen, and reaches a
		// network: not a reading in full, in any mode.
		z.a.cannotRead(name + " -f HOST:FILE (an archive on another host: tar runs rsh or ssh to reach it)")
	}
	if t.create {
		for _, f := range t.files {
			if f.loose != "-" {
				z.writeWord(f, name+" -f")
			}
		}
	}
	if t.extract {
		z.a.refuseAllow(name + " extracts files whose names are in the archive")
		dirs := t.dirs
		if len(dirs) == 0 {
			dirs = []word{{loose: ".", lit: ".", ok: true}}
		}
		for _, d := range dirs {
			z.treeWrite(d, name+" -x")
		}
	}
}

// unzipWrites: unzip extracts into -d DIR (or the working directory)
// unless it only lists, tests or prints (-l, -t, -v, -Z, -p, -c).
func (z *analyzer) unzipWrites(args []word) {
	var dir *word
	listing, operand := false, false
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "-d" && i+1 < len(args):
			d := args[i+1]
			dir = &d
			i++
		case strings.HasPrefix(l, "-d") && len(l) > 2:
			d := word{loose: l[2:], lit: l[2:], ok: args[i].ok}
			dir = &d
		case len(l) > 1 && l[0] == '-' && !operand:
			// A cluster: -qd.git is -q and -d .git (the 't' of .git is
			// the directory's name, not -t); a mode letter lists.
			for k := 1; k < len(l); k++ {
				if l[k] == 'd' {
					d := word{loose: l[k+1:], lit: l[k+1:], ok: args[i].ok}
					if k+1 == len(l) && i+1 < len(args) {
						i++
						d = args[i]
					}
					dir = &d
					break
				}
				if strings.IndexByte("ltvZpc", l[k]) >= 0 {
					listing = true
				}
			}
		case !strings.HasPrefix(l, "-"):
			// Options end at the archive: after it, words are member
			// names (a member may be called -l), save -x and -d.
			operand = true
		}
	}
	if listing {
		return
	}
	z.a.refuseAllow("unzip extracts files whose names are in the archive")
	if dir == nil {
		dir = &word{loose: ".", lit: ".", ok: true}
	}
	z.treeWrite(*dir, "unzip")
}

// ghDownloads: gh release download and gh run download write the assets
// and artifacts under the names the server gives, into -D/--dir DIR or
// the working directory (-O/--output FILE names the one file instead).
func (z *analyzer) ghDownloads(args []word) {
	valued := "DOpRn"
	ops := operandsOf(args, valued, []string{"--repo", "--dir", "--output", "--pattern", "--name", "--archive"})
	if len(ops) < 2 || ops[1].loose != "download" || ops[0].loose != "release" && ops[0].loose != "run" {
		return
	}
	for _, v := range append(shortOptionValues(args, valued, 'O'), longOptionValues(args, "--output", 8)...) {
		z.writeWord(v, "gh "+ops[0].loose+" download -O")
		if v.loose != "-" {
			return
		}
	}
	dir := word{loose: ".", lit: ".", ok: true}
	for _, d := range append(shortOptionValues(args, valued, 'D'), longOptionValues(args, "--dir", 5)...) {
		dir = d
	}
	z.a.refuseAllow("gh " + ops[0].loose + " download writes files the server names")
	z.treeWrite(dir, "gh "+ops[0].loose+" download")
}

// extractWrites: archivers that write the files an archive names, under
// the working directory or a directory an option or operand gives, as
// tar -x and unzip do: cpio -i (-D DIR) and its pass-through -p DIR, pax
// -r (and -rw DIR), ar x, jar x. They had no reading: mode full allowed
// cpio -i < a.cpio under a deny on **/.env.
func (z *analyzer) extractWrites(name string, args []word) {
	dir := word{loose: ".", lit: ".", ok: true}
	var ops []word
	extracting, into := false, false // into: the last operand is the directory (cpio -p, pax -rw)
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if !args[i].known() {
			extracting = true // a key or option the policy cannot see
			continue
		}
		short := strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--")
		switch name {
		case "cpio", "bsdcpio":
			switch {
			case l == "--extract" || l == "--pass-through" || short && strings.ContainsAny(l, "ip"):
				extracting = true
				into = into || l == "--pass-through" || short && strings.Contains(l, "p")
				if short && strings.HasSuffix(l, "D") && i+1 < len(args) {
					i++
					dir = args[i]
				}
			case l == "-D" || l == "--directory":
				if i+1 < len(args) {
					i++
					dir = args[i]
				}
			case strings.HasPrefix(l, "--directory="):
				dir = word{loose: l[len("--directory="):], lit: l[len("--directory="):], ok: args[i].ok}
			case short && strings.ContainsAny(l, "EFHIMORW") && len(l) == 2:
				i++ // an option whose value is the next word
			case !strings.HasPrefix(l, "-"):
				ops = append(ops, args[i])
			}
		case "pax":
			switch {
			case short && strings.Contains(l, "r"):
				extracting = true
				into = into || strings.Contains(l, "w")
			case short && strings.Contains(l, "w") && len(l) == 2:
				into = extracting || slices.ContainsFunc(args, func(w word) bool { return w.loose == "-r" })
			case short && strings.ContainsAny(l, "fsopx") && len(l) == 2:
				i++
			case !strings.HasPrefix(l, "-"):
				ops = append(ops, args[i])
			}
		case "ar", "jar":
			// The first word holds the operation's letters (ar x, jar xf,
			// ar -x, jar --extract).
			if i == 0 && (strings.ContainsRune(strings.TrimLeft(l, "-"), 'x') && !strings.HasPrefix(l, "--") || l == "--extract") {
				extracting = true
			}
		}
	}
	if !extracting {
		return
	}
	if into && len(ops) > 0 {
		dir = ops[len(ops)-1] // cpio -p DIR and pax -rw … DIR copy into it
	}
	z.a.refuseAllow(name + " extracts files whose names are in the archive")
	z.treeWrite(dir, name)
}

// patchWrites: patch writes the files its diff names unless a file operand
// or -o names it; backups (-b with -B, -Y, -z), the reject file (-r) and
// -o are writes; -d changes directory first.
func (z *analyzer) patchWrites(args []word) {
	const valued = "BdDFgiopYzrV"
	long := []string{"--prefix", "--directory", "--ifdef", "--fuzz", "--get", "--input", "--output", "--strip",
		"--basename-prefix", "--suffix", "--reject-file", "--version-control", "--quoting-style", "--reject-format"}
	ops := operandsOf(args, valued, long)
	outs := append(shortOptionValues(args, valued, 'o'), longOptionValues(args, "--output", 5)...)
	for _, v := range outs {
		z.writeWord(v, "patch -o")
	}
	for _, v := range append(shortOptionValues(args, valued, 'r'), longOptionValues(args, "--reject-file", 5)...) {
		z.writeWord(v, "patch -r")
	}
	dirs := append(shortOptionValues(args, valued, 'd'), longOptionValues(args, "--directory", 5)...)
	if len(dirs) > 0 {
		z.a.refuseAllow("patch -d (it patches files in another directory)")
	}
	prefixes := append(shortOptionValues(args, valued, 'B'), longOptionValues(args, "--prefix", 5)...)
	basePrefixes := append(shortOptionValues(args, valued, 'Y'), longOptionValues(args, "--basename-prefix", 5)...)
	suffixes := append(shortOptionValues(args, valued, 'z'), longOptionValues(args, "--suffix", 5)...)
	if len(prefixes)+len(basePrefixes)+len(suffixes) > 0 {
		z.a.refuseAllow("patch backups under a prefix or suffix (-B, -Y, -z) the policy does not place")
	}
	if len(ops) > 0 {
		if len(outs) == 0 {
			z.writeWord(ops[0], "patch")
		}
		// Beside the file patched (or -o's): FILE.rej where a hunk
		// fails, unless -r names it, and the original's backup where a
		// hunk fails or with -b (FILE.orig, or where -B, -Y or -z put
		// it: -z /../../.git/x lands in .git).
		written := ops[0]
		if len(outs) > 0 {
			written = outs[len(outs)-1]
		}
		rejects := len(shortOptionValues(args, valued, 'r')) + len(longOptionValues(args, "--reject-file", 5))
		z.patchSideFiles(ops[0], written, rejects == 0, prefixes, basePrefixes, suffixes)
		return
	}
	if len(outs) == 0 {
		// The files the diff names, below its directory: judged as that
		// directory written, as tar -x's (patch -d .git writes hooks).
		z.a.refuseAllow("patch writes the files its diff names")
		dir := word{loose: ".", lit: ".", ok: true}
		if len(dirs) > 0 {
			dir = dirs[len(dirs)-1]
		}
		z.treeWrite(dir, "patch")
	}
}

// patchSideFiles records what patch writes beside the file it patches,
// file (written, where -o puts the result): written.rej when rej, and the
// backup of file: file.orig, or PREFIX+file (-B), dir/PREFIX+base (-Y),
// file+SUFFIX (-z), each the last given. A name not literal is a write to
// a place the policy cannot see.
func (z *analyzer) patchSideFiles(file, written word, rej bool, prefixes, basePrefixes, suffixes []word) {
	if rej {
		z.writeWord(word{loose: written.loose + ".rej", lit: written.lit + ".rej", ok: written.ok}, "patch (rejects)")
	}
	last := func(ws []word) (word, bool) {
		if len(ws) == 0 {
			return word{}, false
		}
		return ws[len(ws)-1], true
	}
	backup := word{loose: file.loose + ".orig", lit: file.lit + ".orig", ok: file.ok}
	if p, ok := last(prefixes); ok {
		backup = word{loose: p.loose + file.loose, lit: p.lit + file.lit, ok: p.ok && file.ok}
	}
	if p, ok := last(basePrefixes); ok {
		d, b := path.Split(file.lit)
		backup = word{loose: d + p.loose + b, lit: d + p.lit + b, ok: p.ok && file.ok}
	}
	if s, ok := last(suffixes); ok {
		backup = word{loose: file.loose + s.loose, lit: file.lit + s.lit, ok: s.ok && file.ok}
	}
	z.writeWord(backup, "patch (backup)")
}

// compilerOptions: -o FILE (and -oFILE), -MF FILE write; -wrapper runs a
// program around every tool, -B takes the tools from a directory,
// -fplugin loads code, -specs can run anything, -fuse-ld= with a path
// runs that linker; -Wl, and -Xlinker options reach the linker (-plugin).
func (z *analyzer) compilerOptions(name string, args []word, depth int) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		l := w.loose
		next := func() (word, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return word{}, false
		}
		switch {
		case l == "-o" || l == "-MF" || l == "-MT" || l == "-MQ" || l == "-dumpdir" || l == "-dumpbase":
			if v, ok := next(); ok && (l == "-o" || l == "-MF" || l == "-dumpdir") {
				z.writeWord(v, name+" "+l)
			}
		case l == "--output" || l == "-aux-info":
			if v, ok := next(); ok {
				z.writeWord(v, name+" "+l)
			}
		case strings.HasPrefix(l, "--output=") || strings.HasPrefix(l, "-aux-info=") || strings.HasPrefix(l, "-dumpdir="):
			_, v, _ := strings.Cut(l, "=")
			z.writeWord(word{loose: v, lit: v, ok: w.ok}, name+" "+clip(l, 20))
		case strings.HasPrefix(l, "-Wl,") || strings.HasPrefix(l, "-Wa,") || strings.HasPrefix(l, "-Wp,") || l == "-Xassembler" ||
			l == "-Xpreprocessor" || strings.HasPrefix(l, "-fopt-info") && strings.Contains(l, "=") ||
			strings.HasPrefix(l, "-fdiagnostics-add-output") || strings.HasPrefix(l, "-fdiagnostics-set-output") ||
			strings.HasPrefix(l, "-fdeps-") || strings.HasPrefix(l, "-fprofile-note") || strings.HasPrefix(l, "-fmodule-mapper") ||
			strings.HasPrefix(l, "-fltrans-output-list") || l == "-fdiagnostics-format=sarif-file" || l == "-fdiagnostics-format=json-file" ||
			l == "-fcompare-debug" || strings.HasPrefix(l, "-fself-test"):
			// Options handed to the linker, the assembler or the
			// preprocessor, and GCC's own side files: the policy reads only
			// the -Wl, options below, and these may write any file.
			if !gccPassThroughKnown(l) {
				z.a.cannotRead(name + " " + clip(l, 40) + " (it hands options to another tool or writes files the policy does not place)")
			}
		case strings.HasPrefix(l, "-o") && len(l) > 2:
			z.writeWord(word{loose: l[2:], lit: l[2:], ok: w.ok}, name+" -o")
		case strings.HasPrefix(l, "-MF") && len(l) > 3:
			z.writeWord(word{loose: l[3:], lit: l[3:], ok: w.ok}, name+" -MF")
		case l == "-wrapper" || l == "--wrapper":
			z.a.refuseAllow(name + " -wrapper (it runs a program around every tool)")
			if v, ok := next(); ok {
				if prog, _, _ := strings.Cut(v.loose, ","); prog != "" {
					z.command(simple{words: []word{{loose: prog, lit: prog, ok: v.ok}, {loose: anyText, splat: true}}, guess: true}, depth+1)
				}
			}
		case strings.HasPrefix(l, "-B") || l == "--prefix" || strings.HasPrefix(l, "--prefix=") || l == "-iplugindir" ||
			strings.HasPrefix(l, "-fplugin") || strings.HasPrefix(l, "-specs") || strings.HasPrefix(l, "--specs") ||
			strings.HasPrefix(l, "-fuse-ld=") && strings.Contains(l, "/") || strings.HasPrefix(l, "--ld-path") ||
			strings.HasPrefix(l, "-Wl,") && strings.Contains(l, "plugin") || l == "-Xlinker" || l == "-save-temps" ||
			strings.HasPrefix(l, "-save-temps=") || strings.HasPrefix(l, "-fdump-") || strings.HasPrefix(l, "-fprofile-generate=") ||
			strings.HasPrefix(l, "-fprofile-dir=") || strings.HasPrefix(l, "-fcallgraph-info") || strings.HasPrefix(l, "-Wl,-o") ||
			strings.HasPrefix(l, "-Wl,--output") || strings.HasPrefix(l, "@"):
			z.a.cannotRead(name + " " + clip(l, 40) + " (it runs or loads another program, or writes files the policy does not place)")
		}
	}
}

// gccPassThroughKnown reports a -Wl, option list the policy has read: only
// options that write nothing and load nothing (-rpath, -z, --as-needed …).
func gccPassThroughKnown(l string) bool {
	rest, ok := strings.CutPrefix(l, "-Wl,")
	if !ok {
		return false
	}
	for _, o := range strings.Split(rest, ",") {
		switch {
		case o == "-z" || o == "-rpath" || o == "--as-needed" || o == "--no-as-needed" || o == "--gc-sections" ||
			o == "--no-undefined" || o == "--whole-archive" || o == "--no-whole-archive" || o == "--start-group" ||
			o == "--end-group" || o == "-Bstatic" || o == "-Bdynamic" || o == "-Bsymbolic" || o == "--export-dynamic" ||
			o == "-E" || o == "-s" || o == "--strip-all" || o == "-O1" || o == "--build-id" || o == "-soname" ||
			o == "--enable-new-dtags" || o == "--disable-new-dtags" || o == "-x" || o == "--hash-style=gnu" ||
			strings.HasPrefix(o, "-rpath=") || strings.HasPrefix(o, "-soname=") || strings.HasPrefix(o, "--build-id="):
		case !strings.HasPrefix(o, "-"):
			// The value of -z, -rpath or -soname (a word, not a file read
			// or written: relro, now, $ORIGIN, libx.so.1).
		default:
			return false
		}
	}
	return true
}

// makeOptions: make runs the recipes of the Makefile an allow rule was
// written for; -f, -C, -I and --eval take them from elsewhere, and a
// variable set on the command line (make test SHELL=… or CC=…, also after
// --) changes what any recipe runs. The options are read closed-world, as
// getopt_long reads them (a unique prefix of a long option is that
// option): one the table does not know is not allowed.
func (z *analyzer) makeOptions(name string, args []word, depth int) {
	refuse := func(l, why string) { z.a.refuseAllow(name + " " + clip(printable(l), 40) + " (" + why + ")") }
	// refuseUnknown: an option the table does not know, so what the
	// command writes is not modelled either (unknownOption).
	refuseUnknown := func(l, why string) {
		refuse(l, why)
		z.optionUnknown = true
	}
	options := true
	for i := 0; i < len(args); i++ {
		a := args[i]
		l := a.loose
		switch {
		case !a.known():
			z.a.refuseAllow(name + " with an argument not known until run time (it could set a variable)")
			return
		case options && l == "--":
			options = false
		case !options || !strings.HasPrefix(l, "-") || l == "-":
			// A goal, or VAR=value: make reads both even after --.
			if n, _, _ := strings.Cut(l, "="); n == "SHELL" || n == ".SHELLFLAGS" || n == "MAKESHELL" {
				// Every recipe line runs through it: a program Runs:
				// does not show.
				z.a.cannotRead(name + " " + clip(printable(l), 40) + " (the shell every recipe runs in)")
			} else if _, v, ok := strings.Cut(l, "="); ok {
				refuse(l, "a variable set on the command line changes what the recipes run")
				// CC='rm x': a recipe runs $(CC), as for the variable
				// in make's environment (programValue).
				z.programValue(word{loose: v, lit: v, ok: a.ok}, depth)
			}
		case strings.HasPrefix(l, "--"):
			n, _, eq := strings.Cut(l, "=")
			opt, kind := gnuLong(n, makeLong)
			switch kind {
			case 'v':
				if !eq {
					i++
				}
			case 'f', 'o':
				if eq && kind == 'f' {
					refuseUnknown(l, "an option the policy does not know")
					return
				}
			default:
				if opt == "" {
					refuseUnknown(l, "an option the policy does not know")
				} else {
					refuse(l, "it takes the recipes from elsewhere")
				}
				return
			}
		default:
			for k := 1; k < len(l); k++ {
				c := l[k]
				switch {
				case strings.IndexByte("BLehiknrRSpwqstvd", c) >= 0:
				case c == 'j' || c == 'l' || c == 'O':
					k = len(l) // an optional value, glued
				case c == 'o' || c == 'W':
					if k == len(l)-1 {
						i++
					}
					k = len(l)
				case c == 'f' || c == 'C' || c == 'I' || c == 'E':
					refuse(l, "it takes the recipes from elsewhere")
					return
				default:
					refuseUnknown(l, "an option the policy does not know")
					return
				}
			}
		}
	}
}

// makeLong is GNU make's long options: 'f' a flag, 'o' an optional value
// (only after =), 'v' a value (after = or in the next word), 'x' one that
// takes the recipes or variables from elsewhere.
var makeLong = map[string]byte{
	"--always-make": 'f', "--check-symlink-times": 'f', "--environment-overrides": 'f', "--help": 'f',
	"--ignore-errors": 'f', "--keep-going": 'f', "--just-print": 'f', "--dry-run": 'f', "--recon": 'f',
	"--no-builtin-rules": 'f', "--no-builtin-variables": 'f', "--no-keep-going": 'f', "--stop": 'f',
	"--no-print-directory": 'f', "--no-silent": 'f', "--print-data-base": 'f', "--print-directory": 'f',
	"--question": 'f', "--silent": 'f', "--quiet": 'f', "--touch": 'f', "--trace": 'f', "--version": 'f',
	"--warn-undefined-variables": 'f',
	"--debug":                    'o', "--jobs": 'o', "--load-average": 'o', "--max-load": 'o', "--output-sync": 'o', "--shuffle": 'o',
	"--jobserver-auth": 'v', "--jobserver-style": 'v', "--old-file": 'v', "--assume-old": 'v', "--new-file": 'v',
	"--assume-new": 'v', "--what-if": 'v',
	"--file": 'x', "--makefile": 'x', "--directory": 'x', "--include-dir": 'x', "--eval": 'x',
}

// gnuLong finds the long option n (without its =value) names in table as
// getopt_long does: the option itself, or the one option n is a prefix
// of. It returns "" and 0 when the table has none, or several.
func gnuLong(n string, table map[string]byte) (string, byte) {
	if k, ok := table[n]; ok {
		return n, k
	}
	found, kind := "", byte(0)
	for o, k := range table {
		if len(n) > 2 && strings.HasPrefix(o, n) {
			if found != "" && table[found] != k {
				return "", 0
			}
			found, kind = o, k
		}
	}
	return found, kind
}

// cargoOptions: --target-dir, --artifact-dir/--out-dir and install's
// --root write; --config (target.*.runner, build.rustc-wrapper run a
// program), -Z, --manifest-path and -C take code or settings from
// elsewhere.
func (z *analyzer) cargoOptions(args []word, depth int) {
	sub, rest := runnerSub(args, nil)
	switch sub {
	case "watch":
		z.cargoWatch(rest, depth)
		return
	case "new", "init":
		// cargo new PATH (init [PATH]) makes a package there, and a git
		// repository in it.
		for _, o := range operandsOf(rest, "", []string{"--vcs", "--name", "--edition", "--registry"}) {
			z.writeWord(o, "cargo "+sub)
		}
	}
	for _, o := range []string{"--target-dir", "--artifact-dir", "--out-dir", "--root", "--lockfile-path"} {
		for _, v := range longOptionValues(args, o, len(o)) {
			z.writeWord(v, "cargo "+o)
		}
	}
	for _, a := range args {
		l := a.loose
		if l == "--" {
			return
		}
		if longMatches(l, "--config") || longMatches(l, "--manifest-path") || l == "-Z" || strings.HasPrefix(l, "-Z") || l == "-C" {
			z.a.cannotRead("cargo " + clip(l, 40) + " (it takes settings or code from elsewhere; target.*.runner runs a program)")
			return
		}
	}
}

// cargoWatch reads cargo watch's options closed-world: -x CMD runs
// `cargo CMD` and -s CMD a shell command line, both judged as commands of
// their own; -w, -i, -d, --features, -B and -L take a value that runs
// nothing. Anything else (--use-shell, -C/--workdir, -E/--env,
// --env-file, a command after --, an option the table does not know or
// an abbreviation) is not allowed.
func (z *analyzer) cargoWatch(args []word, depth int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		l := a.loose
		if !a.known() {
			z.unknown("cargo watch with an argument not known until run time")
			return
		}
		n, v, eq := strings.Cut(l, "=")
		short := len(l) > 2 && l[0] == '-' && l[1] != '-'
		if short {
			n, v, eq = l[:2], l[2:], true
		}
		value := func() (word, bool) {
			if eq {
				return word{loose: v, lit: v, ok: a.ok}, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return word{}, false
		}
		switch n {
		case "-c", "--clear", "--debug", "--why", "-q", "--quiet", "--postpone", "--poll", "--no-restart", "--no-vcs-ignores",
			"--no-dot-ignores", "--ignore-nothing", "--no-process-group", "--skip-local-deps", "-N", "--notify", "-h", "--help",
			"-V", "--version", "--no-gitignore", "--no-ignore":
			if eq && !short || short && strings.Trim(v, "cqNhV") != "" {
				z.unknownOption("cargo watch " + clip(printable(l), 40) + " (an option the policy does not know)")
				return
			}
		case "-w", "--watch", "-i", "--ignore", "-d", "--delay", "--features", "-B", "-L", "--watch-when-idle", "-W":
			value()
		case "-x", "--exec":
			if w, ok := value(); ok {
				in := scriptOf(word{loose: "cargo " + w.loose, lit: "cargo " + w.lit, ok: w.ok})
				if in.scriptUnknown || !w.known() {
					z.unknown("cargo watch -x with a command that is not literal")
					continue
				}
				z.script(in.script, depth+1, false)
			}
		case "-s", "--shell":
			if w, ok := value(); ok {
				in := scriptOf(w)
				if in.scriptUnknown {
					z.unknown("cargo watch -s with a command that is not literal")
					continue
				}
				z.script(in.script, depth+1, false)
			}
		default:
			z.a.cannotRead("cargo watch " + clip(printable(l), 40) + " (it runs a command, changes where or with what environment, or is an option the policy does not know)")
			return
		}
	}
}

// pipOptions: the directories and files pip writes (--target, --prefix,
// --root, --src, --log, --cache-dir, --dest, --wheel-dir, --report), and
// the indexes it takes packages from.
func (z *analyzer) pipOptions(name string, args []word) {
	for _, o := range []string{"--target", "--prefix", "--root", "--src", "--log", "--log-file", "--cache-dir", "--dest",
		"--wheel-dir", "--report"} {
		for _, v := range longOptionValues(args, o, len(o)) {
			z.writeWord(v, name+" "+o)
		}
	}
	for _, want := range []byte{'t', 'd', 'w'} {
		for _, v := range shortOptionValues(args, "rcteifdwC", want) {
			z.writeWord(v, name+" -"+string(want))
		}
	}
	if name != "uv" {
		for _, v := range longOptionValues(args, "--output", 5) {
			z.writeWord(v, name+" lock --output") // pip lock -o FILE
		}
		for _, v := range shortOptionValues(args, "rcteifdwCo", 'o') {
			z.writeWord(v, name+" lock -o")
		}
		for _, a := range args {
			if l := a.loose; l == "--" {
				break
			} else if n, _, _ := strings.Cut(l, "="); len(n) >= 4 && strings.HasPrefix("--python", n) ||
				len(n) >= 6 && strings.HasPrefix("--keyring-provider", n) {
				// pip --python runs pip under that interpreter; the keyring
				// provider "subprocess" runs the keyring program.
				z.a.cannotRead(name + " " + clip(l, 40) + " (it runs another program)")
			}
		}
		sub, rest := runnerSub(args, func(o string) bool { return pipValued(o) })
		verb, _ := runnerSub(rest, func(o string) bool { return pipValued(o) })
		switch {
		case sub == "config" && verb != "list" && verb != "get" && verb != "debug":
			// set/unset change pip.conf (index-url, target: what later
			// installs fetch and where they write); edit runs an editor.
			z.a.refuseAllow(name + " config " + clip(printable(verb), 20) + " (it changes pip's configuration or runs an editor)")
		case sub == "uninstall" || sub == "cache" && verb != "dir" && verb != "info" && verb != "list":
			z.a.refuseAllow(name + " " + sub + " deletes files outside the workspace")
		}
	}
	for _, a := range args {
		l := a.loose
		if l == "-i" || strings.HasPrefix(l, "-i") && !strings.HasPrefix(l, "--") || longMatches(l, "--index-url") ||
			longMatches(l, "--extra-index-url") || l == "-f" || longMatches(l, "--find-links") || longMatches(l, "--trusted-host") {
			z.a.refuseAllow(name + " " + clip(l, 40) + " (it takes packages from another index)")
			return
		}
	}
}

// gitConfigWrites: git config that sets, adds, unsets or edits writes the
// repository's configuration (or --global's, --file's), and configuration
// runs code (core.pager, core.fsmonitor, alias.*): never allowed by rules.
// Reading (--get, --list, get, list, one key alone) is not a write.
func (z *analyzer) gitConfigWrites(args []word) {
	sub, rest := runnerSub(args, func(o string) bool { return takesValue("git", o) })
	if sub != "config" {
		return
	}
	ops := 0
	for i := 0; i < len(rest); i++ {
		l := rest[i].loose
		switch {
		case l == "--get" || l == "--get-all" || l == "--get-regexp" || l == "--list" || l == "-l" || l == "--get-urlmatch" ||
			l == "--get-color" || l == "--get-colorbool" || l == "--show-origin" && ops == 0 && len(rest) == 1:
			return
		case l == "--file" || l == "-f" || l == "--blob" || l == "--type" || l == "--default" || l == "--comment":
			i++
		case strings.HasPrefix(l, "-"):
		case ops == 0 && (l == "get" || l == "list"):
			return
		default:
			ops++
		}
	}
	if ops >= 2 || hasLong(rest, "--add") || hasLong(rest, "--replace-all") || hasLong(rest, "--unset") || hasLong(rest, "--unset-all") ||
		hasLong(rest, "--edit") || hasLong(rest, "--rename-section") || hasLong(rest, "--remove-section") || hasShort(rest, 'e') ||
		len(rest) > 0 && (rest[0].loose == "set" || rest[0].loose == "unset" || rest[0].loose == "edit" || rest[0].loose == "rename-section" ||
			rest[0].loose == "remove-section") {
		z.a.refuseAllow("git config writes git's configuration (core.pager, core.fsmonitor, alias.* run code)")
		for _, v := range append(shortOptionValues(rest, "f", 'f'), longOptionValues(rest, "--file", 6)...) {
			z.writeWord(v, "git config --file")
		}
	}
}

func hasShort(args []word, c byte) bool {
	for _, a := range args {
		l := a.loose
		if len(l) == 2 && l[0] == '-' && l[1] == c {
			return true
		}
	}
	return false
}

// awkOptions: gawk -i inplace (--include=inplace) rewrites its file
// operands, with inplace::suffix (INPLACE_SUFFIX) backups beside them;
// other -i/--include and -f/-E files, -l/--load (a shared object) are code
// from elsewhere; a program calling system(), piping (|) or redirecting
// print output runs commands or writes files nobody placed.
func (z *analyzer) awkOptions(name string, args []word) {
	inPlace, haveProgram := false, false
	var program string
	var files []word
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		value := func(opt string) string {
			if v, ok := strings.CutPrefix(l, opt+"="); ok {
				return v
			}
			if len(l) > len(opt) && !strings.HasPrefix(opt, "--") {
				return l[len(opt):]
			}
			if i+1 < len(args) {
				i++
				return args[i].loose
			}
			return ""
		}
		switch {
		case l == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(l, "--include") || strings.HasPrefix(l, "-i"):
			opt := "-i"
			if strings.HasPrefix(l, "--") {
				opt = "--include"
			}
			if v := value(opt); v == "inplace" || v == "inplace.awk" {
				inPlace = true
			} else {
				z.a.cannotRead(name + " includes awk source from a file (" + clip(v, 40) + ")")
			}
		case strings.HasPrefix(l, "-f") || strings.HasPrefix(l, "-E") || strings.HasPrefix(l, "--file") || strings.HasPrefix(l, "--exec") ||
			strings.HasPrefix(l, "-l") || strings.HasPrefix(l, "--load"):
			z.a.cannotRead(name + " " + clip(l, 40) + " (it runs code from a file)")
			haveProgram = true
			if !strings.Contains(l, "=") && len(l) == 2 {
				i++
			}
		case strings.HasPrefix(l, "-e") || strings.HasPrefix(l, "--source"):
			opt := "-e"
			if strings.HasPrefix(l, "--") {
				opt = "--source"
			}
			program += "\n" + value(opt)
			haveProgram = true
		case l == "-v" || l == "--assign" || l == "-F" || l == "--field-separator":
			i++
		case strings.HasPrefix(l, "-v") || strings.HasPrefix(l, "-F") || strings.HasPrefix(l, "--assign=") ||
			strings.HasPrefix(l, "--field-separator="):
		case l == "-W" && i+1 < len(args):
			i++
			haveProgram = z.awkW(name, args[i].loose) || haveProgram
		case strings.HasPrefix(l, "-W"):
			haveProgram = z.awkW(name, l[2:]) || haveProgram
		case strings.HasPrefix(l, "--"):
			z.awkLong(name, l)
		case strings.HasPrefix(l, "-"):
			haveProgram = z.awkCluster(name, l) || haveProgram
		case !haveProgram:
			program = l
			if !args[i].known() {
				program = anyText
			}
			haveProgram = true
		default:
			files = append(files, args[i])
		}
	}
	if strings.Contains(program, anyText) {
		z.a.cannotRead(name + " program that is not literal")
	} else if strings.Contains(program, "system") || strings.Contains(program, "|") || awkRedirects(program) {
		z.a.cannotRead(name + " program that runs commands or writes files (system, |, print >)")
	} else {
		z.awkReads(name, program)
	}
	if inPlace {
		for _, f := range files {
			if !strings.Contains(f.loose, "=") {
				z.writeWord(f, name+" -i inplace")
			}
		}
	}
}

// awkReads records the files an awk program opens itself: getline < FILE
// reads FILE (awk 'BEGIN{while ((getline l < ".env") > 0) print l}'
// printed .env past a read_file deny rule), and a program that sets ARGV
// or ARGC chooses its file operands at run time (BEGIN{ARGV[1]=".env";
// ARGC=2} reads .env). A literal FILE is a read of that name; a FILE built
// at run time, or operands set by the program, are reads the policy cannot
// judge.
func (z *analyzer) awkReads(name, program string) {
	if awkNames(program, "ARGV") || awkNames(program, "ARGC") {
		z.a.unjudgedRead(name + " program that sets its file operands (ARGV)")
	}
	for rest := program; ; {
		i := strings.Index(rest, "getline")
		if i < 0 {
			return
		}
		rest = rest[i+len("getline"):]
		// The redirection belongs to this getline if it comes before the
		// expression ends: getline [VAR] < FILE.
		end := strings.IndexAny(rest, ";}\n)|&")
		if end < 0 {
			end = len(rest)
		}
		lt := strings.IndexByte(rest[:end], '<')
		if lt < 0 {
			continue
		}
		if f, after, ok := awkString(rest[lt+1:]); ok && awkExprEnds(after) {
			z.mention(f)
			continue
		}
		z.a.unjudgedRead(name + " getline reads a file the program names at run time")
	}
}

// awkNames reports whether the awk program uses the identifier id.
func awkNames(program, id string) bool {
	for i := strings.Index(program, id); i >= 0; {
		before, after := i == 0 || !isWordByte(program[i-1]), i+len(id) >= len(program) || !isWordByte(program[i+len(id)])
		if before && after {
			return true
		}
		j := strings.Index(program[i+1:], id)
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// awkString is the string literal s starts with (after blanks and
// parentheses), unescaped, and what follows it.
func awkString(s string) (lit, after string, ok bool) {
	s = strings.TrimLeft(s, " \t(")
	if !strings.HasPrefix(s, `"`) {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", false
}

// awkExprEnds reports whether the expression ends where s starts: a
// string followed by another operand ("a" "b", "a" x) is concatenated.
func awkExprEnds(s string) bool {
	s = strings.TrimLeft(s, " \t)")
	return s == "" || strings.ContainsRune(";}\n>=!<&|?:,", rune(s[0]))
}

// awkRedirects reports print or printf output sent to a file (> or >>).
func awkRedirects(program string) bool {
	for _, kw := range []string{"print", "printf"} {
		for rest := program; ; {
			i := strings.Index(rest, kw)
			if i < 0 {
				break
			}
			rest = rest[i+len(kw):]
			stmt := rest
			if j := strings.IndexAny(stmt, ";}\n"); j >= 0 {
				stmt = stmt[:j]
			}
			if strings.Contains(stmt, ">") {
				return true
			}
		}
	}
	return false
}

// perlInPlace: perl -i[SUFFIX] rewrites its file operands; the suffix
// names backups as sed's does ('*' is the file's name).
func (z *analyzer) perlInPlace(args []word) {
	var suffixes []word
	inPlace := false
	var files []word
	script := false
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case len(l) > 1 && l[0] == '-' && l[1] != '-':
			for k := 1; k < len(l); k++ {
				c := l[k]
				if c == 'i' {
					inPlace = true
					if k+1 < len(l) {
						suffixes = append(suffixes, word{loose: l[k+1:], lit: l[k+1:], ok: args[i].ok})
					}
					break
				}
				if c == 'e' || c == 'E' {
					script = true
					if k+1 == len(l) {
						i++
					}
					break
				}
				if strings.IndexByte("IMmdDlx0C", c) >= 0 {
					break // the rest of the word is its value
				}
			}
		case !script:
			script = true // the program file
		default:
			files = append(files, args[i])
		}
	}
	if !inPlace {
		return
	}
	for _, f := range files {
		z.writeWord(f, "perl -i")
		for _, s := range suffixes {
			z.sedBackup("perl", f, s)
		}
	}
}

// gitDryRun reports git's -n (--dry-run) among args, before "--".
func gitDryRun(args []word) bool {
	for _, a := range args {
		l := a.loose
		if l == "--" {
			return false
		}
		if l == "--dry-run" || len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.ContainsRune(l, 'n') {
			return true
		}
	}
	return false
}

// gitRestoredPaths records the files git checkout and git restore write
// back from a commit or the index: git checkout HEAD~1 -- .husky/pre-commit
// and git restore --source=HEAD~1 .claude/settings.json rewrote a hook
// and an agent's settings in mode full, where git checkout-index of the
// same path asked. git restore writes its paths unless only --staged is
// given; git checkout writes every path after --, and without -- every
// operand after the first (which may be a commit); a lone operand may be
// a branch or a path, and is judged as a path only where a write there
// would ask in every mode (a settings file, a Makefile, .git), so that
// git checkout main stays what it was.
func (z *analyzer) gitRestoredPaths(sub string, rest []word) {
	valued, long := "bBsU", []string{"--source", "--conflict", "--orig", "--pathspec-from-file"}
	if sub == "checkout" {
		valued, long = "bBU", []string{"--conflict", "--orphan", "--track", "--pathspec-from-file"}
	}
	staged, worktree := false, false
	dashes := -1
	for i, a := range rest {
		l := a.loose
		if l == "--" {
			dashes = i
			break
		}
		staged = staged || longMatches(l, "--staged") || len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.ContainsRune(shortCluster(l, valued), 'S')
		worktree = worktree || longMatches(l, "--worktree") || len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.ContainsRune(shortCluster(l, valued), 'W')
	}
	if sub == "restore" && staged && !worktree {
		return // the index only
	}
	ops := operandsOf(rest, valued, long)
	switch {
	case len(ops) == 0:
		return // git checkout alone: nothing named
	case sub == "restore", dashes >= 0 && sub == "checkout" && !slices.ContainsFunc(rest[:dashes], func(w word) bool { return !strings.HasPrefix(w.loose, "-") }):
		// Every operand is a path: git restore's, and git checkout -- P.
	case dashes >= 0:
		// git checkout REV -- P…: the first operand is the commit.
		ops = ops[1:]
	case len(ops) == 1:
		if w := ops[0]; !w.ok || z.configPath(w.lit) != "" {
			z.writeWord(w, "git "+sub)
		}
		return // a branch or commit checked out: gitWritesWorkTree
	default:
		ops = ops[1:]
	}
	for _, o := range ops {
		z.treeWrite(o, "git "+sub) // a directory's tracked files, restored
	}
}

// pagerOptions: options naming a program a tool runs to page or edit
// (--pager=CMD for git, bat, delta, mysql, gh; man -P CMD; --editor=CMD)
// are analysed as command lines, which rules judge like any other.
func (z *analyzer) pagerOptions(name string, args []word, depth int) {
	var vals []word
	for _, o := range []string{"--pager", "--editor", "--browser", "--diff-program", "--diff-cmd", "--merge-program"} {
		vals = append(vals, longOptionValues(args, o, len(o))...)
	}
	if name == "man" {
		vals = append(vals, shortOptionValues(args, "CPMmLSeEpRrIk", 'P')...)
		vals = append(vals, shortOptionValues(args, "CPMmLSeEpRrIk", 'H')...)
	}
	for _, v := range vals {
		if strings.HasPrefix(v.loose, "-") {
			continue // a flag of its own (gh pr create --editor --title x)
		}
		// The program is judged as a command of its own: allow rules
		// must cover it too, and deny rules see it.
		in := scriptOf(v)
		if in.scriptUnknown {
			z.unknown("a pager or editor that is not literal")
			continue
		}
		z.script(in.script, depth+1, false)
	}
}

// gitSubcommandWrites: git archive -o, bundle create FILE, worktree add
// PATH, clone and init (the new repository; --template copies hooks,
// -c/--config sets configuration that runs code), checkout-index
// --prefix, apply and am (the files a patch names), and grep -O (a pager
// command).
func (z *analyzer) gitSubcommandWrites(args []word, depth int) {
	sub, rest := runnerSub(args, func(o string) bool { return takesValue("git", o) || o == "-c" })
	// The work tree: checkout, reset, merge and stash write the tracked
	// files there (GIT_WORK_TREE is writtenVariable). Judged after
	// gitRepository, which asks whether the command wrote there before.
	workTrees := longOptionValues(args[:len(args)-len(rest)], "--work-tree", len("--work-tree"))
	writesTree := gitWritesWorkTree(sub, rest)
	for _, v := range workTrees {
		if writesTree || sub == "checkout" || sub == "restore" || sub == "apply" || sub == "am" || sub == "checkout-index" {
			z.treeWrite(v, "git --work-tree")
		} else {
			z.writeWord(v, "git --work-tree")
		}
	}
	if len(workTrees) == 0 && writesTree {
		z.workTreeWrite("git " + sub)
	}
	switch sub {
	case "archive":
		for _, v := range shortOptionValues(rest, "o", 'o') {
			z.writeWord(v, "git archive -o")
		}
		// --remote runs git-upload-archive for that repository: a local
		// one with its own configuration, ext:: a command line.
		for _, v := range longOptionValues(rest, "--remote", 5) {
			z.gitRemoteAs(v, "git archive --remote")
		}
	case "bundle":
		if ops := operands(rest); len(ops) >= 2 && ops[0].loose == "create" {
			z.writeWord(ops[1], "git bundle create")
		}
	case "worktree":
		ops := operandsOf(rest, "bB", []string{"--reason", "--orphan"})
		verb := ""
		if len(ops) > 0 {
			verb = ops[0].loose
		}
		switch verb {
		case "add":
			if len(ops) >= 2 {
				z.treeWrite(ops[1], "git worktree add")
			}
		case "remove":
			// The worktree's files go, untracked ones too with --force.
			for _, o := range ops[1:] {
				z.deletes(o, "git worktree remove", false)
				z.writeWord(o, "git worktree remove")
			}
		case "move":
			if len(ops) >= 3 {
				z.deletes(ops[1], "git worktree move", false)
				z.writeWord(ops[1], "git worktree move")
				z.writeWord(ops[2], "git worktree move")
			}
		case "list", "prune", "lock", "unlock":
		default:
			// repair rewrites the .git file of the paths it is given, and
			// a verb the policy does not know is not read either.
			z.a.refuseAllow("git worktree " + clip(printable(verb), 30) + " (it writes files the policy does not place)")
		}
	case "clone", "init":
		for _, a := range rest {
			if longMatches(a.loose, "--template") || a.loose == "-c" || strings.HasPrefix(a.loose, "-c") && !strings.HasPrefix(a.loose, "--") ||
				longMatches(a.loose, "--config") || longMatches(a.loose, "--upload-pack") || a.loose == "-u" {
				z.a.cannotRead("git " + sub + " " + clip(a.loose, 40) + " (hooks or configuration that run code)")
			}
		}
		for _, v := range longOptionValues(rest, "--separate-git-dir", 5) {
			z.treeWrite(v, "git "+sub+" --separate-git-dir") // the repository's files, by git's names
		}
		ops := operandsOf(rest, "bcjoOu", []string{"--branch", "--config", "--depth", "--origin", "--upload-pack",
			"--reference", "--reference-if-able", "--separate-git-dir", "--template", "--jobs", "--filter", "--shallow-since",
			"--shallow-exclude", "--server-option", "--bundle-uri", "--ref-format", "--object-format", "--initial-branch",
			"--shared", "--revision"})
		n := 1 // clone URL DIR; init DIR
		if sub == "init" {
			n = 0
			if len(ops) == 0 {
				// git init makes .git where it runs: git -C .git/hooks
				// init writes in the hooks.
				z.treeWrite(word{loose: ".", lit: ".", ok: true}, "git init")
			}
		}
		if sub == "clone" && len(ops) > 0 {
			// ext:: runs its command line; NAME::URL runs git-remote-NAME.
			if l := ops[0].loose; !ops[0].known() || strings.Contains(l, "::") {
				z.gitRemoteAs(ops[0], "git clone")
			}
		}
		if len(ops) > n {
			// clone: the repository's files; init: .git and what its
			// template (init.templateDir, a configuration's) holds.
			z.treeWrite(ops[n], "git "+sub)
		} else if sub == "clone" && len(ops) == 1 {
			if u := strings.TrimSuffix(strings.TrimSuffix(ops[0].loose, "/"), ".git"); u != "" {
				base := path.Base(strings.ReplaceAll(u, ":", "/"))
				z.treeWrite(word{loose: base, lit: base, ok: ops[0].ok}, "git clone")
			}
		}
	case "remote":
		// git remote add NAME URL, set-url NAME URL: a URL on this machine
		// (a path, file://, a remote helper) makes every later
		// `git push NAME` run that repository's hooks or the helper's
		// command (see gitremote.go), the person's own in their terminal
		// too, outside the policy and the OS bound: a config write that
		// runs code, a danger as git config's are.
		ops := operandsOf(rest, "tm", []string{"--track", "--master"})
		if len(ops) >= 3 && (ops[0].loose == "add" || ops[0].loose == "set-url") {
			for _, u := range ops[2:] {
				l := u.loose
				// A word with no scheme, colon or slash is a path too
				// (git remote add r r; git push r pushes to ./r).
				if !u.known() || strings.Contains(l, "::") || strings.HasPrefix(strings.ToLower(l), "file:") ||
					!gitNetworkURL(l) {
					z.a.danger("git remote " + ops[0].loose + " to " + clip(printable(l), 60) + " (a repository on this machine, or a helper's command, runs on every later push or fetch)")
				}
			}
		}
		if len(ops) > 0 && ops[0].loose == "add" && hasLong(rest, "--mirror") {
			// remote.NAME.mirror: a later git push NAME force-pushes and
			// deletes every ref, which no push check sees.
			z.a.refuseAllow("git remote add --mirror (a later push to it mirrors: force and delete)")
		}
		if len(ops) > 0 && (ops[0].loose == "show" || ops[0].loose == "update" || ops[0].loose == "prune") {
			for _, u := range ops[1:] {
				if !u.known() || strings.Contains(u.loose, "::") {
					z.gitRemoteAs(u, "git remote "+ops[0].loose)
				}
			}
		}
	case "checkout", "restore":
		z.gitRestoredPaths(sub, rest)
	case "mv":
		// git mv SRC… DEST renames in the working tree as mv does: DEST
		// is written and each SRC goes.
		z.copyDestination("mv", rest, z.writeWord)
		if ops := operandsOf(rest, "", nil); len(ops) > 1 {
			for _, o := range ops[:len(ops)-1] {
				z.deletes(o, "git mv", false)
			}
		}
	case "rm":
		// git rm deletes its paths from the working tree too, unless
		// --cached (the index only) or -n.
		if !gitDryRun(rest) && !hasLong(rest, "--cached") {
			z.tree, z.treeHere = hasFlag(rest, 'r', 'r', "-r"), true
			for _, o := range operandsOf(rest, "", []string{"--pathspec-from-file"}) {
				z.deletes(o, "git rm", false)
			}
			z.tree, z.treeHere = false, false
		}
	case "clean":
		// git clean deletes the untracked files it finds (with -x the
		// ignored ones too: .env, build output), which no name shows.
		if !gitDryRun(rest) {
			z.a.danger("git clean deletes the untracked files it finds, which the policy does not name")
		}
	case "checkout-index":
		prefixes := longOptionValues(rest, "--prefix", 5)
		for _, v := range prefixes {
			// The files the index names, under the prefix: a directory
			// with a trailing slash, else a name's start (--prefix=out/x-
			// writes out/x-src/main.go), judged as its directory's tree.
			if v.ok && !strings.HasSuffix(v.lit, "/") {
				d := path.Dir(v.lit)
				v = word{loose: d, lit: d, ok: true}
			}
			z.treeWrite(v, "git checkout-index --prefix")
		}
		all := false
		for _, a := range rest {
			l := a.loose
			if l == "--" {
				break
			}
			if longMatches(l, "--all") || longMatches(l, "--stdin") || longMatches(l, "--temp") ||
				len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.ContainsRune(l, 'a') {
				all = true
			}
		}
		if len(prefixes) == 0 {
			// The files go to the working tree, over the ones there with -f.
			if all {
				// Every file the index names, anywhere in the work
				// tree (--temp: .merge_file_* where git runs): judged
				// as the workspace written, as git checkout -- . is.
				z.a.refuseAllow("git checkout-index -a, --stdin or --temp writes files the index names, which the policy does not place")
				z.treeWrite(word{loose: ".", lit: ".", ok: true}, "git checkout-index")
			}
			for _, o := range operandsOf(rest, "", []string{"--prefix", "--stage"}) {
				z.writeWord(o, "git checkout-index")
			}
		} else {
			for _, p := range prefixes {
				for _, o := range operandsOf(rest, "", []string{"--prefix", "--stage"}) {
					n := p.loose + o.loose
					z.writeWord(word{loose: n, lit: n, ok: p.ok && o.ok}, "git checkout-index --prefix")
				}
			}
		}
	case "apply", "am":
		// --build-fake-ancestor=FILE writes an index file there, even
		// with --check.
		for _, v := range longOptionValues(rest, "--build-fake-ancestor", 9) {
			z.writeWord(v, "git apply --build-fake-ancestor")
		}
		if sub == "apply" && gitApplyReadOnly(rest) {
			return
		}
		z.a.refuseAllow("git " + sub + " writes the files its patch names")
		if len(workTrees) == 0 && !(sub == "apply" && hasLong(rest, "--cached")) {
			z.workTreeWrite("git " + sub)
		}
	case "grep":
		for _, a := range rest {
			l := a.loose
			if l == "--" {
				break
			}
			cmd, has, ok := gitGrepPager(l)
			if !ok {
				continue
			}
			if !has {
				// No value: the configured pager (core.pager, $GIT_PAGER,
				// $PAGER), a program the rules do not see.
				z.a.refuseAllow("git grep -O opens the files in the configured pager")
				continue
			}
			if !a.known() {
				z.unknown("git grep -O with a pager that is not literal")
				continue
			}
			z.script(cmd, depth+1, false)
			// The pager also gets the matching files' names, which the
			// rules never see (a file named --output=… is an option to it).
			z.a.refuseAllow("git grep -O hands the matching file names to " + clip(cmd, 40))
		}
	}
}

// gitGrepPager reads one word of git grep's options for -O
// (--open-files-in-pager, whose value is optional and glued): in a short
// cluster (-nO./evil), or abbreviated (--open=./evil, git takes any
// unique prefix). ok reports the option; has whether a command follows.
func gitGrepPager(l string) (cmd string, has, ok bool) {
	if strings.HasPrefix(l, "--") {
		n, v, eq := strings.Cut(l, "=")
		if len(n) >= 4 && strings.HasPrefix("--open-files-in-pager", n) {
			return v, eq, true
		}
		return "", false, false
	}
	if len(l) < 2 || l[0] != '-' {
		return "", false, false
	}
	for i := 1; i < len(l); i++ {
		switch c := l[i]; {
		case c == 'O':
			return l[i+1:], i+1 < len(l), true
		case strings.IndexByte("efABCm", c) >= 0:
			return "", false, false // the rest is that option's value
		}
	}
	return "", false, false
}

// gitWritesWorkTree reports whether git sub writes the work tree's
// tracked files from commits, a stash or the index, by names no word of
// the line gives: checkout BRANCH, switch, reset --hard, merge, pull,
// rebase, cherry-pick, revert, stash (save, pop, apply), read-tree -u,
// sparse-checkout. The paths checkout and restore are given are
// gitRestoredPaths'; apply and am are judged with their patch.
func gitWritesWorkTree(sub string, rest []word) bool {
	switch sub {
	case "switch", "merge", "pull", "rebase", "cherry-pick", "revert":
		return true
	case "checkout":
		// One operand and no "--": a branch or commit checked out (or a
		// path, which gitRestoredPaths judges too).
		ops := operandsOf(rest, "bBU", []string{"--conflict", "--orphan", "--track", "--pathspec-from-file"})
		return len(ops) == 1 && !slices.ContainsFunc(rest, func(w word) bool { return w.loose == "--" })
	case "reset":
		return hasLong(rest, "--hard") || hasLong(rest, "--merge") || hasLong(rest, "--keep")
	case "stash":
		ops := operands(rest)
		if len(ops) == 0 {
			return true // git stash: push
		}
		switch ops[0].loose {
		case "list", "show", "drop", "clear", "create", "store":
			return false
		}
		return true
	case "read-tree":
		return hasFlag(rest, 'u', 'u', "-u")
	case "sparse-checkout":
		ops := operands(rest)
		return len(ops) == 0 || ops[0].loose != "list"
	}
	return false
}

// workTreeWrite records the work tree as written by what git sub is
// (gitWritesWorkTree): implied, so an allow rule for the command needs no
// write_file rule beside it, and a tree, so the write_file deny and ask
// rules that may name a tracked file apply (a deny on **/.env meets git
// checkout main). It is the repository's top, not the directory git
// runs in: the workspace's, for a directory below it.
func (z *analyzer) workTreeWrite(how string) {
	dir := "."
	if z.cwd != "" && z.cwd != z.workspace && within(z.cwd, z.workspace) {
		dir = z.workspace
	}
	z.implied, z.tree = true, true
	z.write(dir, how)
	z.implied, z.tree = false, false
}

// gitApplyReadOnly reports a git apply that only reads its patch: --check,
// --stat, --numstat or --summary without --apply, and every other option
// one the policy knows writes nothing (--build-fake-ancestor writes an
// index file even then). Abbreviations and unknown options are not read.
func gitApplyReadOnly(args []word) bool {
	readOnly := false
	for _, a := range args {
		l := a.loose
		if l == "--" {
			break
		}
		if !a.known() {
			return false
		}
		if !strings.HasPrefix(l, "-") || l == "-" {
			continue
		}
		n, _, _ := strings.Cut(l, "=")
		switch n {
		case "--check", "--stat", "--numstat", "--summary":
			readOnly = true
		case "-R", "--reverse", "-z", "--exclude", "--include", "--unidiff-zero", "--allow-empty", "--ignore-whitespace",
			"--ignore-space-change", "--whitespace", "-v", "--verbose", "-q", "--quiet", "--recount", "--inaccurate-eof",
			"--no-add", "--directory", "--index", "--cached", "--intent-to-add", "-N", "-3", "--3way", "--allow-binary-replacement",
			"--binary", "--reject", "--no-reject":
		default:
			if (strings.HasPrefix(n, "-p") || strings.HasPrefix(n, "-C")) && strings.Trim(n[2:], "0123456789") == "" {
				continue
			}
			return false
		}
	}
	return readOnly
}

// containerOptions: docker build -o/--output (a directory, or dest= of a
// local exporter), save and export -o, cp to a local path; -H/--host,
// --context and --config (whose credential helpers are programs) point
// docker elsewhere.
func (z *analyzer) containerOptions(name string, args []word) {
	for _, a := range args {
		l := a.loose
		if l == "--" {
			break
		}
		if l == "-H" || strings.HasPrefix(l, "-H") && !strings.HasPrefix(l, "--") || longMatches(l, "--host") ||
			longMatches(l, "--context") || longMatches(l, "--config") || longMatches(l, "--url") || longMatches(l, "--connection") {
			z.a.refuseAllow(name + " " + clip(l, 40) + " (another daemon, or a configuration whose helpers are programs)")
			break
		}
	}
	sub, rest := runnerSub(args, func(o string) bool { return takesValue("docker", o) })
	if sub == "buildx" || sub == "image" || sub == "container" || sub == "builder" {
		sub, rest = runnerSub(rest, nil)
	}
	switch sub {
	case "build", "save", "export":
		outs := append(shortOptionValues(rest, "otfm", 'o'), longOptionValues(rest, "--output", 8)...)
		for _, v := range outs {
			if v.loose == "-" {
				continue
			}
			dest := v
			if strings.Contains(v.loose, "=") {
				dest = word{}
				for _, kv := range strings.Split(v.loose, ",") {
					if d, ok := strings.CutPrefix(kv, "dest="); ok {
						dest = word{loose: d, lit: d, ok: v.ok}
					}
				}
				if dest.loose == "" {
					continue // type=registry, type=image: nothing local
				}
			}
			z.writeWord(dest, name+" "+sub+" --output")
		}
		if sub == "build" {
			for _, o := range []string{"--iidfile", "--metadata-file"} {
				for _, v := range longOptionValues(rest, o, len(o)) {
					z.writeWord(v, name+" build "+o)
				}
			}
			for _, v := range longOptionValues(rest, "--cache-to", 10) {
				for _, kv := range strings.Split(v.loose, ",") {
					if d, ok := strings.CutPrefix(kv, "dest="); ok {
						z.writeWord(word{loose: d, lit: d, ok: v.ok}, name+" build --cache-to")
					}
				}
			}
		}
	case "cp":
		if ops := operands(rest); len(ops) == 2 && !strings.Contains(strings.SplitN(ops[1].loose, "/", 2)[0], ":") {
			z.writeWord(ops[1], name+" cp")
		}
	}
	z.dockerClosed(name, sub, rest)
}

// kubectlOptions: kubectl cp to a local path, --log-file and --log-dir,
// config set-*/use-context/delete-* (the kubeconfig), and options that
// change which cluster it talks to or as whom: --kubeconfig (its exec
// plugin is a program), --server, --token, --as, --insecure-skip-tls-verify.
func (z *analyzer) kubectlOptions(name string, args []word) {
	for _, a := range args {
		if a.loose == "--" {
			break
		}
		if why := targetOption(name, a.loose); why != "" && !longMatches(a.loose, "--log-file") && !longMatches(a.loose, "--log-dir") {
			z.a.refuseAllow(why)
			break
		}
	}
	for _, o := range []string{"--log-file", "--log-dir"} {
		for _, v := range longOptionValues(args, o, len(o)) {
			z.writeWord(v, name+" "+o)
		}
	}
	sub, rest := runnerSub(args, func(o string) bool { return takesValue("kubectl", o) })
	switch sub {
	case "cp":
		ops := operandsOf(rest, "cn", []string{"--container", "--namespace", "--retries"})
		if len(ops) == 2 && !strings.Contains(strings.SplitN(ops[1].loose, "/", 2)[0], ":") {
			z.writeWord(ops[1], name+" cp")
		}
	case "config":
		if c, _ := runnerSub(rest, nil); c != "" && c != "view" && c != "current-context" && c != "get-contexts" &&
			c != "get-clusters" && c != "get-users" {
			z.a.refuseAllow(name + " config " + clip(c, 30) + " (it rewrites the kubeconfig: where kubectl connects, and as whom)")
		}
	}
}

// compressorWrites: gzip and its kin replace each operand with a
// compressed (or, with -d, a decompressed) file: both names are writes,
// unless the output goes to stdout (-c).
func (z *analyzer) compressorWrites(name string, args []word) {
	dir, mirror := z.compressorClosed(name, args)
	suffix := map[string]string{"bzip2": ".bz2", "xz": ".xz", "zstd": ".zst", "lz4": ".lz4", "compress": ".Z", "lzma": ".lzma"}[name]
	if suffix == "" {
		suffix = ".gz"
	}
	for _, v := range append(shortOptionValues(args, "S", 'S'), longOptionValues(args, "--suffix", 5)...) {
		suffix = v.loose
	}
	for _, v := range shortOptionValues(args, "SbTo", 'o') {
		z.writeWord(v, name+" -o") // zstd -o FILE
	}
	if name == "zstd" || name == "unzstd" {
		for _, v := range longOptionValues(args, "--trace", 7) {
			z.writeWord(v, name+" --trace")
		}
	}
	for _, a := range args {
		l := a.loose
		if l == "--stdout" || l == "--to-stdout" || len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.ContainsRune(shortCluster(l, "S"), 'c') {
			return
		}
	}
	for _, f := range operandsOf(args, "SbToDMFCB", []string{"--suffix", "--threads", "--output", "--output-dir-flat", "--output-dir-mirror",
		"--memlimit", "--memory", "--format", "--level", "--block-size", "--size-hint", "--stream-size", "--priority", "--trace",
		"--patch-from", "--filelist"}) {
		z.writeWord(f, name)
		n := f.loose + suffix
		if strings.HasSuffix(f.loose, suffix) {
			n = strings.TrimSuffix(f.loose, suffix)
		}
		if n != "" {
			z.writeWord(word{loose: n, lit: n, ok: f.ok}, name)
		}
		if dir.loose != "" {
			// --output-dir-flat=.git/hooks: the output lands there.
			z.writeWord(outputIn(dir, mirror, n), name+" --output-dir")
		}
	}
}

// programOptions shows the programs that options and operands of these
// tools run as commands of their own, so allow rules must cover them and
// deny rules see them: fd -x/-X CMD…, rg --pre CMD, nc/ncat -e PROG and
// -c/--sh-exec CMDLINE, socat's EXEC: and SYSTEM: addresses, scp/sftp -S
// PROG, nodemon --exec, lftp -c/-e (its ! runs the shell), and the small
// wrappers rlwrap, ifne, chronic, ssh-agent, dbus-launch and pee.
func (z *analyzer) programOptions(name string, args []word, depth int) {
	// runs records a program run with arguments nobody knows yet (the
	// file it is given): as written, for allow rules to cover, and with an
	// unknown tail, for deny rules on its arguments to see.
	runs := func(ws []word) {
		z.command(simple{words: ws}, depth+1)
		tail := append(ws[:len(ws):len(ws)], word{loose: anyText, splat: true})
		z.command(simple{words: tail, guess: true}, depth+1)
	}
	prog := func(w word) { runs([]word{w}) }
	script := func(w word) {
		in := scriptOf(w)
		if in.scriptUnknown {
			z.unknown(name + " runs a command line that is not literal")
			return
		}
		z.script(in.script, depth+1, false)
	}
	switch name {
	case "man":
		// man -C FILE reads a man_db.conf whose DEFINEs name the pager,
		// the formatters and the browser it runs; -H without a browser
		// runs $BROWSER, -X gxditview. Their value, where they have one,
		// is read by runOptions.
		for i := 0; i < len(args); i++ {
			l := args[i].loose
			if l == "--" {
				break
			}
			n, _, _ := strings.Cut(l, "=")
			for _, o := range []string{"--config-file", "--html", "--gxditview"} {
				if len(n) >= 4 && strings.HasPrefix(o, n) {
					z.a.cannotRead("man " + o + " (it runs programs it names elsewhere)")
				}
			}
			if len(l) > 1 && l[0] == '-' && l[1] != '-' {
				for _, c := range []byte(shortCluster(l, "CMPSsemLpREr")) {
					if c == 'C' || c == 'H' || c == 'X' {
						z.a.cannotRead("man -" + string(c) + " (it runs programs it names elsewhere)")
					}
				}
			}
		}
	case "fd", "fdfind":
		for i := 0; i < len(args); i++ {
			l := args[i].loose
			if l == "--" {
				break
			}
			// -x CMD…, -xCMD…, --exec=CMD …: the command runs up to ";".
			var cmd []word
			switch n, v, eq := strings.Cut(l, "="); {
			case l == "-x" || l == "-X" || l == "--exec" || l == "--exec-batch":
			case eq && (n == "--exec" || n == "--exec-batch"):
				cmd = []word{{loose: v, lit: v, ok: args[i].ok}}
			case len(l) > 2 && l[0] == '-' && l[1] != '-' && strings.ContainsAny(l, "xX"):
				k := strings.IndexAny(l, "xX")
				if k+1 < len(l) {
					cmd = []word{{loose: l[k+1:], lit: l[k+1:], ok: args[i].ok}}
				}
			default:
				continue
			}
			{
				for i++; i < len(args) && args[i].loose != ";"; i++ {
					cmd = append(cmd, args[i])
				}
				if len(cmd) > 0 {
					runs(cmd)
				}
			}
		}
	case "rg", "ripgrep":
		// -z/--search-zip runs a decompressor for each compressed file:
		// shown as commands of their own, for the rules to judge.
		zip := len(longOptionValues(args, "--search-zip", 12)) > 0
		for _, a := range args {
			if a.loose == "--" {
				break
			}
			if l := a.loose; l == "--search-zip" || len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.ContainsRune(shortCluster(l, "ABCEefgjMmrTtd"), 'z') {
				zip = true
			}
		}
		if zip {
			for _, d := range [][]string{{"gzip", "-d", "-c"}, {"bzip2", "-d", "-c"}, {"xz", "-d", "-c"}, {"lz4", "-d", "-c"},
				{"brotli", "-d", "-c"}, {"zstd", "-q", "-d", "-c"}, {"uncompress", "-c"}} {
				var ws []word
				for _, x := range d {
					ws = append(ws, word{loose: x, lit: x, ok: true})
				}
				runs(ws)
			}
		}
		for _, v := range longOptionValues(args, "--pre", 5) {
			prog(v)
		}
		// --hostname-bin runs a program for the hyperlinks' host name.
		for _, v := range longOptionValues(args, "--hostname-bin", 14) {
			prog(v)
		}
	case "nc", "ncat", "netcat", "nc.openbsd", "nc.traditional":
		const valued = "eciIOopPqsTwWxX"
		for _, v := range append(shortOptionValues(args, valued, 'e'), longOptionValues(args, "--exec", 6)...) {
			prog(v)
		}
		for _, v := range append(shortOptionValues(args, valued, 'c'), append(longOptionValues(args, "--sh-exec", 5),
			longOptionValues(args, "--lua-exec", 5)...)...) {
			script(v)
		}
		// -o FILE writes the session (ncat, nc.traditional's hex dump);
		// ncat's -x is its hex dump too (openbsd's -x is a proxy).
		outs := append(shortOptionValues(args, valued, 'o'), append(longOptionValues(args, "--output", 5), longOptionValues(args, "--hex-dump", 5)...)...)
		if name == "ncat" {
			outs = append(outs, shortOptionValues(args, valued, 'x')...)
		}
		for _, v := range outs {
			z.writeWord(v, name+" -o")
		}
	case "sort":
		// --compress-program compresses its temporary files with PROG.
		for _, v := range longOptionValues(args, "--compress-program", 5) {
			prog(v)
		}
	case "socat":
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.known() {
				z.unknown("socat with an address not known until run time")
				continue
			}
			if l := a.loose; strings.HasPrefix(l, "-") && l != "-" {
				switch {
				case l == "-lf" || l == "-L" || l == "-W" || l == "-r" || l == "-R":
					// A log, a lock file or a dump of the data: written.
					if i++; i < len(args) {
						z.writeWord(args[i], "socat "+l)
					}
				case l == "-b" || l == "-t" || l == "-T" || l == "-lp" || l == "-S":
					i++
				case !socatFlag(l):
					z.a.cannotRead("socat option " + clip(l, 20) + " the policy does not know")
				}
				continue
			}
			for _, part := range strings.Split(a.loose, "!!") {
				kind, v, _ := strings.Cut(part, ":")
				switch kind = strings.ToUpper(strings.TrimSpace(kind)); {
				case kind == "EXEC" || kind == "SYSTEM":
					v, _, _ = strings.Cut(v, ",")
					script(word{loose: v})
				case !socatNetworkAddress(kind):
					// OPEN, CREATE, GOPEN, PIPE:name, UNIX-LISTEN, PTY,link=
					// … write files or make them; a kind the policy does
					// not know is not read either.
					z.a.cannotRead("socat address " + clip(part, 40) + " (not a network or standard stream: it may open, create or run something)")
				}
			}
		}
	case "scp", "sftp":
		valued := "cDFiJloPSX" // scp's -s is a flag (use the SFTP protocol)
		if name == "sftp" {
			valued = "BbcDFiJloPRSsX"
		}
		// -S runs its program in place of ssh, -D in place of the remote
		// sftp server.
		for _, v := range append(shortOptionValues(args, valued, 'S'), shortOptionValues(args, valued, 'D')...) {
			prog(v)
		}
		for _, v := range shortOptionValues(args, valued, 'F') {
			z.writtenConfig(v, name+" -F") // one the command wrote: unread in every mode
		}
		if len(shortOptionValues(args, valued, 'F')) > 0 {
			z.a.cannotRead(name + " -F (an ssh config the policy does not read: its ProxyCommand and LocalCommand run commands)")
		}
		if name == "sftp" && len(shortOptionValues(args, valued, 'b')) > 0 {
			z.a.cannotRead("sftp -b (a batch file the policy does not read: its ! lines run the shell)")
		}
		if ops := operandsOf(args, valued, nil); name == "sftp" && len(ops) > 0 && remotePath(ops[0].lit) != "" {
			// sftp host:FILE fetches FILE into the working directory (or
			// into the local path after it).
			dir := word{loose: ".", lit: ".", ok: true}
			if len(ops) > 1 {
				dir = ops[1]
			}
			if !ops[0].ok || !dir.ok {
				z.a.cannotRead("sftp fetches a file whose name or place the policy cannot see")
			} else {
				z.remoteSource(name, dir, ops[0])
			}
		}
		for _, v := range shortOptionValues(args, valued, 'o') {
			z.sshOption(name, v, script)
		}
	case "nodemon":
		for _, v := range append(shortOptionValues(args, "xwei", 'x'), longOptionValues(args, "--exec", 6)...) {
			script(v)
		}
		if len(longOptionValues(args, "--config", 8)) > 0 {
			// Its exec and events run commands.
			z.a.cannotRead("nodemon --config (a config the policy does not read: its exec and events run commands)")
		}
	case "lftp":
		if len(shortOptionValues(args, "cefpu", 'c'))+len(shortOptionValues(args, "cefpu", 'e'))+len(shortOptionValues(args, "cefpu", 'f')) > 0 {
			z.a.cannotRead("lftp runs commands given on the command line (! runs the shell)")
		}
		if len(longOptionValues(args, "--rcfile", 8)) > 0 {
			z.a.cannotRead("lftp --rcfile (commands the policy does not read: ! runs the shell)")
		}
	case "rlwrap", "ifne", "chronic":
		for i, a := range args {
			if !strings.HasPrefix(a.loose, "-") {
				z.command(simple{words: args[i:]}, depth+1)
				break
			}
		}
	case "pee":
		for _, a := range args {
			if !strings.HasPrefix(a.loose, "-") {
				script(a)
			}
		}
	}
}

// socatFlag reports a socat option that takes no value and writes
// nothing: -d… (debug), -D, -v, -x, -s, -u, -U, -g, -4, -6, -ly… and the
// other log destinations that are not files, -h… and -V.
func socatFlag(l string) bool {
	switch l {
	case "-D", "-v", "-x", "-s", "-u", "-U", "-g", "-4", "-6", "-ls", "-lm", "-lu", "-lh", "-V", "--experimental":
		return true
	}
	return strings.Trim(l, "d") == "-" || strings.Trim(l, "h") == "-" || strings.HasPrefix(l, "-ly") || strings.HasPrefix(l, "-lm")
}

// socatNetworkAddress reports the socat address kinds that only reach the
// network or the standard streams: the kinds a rule allowing socat may
// cover. Files, pipes, Unix sockets (a local service: docker's runs
// containers as root), terminals and programs are not among them.
func socatNetworkAddress(kind string) bool {
	switch kind {
	case "-", "STDIO", "STDIN", "STDOUT", "STDERR",
		"TCP", "TCP4", "TCP6", "TCP-CONNECT", "TCP4-CONNECT", "TCP6-CONNECT", "TCP-LISTEN", "TCP4-LISTEN", "TCP6-LISTEN", "TCP-L", "TCP4-L", "TCP6-L",
		"UDP", "UDP4", "UDP6", "UDP-CONNECT", "UDP4-CONNECT", "UDP6-CONNECT", "UDP-LISTEN", "UDP4-LISTEN", "UDP6-LISTEN",
		"UDP-SENDTO", "UDP4-SENDTO", "UDP6-SENDTO", "UDP-RECVFROM", "UDP4-RECVFROM", "UDP6-RECVFROM", "UDP-RECV", "UDP-DATAGRAM",
		"SCTP", "SCTP-CONNECT", "SCTP-LISTEN", "SCTP4-CONNECT", "SCTP6-CONNECT", "SCTP4-LISTEN", "SCTP6-LISTEN",
		"OPENSSL", "OPENSSL-CONNECT", "SSL", "OPENSSL-LISTEN", "SSL-L", "OPENSSL-DTLS-CLIENT", "OPENSSL-DTLS-SERVER",
		"PROXY", "PROXY-CONNECT", "SOCKS", "SOCKS4", "SOCKS4A", "SOCKS5", "SOCKS5-CONNECT", "SOCKS5-LISTEN":
		return true
	}
	return false
}

// sshOption judges one -o KEY=VALUE (or "KEY VALUE") that scp or sftp
// hands ssh. The keys whose value is a command line are read as scripts;
// the keys below only pick a host, a port, an identity, a cipher or a
// timeout; any other key (PKCS11Provider and SecurityKeyProvider load a
// library, Include reads another config, PermitLocalCommand arms
// LocalCommand) is one the policy does not read.
func (z *analyzer) sshOption(name string, v word, script func(word)) {
	if !v.known() {
		z.unknown(name + " -o with a value not known until run time")
		return
	}
	k, val, ok := strings.Cut(v.loose, "=")
	if !ok {
		k, val, _ = strings.Cut(strings.TrimSpace(v.loose), " ")
	}
	switch strings.ToLower(strings.TrimSpace(k)) {
	case "proxycommand", "localcommand", "knownhostscommand":
		script(word{loose: strings.TrimSpace(val)})
	case "userknownhostsfile":
		// ssh appends a new host's key (and the name it was given) there.
		for _, f := range strings.Fields(val) {
			if strings.HasPrefix(f, "~") || strings.Contains(f, "%") {
				z.a.cannotRead(name + " -o UserKnownHostsFile " + clip(f, 40) + " (ssh expands it: a file the policy cannot place)")
				continue
			}
			z.writeWord(word{loose: f, lit: f, ok: v.ok}, name+" -o UserKnownHostsFile")
		}
	case "port", "user", "hostname", "identityfile", "identitiesonly", "stricthostkeychecking",
		"globalknownhostsfile", "connecttimeout", "connectionattempts", "batchmode", "compression", "serveraliveinterval",
		"serveralivecountmax", "loglevel", "hostkeyalias", "passwordauthentication", "pubkeyauthentication",
		"preferredauthentications", "kbdinteractiveauthentication", "ciphers", "macs", "kexalgorithms", "hostkeyalgorithms",
		"pubkeyacceptedkeytypes", "pubkeyacceptedalgorithms", "addressfamily", "bindaddress", "checkhostip", "tcpkeepalive",
		"numberofpasswordprompts", "verifyhostkeydns", "updatehostkeys", "hashknownhosts", "ipqos", "rekeylimit",
		"requesttty", "sendenv", "setenv", "forwardagent", "forwardx11", "clearallforwardings", "exitonforwardfailure":
	default:
		z.a.cannotRead(name + " -o " + clip(k, 30) + " (an ssh option the policy does not know)")
	}
}
