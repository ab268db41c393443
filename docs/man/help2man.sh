#!/bin/sh
# help2man.sh: a manual page from a program's --help text, so that the page and the program
# never disagree. Usage: help2man.sh PROGRAM NAME SECTION VERSION "SUMMARY" OUT
set -eu
prog=$1 name=$2 sect=$3 version=$4 summary=$5 out=$6
text=$("$prog" --help) || { echo "help2man.sh: $prog --help failed" >&2; exit 1; }
{
    echo ".TH $(echo "$name" | tr a-z A-Z) $sect \"\" \"csn $version\" \"csn manual\""
    echo ".SH NAME"
    echo "$name \\- $summary"
    echo ".SH DESCRIPTION"
    echo "The text below is what \\fB$name \\-\\-help\\fR prints."
    echo ".PP"
    echo ".nf"
    printf '%s\n' "$text" | sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/^$/\\\&/'
    echo ".fi"
    echo ".SH SEE ALSO"
    echo "csn(3), csnrun(1), nettest(1), pingpong(1), logp(1), pipeline(1), threadtest(1)."
    echo "The sources' docs/ directory (installed in share/doc/csn) holds the same references."
} >"$out.tmp"
mv "$out.tmp" "$out"
