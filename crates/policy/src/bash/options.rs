//! Known read-only options per program, read the way the program's own
//! option parser reads them.
//!
//! Owns the allowlist (`SPECS`: program → the options known to only change
//! what it prints, with whether each takes an argument) and a getopt-style
//! matcher: bundled short options (`-rnk3`), attached and detached
//! arguments (`-oFILE`, `-o FILE`, `--opt=value`, `--opt value`), numbers as
//! options (`head -5`) and `--` ending the options. A long option counts only
//! when written out in full: GNU getopt reads any unambiguous prefix
//! (`--outp`) as the option it starts, and which option that is depends on the
//! program's whole option set, which this table deliberately does not hold,
//! so an abbreviation is an unknown option. Whatever is not on a program's
//! list makes it WARN. What an operand means (the files `uniq a b` writes,
//! `dd of=`) stays with the program's judge in `rules`.

use super::words::Word;

/// The read-only options of one program, in getopt notation.
pub(crate) struct Spec {
    /// Short options: a letter, then `:` when it takes an argument (the rest
    /// of the word, or the next word) or `::` when its argument can only be
    /// attached (`-w5`).
    pub short: &'static str,
    /// Long options, space-separated: `name` takes no argument, `name=` takes
    /// one (`--name=V` or `--name V`), `name?` takes one only as `--name=V`.
    /// When a name appears twice, the first entry wins.
    pub long: &'static str,
    /// `-5`, `-20` are options (`head -5`, `git log -3`).
    pub numbers: bool,
}

const fn spec(short: &'static str, long: &'static str) -> Spec {
    Spec {
        short,
        long,
        numbers: false,
    }
}

const fn numeric(short: &'static str, long: &'static str) -> Spec {
    Spec {
        short,
        long,
        numbers: true,
    }
}

/// Every program may print its help or version.
const COMMON_LONG: &str = "help version";

const LS: Spec = spec(
    "aAbBcCdDefFgGhHiI:klLmnNopqQrRsStT:uUvw:xXZ1@,%OPW",
    "all almost-all author escape block-size= ignore-backups color? classify? file-type \
     format= full-time group-directories-first no-group human-readable si \
     dereference-command-line dereference-command-line-symlink-to-dir hide= hyperlink? \
     indicator-style= inode ignore= kibibytes dereference numeric-uid-gid literal \
     hide-control-chars show-control-chars quote-name quoting-style= reverse recursive size \
     sort= time= time-style= tabsize= width= context zero",
);
const GREP: Spec = numeric(
    "EFGPe:f:iyvwxcm:bnHhZzoqsrRIlLA:B:C:TUaD:d:V",
    "extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case \
     no-ignore-case word-regexp line-regexp null-data no-messages invert-match max-count= \
     byte-offset line-number no-line-number line-buffered with-filename no-filename label= \
     only-matching quiet silent binary-files= text directories= devices= recursive \
     dereference-recursive include= exclude= exclude-from= exclude-dir= files-without-match \
     files-with-matches count initial-tab null before-context= after-context= context= \
     color? colour? binary",
);
const DIFF: Spec = numeric(
    "abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTuU:vwW:x:X:yZ",
    "normal brief report-identical-files context? unified? ed rcs side-by-side width= \
     left-column suppress-common-lines show-c-function show-function-line= label= expand-tabs \
     initial-tab tabsize= suppress-blank-empty paginate recursive no-dereference new-file \
     unidirectional-new-file ignore-file-name-case no-ignore-file-name-case exclude= \
     exclude-from= starting-file= from-file= to-file= ignore-case ignore-tab-expansion \
     ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines \
     ignore-matching-lines= text strip-trailing-cr ifdef= old-group-format= new-group-format= \
     unchanged-group-format= changed-group-format= line-format= old-line-format= \
     new-line-format= unchanged-line-format= minimal horizon-lines= speed-large-files color? \
     palette=",
);
const SUMS: Spec = spec(
    "bctwzl:",
    "binary check tag text zero ignore-missing quiet status strict warn length=",
);
const ZCAT: Spec = spec("fhlLqrtvV", "force list quiet recursive test verbose");
const BINUTILS: Spec = spec(
    "aABCDefgjlnopPrsSuUvVwWxdhHiIt:X:j:M:b:m:e:E:",
    "debug-syms demangle? no-demangle dynamic format= extern-only line-numbers numeric-sort \
     no-sort portability print-armap print-file-name reverse-sort size-sort special-syms \
     synthetic radix= target= defined-only undefined-only with-symbol-versions \
     without-symbol-versions disassemble? disassemble-all all-headers archive-headers \
     file-headers private-headers section-headers headers full-contents source syms \
     dynamic-syms reloc dynamic-reloc section= architecture= disassembler-options= \
     start-address= stop-address= prefix-addresses show-raw-insn no-show-raw-insn \
     line-numbers wide all file-header program-headers segments sections section-details \
     symbols relocs notes version-info arch-specific dynamic unwind hex-dump= string-dump= \
     debug-dump? encoding= bytes= data include-all-whitespace output-separator= unicode= \
     print-file-name",
);

