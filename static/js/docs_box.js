/* docs_box.js: the overview's "Use in your docs" box. Pick a page and a format (plain HTML, MkDocs, Sphinx);
 * the state comes from this page's own controls (overview) or from a link pasted from any page's address bar
 * (every page keeps its controls in the URL fragment). The snippet text is embed_snippet.js's.
 *
 *   startDocsBox(root, {ownHref, ownState, watch}) -> {update(), text()}
 *     root: element holding #docs-page (<select>, option data-title), #docs-format, #docs-link, #docs-snippet,
 *           #docs-copy, #docs-status; ownState(): [[key, value], ...] of this page's controls now; watch: the
 *           element whose "change" events mean that state changed.
 */
import { snippet, embedSrc } from "./embed_snippet.js";
import { parseHash } from "./url_state.js";

// [href, params] from a pasted link ("…/attention.html#layer=1&head=3"), or null when it names no page of `hrefs`.
export function linkState(link, hrefs) {
  const m = /([A-Za-z0-9_.-]+\.html)(?:[?][^#]*)?(#.*)?$/.exec(String(link || "").trim());
  if (!m || hrefs.indexOf(m[1]) < 0) return null;
  return [m[1], Object.entries(parseHash(m[2] || "").params)];
}

async function copyText(text, area) {
  try { await navigator.clipboard.writeText(text); return true; } catch (e) { /* fall back to a selection */ }
  area.focus(); area.select();
  try { return document.execCommand("copy"); } catch (e) { return false; }
}

export function startDocsBox(root, opts) {
  const $ = (id) => root.querySelector("#" + id);
  const pageSel = $("docs-page"), formatSel = $("docs-format"), link = $("docs-link"), out = $("docs-snippet");
  const status = $("docs-status");
  const hrefs = Array.from(pageSel.options, (o) => o.value);

  function state() {
    const fromLink = linkState(link.value, hrefs);
    if (fromLink) return fromLink;
    const href = pageSel.value;
    return [href, href === opts.ownHref ? opts.ownState() : []];
  }
  function text() {
    const [href, params] = state();
    const opt = Array.from(pageSel.options).find((o) => o.value === href);
    const title = (opt ? opt.dataset.title : href) + " (NILMFormer, nilmbuild)";
    return snippet(formatSel.value, { src: embedSrc(href, params), title: title });
  }
  function update() {
    const fromLink = linkState(link.value, hrefs);
    if (fromLink) pageSel.value = fromLink[0];
    link.setCustomValidity(link.value.trim() && !fromLink ? "not a link to one of this site's pages" : "");
    out.value = text();
    status.textContent = "";
  }
  pageSel.addEventListener("change", () => { link.value = ""; update(); });
  formatSel.addEventListener("change", update);
  link.addEventListener("input", update);
  $("docs-copy").addEventListener("click", async () => {
    status.textContent = (await copyText(out.value, out)) ? "Copied." : "Select the text and copy it (Ctrl+C).";
  });
  if (opts.watch) opts.watch.addEventListener("change", () => { if (pageSel.value === opts.ownHref) update(); });
  update();
  return { update, text };
}
