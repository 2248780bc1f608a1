#!/usr/bin/env python3
"""Checks that an HTML page parses: every element the page opens is closed in order (void
elements and the ones HTML lets end implicitly aside), one <html> holding a <head> and a <body>,
nothing after </html>. Exits 1 naming the first line that breaks it.

Usage: html_balanced.py FILE
"""
import html.parser
import sys

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
# Elements whose end tag HTML allows to be left out (closed by the next sibling or the parent).
OPTIONAL_END = {"li", "p", "td", "th", "tr", "thead", "tbody", "tfoot", "option", "dt", "dd"}


class Checker(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.seen, self.closed_html, self.problem = [], set(), False, None

    def fail(self, why):
        if self.problem is None:
            self.problem = f"line {self.getpos()[0]}: {why}"

    def handle_starttag(self, tag, attrs):
        if self.closed_html:
            self.fail(f"<{tag}> after </html>")
        self.seen.add(tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.seen.add(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack and self.stack[-1] != tag and self.stack[-1] in OPTIONAL_END:
            self.stack.pop()
        if not self.stack or self.stack[-1] != tag:
            self.fail(f"</{tag}> closes {'<' + self.stack[-1] + '>' if self.stack else 'nothing'}")
            return
        self.stack.pop()
        self.closed_html = tag == "html"


def main():
    checker = Checker()
    with open(sys.argv[1], encoding="utf-8") as f:
        checker.feed(f.read())
    checker.close()
    if checker.problem is None and checker.stack:
        checker.problem = f"unclosed <{'><'.join(checker.stack)}> at the end"
    for tag in ("html", "head", "body"):
        if checker.problem is None and tag not in checker.seen:
            checker.problem = f"no <{tag}>"
    if checker.problem:
        print(f"{sys.argv[1]}: {checker.problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
