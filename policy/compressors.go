package policy

import (
	"path"
	"strings"
)

// The compressors' closed-world option table (compressorWrites judges the
// files they replace). Before, an option the policy did not know was
// passed over, and two of them write where no operand says: zstd's
// --output-dir-flat=DIR (zstd -d --output-dir-flat=.git/hooks
// out/pre-commit.zst wrote .git/hooks/pre-commit under a rule for zstd)
// and gzip -N on decompression, which takes the name stored in the
// archive (gzip -dN out/x.gz wrote out/.env). Now an option this table
// does not know keeps allow rules off, as make's and cargo's tables do.

// compressorFlags are each family's one-letter options (flags, and the
// letters in valued take a value, glued or the next word).
var compressorFlags = map[string]struct{ flags, valued string }{
	"gzip":     {flags: "cdfhklLnNqrtvV123456789", valued: "S"},
	"bzip2":    {flags: "cdzkftsqvLV123456789"},
	"xz":       {flags: "cdztlkfqvhHVe0123456789", valued: "TMFCS"},
	"zstd":     {flags: "cdzfkqvhHVtlr0123456789", valued: "oDTMBS"},
	"lz4":      {flags: "cdzfkqvhHVtlmr0123456789", valued: "B"},
	"compress": {flags: "cdfvrV", valued: "b"},
}

// compressorLong are the long options that change nothing the policy
// judges (names written come from -o, -S/--suffix, the operands and the
// two output-dir options, read below).
var compressorLong = map[string]bool{
	"--stdout": true, "--to-stdout": true, "--decompress": true, "--uncompress": true, "--compress": true,
	"--force": true, "--keep": true, "--list": true, "--quiet": true, "--verbose": true, "--test": true,
	"--recursive": true, "--no-name": true, "--fast": true, "--best": true, "--help": true, "--version": true,
	"--license": true, "--rsyncable": true, "--sparse": true, "--no-sparse": true, "--ultra": true, "--adapt": true,
	"--rm": true, "--no-progress": true, "--progress": true, "--no-check": true, "--single-stream": true,
	"--ignore-check": true, "--synchronous": true, "--small": true, "--content-size": true,
	"--no-content-size": true, "--check": true, "--no-dictID": true, "--exclude-compressed": true,
	"--extreme": true, "--auto-threads": true, "--long": true, "--suffix": true, "--threads": true,
	"--memlimit": true, "--memory": true, "--format": true, "--level": true, "--block-size": true,
	"--size-hint": true, "--stream-size": true, "--priority": true, "--memlimit-compress": true,
	"--memlimit-decompress": true, "--output": true, "--trace": true, "--patch-from": true, "--filters": true,
	"--lzma1": true, "--lzma2": true, "--block-list": true, "--name": true, "--output-dir-flat": true,
	"--output-dir-mirror": true, "--filelist": true, "--favor-decSpeed": true, "--no-frame-crc": true, "--content-size-flag": true,
}

// compressorFamily is the table a compressor's name reads with.
func compressorFamily(name string) string {
	switch name {
	case "gzip", "gunzip":
		return "gzip"
	case "bzip2", "bunzip2":
		return "bzip2"
	case "xz", "unxz", "lzma":
		return "xz"
	case "zstd", "unzstd":
		return "zstd"
	}
	return name
}

// compressorClosed refuses allow rules for an option the table does not
// know, for gzip -N when it decompresses and for zstd --filelist (names
// nobody can read in advance), and returns the directory --output-dir-flat
// or --output-dir-mirror puts every output in ("" when neither).
func (z *analyzer) compressorClosed(name string, args []word) (dir word, mirror bool) {
	table, known := compressorFlags[compressorFamily(name)]
	decompress := strings.HasPrefix(name, "gun") || strings.HasPrefix(name, "un")
	restoresName := false
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "--":
			i = len(args)
		case strings.HasPrefix(l, "--"):
			n, _, glued := strings.Cut(l, "=")
			switch {
			case !compressorLong[n]:
				z.unknownOption(name + " " + clip(printable(n), 40) + " (an option the policy's table for " + name + " does not know)")
			case n == "--decompress" || n == "--uncompress":
				decompress = true
			case n == "--name":
				restoresName = true
			case n == "--filelist":
			case n == "--output-dir-flat" || n == "--output-dir-mirror":
				mirror = n == "--output-dir-mirror"
				switch {
				case glued:
					dir = word{loose: l[len(n)+1:], lit: strings.TrimPrefix(args[i].lit, n+"="), ok: args[i].ok}
				case i+1 < len(args):
					i++
					dir = args[i]
				}
			}
		case strings.HasPrefix(l, "-") && len(l) > 1 && known:
			for k := 1; k < len(l); k++ {
				c := l[k]
				if strings.IndexByte(table.valued, c) >= 0 {
					if k+1 == len(l) {
						i++ // the value is the next word
					}
					break
				}
				if strings.IndexByte(table.flags, c) < 0 {
					z.unknownOption(name + " -" + string(c) + " (an option the policy's table for " + name + " does not know)")
					break
				}
				switch c {
				case 'd':
					decompress = true
				case 'N':
					restoresName = true
				}
			}
		case strings.HasPrefix(l, "-") && len(l) > 1:
			z.unknownOption(name + " " + clip(printable(l), 40) + " (an option the policy has no table for)")
		}
	}
	if longOptionValues(args, "--filelist", 6) != nil {
		z.a.refuseAllow(name + " --filelist (it compresses, and may delete, files whose names are in a file)")
	}
	if restoresName && decompress {
		z.a.refuseAllow(name + " -N on decompression (it writes the name stored in the archive)")
	}
	return dir, mirror
}

// outputIn is where an output dir option puts the output n of an operand.
func outputIn(dir word, mirror bool, n string) word {
	p := path.Join(dir.loose, path.Base(n))
	if mirror {
		p = path.Join(dir.loose, n)
	}
	return word{loose: p, lit: p, ok: dir.ok}
}

// zipLogAndTemp judges zip's other writes: -lf/--logfile-path FILE opens
// a log there (zip --logfile-path=.env wrote .env; a name with no
// extension gets ".log"), and -b/--temp-path DIR makes its temporary
// archive in DIR before moving it into place.
func (z *analyzer) zipLogAndTemp(args []word) {
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if l == "--" {
			return
		}
		var v word
		var ok bool
		n, val, glued := strings.Cut(l, "=")
		switch {
		case (l == "-lf" || longMatches(n, "--logfile-path") && len(n) >= 6) && !glued && i+1 < len(args):
			i++
			v, ok = args[i], true
		case longMatches(n, "--logfile-path") && len(n) >= 6 && glued:
			v, ok = word{loose: val, lit: val, ok: args[i].ok}, true
		case (l == "-b" || longMatches(n, "--temp-path") && len(n) >= 6) && !glued && i+1 < len(args):
			i++
			z.writeWord(args[i], "zip --temp-path")
		case longMatches(n, "--temp-path") && len(n) >= 6 && glued:
			z.writeWord(word{loose: val, lit: val, ok: args[i].ok}, "zip --temp-path")
		}
		if !ok {
			continue
		}
		z.writeWord(v, "zip --logfile-path")
		if path.Ext(v.loose) == "" {
			z.writeWord(word{loose: v.loose + ".log", lit: v.lit + ".log", ok: v.ok}, "zip --logfile-path")
		}
	}
}
