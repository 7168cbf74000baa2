"""What a reader sees in an article's HTML, feature by feature: the fingerprint the parity tool compares.

The same reading applies to Zenn's HTML (zenn-markdown-html) and to ours; where the two renderers mark
the same thing differently, both are read to the same fingerprint:

* Zenn draws formulas in the browser (KaTeX, from the TeX source in ``<embed-katex>``), ours are MathML
  carrying their TeX source in ``<annotation>``: a formula is (inline|block, source).
* Zenn serves cards, GitHub and Gist embeds, tweets and diagrams from its embed server (an iframe that
  carries the URL or the diagram's source); ours are link cards, tweet iframes and ``<pre class="mermaid">``.
  A GitHub or Gist embed reads as a card to its URL (a preview of that URL, on both).
* Markup a reader does not see is skipped: Zenn's permalink anchors, hidden ``<a>``/``<br>``
  (``display:none``), the ``!`` of a message and the footnotes' title, both renderers' ``↩︎`` back links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import unquote

FEATURES = (
    "headings",
    "paragraphs",
    "line_breaks",
    "links",
    "images",
    "code_blocks",
    "tables",
    "list_items",
    "task_boxes",
    "footnotes",
    "math",
    "embeds",
    "link_cards",
    "diagrams",
    "messages",
    "details",
    "quotes",
    "emphasis",
    "text",
)
Fingerprint = dict[str, list[str]]

_VOID = {"br", "img", "input", "hr", "wbr", "meta", "link", "source", "col", "area", "base", "embed"}
_CARD_KINDS = {"card", "github", "gist"}
_FOOTNOTE_HREF = re.compile(r"^#(fn|fnref)-[0-9a-f]{4}-")
MATH_MARK = "⟨math⟩"
CARD_MARK = "⟨card⟩"
EMBED_MARK = "⟨embed⟩"


@dataclass
class Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def hidden(self) -> bool:
        return bool(re.search(r"display:\s*none", self.attrs.get("style", "")))


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            # A link inside a link (a footnote reference in a link's text): browsers close the outer one
            # and what is open inside it first (HTML's adoption agency, when nothing inside is a block).
            for depth in range(len(self.stack) - 1, 0, -1):
                if self.stack[depth].tag == "a":
                    del self.stack[depth:]
                    break
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


def words(text: str) -> str:
    return " ".join(text.split())


def fingerprint(html: str) -> Fingerprint:
    """The fingerprint of one article's HTML, from either renderer."""
    reader = _Reader()
    reader.walk(parse(html))
    return {name: reader.found[name] for name in FEATURES}


