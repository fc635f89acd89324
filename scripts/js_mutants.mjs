// The deliberate mutants of one JS module, for scripts/mutants.py (issue 36; docs/testing.md).
//
//   node scripts/js_mutants.mjs static/js/url_state.js   -> JSON [{start, end, text, what, line}, ...]
//
// The same mutations as the Python side, on acorn's syntax tree: each comparison to its boundary or negation,
// each arithmetic, bitwise and logical operator swapped, a unary `!`/`-` dropped, ++/-- and compound assignments
// swapped, each integer to n+1 and n-1 (0 to 1) and each other number
// doubled, true/false flipped, each non-empty string changed,
// Math.min/max, floor/ceil and some/every swapped, a call statement or a `throw` removed, break/continue swapped.
// Left out, as in Python: the text of messages (the arguments of `throw`, console.* and Error calls), regular
// expressions and the `import`/`export` lines. start/end are UTF-16 offsets (JS string indices); only the
// mutants whose text still parses as a module are listed.
import { readFileSync } from "node:fs";
import { parse } from "acorn";

const COMPARE = { "<": "<=", "<=": "<", ">": ">=", ">=": ">", "===": "!==", "!==": "===", "==": "!=", "!=": "==" };
const BINARY = {
  "+": "-", "-": "+", "*": "/", "/": "*", "%": "*", "**": "*",
  "&": "|", "|": "&", "^": "&", "<<": ">>", ">>": "<<", ">>>": ">>",
};
const LOGICAL = { "&&": "||", "||": "&&", "??": "||" };
const ASSIGN = { "+=": "-=", "-=": "+=", "*=": "/=", "/=": "*=", "|=": "&=", "&=": "|=" };
const CALLS = { min: "max", max: "min", floor: "ceil", ceil: "floor", some: "every", every: "some" };
const OPTIONS = { ecmaVersion: "latest", sourceType: "module", locations: true };

const path = process.argv[2];
const source = readFileSync(path, "utf8");
const tree = parse(source, OPTIONS);
const found = [];

// The first 40 characters of a node, on one line, to name a removed statement.
const head = (node) => source.slice(node.start, Math.min(node.end, node.start + 40)).replace(/\s+/g, " ");

function add(node, start, end, text, what) {
  found.push({ start, end, text, what, line: node.loc.start.line });
}

// The operator token between the end of `left` and the start of `right`.
function opSpan(left, right, op) {
  const at = source.indexOf(op, left.end);
  return at >= 0 && at + op.length <= right.start ? [at, at + op.length] : null;
}

function quiet(node) {
  if (node.type === "ThrowStatement") return true;
  if (node.type === "NewExpression" && /Error$/.test(node.callee.name || "")) return true;
  const c = node.type === "CallExpression" && node.callee;
  if (!c || c.type !== "MemberExpression") return false;
  const obj = c.object; // console.warn(...) or win.console.warn(...)
  return obj.name === "console" || (obj.type === "MemberExpression" && obj.property.name === "console");
}

function visit(node) {
  switch (node.type) {
    case "ImportDeclaration":
    case "ExportAllDeclaration":
      return;
    case "BinaryExpression":
    case "LogicalExpression": {
      const to = COMPARE[node.operator] || BINARY[node.operator] || LOGICAL[node.operator];
      const span = to && opSpan(node.left, node.right, node.operator);
      if (span) add(node, span[0], span[1], to, `${node.operator} -> ${to}`);
      break;
    }
    case "AssignmentExpression": {
      const span = node.operator !== "=" && opSpan(node.left, node.right, node.operator);
      if (!span) break;
      for (const to of ASSIGN[node.operator] ? [ASSIGN[node.operator], "="] : ["="]) {
        add(node, span[0], span[1], to, `${node.operator} -> ${to}`);
      }
      break;
    }
    case "UpdateExpression": {
      const to = node.operator === "++" ? "--" : "++";
      const at = source.indexOf(node.operator, node.start);
      add(node, at, at + 2, to, `${node.operator} -> ${to}`);
      break;
    }
    case "UnaryExpression":
      if (node.operator === "!" || node.operator === "-") {
        add(node, node.start, node.end, source.slice(node.argument.start, node.argument.end), `drop unary ${node.operator}`);
      }
      break;
    case "Literal":
      if (node.regex) break;
      if (typeof node.value === "number") {
        const v = node.value;
        const to = v === 0 ? [1] : Number.isInteger(v) ? [v + 1, v - 1] : [v * 2];
        for (const t of to) add(node, node.start, node.end, `(${t})`, `${node.raw} -> ${t}`);
      } else if (typeof node.value === "boolean") {
        add(node, node.start, node.end, String(!node.value), `${node.value} -> ${!node.value}`);
      } else if (typeof node.value === "string" && node.value) {
        add(node, node.start, node.end, JSON.stringify("XX" + node.value + "XX"), `${node.raw} -> "XX...XX"`);
      }
      break;
    case "CallExpression": {
      const c = node.callee;
      const name = c.type === "MemberExpression" && !c.computed ? c.property.name : null;
      if (name && CALLS[name]) add(node, c.property.start, c.property.end, CALLS[name], `${name} -> ${CALLS[name]}`);
      break;
    }
    case "ExpressionStatement":
      if (node.expression.type === "CallExpression") {
        add(node, node.start, node.end, ";", `${head(node)} -> removed`);
      }
      break;
    case "ThrowStatement":
      add(node, node.start, node.end, ";", `${head(node)} -> removed`);
      break;
    case "BreakStatement":
    case "ContinueStatement":
      if (!node.label) {
        const to = node.type === "BreakStatement" ? "continue;" : "break;";
        add(node, node.start, node.end, to, `${source.slice(node.start, node.end)} -> ${to}`);
      }
      break;
  }
  if (quiet(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (key === "loc") continue;
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child && typeof child.type === "string") visit(child);
    }
  }
}

visit(tree);
const parses = (m) => {
  try {
    parse(source.slice(0, m.start) + m.text + source.slice(m.end), OPTIONS);
    return true;
  } catch {
    return false;
  }
};
found.sort((a, b) => a.start - b.start || a.end - b.end);
process.stdout.write(JSON.stringify(found.filter(parses)));