/// Programs and their read-only options.
const SPECS: &[(&[&str], Spec)] = &[
    (&["ls", "dir", "vdir"], LS),
    (&["grep", "egrep", "fgrep", "zgrep"], GREP),
    (&["diff", "zdiff"], DIFF),
    (
        &["cat"],
        spec(
            "AbeEnstTuvl",
            "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
        ),
    ),
    (&["tac"], spec("brs:", "before regex separator=")),
    (
        &["head"],
        numeric(
            "c:n:qvz",
            "bytes= lines= quiet silent verbose zero-terminated",
        ),
    ),
    (
        &["tail"],
        numeric(
            "c:fFn:qs:vz",
            "bytes= follow? lines= max-unchanged-stats= pid= quiet retry silent \
             sleep-interval= verbose zero-terminated debug",
        ),
    ),
    (
        &["wc"],
        spec(
            "clLmw",
            "bytes chars lines files0-from= max-line-length words total= debug",
        ),
    ),
    (&["pwd"], spec("LP", "logical physical")),
    (
        &["which"],
        spec(
            "aisV",
            "all read-alias skip-alias read-functions skip-functions skip-dot skip-tilde \
             show-dot show-tilde tty-only",
        ),
    ),
    (&["whereis"], spec("bmsuBMSfl", "")),
    (&["type"], spec("afptP", "")),
    (
        &["whoami", "groups", "logname", "users", "arch", "tsort"],
        spec("", ""),
    ),
    (
        &["uname"],
        spec(
            "asnrvmpio",
            "all kernel-name nodename kernel-release kernel-version machine processor \
             hardware-platform operating-system",
        ),
    ),
    (
        &["id"],
        spec("agGnruzZ", "context group groups name real user zero"),
    ),
    (
        &["df"],
        spec(
            "aB:hHiklPt:Tx:",
            "all block-size= human-readable si inodes local output? portability sync no-sync \
             total type= print-type exclude-type=",
        ),
    ),
    (
        &["du"],
        spec(
            "0abB:cd:DhHklLmPsSt:xX:",
            "null all apparent-size block-size= bytes total dereference-args max-depth= \
             files0-from= human-readable inodes dereference count-links no-dereference \
             separate-dirs si summarize threshold= time? time-style= exclude-from= exclude= \
             one-file-system",
        ),
    ),
    (
        &["stat"],
        spec(
            "c:fLtZxsF",
            "dereference file-system format= printf= terse cached=",
        ),
    ),
    (&["printenv"], spec("0", "null")),
    (&["more"], numeric("dlfpcsun:", "")),
    (
        &["cut"],
        spec(
            "b:c:d:f:nsz",
            "bytes= characters= delimiter= fields= complement only-delimited \
             output-delimiter= zero-terminated",
        ),
    ),
    (
        &["tr"],
        spec("cCdst", "complement delete squeeze-repeats truncate-set1"),
    ),
    (
        &["nl"],
        spec(
            "b:d:f:h:i:l:n:ps:v:w:",
            "body-numbering= section-delimiter= footer-numbering= header-numbering= \
             line-increment= join-blank-lines= number-format= no-renumber number-separator= \
             starting-line-number= number-width=",
        ),
    ),
    (
        &["od"],
        spec(
            "A:j:N:S:t:w::abcdDfhHiIlLoOsxXv",
            "address-radix= skip-bytes= read-bytes= strings? format= output-duplicates \
             width? traditional endian=",
        ),
    ),
    (&["hexdump"], spec("bcCde:f:n:o:s:vxL::", "")),
    (&["basename"], spec("as:z", "multiple suffix= zero")),
    (&["dirname"], spec("z", "zero")),
    (
        &["realpath"],
        spec(
            "eEmLPqsz",
            "canonicalize-existing canonicalize-missing logical physical quiet \
             relative-to= relative-base= strip no-symlinks zero",
        ),
    ),
    (
        &["readlink"],
        spec(
            "efmnqsvz",
            "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent \
             verbose zero",
        ),
    ),
    (
        &[
            "md5sum",
            "sha1sum",
            "sha224sum",
            "sha256sum",
            "sha384sum",
            "sha512sum",
            "b2sum",
        ],
        SUMS,
    ),
    (
        &["cksum"],
        spec(
            "a:l:",
            "algorithm= base64 check debug length= raw tag untagged zero",
        ),
    ),
    (&["sum"], spec("rs", "sysv")),
    (
        &["shasum"],
        spec(
            "a:bcpstUw0",
            "algorithm= binary check text tag status warn strict quiet ignore-missing portable UNIVERSAL 01",
        ),
    ),
    (&["sha1", "md5"], spec("pqrs:c:", "")),
    (&["seq"], numeric("f:s:w", "format= separator= equal-width")),
    (
        &["column"],
        spec(
            "c:dei:JlLn:N:o:O:rR:s:tT:W:xH:E:",
            "columns= table table-columns= table-name= table-noheadings table-order= \
             table-right= table-truncate= table-wrap= table-hide= json output-separator= \
             separator= fillrows keep-empty-lines",
        ),
    ),
    (
        &["comm"],
        spec(
            "123z",
            "check-order nocheck-order output-delimiter= total zero-terminated",
        ),
    ),
    (
        &["cmp"],
        spec(
            "bi:ln:sv",
            "print-bytes ignore-initial= verbose bytes= quiet silent",
        ),
    ),
    (
        &["diff3"],
        spec(
            "aAeEimL:TxX3",
            "text show-all ed easy-only initial-tab label= merge overlap-only show-overlap \
             strip-trailing-cr",
        ),
    ),
    (
        &["jq"],
        spec(
            "acCeMnrRsSjL:f:hVt",
            "compact-output null-input exit-status slurp raw-output raw-output0 join-output \
             ascii-output sort-keys color-output monochrome-output raw-input tab indent= seq \
             stream stream-errors unbuffered arg= argjson= slurpfile= rawfile= args jsonargs \
             from-file= build-configuration",
        ),
    ),
    (&["fold"], numeric("bsw:", "bytes spaces width=")),
    (
        &["fmt"],
        numeric(
            "cp:stuw:g:",
            "crown-margin prefix= split-only tagged-paragraph uniform-spacing width= goal=",
        ),
    ),
    (
        &["paste"],
        spec("d:sz", "delimiters= serial zero-terminated"),
    ),
    (
        &["join"],
        spec(
            "a:e:i1:2:j:o:t:v:z",
            "ignore-case check-order nocheck-order header zero-terminated",
        ),
    ),
    (&["rev"], spec("", "")),
    (&["factor"], spec("h", "exponents")),
    (&["nproc"], spec("", "all ignore=")),
    (&["look"], spec("abdft:", "")),
    (
        &["strings"],
        numeric(
            "adfn:t:e:owsT:U:",
            "all data print-file-name bytes= radix= encoding= output-separator= \
             include-all-whitespace target= unicode=",
        ),
    ),
    (&["nm", "objdump", "readelf", "size"], BINUTILS),
    (&["zcat", "bzcat", "xzcat"], ZCAT),
    // Compressors: `rules` calls them SAFE only when they write to standard
    // output or list; these are the options that keep it so (no `zstd -o`,
    // `--output-dir-*`, `--rm`, `lz4 -m`).
    (
        &["gzip", "gunzip"],
        spec(
            "cdfhklLnNqrtvV123456789S:",
            "stdout to-stdout decompress uncompress force keep list license no-name name              quiet recursive rsyncable suffix= synchronous test verbose fast best",
        ),
    ),
    (
        &["bzip2", "bunzip2"],
        spec(
            "cdzfktqvVsL123456789",
            "stdout decompress compress force keep test quiet verbose small license fast best",
        ),
    ),
    (
        &["xz", "unxz"],
        spec(
            "cdzkftlqvVhHT:F:C:M:0123456789e",
            "stdout to-stdout decompress uncompress compress keep force test list quiet \
             verbose threads= format= check= memlimit= memory= extreme single-stream \
             no-sparse robot info-memory long-help",
        ),
    ),
    (
        &["zstd", "unzstd"],
        spec(
            "cdzfklqvVhHt0123456789T:D:M:",
            "stdout decompress uncompress compress force keep quiet verbose test list \
             threads= memory= ultra long? no-progress",
        ),
    ),
    (
        &["lz4"],
        spec(
            "cdzfklqvVhHt123456789B:",
            "stdout to-stdout decompress uncompress compress force keep quiet verbose test list \
             fast? best",
        ),
    ),
    (
        &["free"],
        spec(
            "bkmghlLtswvc:s:",
            "bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human si lohi line total \
             seconds= count= wide committed",
        ),
    ),
    (&["uptime"], spec("psV", "pretty since")),
    (
        &["ps"],
        spec(
            "AadeFfHjlLMNTcwyZVxXrmC:G:g:o:O:p:q:s:t:u:U:k:",
            "format= sort= pid= ppid= user= User= group= Group= cols= columns= forest headers \
             no-headers width= lines= rows= info deselect cumulative context sid= tty= \
             quick-pid= signames",
        ),
    ),
    (
        &["pgrep"],
        spec(
            "acd:fg:G:ilnoP:s:t:u:U:vwxF:Ar:",
            "count delimiter= list-name list-full full pgroup= group= ignore-case newest \
             oldest parent= session= terminal= euid= uid= inverse lightweight exact pidfile= \
             logpidfile older= ns= nslist= runstates= env= cgroup=",
        ),
    ),
    (&["tty"], spec("s", "silent quiet")),
    (
        &["who"],
        spec(
            "abdHlmpqrstTuw",
            "all boot dead heading login lookup process count runlevel short time mesg \
             users writable",
        ),
    ),
    (
        &["w"],
        spec(
            "hisfoun",
            "no-header ip-addr short from old-style no-current",
        ),
    ),
    (&["getconf"], spec("av:", "")),
    (
        &["locale"],
        spec(
            "acmkv",
            "all-locales charmaps category-name keyword-name verbose",
        ),
    ),
    (
        &["cal"],
        numeric(
            "13hjmSsyYvwn:A:B:",
            "one three sunday monday julian months= span year twelve week vertical color?",
        ),
    ),
    (
        &["lscpu"],
        spec(
            "abce::Jp::sxyB",
            "all bytes caches? extended? json parse? online offline physical hex output-all",
        ),
    ),
    (
        &["lsblk"],
        spec(
            "abdDfiJlmnOpPrstSzo:e:I:x:",
            "all bytes nodeps discard fs ascii json list perms noheadings output= \
             output-all paths pairs raw scsi topology tree exclude= include= sort= \
             merge",
        ),
    ),
    (
        &["lsof"],
        spec("?abChlnNOPRtUvVXwKQa:c:d:D:g:i::k:p:s:S::T::u:", ""),
    ),
    (
        &["numfmt"],
        spec(
            "d:z",
            "debug delimiter= field= format= from= from-unit= grouping header? invalid= padding= round= suffix= to= to-unit= unit-separator= zero-terminated",
        ),
    ),
    (
        &["apropos", "whatis"],
        spec(
            "dvrwelLs:m:M:",
            "debug verbose regex wildcard exact long locale= sections= section= systems= manpath=",
        ),
    ),
    (&["tput", "clear"], spec("T:SVx", "")),
    (&["popd", "dirs"], numeric("clpv", "")),
    (&["help"], spec("dms", "")),
    // Programs whose judge in `rules` also reads operands: these lists say
    // which options are known not to write or run anything.
    (
        &["sort"],
        spec(
            "bcCdfghik:mMnrRsS:t:uVz",
            "ignore-leading-blanks check? dictionary-order ignore-case general-numeric-sort \
             human-numeric-sort ignore-nonprinting key= merge month-sort numeric-sort \
             random-sort random-source= reverse sort= stable buffer-size= field-separator= \
             unique version-sort zero-terminated parallel= batch-size= debug files0-from=",
        ),
    ),
    (
        &["shuf"],
        spec(
            "ei:n:rz",
            "echo input-range= head-count= random-source= repeat zero-terminated",
        ),
    ),
    (
        &["iconv"],
        spec("cf:lst:", "from-code= to-code= list silent verbose"),
    ),
    (
        &["uniq"],
        numeric(
            "cdDfis:uw:z",
            "count repeated all-repeated? skip-fields= ignore-case skip-chars= unique \
             check-chars= zero-terminated group?",
        ),
    ),
    (
        &["date"],
        spec(
            "d:f:I::r:Ru",
            "date= file= iso-8601? rfc-email rfc-3339= reference= resolution universal utc debug",
        ),
    ),
    (
        &["hostname"],
        spec(
            "aAdfiIsy",
            "alias all-fqdns domain fqdn long ip-address all-ip-addresses short yp nis",
        ),
    ),
    (
        &["tree"],
        spec(
            "adfgilpqsuxACDFJNQrtvUhSnL:P:I:H:T:",
            "inodes device noreport dirsfirst filesfirst du prune gitignore info fromfile \
             matchdirs ignore-case charset= filelimit= timefmt= sort= version help",
        ),
    ),
    (&["xxd"], spec("abCEeihprdsuvc:g:l:n:o:s:R:", "")),
    (
        &["base64", "base32", "basenc"],
        spec(
            "dDiw:",
            "decode ignore-garbage wrap= base64 base64url base32 base32hex base16 base2msbf \
             base2lsbf z85",
        ),
    ),
    (
        &["file"],
        spec(
            "bcdEhiklLnNprsvzZ0e:F:f:m:P:S",
            "brief checking-printout debug exclude= exclude-quiet= extension separator= \
             files-from= no-dereference mime mime-type mime-encoding keep-going list \
             dereference magic-file= no-buffer no-pad print0 preserve-date parameter= raw \
             special-files no-sandbox uncompress uncompress-noreport",
        ),
    ),
    (
        &["sdiff"],
        spec(
            "abBdEHiI:lstvw:W",
            "text ignore-blank-lines ignore-case ignore-matching-lines= ignore-all-space \
             ignore-space-change ignore-tab-expansion ignore-trailing-space left-column \
             minimal speed-large-files strip-trailing-cr suppress-common-lines expand-tabs \
             tabsize= width=",
        ),
    ),
    (
        &["rg"],
        numeric(
            "A:B:C:d:E:e:f:g:j:m:M:r:t:T:HhIiLlNnoPpqSsUuVvwxy0.abcF",
            "files type= type-not= type-list type-add= type-clear= glob= iglob= hidden no-hidden no-ignore \
             no-ignore-vcs no-ignore-dot no-ignore-global no-ignore-parent no-ignore-files \
             no-ignore-exclude ignore-file= follow max-depth= smart-case ignore-case \
             case-sensitive fixed-strings word-regexp line-regexp invert-match count \
             count-matches files-with-matches files-without-match line-number no-line-number \
             column no-column heading no-heading with-filename no-filename color= colors= \
             context= after-context= before-context= only-matching replace= json no-json \
             vimgrep multiline multiline-dotall pcre2 engine= sort= sortr= max-count= \
             max-columns= max-columns-preview max-filesize= threads= text binary null \
             null-data passthru trim stats debug trace regexp= file= encoding= no-messages \
             quiet unrestricted one-file-system path-separator= pretty byte-offset crlf \
             no-config no-unicode mmap no-mmap field-match-separator= field-context-separator= \
             context-separator= no-context-separator hyperlink-format= block-buffered \
             line-buffered include-zero",
        ),
    ),
    (
        &["fd", "fdfind"],
        spec(
            "HIuspiFgaLlh0d:t:e:E:S:j:c:",
            "hidden no-hidden no-ignore no-ignore-vcs no-ignore-parent unrestricted \
             case-sensitive ignore-case glob regex fixed-strings absolute-path list-details \
             follow full-path print0 max-depth= min-depth= exact-depth= type= extension= \
             exclude= size= changed-within= changed-before= newer= older= owner= color= \
             threads= max-results= quiet show-errors base-directory= path-separator= \
             search-path= strip-cwd-prefix? one-file-system prune ignore-file= format=",
        ),
    ),
    (
        &["yq"],
        spec(
            "eCIMPnrojp:o:I:N0",
            "colors no-colors exit-status output-format= input-format= prettyPrint indent= \
             null-input unwrapScalar nul-output no-doc from-file= expression= front-matter= \
             header-preprocess",
        ),
    ),
    (
        &["sed", "gsed"],
        spec(
            "nrsuzEe:l:",
            "quiet silent debug expression= line-length= null-data zero-terminated posix \
             regexp-extended separate sandbox unbuffered follow-symlinks",
        ),
    ),
    (
        &["less"],
        numeric(
            "aAbBcCdeEfFgGiIJKLmMnNqQrRsSuUVwWXzh:j:p:P:t:T:x:y:z:#:",
            "RAW-CONTROL-CHARS raw-control-chars chop-long-lines LINE-NUMBERS line-numbers \
             quit-if-one-screen no-init ignore-case IGNORE-CASE quit-at-eof QUIT-AT-EOF \
             squeeze-blank-lines tabs= pattern= prompt= silent QUIET quiet status-column \
             shift= mouse wheel-lines= follow-name incsearch use-color color= header= window= \
             no-keypad tilde hilite-unread HILITE-UNREAD hilite-search HILITE-SEARCH \
             long-prompt LONG-PROMPT jump-target= no-lessopen",
        ),
    ),
];

