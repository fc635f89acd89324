/* dom_patch.js: set an element's content from an HTML string, touching only what differs.
 *
 *   patchHTML(el, html)   el's children become `html`; nodes with the same shape (element name, position)
 *                         are kept and only their changed attributes and text are written.
 *   escapeHTML(s)         s as text safe inside an element or a quoted attribute of such a string: every string
 *                         a user's file brought (device names, column names) goes through it.
 *
 * Why: pages rewrite tables on every sample switch. Rebuilding one (innerHTML) re-lays out and repaints the
 * whole table; patching it repaints only the cells whose numbers changed (FiLM page, sample select held:
 * ~4 frames/s of the ~22 it ran at went to rebuilding its condition table).
 */

function sameShape(a, b) { return a.nodeType === b.nodeType && a.nodeName === b.nodeName; }

function syncAttributes(a, b) {
  for (let i = a.attributes.length - 1; i >= 0; i--) {
    const name = a.attributes[i].name;
    if (!b.hasAttribute(name)) a.removeAttribute(name);
  }
  for (const at of b.attributes) if (a.getAttribute(at.name) !== at.value) a.setAttribute(at.name, at.value);
}

function morph(cur, next) {   // cur: a live node; next: the node whose children cur's children should become
  const a = cur.childNodes, b = next.childNodes;
  while (a.length > b.length) cur.removeChild(cur.lastChild);
  for (let k = 0; k < b.length; k++) {
    if (k >= a.length) cur.appendChild(b[k].cloneNode(true));
    else if (!sameShape(a[k], b[k])) cur.replaceChild(b[k].cloneNode(true), a[k]);
    else if (a[k].nodeType === 1) { syncAttributes(a[k], b[k]); morph(a[k], b[k]); }
    else if (a[k].nodeValue !== b[k].nodeValue) a[k].nodeValue = b[k].nodeValue;
  }
}

const ENTITIES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHTML(s) { return String(s).replace(/[&<>"']/g, function (c) { return ENTITIES[c]; }); }

export function patchHTML(el, html) {
  const t = el.ownerDocument.createElement("template");
  t.innerHTML = html;
  morph(el, t.content);
}
