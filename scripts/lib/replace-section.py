#!/usr/bin/env python3
"""Replaces the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in a Markdown file
with the contents of a report file, so a benchmark script writes its results into the
document itself (scripts/bench and scripts/bench-ray into BENCHMARKS.md).

Usage: replace-section.py NAME DOCUMENT REPORT
Fails, changing nothing, when the document does not hold exactly one pair of the markers."""

import sys


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    name, document, report = sys.argv[1:]
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = open(document, encoding="utf-8").read()
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        sys.exit(f"{document}: expected one {begin} ... {end} pair")
    body = open(report, encoding="utf-8").read().strip("\n")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    with open(document, "w", encoding="utf-8") as out:
        out.write(f"{head}{begin}\n{body}\n{end}{tail}")
    print(f"{document}: the {name} section now holds {report}")


if __name__ == "__main__":
    main()
