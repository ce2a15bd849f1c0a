#!/usr/bin/env bash
# Points comment references to the API contract at docs/contract.md (issue 28, item 5).
#
#   scripts/contract-refs.sh                 apps, libs, test, bench, docs, README.md (not libs/database)
#   scripts/contract-refs.sh libs/database   only those paths (files or folders under git)
#
# In code files only comment text changes: whole comment lines (`*`, `//`, `/*`, `--`) and the
# text after a trailing ` // ` or ` /* `. String literals (test names, OpenAPI descriptions, metric
# help) keep their "contract §N": changing them would change output; docs/contract.md says that
# "contract §N" there means the same section. Markdown files change everywhere.
#
#   contract §N, Contract §N      -> docs/contract.md §N
#   the contract (§N)             -> docs/contract.md §N
#   contract<line break> * §N     -> docs/contract.md<line break> * §N
#   spec §1 / spec §2             -> docs/contract.md §4 / §2 (the external spec's endpoint list and resources)
#
# Idempotent: run it again after a merge. Prints the number of references rewritten per file.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

if [ "$#" -gt 0 ]; then
  mapfile -t files < <(git ls-files -- "$@")
else
  mapfile -t files < <(git ls-files -- apps libs test bench docs README.md | grep -v '^libs/database/')
fi

printf '%s\n' "${files[@]}" |
  grep -E '\.(ts|tsx|js|mjs|cjs|sql|sh|css|md)$' |
  grep -vE '^(docs/contract\.md|libs/client/src/api-schema\.ts|scripts/contract-refs\.sh)$' |
  xargs -r perl -0777 -i -ne '
    my $md = $ARGV =~ /\.md$/;
    my $n = 0;
    my $fix = sub {
      my ($t) = @_;
      $n += ($t =~ s/\bthe contract \(§(\d+)\)/docs\/contract.md §$1/g);
      $n += ($t =~ s/(?<![\/\w.-])[Cc]ontract(?= +§\d)/docs\/contract.md/g);
      $n += ($t =~ s/(?<![\/\w.-])spec §1\b/docs\/contract.md §4/g);
      $n += ($t =~ s/(?<![\/\w.-])spec §2\b/docs\/contract.md §2/g);
      $t =~ s/(docs\/contract\.md §\d+), docs\/contract\.md (§\d+)/$1, $2/g;
      return $t;
    };
    # "contract" ending a comment line whose next comment line starts with "§N".
    $n += s/(?<![\/\w.-])[Cc]ontract(?=[ \t]*\n[ \t]*(?:\*|\/\/|--)[ \t]*\(?§\d)/docs\/contract.md/g;
    if ($md) {
      $_ = $fix->($_);
    } else {
      my @lines = split /(?<=\n)/;
      for (@lines) {
        if (/^[ \t]*(?:\*|\/\/|\/\*|--|\{\/\*)/) {
          $_ = $fix->($_);
        } elsif (/^(.*?[ \t])(\/\/|\/\*)(.*)$/s) {
          my ($code, $lead, $comment) = ($1, $2, $3);
          $_ = $code . $lead . $fix->($comment);
        }
      }
      $_ = join "", @lines;
    }
    print;
    print STDERR "$n\t$ARGV\n" if $n;
  ' 2> >(sort -k2 >&2)
