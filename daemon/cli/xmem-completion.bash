# bash completion for xmem: installed as share/bash-completion/completions/xmem.
#
# It holds no list of its own: the commands come from `xmem --help`, and a command's options
# and their arguments from `xmem COMMAND --help` (its usage lines and its option lines), so
# it completes what the installed xmem takes, whatever version that is.

# The options of `xmem ARGS... --help`, one "OPTION<TAB>ARGUMENT" line each (ARGUMENT empty
# for a switch). Usage lines give "[--gpu NAME]"; option lines "  -s, --socket PATH   text".
_xmem_options()
{
    "$@" --help 2>/dev/null | awk '
        function emit(opt, arg) { if (!(opt in seen)) { seen[opt] = 1; print opt "\t" arg } }
        function is_option(t) { return t ~ /^--?[A-Za-z][A-Za-z0-9-]*$/ }
        function usage_line(line,   n, t, i, tok, arg) {
            n = split(line, t, /[ \t]+/)
            for (i = 1; i <= n; i++) {
                tok = t[i]; sub(/^\[+/, "", tok)
                closed = tok ~ /\]$/; sub(/\]+$/, "", tok)
                if (!is_option(tok)) continue
                arg = ""
                if (!closed && i < n && t[i + 1] !~ /^[-[|]/) { arg = t[i + 1]; sub(/\]+$/, "", arg) }
                emit(tok, arg)
            }
        }
        function option_line(line,   head, n, t, i, arg, opts) {
            head = line; sub(/^[ \t]+/, "", head); sub(/  .*/, "", head)
            n = split(head, t, /[ ,]+/); arg = ""; opts = 0
            for (i = 1; i <= n; i++) if (!is_option(t[i]) && t[i] != "") arg = t[i]
            for (i = 1; i <= n; i++) if (is_option(t[i])) emit(t[i], arg)
        }
        /^[Uu]sage:/ { usage = 1 }
        usage && (NF == 0 || /^[^ \t]/ && !/^[Uu]sage:/) { usage = 0 }
        usage { usage_line($0); next }
        /^[ \t]+-/ { option_line($0) }'
}

# The commands `xmem --help` lists: the indented words after "Commands found:".
_xmem_commands()
{
    "$1" --help 2>/dev/null | awk '/Commands found:/ { on = 1; next } on && NF == 0 { exit }
                                  on && /^[ \t]+[a-z][a-z0-9-]*$/ { print $1 }'
}

_xmem()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local xmem=${COMP_WORDS[0]} i
    COMPREPLY=()
    if ((COMP_CWORD == 1)); then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "$(_xmem_options "$xmem" | cut -f1)" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$(_xmem_commands "$xmem")" -- "$cur")
        fi
        return
    fi
    # After "--" come the job's command and its arguments: bash's own completion.
    for ((i = 2; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == -- ]] && return
    done
    local command=${COMP_WORDS[1]} options arg
    options=$(_xmem_options "$xmem" "$command")
    arg=$(awk -F'\t' -v o="$prev" '$1 == o { print $2 }' <<<"$options")
    if [[ -n $arg ]]; then
        # Lower-case words are the choices (fast|exact|auto, account); capitals name a value
        # (N, NAME), and a file's name or capitals that say so (PATH, OUT.html) a file.
        if [[ $arg =~ ^[a-z0-9-]+(\|[a-z0-9-]+)*$ ]]; then
            mapfile -t COMPREPLY < <(compgen -W "${arg//|/ }" -- "$cur")
        elif [[ $arg == *PATH* || $arg == *FILE* || $arg == *TRACE* || $arg =~ \.[a-z]+$ ]]; then
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(cut -f1 <<<"$options")" -- "$cur")
    else
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
}

# Where nothing is offered (the job's command after "--", a file argument), bash completes
# file names as it would without xmem's completion.
complete -o bashdefault -o default -F _xmem xmem
