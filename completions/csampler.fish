# fish completion for csampler(1)

# The program and its arguments: what follows the options (after "--", or
# from the first word that is not an option). Prints them NUL-separated and
# succeeds when there is such a program.
function __fish_csampler_print_command
    set -l tokens (commandline -opc) (commandline -ct)
    set -e tokens[1]
    argparse -s 'p/pid=' 't/tid=+' 'i/input=+' diff 'd/duration=' 'F/rate=' 'o/output=+' 'f/format=' \
        idle threads 'thread-group=+' 'label=+' children 'max-depth=' 'max-stacks=' \
        'stack-window=' 'attach-mode=' 'backend=' 'realtime=?' no-inline no-python no-kernel addresses \
        annotate 'interval=' 'serve=' 'serve-token-file=' 'serve-max-seconds=' dump top \
        q/quiet v/verbose h/help V/version -- $tokens 2>/dev/null
    or return 1
    if set -q argv[1]
        string join0 -- $argv
        return 0
    end
    return 1
end

function __fish_csampler_no_command
    not __fish_csampler_print_command >/dev/null
end

function __fish_csampler_complete_command
    set -l args (__fish_csampler_print_command | string split0)
    __fish_complete_subcommand --commandline $args
end

# The options a mode refuses (csampler exits 64 with them): not offered
# once the mode's option is on the line, as the bash completion's table
# (--serve-token-file and --serve-max-seconds need --serve).
function __fish_csampler_ok -a name
    set -l tokens (commandline -opc)
    set -l refused
    # (one -p at a time; the value of the last -p is still completed)
    set -l before $tokens[1..-2]
    if contains -- -p $before; or string match -q -- '--pid*' $before
        set -a refused pid
    end
    set -l serve (string match -- '--serve*' $tokens | string match -v -- '--serve-*')
    if not set -q serve[1]
        set -a refused serve-token-file serve-max-seconds
    else
        set -a refused dump top interval output format duration children input diff annotate
    end
    if contains -- --dump $tokens
        set -a refused tid input diff duration interval rate output format idle threads \
            thread-group label max-stacks attach-mode backend annotate top serve \
            serve-token-file serve-max-seconds
    end
    if contains -- -i $tokens; or string match -q -- '--input*' $tokens
        set -a refused pid tid serve serve-token-file serve-max-seconds top dump duration rate \
            idle children interval attach-mode
    end
    if contains -- --top $tokens
        set -a refused output interval format threads thread-group annotate label dump serve \
            serve-token-file serve-max-seconds input diff
    end
    not contains -- $name $refused
end

complete -c csampler -f
complete -c csampler -n 'not __fish_csampler_no_command' -x -a '(__fish_csampler_complete_command)'
complete -c csampler -n __fish_csampler_no_command -x -a '(__fish_complete_command)'

# Target
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok pid' -s p -l pid -x -a '(__fish_complete_pids)' -d 'Profile the running process PID'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok tid' -s t -l tid -x -d 'Sample only thread TID (repeatable)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok children' -l children -d 'Follow child processes and their execs'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok attach-mode' -l attach-mode -x -a 'persistent\t"Stay attached for the whole run (default)" per-sample\t"Attach around each sample only"' -d 'Stay attached, or attach per sample'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok backend' -l backend -x -a 'ptrace\t"Interrupt the running threads (default)" perf\t"The kernel samples them: perf_event cpu-clock (root)" auto\t"Perf where permitted, else ptrace"' -d 'What takes the samples'
# Sampling
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok duration' -s d -l duration -x -a '10 30s 1m 500ms' -d 'Stop after TIME (30, 30s, 2m, 1.5s, 500ms)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok interval' -l interval -x -a '10 60 5m' -d 'Write one profile per TIME, files named by strftime fields'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok rate' -s F -l rate -x -a '49 99 199 499 997' -d 'Sampling rate in Hz (1-10000, default 99)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok idle' -l idle -d 'Wall-clock profile: count blocked threads too'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok max-depth' -l max-depth -x -d 'Frames kept per stack (4-65536, default 4096)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok max-stacks' -l max-stacks -x -d 'Distinct stacks kept in memory (default 65536)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok stack-window' -l stack-window -x -a '16k 64k 256k 1m 8m' -d 'Stack bytes copied per sample (4k-8m)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok realtime' -l realtime -d 'Sample SCHED_FIFO at PRIO (--realtime=PRIO, 0-99; 0: normal priority)'
# Output
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok output' -s o -l output -r -F -a '-' -d 'Write the profile to FILE (- is stdout)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok input' -s i -l input -r -F -d 'Read a pprof profile recorded before, write it as -o asks'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok diff' -l diff -d 'With -i BASE -i NEW: a differential flame graph or table'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok format' -s f -l format -x -a 'pprof\t"pprof profile.proto, gzipped" folded\t"Folded stacks (flamegraph.pl)" svg\t"Interactive SVG flame graph" text\t"Top functions and hottest stacks" speedscope\t"Per-thread timeline for speedscope"' -d 'Format for outputs without a known extension'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok threads' -l threads -d 'A root frame NAME-TID on every stack'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok thread-group' -l thread-group -x -d 'Merge threads matching REGEX as NAME (REGEX=NAME)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok label' -l label -x -d 'A label on every sample (KEY=VALUE)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok no-inline' -l no-inline -d 'Do not show inlined functions as frames'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok no-python' -l no-python -d 'Do not read CPython frames: show the interpreter C functions'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok no-kernel' -l no-kernel -d 'No kernel frames above user stacks (--backend=perf, --idle, --dump)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok addresses' -l addresses -d 'Keep raw addresses, do not symbolize'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok annotate' -l annotate -d 'Folded output: mark inline _[i] and JIT _[j] frames'
# Serving
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok serve' -l serve -x -a '6060 127.0.0.1:6060 0.0.0.0:6060 unix:' -d 'Answer /debug/pprof/profile over HTTP ([ADDR:]PORT or unix:PATH)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok serve-token-file' -l serve-token-file -r -F -d 'Require Authorization: Bearer TOKEN (TOKEN from FILE)'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok serve-max-seconds' -l serve-max-seconds -x -a '60 300 3600' -d 'Longest profile a request may ask for (default 300)'
# Display
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok dump' -l dump -d 'Print the stack of every thread once, like pstack'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok top' -l top -d 'Live view of the hottest functions'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok quiet' -s q -l quiet -d 'Print nothing but errors'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok verbose' -s v -l verbose -d 'Tell more (repeatable)'
# Misc
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok help' -s h -l help -d 'Show the options and exit'
complete -c csampler -n '__fish_csampler_no_command; and __fish_csampler_ok version' -s V -l version -d 'Show the version and exit'
