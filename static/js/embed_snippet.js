/* embed_snippet.js: the "Use in your docs" snippets for one view (docs/embedding.md shows the same text).
 *
 *   snippet(format, {src, title, height}) -> string; format: "html" | "mkdocs" | "sphinx"
 *   embedSrc(href, params)                -> "attention.html#embed&layer=1" (params: [[key, value], ...])
 *
 * Every snippet is an <iframe data-nilmbuild> plus the listener that sizes it from the page's
 * {type: "nilmbuild:height"} message (embed_height.js); the listener is the same few lines in each format.
 */
import { formatHash } from "./url_state.js";

export const FORMATS = ["html", "mkdocs", "sphinx"];

export const LISTENER =
  "<script>\n" +
  "addEventListener(\"message\", function (e) {\n" +
  "  var d = e.data;\n" +
  "  if (!d || d.type !== \"nilmbuild:height\" || !(d.height > 0)) return;\n" +
  "  document.querySelectorAll(\"iframe[data-nilmbuild]\").forEach(function (f) {\n" +
  "    if (f.contentWindow === e.source) f.style.height = d.height + \"px\";\n" +
  "  });\n" +
  "});\n" +
  "</script>";

export function embedSrc(href, params) {
  return String(href).replace(/#.*$/, "") + formatHash(true, params || []);
}

function attr(s) {
  return String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function iframe(o) {
  return "<iframe data-nilmbuild src=\"" + attr(o.src) + "\" title=\"" + attr(o.title) + "\"\n" +
    "        style=\"width:100%;height:" + Math.round(o.height || 480) + "px;border:0\" loading=\"lazy\"></iframe>";
}

function indent(text, pad) { return text.split("\n").map((l) => (l ? pad + l : l)).join("\n"); }

export function snippet(format, o) {
  const html = iframe(o) + "\n" + LISTENER;
  if (format === "html") return html;
  if (format === "mkdocs") return "<!-- Markdown page (raw HTML passes through MkDocs) -->\n" + html;
  if (format === "sphinx") return ".. raw:: html\n\n" + indent(html, "   ");
  throw new Error("unknown snippet format " + JSON.stringify(format) + " (use " + FORMATS.join(", ") + ")");
}