/// The read-only options of `prog`, when it has a list.
pub(crate) fn spec_of(prog: &str) -> Option<&'static Spec> {
    SPECS
        .iter()
        .find(|(names, _)| names.contains(&prog))
        .map(|(_, s)| s)
}

/// Where the options of a command end.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operands {
    /// GNU programs take options anywhere before `--`.
    Anywhere,
    /// Wrappers (`xargs`, `time`, `env`) stop at the first operand: it is the
    /// command they run.
    EndOptions,
}

/// The outcome of reading a command's options against a `Spec`.
pub(crate) struct Scan {
    /// The first option that is not on the list, as written (`--outp`, `-o`).
    pub unknown: Option<String>,
    /// Index of the first operand when options end there
    /// (`Operands::EndOptions`), else `args.len()`.
    pub first_operand: usize,
}

/// Reads `args` as the program's option parser does and finds the first
/// option `spec` does not list. A word whose value is decided at run time
/// and could not be guessed is taken as an operand: the judge of a program
/// with options that write decides separately what such a word means.
pub(crate) fn scan(spec: &Spec, args: &[Word], mode: Operands) -> Scan {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        if t == "--" {
            return Scan {
                unknown: None,
                first_operand: if mode == Operands::EndOptions {
                    i
                } else {
                    args.len()
                },
            };
        }
        let unguessed = a.dynamic && !a.guessable;
        if !t.starts_with('-') || t == "-" || unguessed {
            if mode == Operands::EndOptions {
                return Scan {
                    unknown: None,
                    first_operand: i - 1,
                };
            }
            continue;
        }
        let next = args.get(i).map(|w| w.text.as_str());
        let step = match t.strip_prefix("--") {
            Some(long) => long_option(spec, long, next),
            None => short_cluster(spec, &t[1..]),
        };
        match step {
            Ok(extra) => i += extra,
            Err(bad) => {
                return Scan {
                    unknown: Some(bad),
                    first_operand: args.len(),
                };
            }
        }
    }
    Scan {
        unknown: None,
        first_operand: args.len(),
    }
}

