# bench/section.sh: sourced by the bench scripts that own a section of
# bench/RESULTS.md (run.sh keeps such sections when it rewrites the report).

# replace_section NAME: replace (or add) the section between
# <!-- begin NAME --> and <!-- end NAME --> of bench/RESULTS.md with stdin.
replace_section() {
	local name=$1 out=bench/RESULTS.md body
	body=$(cat)
	{
		if [[ -f $out ]]; then
			awk -v b="<!-- begin $name -->" -v e="<!-- end $name -->" '$0 == b { skip = 1 } !skip { print } $0 == e { skip = 0 }' "$out"
		fi
		echo "<!-- begin $name -->"
		echo "$body"
		echo "<!-- end $name -->"
	} >"$out.new"
	mv "$out.new" "$out"
}
