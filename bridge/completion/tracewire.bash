# SPDX-License-Identifier: Apache-2.0
# bash completion for tracewire(1): commands, subcommands, options and option values.
#
# Installed by `make install` as BASH_COMPLETION_DIR/tracewire, where the bash-completion
# package loads it on first use; `source` it by hand otherwise. It needs nothing from
# bash-completion itself.
#
# It asks the program, so a new command needs no change here: the commands come from the
# "Commands:" list of `tracewire --help` (the table in bridge/main.c), the options of a
# command from its `--help` (GLib's option list), and a command's own subcommands from the
# usage lines of its `--help` ("tracewire context extract ..."). Only the values of options
# that take a fixed word are listed below, in _tracewire_values: add a line there when a
# new option takes one. CONTRIBUTING.md ("Adding a subcommand") has the checklist.

# _tracewire_values PROGRAM COMMAND OPTION: the words OPTION of COMMAND accepts, one per
# line; "__file__" for a file name; nothing when any word goes.
_tracewire_values()
{
    local prog=$1 cmd=$2 opt=$3
    case "$cmd $opt" in
    "convert --from" | "convert -f")
        "$prog" convert --list-formats 2>/dev/null |
            awk '/^Input formats/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $1 }'
        ;;
    "convert --to" | "convert -t")
        "$prog" convert --list-formats 2>/dev/null |
            awk '/^Output formats/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $1 }'
        ;;
    "convert --skew") printf '%s\n' off adjust ;;
    "convert --time-unit") printf '%s\n' auto s ms us ns ;;
    "convert --id-base") printf '%s\n' auto hex dec ;;
    "convert --send-format")
        printf '%s\n' zipkin jaeger-http otlp-http otlp-http-proto jaeger-udp jaeger-udp-binary
        ;;
    "convert --output" | "convert -o" | "convert --rejects" | "convert --undelivered" | \
        "convert --map-file") echo __file__ ;;
    "context "*" --format" | "context "*" -f") printf '%s\n' auto jaeger b3 b3-single w3c ;;
    esac
}

_tracewire()
{
    local prog=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()

    # The command path: the words before the cursor up to the first option.
    local -a path=()
    local i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -*) break ;;
        esac
        path+=("${COMP_WORDS[i]}")
    done

    if ((${#path[@]} == 0)) && ((COMP_CWORD == 1)); then
        local commands
        commands=$("$prog" --help 2>/dev/null |
            awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }')
        mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
        return 0
    fi
    ((${#path[@]} == 0)) && return 0

    # A value for the option before the cursor, or after "--option=".
    local opt="" value=$cur
    if [[ $cur == --*=* ]]; then
        opt=${cur%%=*}
        value=${cur#*=}
    elif [[ $prev == -* ]]; then
        opt=$prev
    fi
    if [[ -n $opt ]]; then
        local words
        words=$(_tracewire_values "$prog" "${path[*]}" "$opt")
        if [[ $words == __file__ ]]; then
            compopt -o filenames 2>/dev/null
            mapfile -t COMPREPLY < <(compgen -f -- "$value")
            return 0
        fi
        if [[ -n $words ]]; then
            mapfile -t COMPREPLY < <(compgen -W "$words" -- "$value")
            [[ $cur == --*=* ]] && COMPREPLY=("${COMPREPLY[@]/#/$opt=}")
            return 0
        fi
    fi

    local help
    help=$("$prog" "${path[@]}" --help 2>/dev/null)
    if [[ $cur == -* ]]; then
        local options
        options=$(printf '%s\n' "$help" | grep -oE '^ +(-[a-zA-Z], )?--[a-z0-9][a-z0-9-]*' |
            grep -oE -- '--[a-z0-9][a-z0-9-]*')
        mapfile -t COMPREPLY < <(compgen -W "$options --help" -- "$cur")
        return 0
    fi
    # Subcommands: the usage lines name them ("tracewire context extract ...").
    local subs
    subs=$(printf '%s\n' "$help" |
        grep -oE "tracewire ${path[*]} [a-z][a-z0-9-]*" | awk '{ print $NF }' | sort -u)
    if [[ -n $subs ]] && ((COMP_CWORD == ${#path[@]} + 1)); then
        mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
        return 0
    fi
    # Anything else is an input file.
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    return 0
}

complete -F _tracewire tracewire