/// `--name`, `--name=value`, `--name value`: how many following words it
/// consumes, or the option as written when it is not on the list.
fn long_option(spec: &Spec, long: &str, next: Option<&str>) -> Result<usize, String> {
    let (name, attached) = match long.split_once('=') {
        Some((n, _)) => (n, true),
        None => (long, false),
    };
    let entry = spec
        .long
        .split_whitespace()
        .chain(COMMON_LONG.split_whitespace())
        .find(|e| e.trim_end_matches(['=', '?']) == name);
    match entry {
        Some(e) if e.ends_with('=') => Ok(usize::from(!attached && next.is_some())),
        Some(e) if e.ends_with('?') => Ok(0),
        // getopt refuses a value given to an option without one.
        Some(_) if !attached => Ok(0),
        _ => Err(format!("--{name}")),
    }
}

/// `-abc`, `-k3`, `-o FILE`, `-5`: how many following words it consumes, or
/// the first letter that is not on the list.
fn short_cluster(spec: &Spec, flags: &str) -> Result<usize, String> {
    if spec.numbers && flags.chars().all(|c| c.is_ascii_digit()) {
        return Ok(0);
    }
    for (k, c) in flags.char_indices() {
        let Some(pos) = spec.short.find(c).filter(|_| c != ':') else {
            return Err(format!("-{c}"));
        };
        let after = &spec.short[pos + c.len_utf8()..];
        if after.starts_with("::") {
            return Ok(0);
        }
        if after.starts_with(':') {
            let attached = k + c.len_utf8() < flags.len();
            return Ok(usize::from(!attached));
        }
    }
    Ok(0)
}

