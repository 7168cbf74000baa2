// Renders Markdown with Zenn's own renderer (zenn-markdown-html, installed by `make parity-zenn` into
// .parity/node_modules). Reads {"name": "markdown", ...} as JSON on stdin, writes {"name": "html", ...}.
// embedOrigin makes the embeds Zenn serves from its embed server (cards, tweets, GitHub, Gist, mermaid)
// come out as marked iframes that carry their URL or source, so the comparison can read them.
import markdownToHtml from 'zenn-markdown-html';
import fs from 'node:fs';

const input = JSON.parse(fs.readFileSync(0, 'utf8'));
const output = {};
for (const [name, text] of Object.entries(input)) {
  output[name] = await markdownToHtml(text, { embedOrigin: 'https://embed.zenn.studio' });
}
process.stdout.write(JSON.stringify(output));
