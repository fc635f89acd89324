/* story.js: places a page's computed findings on its figures (issue 35 item 3).
 *
 * The findings are sentences Python computed from the loaded model's tensors (nilmbuild/site/story.py), handed over
 * as page().data.story.findings = [{target, text, preset: {label, hash} | null}]. This module only places each one:
 * a callout at the top edge of the figure that `target` selects (inserted just before it, pointing down into it,
 * so it hides none of the figure; `target` is the figure's wrapper where overlays are positioned inside one), with
 * a link that applies the finding's preset through the page's URL state (url_state.js follows hashchange). It
 * writes no number of its own.
 *
 *   placeFindings(story) -> [callout elements]
 */
import { element } from "./core.js";

function callout(f) {
  var box = element("div", { class: "nb-finding", role: "note" });
  box.appendChild(element("strong", {}, "Notice: "));
  box.appendChild(document.createTextNode(f.text));
  if (f.preset) {
    var a = element("a", { href: "#" + f.preset.hash, class: "nb-finding-link" }, "Show me");
    a.title = f.preset.label;
    box.appendChild(a);
  }
  return box;
}

export function placeFindings(story) {
  var placed = [];
  ((story && story.findings) || []).forEach(function (f) {
    var target = document.querySelector(f.target);
    if (!target || !target.parentNode) return;
    var anchor = element("div", { class: "nb-finding-anchor", "data-target": f.target });
    var box = callout(f);
    anchor.appendChild(box);
    target.parentNode.insertBefore(anchor, target);
    placed.push(box);
  });
  return placed;
}
