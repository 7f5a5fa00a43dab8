#!/bin/bash
# The bash completion (daemon/cli/xmem-completion.bash) against xmem(1): `xmem <TAB>` offers
# the commands the page has a section for, and `xmem CMD --<TAB>` the long options the page
# defines for CMD. The completion reads `--help`, the page is written by hand, and
# docs.man_options holds the page to `--help`: these lists come from the page, not from here.
# usage: check_completion.bash BIN_DIR COMPLETION MAN_SRC CHECK_MAN_PY
set -u
bindir=$1 completion=$2 mansrc=$3 check_man=$4
PATH=$bindir:$PATH
# shellcheck source=/dev/null
source "$completion"
failed=0 choices=0

# COMPREPLY, sorted, for the command line WORDS... with the cursor on the last word.
complete_line()
{
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*" COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _xmem xmem "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort
}

expect_same()
{
    local what=$1 want=$2 got=$3
    if [[ -z $want || $want != "$got" ]]; then
        echo "check_completion: $what: expected (from xmem(1)):"
        sed 's/^/    /' <<<"$want"
        echo "  completed:"
        sed 's/^/    /' <<<"$got"
        failed=1
    fi
}

commands=$(python3 "$check_man" list "$mansrc" | sort)
expect_same "xmem <TAB>" "$commands" "$(complete_line xmem '')"
expect_same "xmem --<TAB>" "$(python3 "$check_man" list "$mansrc" '')" "$(complete_line xmem --)"
for c in $commands; do
    expect_same "xmem $c --<TAB>" "$(python3 "$check_man" list "$mansrc" "$c")" \
        "$(complete_line xmem "$c" --)"
    # An option whose argument is a choice (--mode fast|exact|auto) offers its words.
    while read -r option words; do
        expect_same "xmem $c $option <TAB>" "$(tr ' ' '\n' <<<"$words" | sort)" \
            "$(complete_line xmem "$c" "$option" '')"
        ((++choices))
    done < <(python3 "$check_man" choices "$mansrc" "$c")
done
((choices > 0)) || { echo "check_completion: xmem(1) defines no option with a choice"; failed=1; }
# A prefix narrows the list, and after "--" the job's own command line is not xmem's.
expect_same "xmem est<TAB>" "estimate" "$(complete_line xmem est)"
got=$(complete_line xmem estimate -- python3 --)
[[ -z $got ]] || { echo "check_completion: after '--' xmem's options were offered: $got"; failed=1; }

((failed)) || echo "check_completion: the completion offers what xmem(1) describes"
exit $failed
