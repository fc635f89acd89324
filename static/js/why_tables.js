/* why_tables.js: the Why page's two tables, as HTML written with dom_patch.js (rows kept while the selection moves).
 *
 *   qualityTable(el, rows, sel: {device, method}, mass, gaps)
 *                              the quality numbers per device and method (explain/served.py); gaps: the completeness
 *                              columns [[key, heading]] of the model's outputs (page().data.gap_columns; undefined:
 *                              the spec model's hard and soft gap)
 *   attentionTable(el, cmp, statsLabel)
 *                              Spearman per layer: head mean, and min .. max over the heads; with a stats token
 *                              (statsLabel, its name), also the query's head-mean weight on it
 */
import { patchHTML } from "./dom_patch.js";

var COLS = [
  ["deletion_area", "del"], ["random_deletion_area", "del rnd"], ["insertion_area", "ins"], ["random_insertion_area", "ins rnd"],
  ["max_sensitivity", "maxsens"], ["effective_steps", "steps"], ["randomised_spearman", "rho_rand"], ["input_spearman", "rho_inp"],
];
var SPEC_GAPS = [["completeness_hard", "gap hard (Wh)"], ["completeness_soft", "gap soft (Wh)"]];

export function num(v) {
  if (v === null || v === undefined || v !== v) return "–";
  if (Number.isInteger(v)) return String(v);
  var a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(2) : a >= 0.001 ? v.toFixed(3) : a === 0 ? "0" : v.toExponential(1);
}

function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); }

export function qualityTable(el, rows, sel, mass, gaps) {
  var cols = COLS.concat(gaps || SPEC_GAPS);
  var head = "<thead><tr><th>device</th><th>method</th>" + cols.map(function (c) {
    return "<th>" + esc(c[0] === "effective_steps" ? "steps" + Math.round(100 * mass) : c[1]) + "</th>";
  }).join("") + "</tr></thead>";
  var body = rows.map(function (r) {
    var on = r.device === sel.device && r.method === sel.method ? ' class="why-on"' : "";
    var cells = r.active === false ? '<td colspan="' + cols.length + '" style="text-align:left">not predicted in this window: nothing to measure</td>'
      : cols.map(function (c) { return "<td>" + num(r[c[0]]) + "</td>"; }).join("");
    return "<tr" + on + "><td>" + esc(r.device.replace(/_/g, " ")) + "</td><td>" + esc(r.method) + "</td>" + cells + "</tr>";
  }).join("");
  patchHTML(el, head + "<tbody>" + body + "</tbody>");
}

export function attentionTable(el, cmp, statsLabel) {
  if (!cmp) { patchHTML(el, ""); return; }
  var stats = statsLabel ? "<th>on the " + esc(statsLabel) + ", head mean</th>" : "";
  var head = "<thead><tr><th>layer</th><th>rho, head mean</th><th>rho, heads min .. max</th>" + stats + "</tr></thead>";
  var body = cmp.map(function (c, l) {
    var fin = c.heads.filter(function (v) { return v === v; });
    var range = fin.length ? num(Math.min.apply(null, fin)) + " .. " + num(Math.max.apply(null, fin)) : "–";
    var share = statsLabel ? "<td>" + num(c.stats) + "</td>" : "";
    return "<tr><td>" + l + "</td><td>" + num(c.mean) + "</td><td>" + range + "</td>" + share + "</tr>";
  }).join("");
  patchHTML(el, head + "<tbody>" + body + "</tbody>");
}
