//! The allowlist, in one place: for each program atto may call SAFE (and
//! for the wrappers, git subcommands and builtins with their own judges),
//! the options known to only change what it prints, in getopt notation
//! (`options::Spec`).
//!
//! Data only; how the options are read is `options`. An option missing here
//! makes its program WARN, so a list errs on the short side: options that
//! write (`sort -o`, `zstd -o`, `tree -R`), run programs
//! (`--compress-program`, `git grep -O`, `tar -I`) or load configuration
//! (`less -k`) are left out on purpose.

use super::options::{Spec, numeric, spec};

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
pub(super) const SPECS: &[(&[&str], Spec)] = &[
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

/// The long options of the log and diff family (see `GIT_LOG`), as a macro so
/// that `GIT_SHORTLOG` can extend the list at compile time.
macro_rules! log_long {
    () => {
        "oneline pretty? format= abbrev-commit no-abbrev-commit abbrev? encoding= \
           expand-tabs? no-expand-tabs notes? no-notes show-notes? standard-notes \
           no-standard-notes show-signature relative-date date= parents children left-right \
           graph no-graph show-linear-break? cc combined-all-paths patch no-patch raw \
           patch-with-raw patch-with-stat stat? numstat shortstat dirstat? cumulative \
           dirstat-by-file? summary name-only name-status submodule? color? no-color \
           color-moved? no-color-moved color-moved-ws= no-color-moved-ws word-diff? \
           word-diff-regex= color-words? no-renames rename-empty no-rename-empty check \
           ws-error-highlight= full-index binary break-rewrites? find-renames? find-copies? \
           find-copies-harder irreversible-delete diff-filter= pickaxe-all pickaxe-regex \
           skip-to= rotate-to= relative? no-relative text ignore-cr-at-eol ignore-space-at-eol \
           ignore-space-change ignore-all-space ignore-blank-lines ignore-matching-lines= \
           inter-hunk-context= function-context exit-code quiet no-ext-diff no-textconv \
           ignore-submodules? src-prefix= dst-prefix= no-prefix default-prefix line-prefix= \
           ita-invisible-in-index ita-visible-in-index minimal patience histogram anchored= \
           diff-algorithm= unified= output-indicator-new= output-indicator-old= \
           output-indicator-context= indent-heuristic no-indent-heuristic stat-width= \
           stat-name-width= stat-graph-width= stat-count= compact-summary merge-base cached \
           staged no-index follow no-follow no-decorate decorate? decorate-refs= \
           decorate-refs-exclude= clear-decorations source mailmap no-mailmap use-mailmap \
           log-size max-count= skip= since= after= since-as-filter= until= before= author= \
           committer= grep-reflog= grep= all-match no-all-match invert-grep \
           regexp-ignore-case basic-regexp extended-regexp fixed-strings perl-regexp \
           remove-empty merges no-merges min-parents= max-parents= no-min-parents \
           no-max-parents first-parent exclude-first-parent-only not all branches? tags? \
           remotes? glob= exclude= reflog alternate-refs single-worktree ignore-missing bisect \
           cherry-mark cherry-pick left-only right-only cherry walk-reflogs merge boundary \
           simplify-by-decoration full-history dense sparse simplify-merges ancestry-path? \
           show-pulls topo-order date-order author-date-order reverse no-walk? do-walk \
           diff-merges= no-diff-merges remerge-diff summary numbered email group= \
           creation-factor= no-dual-color dual-color left-only right-only name-rev? \
           show-current-patch always no-standard-notes first-parent-only"
    };
}

/// The read-only options of the log and diff family (`log`, `show`, `diff`,
/// `shortlog` …). Not here: `--output` (writes), `--ext-diff` and
/// `--textconv` (run programs the repository's configuration names).
pub(super) const GIT_LOG: Spec = Spec {
    short: "pusczbwWRatmrgiEFPqhDM::C::B::l::X::U::O:S:G:L:n:I:",
    long: log_long!(),
    numbers: true,
};

/// `git shortlog`: the log family's options, where `-n` is `--numbered`
/// (no argument), `-w` takes its argument attached, and `--committer` takes
/// none (its own entries come first: the first entry of a name wins).
pub(super) const GIT_SHORTLOG: Spec = Spec {
    short: "nsecw::",
    long: concat!(
        "numbered summary email committer group= format? ",
        log_long!()
    ),
    numbers: true,
};

/// `git grep`'s read-only options. Not here: `-O`/`--open-files-in-pager`
/// (runs a pager program) and `--textconv`.
pub(super) const GIT_GREP: Spec = Spec {
    short: "aiIvwhHlLcnpWoqzEGFPe:f:A:B:C:m:",
    long: "cached no-index untracked no-exclude-standard exclude-standard recurse-submodules \
           text no-textconv ignore-case word-regexp invert-match full-name extended-regexp \
           basic-regexp perl-regexp fixed-strings line-number column files-with-matches \
           name-only files-without-match null count color? no-color break heading \
           show-function context= after-context= before-context= function-context threads= \
           max-depth= max-count= and or not all-match quiet only-matching regexp=",
    numbers: true,
};

/// `tar`'s options in list mode (`tar t`) that only read: no program
/// (`-I`, `--to-command`, `--checkpoint-action`, `-F`), no writes.
pub(super) const TAR_LIST: Spec = Spec {
    short: "tvzjJaZpswkmOSf:b:C:T:X:",
    long: "list verbose file= gzip gunzip ungzip bzip2 xz lzma lzip lzop zstd compress \
           uncompress auto-compress directory= exclude= exclude-from= files-from= wildcards \
           no-wildcards anchored no-anchored ignore-case no-ignore-case wildcards-match-slash \
           no-wildcards-match-slash numeric-owner full-time utc totals? show-transformed-names \
           quoting-style= null no-null verbatim-files-from no-verbatim-files-from occurrence? \
           strip-components= blocking-factor= record-size= force-local same-permissions \
           preserve-permissions same-owner no-same-owner ignore-zeros ignore-failed-read \
           index-file= block-number one-file-system no-recursion recursion",
    numbers: false,
};

/// GNU `time`'s options that only change what it prints; `-o`/`--output`
/// and `-a`/`--append` write its report to a file.
pub(super) const TIME: Spec = Spec {
    short: "pvqf:",
    long: "portability verbose quiet format=",
    numbers: false,
};

/// `xargs`'s options. `-e`, `-i` and `-l` take their argument only
/// attached, so the next word is the command.
pub(super) const XARGS: Spec = Spec {
    short: "0a:d:E:e::I:i::L:l::n:opP:rs:tx",
    long: "null arg-file= delimiter= eof? replace? max-lines? max-args= max-procs= \
           max-chars= interactive no-run-if-empty open-tty verbose exit show-limits \
           process-slot-var=",
    numbers: false,
};

/// `read`'s options; none of them runs anything.
pub(super) const READ: Spec = Spec {
    short: "ersa:d:i:n:N:p:t:u:",
    long: "",
    numbers: false,
};

/// `mapfile`/`readarray`'s options without `-C` (a callback it runs).
pub(super) const MAPFILE: Spec = Spec {
    short: "c:d:n:O:s:tu:",
    long: "",
    numbers: false,
};
