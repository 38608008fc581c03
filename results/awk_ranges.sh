# Sourced (from the repository root) by the report generators whose awk
# tables give a min–max over seeds (results/fork_rules.sh,
# results/methods_budgets.sh and so methods_budgets_others.sh, and
# results/strategy_tables.sh): ranges_awk holds awk functions to put in
# front of an awk program.
#   lo(a, b), hi(a, b)  the smaller, larger of a and b as numbers, where a
#                       "" is none yet (fold them over values from "")
#   range(a, b)         "a" when a equals b, else "a–b"
# shellcheck disable=SC2034 # used by the scripts that source this file
ranges_awk='
	function lo(a, b) { return a == "" || b + 0 < a + 0 ? b : a }
	function hi(a, b) { return a == "" || b + 0 > a + 0 ? b : a }
	function range(a, b) { return a == b ? a : a "–" b }
'