class _Reader:
    def __init__(self) -> None:
        self.found: Fingerprint = {name: [] for name in FEATURES}

    def walk(self, node: Node) -> None:
        self.found["text"] = [words(self.text(node))]
        self._visit(node)

    # --- what each element is --------------------------------------------------------------------

    def _visit(self, node: Node) -> None:
        for child in node.children:
            if isinstance(child, str):
                continue
            kind = self.kind(child)
            if kind == "skip":
                continue
            if kind == "math":
                self.found["math"].append(self.math(child))
                continue
            if kind == "card":
                self.found["link_cards"].append(self.card_url(child))
                continue
            if kind == "diagram":
                self.found["diagrams"].append(self.diagram(child))
                continue
            if kind == "embed":
                self.found["embeds"].append(self.embed_kind(child))
                continue
            if kind == "code":
                self.found["code_blocks"].append(self.code(child))
                continue
            tag = child.tag
            if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self.found["headings"].append(f"{tag} #{child.attrs.get('id', '')} {words(self.text(child))}")
            elif tag == "p":
                text = words(self.text(child))
                if text:
                    self.found["paragraphs"].append(text)
                    self.found["line_breaks"].append(str(self.breaks(child)))
            elif tag == "a" and "footnote-ref" not in child.classes:
                # A footnote's key is Zenn's random docId or ours: the same place either way.
                href = _FOOTNOTE_HREF.sub(r"#\1-KEY-", child.attrs.get("href", ""))
                self.found["links"].append(f"{href} {words(self.text(child))}")
            elif tag == "img":
                a = child.attrs
                size = f"w={a.get('width', '')} h={a.get('height', '')}"
                self.found["images"].append(f"{a.get('src', '')} alt={a.get('alt', '')} {size}")
            elif tag == "table":
                self.found["tables"].append(self.table(child))
            elif tag == "li" and "footnote-item" in child.classes:
                self.found["footnotes"].append(f"note {words(self.text(child))}")
            elif tag == "li":
                self.found["list_items"].append(f"{self._marker(node, child)} {words(self.text(child))}")
                box = next((n for n in self.elements(child, depth=2) if n.tag == "input"), None)
                if box is not None:
                    self.found["task_boxes"].append("x" if "checked" in box.attrs else " ")
            elif tag == "sup" and "footnote-ref" in child.classes:
                self.found["footnotes"].append(f"ref {words(self.text(child))}")
                continue
            elif tag == "aside" and "msg" in child.classes:
                kind = "alert" if "alert" in child.classes else "message"
                self.found["messages"].append(f"{kind} {words(self.text(child))}")
            elif tag == "details":
                summary = next((n for n in self.elements(child, depth=1) if n.tag == "summary"), None)
                title = words(self.text(summary)) if summary else ""
                self.found["details"].append(f"{title} | {words(self.text(child, skip=summary))}")
            elif tag == "blockquote":
                self.found["quotes"].append(words(self.text(child)))
            elif tag in ("em", "strong", "s", "del"):
                self.found["emphasis"].append(f"{'s' if tag == 'del' else tag} {words(self.text(child))}")
            self._visit(child)

    def kind(self, node: Node) -> str:
        classes = node.classes
        if node.hidden() or "header-anchor-link" in classes or "footnote-backref" in classes:
            return "skip"
        if "msg-symbol" in classes or "footnotes-title" in classes:
            return "skip"
        if node.tag == "embed-katex" or "zenn-katex" in classes or "math" in classes:
            return "math"
        if "link-card" in classes or any(f"zenn-embedded-{k}" in classes for k in _CARD_KINDS):
            return "card"
        if "zenn-embedded-mermaid" in classes or (node.tag == "pre" and "mermaid" in classes):
            return "diagram"
        if "embed-block" in classes:
            return "embed"
        if "code-block-container" in classes or node.tag == "pre":
            return "code"
        return "element"

    # --- readings ---------------------------------------------------------------------------------

    def math(self, node: Node) -> str:
        display = "block" if node.tag in ("section", "div") or node.attrs.get("display-mode") else "inline"
        inside = self.elements(node)
        # Ours: the TeX in <annotation>; Zenn's: the TeX in <embed-katex> (its own text, or a child's).
        source_node = next((n for n in inside if n.tag in ("annotation", "embed-katex")), node)
        if source_node is node and any(n.tag == "math" for n in inside):
            return f"{display} (MathML without its source)"
        number = next((n for n in node.children if isinstance(n, Node) and n.tag == "span"), None)
        suffix = f" {words(self.raw_text(number))}" if number is not None else ""
        return f"{display} {words(self.raw_text(source_node))}{suffix}"

    def card_url(self, node: Node) -> str:
        if node.tag == "a":
            return node.attrs.get("href", "")
        iframe = next((n for n in self.elements(node) if n.tag == "iframe"), None)
        return unquote(iframe.attrs.get("data-content", "")) if iframe else ""

    def diagram(self, node: Node) -> str:
        if node.tag == "pre":
            return self.raw_text(node).strip()
        iframe = next((n for n in self.elements(node) if n.tag == "iframe"), None)
        return unquote(iframe.attrs.get("data-content", "")).strip() if iframe else ""

    def embed_kind(self, node: Node) -> str:
        for name in sorted(node.classes):
            for prefix in ("zenn-embedded-", "embed-"):
                if name.startswith(prefix) and name not in ("embed-block",):
                    return name.removeprefix(prefix)
        return "unknown"

    def code(self, node: Node) -> str:
        label = next((n for n in self.elements(node) if "code-block-filename" in n.classes), None)
        pre = node if node.tag == "pre" else next((n for n in self.elements(node) if n.tag == "pre"), None)
        code = self.raw_text(pre).rstrip() if pre is not None else ""
        # A label's spaces around the name are not seen (Zenn keeps a space after "lang:").
        return f"[{self.raw_text(label).strip() if label is not None else ''}] {code}"

    def table(self, node: Node) -> str:
        rows = []
        for row in (n for n in self.elements(node) if n.tag == "tr"):
            cells = [n for n in row.children if isinstance(n, Node) and n.tag in ("td", "th")]
            rows.append(" | ".join(self._align(cell) + words(self.text(cell)) for cell in cells))
        return " / ".join(rows)

    def _marker(self, parent: Node, item: Node) -> str:
        """What a reader sees before the item: its number in an <ol> (from ``start``), else a bullet."""
        if parent.tag != "ol":
            return "-"
        start = parent.attrs.get("start", "1")
        items = [n for n in parent.children if isinstance(n, Node) and n.tag == "li"]
        position = next(i for i, n in enumerate(items) if n is item)  # by identity: equal items recur
        return f"{int(start) + position if start.isdigit() else start}."

    def _align(self, cell: Node) -> str:
        match = re.search(r"text-align:\s*(\w+)", cell.attrs.get("style", ""))
        return f"<{match[1]}> " if match else ""

    def breaks(self, node: Node) -> int:
        count = 0
        for child in node.children:
            if isinstance(child, Node) and self.kind(child) == "element":
                count += 1 if child.tag == "br" and not child.hidden() else self.breaks(child)
        return count

    # --- text -------------------------------------------------------------------------------------

    def text(self, node: Node, skip: Node | None = None) -> str:
        """Visible text outside code and math (a formula, card, embed or diagram is a mark)."""
        parts: list[str] = []
        for child in node.children:
            if isinstance(child, str):
                parts.append(child)
                continue
            if child is skip:
                continue
            kind = self.kind(child)
            if kind == "math":
                parts.append(f" {MATH_MARK} ")
            elif kind == "card":
                parts.append(f" {CARD_MARK} ")
            elif kind in ("embed", "diagram"):
                parts.append(f" {EMBED_MARK} ")
            elif kind == "element" and child.tag in ("br", "p", "li", "div", "tr", "td", "th", "pre"):
                parts.append(" " + self.text(child, skip) + " ")
            elif kind == "element":
                parts.append(self.text(child, skip))
            elif kind == "code":
                parts.append(" ")
        return "".join(parts)

    def raw_text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return "".join(c if isinstance(c, str) else self.raw_text(c) for c in node.children)

    def elements(self, node: Node, depth: int = 1000) -> list[Node]:
        found: list[Node] = []
        if depth <= 0:
            return found
        for child in node.children:
            if isinstance(child, Node):
                found.append(child)
                found.extend(self.elements(child, depth - 1))
        return found
