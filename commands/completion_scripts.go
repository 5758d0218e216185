package commands

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// The completion scripts for bash, zsh and fish, from the model in
// completion_model.go.

// sq quotes s for a POSIX or fish shell in single quotes.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fishq quotes s for fish, which escapes inside single quotes.
func fishq(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

// shAction is the bash/zsh code completing one value kind.
func shAction(v complValue, zsh bool) string {
	list := func(sub string) string {
		if zsh {
			return "compadd -- ${(f)\"$(_seglog_call " + sub + ")\"}"
		}
		return "_seglog_reply \"$(_seglog_call " + sub + ")\""
	}
	switch v.kind {
	case kindWords:
		if zsh {
			return "compadd -- " + strings.Join(v.words, " ")
		}
		return "_seglog_reply " + sq(strings.Join(v.words, "\n"))
	case kindTopics:
		return list("topics")
	case kindGroups:
		return list("groups")
	case kindPartitions:
		return list(`partitions "${pos[` + map[bool]string{true: "1", false: "0"}[zsh] + `]}"`)
	case kindDirs:
		if zsh {
			return "_files -/"
		}
		return "COMPREPLY=($(compgen -d -- \"$cur\"))"
	case kindFiles:
		if zsh {
			return "_files"
		}
		return "COMPREPLY=($(compgen -f -- \"$cur\"))"
	}
	return ":"
}

// shCases writes the per-command parts both bash and zsh scripts share:
// value flags, flag values and arguments.
func shCases(b *bytes.Buffer, app *cli.App, zsh bool) {
	globals := docFlags(app.Flags)
	globalValueFlags := valueFlagNames(globals)
	// _seglog_value_flags CMD: the flags of CMD that take a value.
	b.WriteString("_seglog_value_flags() {\n    case $1 in\n")
	for _, cc := range complCommands(app) {
		if names := valueFlagNames(docFlags(cc.cmd.Flags)); len(names) > 0 {
			fmt.Fprintf(b, "    %s) echo %s ;;\n", cc.key, sq(" "+strings.Join(append(names, globalValueFlags...), " ")+" "))
		}
	}
	fmt.Fprintf(b, "    *) echo %s ;;\n    esac\n}\n\n", sq(" "+strings.Join(globalValueFlags, " ")+" "))

	// _seglog_flag_value CMD FLAG: complete FLAG's value; false if FLAG takes none.
	b.WriteString("_seglog_flag_value() {\n    case $1:$2 in\n")
	for _, cc := range complCommands(app) {
		for _, f := range docFlags(cc.cmd.Flags) {
			if !f.takesValue() {
				continue
			}
			var pats []string
			for _, n := range f.names() {
				pats = append(pats, cc.key+":"+n)
			}
			fmt.Fprintf(b, "    %s) %s ;;\n", strings.Join(pats, "|"), shAction(flagValue(f), zsh))
		}
	}
	for _, f := range globals {
		if !f.takesValue() {
			continue
		}
		var pats []string
		for _, n := range f.names() {
			pats = append(pats, "*:"+n)
		}
		fmt.Fprintf(b, "    %s) %s ;;\n", strings.Join(pats, "|"), shAction(flagValue(f), zsh))
	}
	b.WriteString("    *) return 1 ;;\n    esac\n}\n\n")

	// _seglog_flags CMD: every flag of CMD.
	b.WriteString("_seglog_flags() {\n    case $1 in\n")
	gl := append(allFlagNames(globals), "--help", "-h")
	for _, cc := range complCommands(app) {
		fmt.Fprintf(b, "    %s) echo %s ;;\n", cc.key, sq(strings.Join(append(allFlagNames(docFlags(cc.cmd.Flags)), gl...), " ")))
	}
	fmt.Fprintf(b, "    *) echo %s ;;\n    esac\n}\n\n", sq(strings.Join(append(gl, "--version", "-v"), " ")))

	// _seglog_arg CMD N: complete CMD's N-th (0-based) argument.
	b.WriteString("_seglog_arg() {\n    case $1 in\n")
	for _, cc := range complCommands(app) {
		first, second, rest := argValue(app, cc.cmd, 0), argValue(app, cc.cmd, 1), argValue(app, cc.cmd, 2)
		if slices.Equal(first.words, second.words) && first.kind == second.kind && second.kind == rest.kind {
			fmt.Fprintf(b, "    %s) %s ;;\n", cc.key, shAction(first, zsh))
			continue
		}
		fmt.Fprintf(b, "    %s)\n        case $2 in\n        0) %s ;;\n        1) %s ;;\n        *) %s ;;\n        esac ;;\n",
			cc.key, shAction(first, zsh), shAction(second, zsh), shAction(rest, zsh))
	}
	fmt.Fprintf(b, "    help) %s ;;\n", shAction(complValue{kindWords, commandNames(app)}, zsh))
	b.WriteString("    esac\n}\n\n")

	// _seglog_sub CMD WORD: whether WORD, CMD's first argument, names one
	// of its subcommands.
	b.WriteString("_seglog_sub() {\n    case $1:$2 in\n")
	if pairs := subcommandPairs(app); len(pairs) > 0 {
		fmt.Fprintf(b, "    %s) return 0 ;;\n", strings.Join(pairs, "|"))
	}
	b.WriteString("    esac\n    return 1\n}\n\n")
}

const shParse = `    # Find the command and its arguments so far, and a --data-dir to pass on.
    local cmd= i w skip=0 dashdash=0 vf
    local -a pos dd
    vf=$(_seglog_value_flags '')
    for ((i = FIRST; i < LAST; i++)); do
        w=${words[i]}
        if ((skip)); then
            [[ $w == = ]] && continue # bash splits --flag=value at '='
            skip=0
            continue
        fi
        if ((dashdash)); then
            pos+=("$w")
            continue
        fi
        case $w in
        --) dashdash=1 ;;
        -d | --data-dir) dd=(--data-dir "${words[i + 1]}") ; skip=1 ;;
        -d=* | --data-dir=*) dd=(--data-dir "${w#*=}") ;;
        -*=*) ;;
        -*) [[ $vf == *" $w "* ]] && skip=1 ;;
        *)
            if [[ -z $cmd ]]; then
                cmd=$w
                vf=$(_seglog_value_flags "$cmd")
            elif ((${#pos[@]} == 0)) && _seglog_sub "$cmd" "$w"; then
                cmd=$cmd-$w
                vf=$(_seglog_value_flags "$cmd")
            else
                pos+=("$w")
            fi
            ;;
        esac
    done
`

func bashScript(app *cli.App) string {
	var b bytes.Buffer
	b.WriteString(`# bash completion for seglog.
# Generated by ` + "`go generate ./...`" + ` from the command definitions; do not edit.
# Install: seglog completion bash > /etc/bash_completion.d/seglog
#      or: source <(seglog completion bash)

# _seglog_call ARGS: seglog's hidden completion helper, on the data
# directory given on the command line (or $SEGLOG_DATA_DIR); silent on error.
_seglog_call() {
    local -a d=("${dd[@]}")
    if ((${#d[@]} == 2)); then d[1]=${d[1]/#\~/$HOME}; fi
    "${words[0]}" "${d[@]}" __complete "$@" 2>/dev/null
}

# _seglog_reply LINES: the lines starting with $cur.
_seglog_reply() {
    local IFS=$'\n'
    COMPREPLY=($(compgen -W "$1" -- "$cur"))
}

`)
	shCases(&b, app, false)
	b.WriteString(`_seglog() {
    local -a words=("${COMP_WORDS[@]}")
    local cword=$COMP_CWORD
    local cur=${words[cword]} prev=${words[cword - 1]}
    if [[ $cur == = ]]; then
        cur= # --flag=<TAB>
        prev=${words[cword - 1]}
    elif [[ $prev == = ]] && ((cword >= 2)); then
        prev=${words[cword - 2]} # --flag=val<TAB>
    fi
    COMPREPLY=()
`)
	b.WriteString(strings.NewReplacer("FIRST", "1", "LAST", "cword").Replace(shParse))
	b.WriteString(`
    if ! ((dashdash)) && [[ $prev == -* && $(_seglog_value_flags "$cmd") == *" $prev "* ]]; then
        _seglog_flag_value "$cmd" "$prev"
        return 0
    fi
    if [[ $cur == -* ]] && ! ((dashdash)); then
        COMPREPLY=($(compgen -W "$(_seglog_flags "$cmd")" -- "$cur"))
        return 0
    fi
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "` + strings.Join(commandNames(app), " ") + `" -- "$cur"))
        return 0
    fi
    _seglog_arg "$cmd" "${#pos[@]}"
    return 0
}

complete -F _seglog seglog
`)
	return b.String()
}

func zshScript(app *cli.App) string {
	var b bytes.Buffer
	b.WriteString(`#compdef seglog
# zsh completion for seglog.
# Generated by ` + "`go generate ./...`" + ` from the command definitions; do not edit.
# Install: seglog completion zsh > "${fpath[1]}/_seglog"
#      or: source <(seglog completion zsh)

# _seglog_call ARGS: seglog's hidden completion helper, on the data
# directory given on the command line (or $SEGLOG_DATA_DIR); silent on error.
_seglog_call() {
    local -a d
    d=("${dd[@]}")
    if ((${#d} == 2)); then d[2]=${~d[2]}; fi
    ${words[1]} "${d[@]}" __complete "$@" 2>/dev/null
}

`)
	shCases(&b, app, true)
	b.WriteString("_seglog_commands() {\n    local -a cmds\n    cmds=(\n")
	for _, c := range visible(app.Commands) {
		for _, n := range c.Names() {
			fmt.Fprintf(&b, "        %s\n", sq(n+":"+strings.ReplaceAll(shortUsage(c.Usage), ":", `\:`)))
		}
	}
	b.WriteString("        'help:show help for a command'\n    )\n    _describe -t commands 'seglog command' cmds\n}\n\n")
	b.WriteString(`_seglog() {
    setopt localoptions ksharrays
    local cur=${words[CURRENT - 1]} prev=${words[CURRENT - 2]}
`)
	// With ksharrays, words is 0-based like bash's.
	b.WriteString(strings.NewReplacer("FIRST", "1", "LAST", "CURRENT - 1").Replace(shParse))
	b.WriteString(`    unsetopt ksharrays
    if [[ $prev == -* ]] && ! ((dashdash)) && [[ $(_seglog_value_flags "$cmd") == *" $prev "* ]]; then
        _seglog_flag_value "$cmd" "$prev"
        return
    fi
    if [[ $cur == -* ]] && ! ((dashdash)); then
        compadd -- ${=$(_seglog_flags "$cmd")}
        return
    fi
    if [[ -z $cmd ]]; then
        _seglog_commands
        return
    fi
    _seglog_arg "$cmd" "${#pos}"
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _seglog "$@"
else
    compdef _seglog seglog
fi
`)
	return b.String()
}

func fishAction(v complValue) string {
	switch v.kind {
	case kindWords:
		return "-x -a " + fishq(strings.Join(v.words, " "))
	case kindTopics:
		return "-x -a '(__seglog_call topics)'"
	case kindGroups:
		return "-x -a '(__seglog_call groups)'"
	case kindPartitions:
		return "-x -a '(__seglog_call partitions (__seglog_arg 1))'"
	case kindDirs:
		return "-r -f -a '(__fish_complete_directories)'"
	case kindFiles:
		return "-r -F"
	}
	return "-x"
}

func fishFlag(b *bytes.Buffer, cond string, f docFlag) {
	fmt.Fprintf(b, "complete -c seglog -n %s -l %s", fishq(cond), f.long)
	for _, a := range f.aliases {
		if len(a) == 1 {
			fmt.Fprintf(b, " -s %s", a)
		} else {
			fmt.Fprintf(b, " -l %s", a)
		}
	}
	if f.takesValue() {
		b.WriteString(" " + fishAction(flagValue(f)))
	}
	fmt.Fprintf(b, " -d %s\n", fishq(shortUsage(f.usage)))
}

func fishScript(app *cli.App) string {
	var b bytes.Buffer
	globals := docFlags(app.Flags)
	vf := valueFlagNames(globals)
	b.WriteString(strings.ReplaceAll(`# fish completion for seglog.
# Generated by `+"`go generate ./...`"+` from the command definitions; do not edit.
# Install: seglog completion fish > ~/.config/fish/completions/seglog.fish

# __seglog_words: the command line so far, without flags and their values;
# sets __seglog_dd to a --data-dir given on it.
function __seglog_words
    set -l tokens (commandline -opc)
    set -g __seglog_dd
    set -l skip 0
    set -l dashdash 0
    set -l cmd
    set -l out
    for w in $tokens[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        if test $dashdash = 1
            set -a out $w
            continue
        end
        switch $w
            case --
                set dashdash 1
            case -d --data-dir
                set -g __seglog_dd --data-dir
                set skip 1
            case '-d=*' '--data-dir=*'
                set -g __seglog_dd --data-dir (string replace -r '^[^=]*=' '' -- $w)
            case '-*=*'
            case '-*'
                if contains -- $w (__seglog_value_flags $cmd)
                    set skip 1
                end
            case '*'
                if test -z "$cmd"
                    set cmd $w
                    set -a out $w
                else if test (count $out) -eq 1; and contains -- "$cmd:$w" SUBCOMMANDS
                    # "kafka export" is the command kafka-export.
                    set cmd $cmd-$w
                    set out[1] $cmd
                else
                    set -a out $w
                end
        end
    end
    # The value of a trailing -d: look it up again.
    set -l i (contains -i -- --data-dir $tokens; or contains -i -- -d $tokens)
    if test -n "$i"; and test (count $tokens) -gt $i
        set -g __seglog_dd --data-dir $tokens[(math $i + 1)]
    end
    test (count $out) -gt 0; and printf '%s\n' $out
end

function __seglog_value_flags
    switch "$argv[1]"
`, "SUBCOMMANDS", strings.Join(subcommandPairs(app), " ")))
	for _, cc := range complCommands(app) {
		if names := valueFlagNames(docFlags(cc.cmd.Flags)); len(names) > 0 {
			fmt.Fprintf(&b, "        case %s\n            printf '%%s\\n' %s\n", cc.key, strings.Join(append(names, vf...), " "))
		}
	}
	fmt.Fprintf(&b, "        case '*'\n            printf '%%s\\n' %s\n    end\nend\n\n", strings.Join(vf, " "))
	b.WriteString(`# __seglog_cmd: the command being completed, if any.
function __seglog_cmd
    set -l w (__seglog_words)
    test (count $w) -ge 1; and echo $w[1]
end

# __seglog_using CMD [N]: completing CMD, with N arguments given (if N).
function __seglog_using
    set -l w (__seglog_words)
    test (count $w) -ge 1; or return 1
    test "$w[1]" = "$argv[1]"; or return 1
    test (count $argv) -lt 2; and return 0
    test (math (count $w) - 1) -eq $argv[2]
end

# __seglog_arg N: CMD's N-th argument (1-based).
function __seglog_arg
    set -l w (__seglog_words)
    set -l i (math $argv[1] + 1)
    test (count $w) -ge $i; and echo $w[$i]
end

# __seglog_call ARGS: seglog's hidden completion helper, on the data
# directory given on the command line (or $SEGLOG_DATA_DIR); silent on error.
function __seglog_call
    __seglog_words >/dev/null
    set -l exe (commandline -opc)[1]
    $exe $__seglog_dd __complete $argv 2>/dev/null
end

complete -c seglog -f
complete -c seglog -n 'not __seglog_cmd >/dev/null' -a help -d 'show help for a command'
complete -c seglog -n '__seglog_using help 0' -a ` + fishq(strings.Join(commandNames(app), " ")) + `
complete -c seglog -l help -s h -d 'show help'
`)
	for _, f := range globals {
		fishFlag(&b, "true", f)
	}
	for _, cc := range complCommands(app) {
		cmd, key := cc.cmd, cc.key
		fmt.Fprintf(&b, "\n# %s\n", strings.ReplaceAll(key, "-", " "))
		if cc.parent == "" {
			for _, n := range cmd.Names() {
				fmt.Fprintf(&b, "complete -c seglog -n 'not __seglog_cmd >/dev/null' -a %s -d %s\n", n, fishq(shortUsage(cmd.Usage)))
			}
		}
		for _, f := range docFlags(cmd.Flags) {
			fishFlag(&b, "__seglog_using "+key, f)
		}
		for n := 0; n < 3; n++ {
			v := argValue(app, cmd, n)
			if v.kind == kindNone {
				continue
			}
			cond := fmt.Sprintf("__seglog_using %s %d", key, n)
			if n == 2 {
				cond = "__seglog_using " + key + "; and not __seglog_using " + key + " 0; and not __seglog_using " + key + " 1"
			}
			act := strings.TrimPrefix(strings.TrimPrefix(fishAction(v), "-x "), "-r ")
			fmt.Fprintf(&b, "complete -c seglog -n %s %s\n", fishq(cond), act)
		}
	}
	return b.String()
}
