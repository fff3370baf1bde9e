// The unit list and drill-down of report.html. Trace data reaches the page only as text
// (textContent, text nodes, attribute values set through the DOM): never as HTML.
"use strict";
(function () {
  const PAGE_SIZE = 50;
  const ANY = "";
  const DISAGREE = "\u0000disagreements";

  function readJson(id) {
    return JSON.parse(document.getElementById(id).textContent);
  }

  const units = readJson("abt-units");
  const rows = readJson("abt-rows");
  let messages = null; // the context table is parsed on the first drill-down only
  let searchTexts = null; // built on the first text search only
  let shown = rows.map((_, index) => index);
  let page = 0;
  let selected = -1;

  function el(name, attrs, ...children) {
    const node = document.createElement(name);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value);
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function bucketOf(row) {
    return row.bucket || row.status;
  }

  function toolsOf(unit) {
    if (!unit.golden) return ["(unknown)"];
    return unit.golden.calls.length ? unit.golden.calls.map((c) => c.name) : ["(text answer)"];
  }

  function nodeOf(unit) {
    return unit.node || "(no node)";
  }

  function preview(answer) {
    if (!answer) return "";
    if (answer.calls.length) {
      return answer.calls.map((c) => c.name + "(" + JSON.stringify(c.args) + ")").join("; ");
    }
    return answer.text;
  }

  // ---- filters -------------------------------------------------------------------------

  function fillSelect(id, values, extra) {
    const select = document.getElementById(id);
    select.append(el("option", { value: ANY }, "all"));
    for (const [value, label] of extra || []) select.append(el("option", { value: value }, label));
    for (const value of [...new Set(values)].sort()) {
      select.append(el("option", { value: value }, value));
    }
    select.addEventListener("change", () => applyFilters());
  }

  function searchText(index) {
    if (searchTexts === null) {
      searchTexts = rows.map((row) => {
        const unit = units[row.u];
        return [unit.id, unit.session, unit.node || "", bucketOf(row), preview(unit.golden),
          preview(row.candidate), row.error || ""].join("\n").toLowerCase();
      });
    }
    return searchTexts[index];
  }

  function applyFilters() {
    const bucket = document.getElementById("filter-bucket").value;
    const node = document.getElementById("filter-node").value;
    const tool = document.getElementById("filter-tool").value;
    const kind = document.getElementById("filter-kind").value;
    const text = document.getElementById("filter-text").value.trim().toLowerCase();
    shown = [];
    rows.forEach((row, index) => {
      const unit = units[row.u];
      if (bucket === DISAGREE ? row.strict !== false : bucket && bucketOf(row) !== bucket) return;
      if (node && nodeOf(unit) !== node) return;
      if (tool && !toolsOf(unit).includes(tool)) return;
      if (kind && unit.kind !== kind) return;
      if (text && !searchText(index).includes(text)) return;
      shown.push(index);
    });
    page = 0;
    renderList();
  }

  // ---- the list ------------------------------------------------------------------------

  function statusPill(row) {
    const label = bucketOf(row);
    const cls = row.status === "infra_error" ? "err" : row.strict ? "ok" : row.strict === false
      ? "no" : "";
    return el("span", { class: "pill " + cls }, label);
  }

  function renderList() {
    const table = document.getElementById("unit-table");
    const head = table.tHead;
    if (!head.rows.length) {
      head.append(el("tr", null, ...["session", "turn", "node", "kind", "production",
        "candidate", "bucket", "score"].map((h) => el("th", null, h))));
    }
    const body = table.tBodies[0];
    body.replaceChildren();
    const start = page * PAGE_SIZE;
    for (const index of shown.slice(start, start + PAGE_SIZE)) {
      const row = rows[index];
      const unit = units[row.u];
      const tr = el("tr", { "data-row": index, class: index === selected ? "selected" : null },
        el("td", { class: "mono" }, unit.session),
        el("td", { class: "num" }, unit.turn === null ? "" : unit.turn),
        el("td", null, unit.node || ""),
        el("td", null, unit.kind),
        el("td", { class: "answer mono" }, preview(unit.golden)),
        el("td", { class: "answer mono" }, preview(row.candidate) ||
          (row.error_kind ? "error: " + row.error_kind : "")),
        el("td", null, statusPill(row)),
        el("td", { class: "num" }, row.score === null ? "" : row.score.toFixed(3)));
      tr.addEventListener("click", () => openDetail(index, true));
      body.append(tr);
    }
    renderPager();
  }

  function renderPager() {
    const pager = document.getElementById("pager");
    const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
    const first = shown.length ? page * PAGE_SIZE + 1 : 0;
    const last = Math.min(shown.length, (page + 1) * PAGE_SIZE);
    const previous = el("button", { type: "button", id: "page-prev", disabled: page === 0 },
      "previous");
    const next = el("button", { type: "button", id: "page-next",
      disabled: page >= pages - 1 }, "next");
    previous.addEventListener("click", () => { page -= 1; renderList(); });
    next.addEventListener("click", () => { page += 1; renderList(); });
    pager.replaceChildren(previous, next, el("span", { id: "shown-count" },
      `${first}–${last} of ${shown.length} answers (${rows.length} in the run), page ` +
      `${page + 1} of ${pages}`));
  }

  // ---- the drill-down ------------------------------------------------------------------

  function jsonTree(value, path, indent) {
    const span = el("span", { class: "json" });
    span.dataset.path = path;
    const pad = "  ".repeat(indent + 1);
    if (Array.isArray(value) && value.length) {
      span.append("[\n");
      value.forEach((item, i) => {
        span.append(pad, jsonTree(item, `${path}[${i}]`, indent + 1),
          i < value.length - 1 ? ",\n" : "\n");
      });
      span.append("  ".repeat(indent) + "]");
    } else if (value && typeof value === "object" && !Array.isArray(value) &&
               Object.keys(value).length) {
      const keys = Object.keys(value);
      span.append("{\n");
      keys.forEach((key, i) => {
        const child = path ? `${path}.${key}` : key;
        span.append(pad + JSON.stringify(key) + ": ", jsonTree(value[key], child, indent + 1),
          i < keys.length - 1 ? ",\n" : "\n");
      });
      span.append("  ".repeat(indent) + "}");
    } else {
      span.append(JSON.stringify(value === undefined ? null : value));
    }
    return span;
  }

  function markPaths(container, paths) {
    for (const node of container.querySelectorAll(".json")) {
      if (paths.has(node.dataset.path)) node.classList.add("diff");
    }
  }

  function answerView(answer, diffsByCall, otherCalls) {
    if (!answer) return el("p", { class: "muted" }, "no answer");
    const parts = [];
    if (answer.text) parts.push(el("pre", { class: "answer-text" }, answer.text));
    answer.calls.forEach((call, i) => {
      const differs = otherCalls !== null && !otherCalls.some((c) => c.name === call.name);
      const pre = el("pre", { class: "args" }, jsonTree(call.args, "", 0));
      markPaths(pre, diffsByCall.get(i) || new Set());
      parts.push(el("div", { class: "call" + (differs ? " tool-differs" : "") },
        el("span", { class: "call-name" }, call.name), pre));
    });
    if (!parts.length) parts.push(el("p", { class: "muted" }, "(empty answer)"));
    return el("div", null, parts);
  }

  // The differences name the golden call; the candidate's call is the one at the same index
  // when it calls the same tool, else its first call of that tool.
  function candidateCallFor(golden, candidate, index) {
    const name = golden.calls[index] ? golden.calls[index].name : null;
    if (candidate.calls[index] && candidate.calls[index].name === name) return index;
    return candidate.calls.findIndex((c) => c.name === name);
  }

  function diffMaps(row, unit) {
    const golden = new Map();
    const candidate = new Map();
    for (const diff of row.diffs) {
      if (!golden.has(diff.call)) golden.set(diff.call, new Set());
      golden.get(diff.call).add(diff.path);
      if (unit.golden && row.candidate) {
        const j = candidateCallFor(unit.golden, row.candidate, diff.call);
        if (j >= 0) {
          if (!candidate.has(j)) candidate.set(j, new Set());
          candidate.get(j).add(diff.path);
        }
      }
    }
    return [golden, candidate];
  }

  function messageView(message) {
    const header = message.role + (message.name ? ` (${message.name})` : "") +
      (message.tool_call_id ? ` · answers ${message.tool_call_id}` : "");
    const parts = [el("div", { class: "role" }, header)];
    if (message.text) parts.push(el("pre", null, message.text));
    for (const call of message.calls || []) {
      parts.push(el("div", null, el("span", { class: "call-name" }, call.name),
        el("pre", null, jsonTree(call.args, "", 0))));
    }
    return el("div", { class: "message role-" + message.role }, parts);
  }

  function contextView(unit) {
    const details = el("details", { id: "context" },
      el("summary", null, `Conversation context as the model saw it (${unit.ctx.length} ` +
        `messages; tools offered: ${unit.tools.join(", ") || "none"})`));
    details.addEventListener("toggle", () => {
      if (!details.open || details.dataset.drawn) return;
      if (messages === null) messages = readJson("abt-messages");
      details.dataset.drawn = "1";
      details.append(...unit.ctx.map((index) => messageView(messages[index])));
    }, { once: false });
    return details;
  }

  function factsView(row, unit) {
    const facts = [["unit", unit.id], ["repeat", row.repeat], ["session", unit.session],
      ["turn", unit.turn], ["node", unit.node || "(no node)"], ["kind", unit.kind],
      ["status", row.status], ["bucket", row.bucket || "—"],
      ["strict", row.strict === null ? "—" : String(row.strict)],
      ["score", row.score === null ? "—" : row.score.toFixed(3)], ["method", row.method || "—"],
      ["latency", row.latency_ms === null ? (row.cache_hit ? "cache hit" : "—")
        : row.latency_ms.toFixed(1) + " ms"]];
    if (row.similarity !== null) facts.push(["text similarity", row.similarity.toFixed(3)]);
    if (row.error_kind) facts.push(["error", row.error_kind + ": " + (row.error || "")]);
    if (row.unscored_reason) facts.push(["unscored because", row.unscored_reason]);
    if (row.missing_calls) facts.push(["missing calls", row.missing_calls]);
    if (row.extra_calls) facts.push(["extra calls", row.extra_calls]);
    return el("dl", { class: "facts inline" }, facts.map(([k, v]) => el("div", null,
      el("dt", null, k), el("dd", { "data-fact": k }, v === null ? "—" : v))));
  }

  function differencesView(row) {
    if (!row.diffs.length) return null;
    const show = (v) => (v === undefined ? "" : JSON.stringify(v));
    return el("div", null, el("h3", null, "Argument differences"),
      el("table", { id: "differences" },
        el("tr", null, ["call", "path", "kind", "production", "candidate", "required"]
          .map((h) => el("th", null, h))),
        row.diffs.map((d) => el("tr", null, el("td", null, d.call),
          el("td", { class: "mono" }, d.path || "(whole arguments)"), el("td", null, d.kind),
          el("td", { class: "mono" }, show(d.golden)), el("td", { class: "mono" },
            show(d.candidate)), el("td", null, d.required ? "yes" : "")))));
  }

  function judgeView(row) {
    if (!row.judged.length) return null;
    return el("div", { id: "judge" }, el("h3", null, "Judge"), row.judged.map((j) =>
      el("div", { class: "verdict" },
        el("div", null, el("b", null, j.target), ` · score ${j.score === null ? "none" :
          j.score.toFixed(2)}` + (j.judge ? ` · ${j.judge}` : "") +
          (j.agreement !== null && j.agreement !== undefined
            ? ` · agreement of repeats ${j.agreement.toFixed(2)}` : "")),
        j.unscored_reason ? el("div", { class: "muted" }, "unscored: " + j.unscored_reason)
          : null,
        el("ul", null, j.reasons.map((r) => el("li", { class: "reason" }, r))))));
  }

  function openDetail(index, updateHash) {
    selected = index;
    const row = rows[index];
    const unit = units[row.u];
    const [goldenDiffs, candidateDiffs] = diffMaps(row, unit);
    const detail = document.getElementById("detail");
    const parts = [
      el("h2", null, `Unit ${unit.id} · repeat ${row.repeat}`),
      factsView(row, unit),
      contextView(unit),
      el("div", { class: "side" },
        el("div", { id: "golden-answer" }, el("h3", null, "Production (golden)"),
          answerView(unit.golden, goldenDiffs, row.candidate ? row.candidate.calls : null)),
        el("div", { id: "candidate-answer" }, el("h3", null, "Candidate"),
          answerView(row.candidate, candidateDiffs, unit.golden ? unit.golden.calls : null))),
      differencesView(row),
      judgeView(row)];
    detail.replaceChildren(...parts.filter((part) => part !== null));
    detail.hidden = false;
    for (const tr of document.querySelectorAll("#unit-table tbody tr")) {
      tr.classList.toggle("selected", Number(tr.dataset.row) === index);
    }
    if (updateHash) {
      history.replaceState(null, "", `#unit=${encodeURIComponent(unit.id)}&repeat=${row.repeat}`);
    }
    detail.scrollIntoView({ block: "start" });
  }

  function openFromHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const id = params.get("unit");
    if (!id) return;
    const repeat = Number(params.get("repeat") || 0);
    const index = rows.findIndex((row) => units[row.u].id === id && row.repeat === repeat);
    if (index >= 0) openDetail(index, false);
  }

  fillSelect("filter-bucket", rows.map(bucketOf), [[DISAGREE, "any disagreement"]]);
  fillSelect("filter-node", units.map(nodeOf));
  fillSelect("filter-tool", units.flatMap(toolsOf));
  fillSelect("filter-kind", units.map((u) => u.kind));
  let typing = null;
  document.getElementById("filter-text").addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(applyFilters, 150);
  });
  renderList();
  openFromHash();
  window.addEventListener("hashchange", openFromHash);
  document.body.dataset.ready = "1";
})();