/// The reason a program is not SAFE because of `option`.
pub(crate) fn unknown_reason(prog: &str, option: &str) -> String {
    if option.starts_with("--") {
        format!(
            "{prog} option {option} is not on its list of read-only options (an abbreviation \
             is read as whichever long option it starts)"
        )
    } else {
        format!("{prog} option {option} is not on its list of read-only options")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::literal).collect()
    }

    fn unknown(prog: &str, args: &str) -> Option<String> {
        let spec = spec_of(prog).unwrap_or(&Spec {
            short: "",
            long: "",
            numbers: false,
        });
        scan(spec, &words(args), Operands::Anywhere).unknown
    }

    #[test]
    fn options_are_read_as_getopt_reads_them() {
        assert_eq!(unknown("sort", "-rnk3 f"), None);
        assert_eq!(unknown("sort", "-k 2,2 -t: f"), None);
        // `-t` takes the next word, so `-o` there is its value.
        assert_eq!(unknown("sort", "-t -o f"), None);
        assert_eq!(unknown("sort", "-uo x f"), Some("-o".into()));
        assert_eq!(unknown("sort", "--outp=x f"), Some("--outp".into()));
        assert_eq!(unknown("sort", "--key 2 f"), None);
        assert_eq!(unknown("sort", "f -- -o"), None);
        assert_eq!(unknown("sort", "f -o x"), Some("-o".into()));
        assert_eq!(unknown("head", "-5 f"), None);
        assert_eq!(unknown("cat", "-5 f"), Some("-5".into()));
        assert_eq!(unknown("ls", "--color=auto -la"), None);
        // An option without an argument given one is refused by getopt.
        assert_eq!(unknown("ls", "--all=x"), Some("--all".into()));
        assert_eq!(unknown("whoami", "--help"), None);
        assert_eq!(unknown("whoami", "-x"), Some("-x".into()));
    }

    #[test]
    fn wrappers_stop_at_the_first_operand() {
        let spec = Spec {
            short: "0a:I:",
            long: "arg-file= null",
            numbers: false,
        };
        let s = scan(&spec, &words("-0 -a f rm -rf x"), Operands::EndOptions);
        assert_eq!((s.unknown, s.first_operand), (None, 3));
        let s = scan(&spec, &words("--arg f rm"), Operands::EndOptions);
        assert_eq!(s.unknown, Some("--arg".into()));
        let s = scan(&spec, &words("-- rm"), Operands::EndOptions);
        assert_eq!(s.first_operand, 1);
    }
}
