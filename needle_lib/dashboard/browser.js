// Needle judgement browser: index in memory, result chunks loaded per page.
const NEEDLE = {runs: {}, chunks: {}, waiting: {}};
function needleRun(meta) { NEEDLE.runs[meta.key] = meta; }
function needleChunk(key, number, rows) {
  const id = key + "#" + number;
  NEEDLE.chunks[id] = rows;
  (NEEDLE.waiting[id] || []).forEach(done => done());
  delete NEEDLE.waiting[id];
}
function loadChunk(base, key, number) {
  const id = key + "#" + number;
  if (NEEDLE.chunks[id]) return Promise.resolve();
  return new Promise(done => {
    const first = !NEEDLE.waiting[id];
    (NEEDLE.waiting[id] = NEEDLE.waiting[id] || []).push(done);
    if (first) {
      const tag = document.createElement("script");
      tag.src = base + "chunk-" + number + ".js";
      document.head.appendChild(tag);
    }
  });
}
function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}
function safeLink(url, text) {
  if (/^https?:\/\//i.test(url)) {
    const a = el("a", text || url); a.href = url; a.rel = "noopener nofollow"; return a;
  }
  return el("span", text || url);
}
function passes(kind, best, rating) {
  if (rating === "all") return true;
  if (rating === "error") return best === -2;
  const good = kind === "judged" ? best >= 2 : best === 1;
  if (rating === "pass") return good;
  if (rating === "fail") return best !== -2 && !good;
  return kind === "judged" && best === Number(rating);
}
function needleBrowser(root, bases) {
  const runs = Object.keys(bases).map(key => NEEDLE.runs[key]).filter(Boolean);
  root.textContent = "";
  if (!runs.length) { root.appendChild(el("p", "No run data found.", "flag")); return; }
  const controls = el("div", null, "controls");
  const search = el("input"); search.type = "search"; search.size = 40;
  search.placeholder = "search query text…";
  const bench = el("select"); const engine = el("select"); const rating = el("select");
  const option = (select, value, text) => { const o = el("option", text); o.value = value; select.appendChild(o); };
  option(bench, "", "all benches");
  [...new Set(runs.map(r => r.bench))].forEach(b => option(bench, b, b));
  option(engine, "", "all engines");
  [...new Set(runs.flatMap(r => r.engines))].forEach(e => option(engine, e, e));
  [["all", "any verdict"], ["pass", "relevant / hit"], ["fail", "not relevant / miss"],
   ["error", "search error"], ["4", "best rating 4"], ["3", "best rating 3"],
   ["2", "best rating 2"], ["1", "best rating 1"], ["0", "best rating 0"]]
    .forEach(([v, t]) => option(rating, v, t));
  const status = el("span", "", "status");
  const prev = el("button", "← previous"); const next = el("button", "next →");
  [search, bench, engine, rating, prev, next, status].forEach(n => controls.appendChild(n));
  if (runs.length === 1) bench.style.display = "none";
  const list = el("div", null, "queries");
  root.appendChild(controls); root.appendChild(list);
  let page = 0, matches = [];
  function filter() {
    const needle = search.value.toLowerCase();
    matches = [];
    runs.forEach(run => run.queries.forEach((q, i) => {
      if (bench.value && run.bench !== bench.value) return;
      if (needle && !q[1].toLowerCase().includes(needle) && !q[0].toLowerCase().includes(needle)) return;
      const engines = engine.value ? [engine.value] : Object.keys(q[2]);
      if (!engines.some(e => e in q[2] && passes(run.kind, q[2][e], rating.value))) return;
      matches.push([run, i]);
    }));
    page = 0; show();
  }
  async function show() {
    const size = runs[0].page;
    const shown = matches.slice(page * size, (page + 1) * size);
    await Promise.all(shown.map(([run, i]) => loadChunk(bases[run.key], run.key, Math.floor(i / run.chunk))));
    list.textContent = "";
    status.textContent = matches.length ? `${page * size + 1}–${page * size + shown.length} of ${matches.length} queries` : "no query matches";
    prev.disabled = page === 0; next.disabled = (page + 1) * size >= matches.length;
    shown.forEach(([run, i]) => list.appendChild(renderQuery(run, i)));
  }
  function renderQuery(run, i) {
    const q = run.queries[i];
    const row = NEEDLE.chunks[run.key + "#" + Math.floor(i / run.chunk)][i % run.chunk];
    const box = el("details", null, "query"); box.open = true;
    box.dataset.query = q[0];
    const summary = el("summary");
    summary.appendChild(el("strong", q[1]));
    summary.appendChild(el("small", ` ${run.bench} · ${q[0]}`));
    box.appendChild(summary);
    if (row[1]) box.appendChild(el("p", "gold: " + row[1], "gold"));
    const table = el("table"); const head = el("tr");
    ["engine", "rank", "result", run.kind === "judged" ? "rating" : "matched", run.kind === "judged" ? "judge's reason" : "why"].forEach(h => head.appendChild(el("th", h)));
    table.appendChild(head);
    Object.entries(row[2]).forEach(([name, [verdict, error, results]]) => {
      if (engine.value && name !== engine.value) return;
      const label = el("td"); label.appendChild(el("div", name)); label.appendChild(el("small", verdict));
      label.rowSpan = Math.max(1, results.length);
      if (error || !results.length) {
        const tr = el("tr", null, error ? "errors" : ""); tr.appendChild(label);
        const td = el("td", error ? "search error: " + error : "no results", error ? "flag" : "");
        td.colSpan = 4; tr.appendChild(td); table.appendChild(tr); return;
      }
      results.forEach(([title, url, snippet, shown, reason, score], rank) => {
        const tr = el("tr", null, "result"); if (rank === 0) tr.appendChild(label);
        tr.appendChild(el("td", rank + 1, "num"));
        const cell = el("td"); cell.appendChild(safeLink(url, title || url));
        cell.appendChild(el("br")); cell.appendChild(el("small", url)); cell.appendChild(el("br"));
        cell.appendChild(el("small", snippet, "snippet")); tr.appendChild(cell);
        tr.appendChild(el("td", shown, score === null ? "flag rating" : "rating"));
        tr.appendChild(el("td", reason)); table.appendChild(tr);
      });
    });
    box.appendChild(table);
    return box;
  }
  // #q=…&bench=…&engine=…&rating=… opens the browser filtered (a link to a finding)
  const wanted = new URLSearchParams(location.hash.slice(1));
  [["q", search], ["bench", bench], ["engine", engine], ["rating", rating]].forEach(([k, n]) => {
    if (wanted.has(k)) n.value = wanted.get(k);
  });
  [search, bench, engine, rating].forEach(n => n.addEventListener("input", filter));
  prev.addEventListener("click", () => { page -= 1; show(); });
  next.addEventListener("click", () => { page += 1; show(); });
  filter();
}
