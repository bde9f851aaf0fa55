/*
 * The interactive graph (graph.html and dev/graph-demo.html): sigma.js 3 on a graphology
 * graph, seeded by a cluster layout at once and refined by ForceAtlas2 in a worker.
 *
 * The page holds one element [data-graph-app] with:
 *   data-graph-url   where the graph JSON is ({nodes: [...], edges: [...]}, see docs)
 *   data-graph-script  static site: the same as a script setting StudykbGraphData (file://)
 *   data-focus       optional: a node id to select at start
 *   data-mode        optional: "all" (default), "around" or "plan"
 *   data-steps       optional: how many steps out "around" goes (default 2)
 *   data-layout-ms   optional: time budget of the ForceAtlas2 refinement (default 3000)
 * Query parameters ?focus=ID&mode=around&steps=2 override these. Every text is set with
 * textContent; node URLs are followed only when relative or http(s).
 */
/* global Sigma, graphology */
(function () {
  'use strict';

  const app = document.querySelector('[data-graph-app]');
  if (!app) return;
  const SCRIPT_BASE = new URL('.', document.currentScript ? document.currentScript.src
    : location.href).href;

  const TYPES = ['note', 'entry', 'topic', 'course', 'list', 'unit'];
  const KINDS = ['link', 'ref', 'requires', 'related', 'course', 'item', 'covers'];
  const KIND_BIT = {};
  KINDS.forEach((k, i) => { KIND_BIT[k] = 1 << i; });
  const PREREQ_MASK = KIND_BIT.requires | KIND_BIT.covers;
  const PPN = 10;
  const PPE = 3;
  const reduceMotion = window.matchMedia('(prefers-reduced-motion: reduce)');
  const timings = {start: performance.now()};
  window.studykbGraph = {ready: false, timings};

  // -- elements --------------------------------------------------------------------------
  const $ = (sel) => app.querySelector(sel);
  const els = {
    canvas: $('[data-graph-canvas]'),
    status: $('[data-graph-status]'),
    info: $('[data-graph-info]'),
    search: $('[data-graph-search]'),
    suggestions: $('[data-graph-suggestions]'),
    tag: $('[data-graph-tag]'),
    tagList: $('[data-graph-tags]'),
    mode: $('[data-graph-mode]'),
    steps: $('[data-graph-steps]'),
    direction: $('[data-graph-direction]'),
    layout: $('[data-graph-layout]'),
    reset: $('[data-graph-reset]'),
    legend: $('[data-graph-legend]'),
  };
  const typeBoxes = Array.from(app.querySelectorAll('input[data-graph-type]'));
  const kindBoxes = Array.from(app.querySelectorAll('input[data-graph-kind]'));

  function say(text) {
    if (els.status) els.status.textContent = text;
  }

  // -- theme: node colours and label colours come from CSS custom properties ---------------
  let theme = {};
  function readTheme() {
    const css = getComputedStyle(app);
    const v = (name, dflt) => (css.getPropertyValue(name) || '').trim() || dflt;
    theme = {
      types: {}, text: v('--graph-label', '#1b1f24'), surface: v('--graph-surface', '#ffffff'),
      edge: v('--graph-edge', 'rgba(90,100,120,0.22)'), strong: v('--graph-edge-strong', '#59606b'),
      dim: v('--graph-dim', 'rgba(150,155,165,0.35)'), selected: v('--graph-selected', '#c2185b'),
      font: v('--graph-font', 'system-ui, sans-serif'),
    };
    for (const t of TYPES) theme.types[t] = v('--graph-' + t, '#777777');
  }
  readTheme();

  // -- state -----------------------------------------------------------------------------
  const state = {
    types: new Set(TYPES), kinds: 0, tags: [], mode: 'all', center: -1, steps: 2,
    direction: 'auto', selected: -1,
  };
  typeBoxes.forEach((b) => { if (!b.checked) state.types.delete(b.value); });
  kindBoxes.forEach((b) => { if (b.checked) state.kinds |= KIND_BIT[b.value] || 0; });
  if (!kindBoxes.length) state.kinds = (1 << KINDS.length) - 1;

  let G = null; // {n, ids, index, title, type, tags, url, back, es, et, ek, adjStart, adj, adjEdge}
  let whole = null; // the whole graphology graph
  let renderer = null;
  let worker = null;
  let layoutRunning = false;
  let visible = null; // Uint8Array: node passes type/tag filters
  let allVisible = true; // every node passes them (the reducers then copy nothing)
  let focusSet = null; // Set of indices highlighted with the selection
  let dragged = null;
  let dragMoved = false;

  // -- data ------------------------------------------------------------------------------
  function prepare(data, oldPositions) {
    const nodes = Array.isArray(data.nodes) ? data.nodes : [];
    const n = nodes.length;
    const g = {n, ids: new Array(n), index: new Map(), title: new Array(n), name: new Array(n),
      type: new Uint8Array(n), tags: new Array(n), url: new Array(n), back: new Float32Array(n),
      x: new Float32Array(n), y: new Float32Array(n), hasXY: n > 0};
    for (let i = 0; i < n; i++) {
      const d = nodes[i];
      const id = String(d.id);
      g.ids[i] = id;
      g.index.set(id, i);
      g.title[i] = String(d.title || d.name || id);
      g.name[i] = String(d.name || '');
      const t = TYPES.indexOf(d.type);
      g.type[i] = t < 0 ? 0 : t;
      g.tags[i] = Array.isArray(d.tags) ? d.tags.map((x) => String(x).toLowerCase()) : [];
      g.url[i] = typeof d.url === 'string' ? d.url : '';
      g.back[i] = Number(d.backlinks) || 0;
      const old = oldPositions && oldPositions.get(id);
      if (old) { g.x[i] = old[0]; g.y[i] = old[1]; }
      else if (Number.isFinite(d.x) && Number.isFinite(d.y)) { g.x[i] = d.x; g.y[i] = d.y; }
      else g.hasXY = false;
    }
    // edges: one per (source, target), with a bit mask of their kinds
    const raw = Array.isArray(data.edges) ? data.edges : [];
    const pair = new Map();
    const es = [];
    const et = [];
    const ek = [];
    const inDeg = new Float32Array(n);
    for (const e of raw) {
      const s = g.index.get(String(e.source));
      const t = g.index.get(String(e.target));
      if (s === undefined || t === undefined || s === t) continue;
      const bit = KIND_BIT[e.kind] || KIND_BIT.link;
      const key = s * n + t;
      const j = pair.get(key);
      if (j === undefined) {
        pair.set(key, es.length);
        es.push(s); et.push(t); ek.push(bit);
        inDeg[t] += 1;
      } else ek[j] |= bit;
    }
    g.es = Int32Array.from(es);
    g.et = Int32Array.from(et);
    g.ek = Uint8Array.from(ek);
    if (!nodes.some((d) => 'backlinks' in d)) g.back = inDeg;
    // undirected adjacency (CSR) for neighbourhoods, clusters and the plan view
    const m = g.es.length;
    const deg = new Int32Array(n + 1);
    for (let j = 0; j < m; j++) { deg[g.es[j]]++; deg[g.et[j]]++; }
    const start = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) start[i + 1] = start[i] + deg[i];
    const fill = start.slice(0, n);
    const adj = new Int32Array(2 * m);
    const adjEdge = new Int32Array(2 * m); // edge index; negative (~j) when the edge comes in
    for (let j = 0; j < m; j++) {
      const s = g.es[j];
      const t = g.et[j];
      adj[fill[s]] = t; adjEdge[fill[s]++] = j;
      adj[fill[t]] = s; adjEdge[fill[t]++] = ~j;
    }
    g.adjStart = start;
    g.adj = adj;
    g.adjEdge = adjEdge;
    g.hay = g.title.map((t, i) => (t + ' \u0001' + g.name[i] + ' \u0001' + g.ids[i]).toLowerCase());
    return g;
  }

  function sizeOf(i) {
    // smaller discs in a big graph, so that clusters stay readable when zoomed out
    const big = G.n > 5000 ? 0.55 : G.n > 1000 ? 0.8 : 1;
    return big * (2.5 + Math.min(14, Math.sqrt(G.back[i]) * 1.2));
  }

  // -- seed layout: label-propagation clusters, clusters and members on sunflowers --------
  function seedLayout(g) {
    const n = g.n;
    const label = new Int32Array(n);
    for (let i = 0; i < n; i++) label[i] = i;
    const order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    let seed = 12345;
    const rand = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      const t = order[i]; order[i] = order[j]; order[j] = t;
    }
    const score = new Float32Array(n);
    const touched = new Int32Array(n);
    const degree = (i) => g.adjStart[i + 1] - g.adjStart[i];
    for (let iter = 0; iter < 8; iter++) {
      let changed = 0;
      for (let o = 0; o < n; o++) {
        const i = order[o];
        let nt = 0;
        for (let p = g.adjStart[i]; p < g.adjStart[i + 1]; p++) {
          const nb = g.adj[p];
          const l = label[nb];
          if (score[l] === 0) touched[nt++] = l;
          score[l] += 1 / Math.sqrt(1 + degree(nb)); // hubs vote less: no giant cluster
        }
        let best = label[i];
        let bestScore = -1;
        for (let q = 0; q < nt; q++) {
          const l = touched[q];
          if (score[l] > bestScore || (score[l] === bestScore && l < best)) { best = l; bestScore = score[l]; }
          score[l] = 0;
        }
        if (nt && best !== label[i]) { label[i] = best; changed++; }
      }
      if (changed < n / 100) break;
    }
    const groups = new Map();
    for (let i = 0; i < n; i++) {
      let list = groups.get(label[i]);
      if (!list) groups.set(label[i], (list = []));
      list.push(i);
    }
    // singletons and tiny clusters go together by type, so they do not scatter everywhere
    const clusters = [];
    const leftovers = TYPES.map(() => []);
    for (const list of groups.values()) {
      if (list.length >= 3) clusters.push(list);
      else for (const i of list) leftovers[g.type[i]].push(i);
    }
    for (const list of leftovers) if (list.length) clusters.push(list);
    clusters.sort((a, b) => b.length - a.length);
    const golden = Math.PI * (3 - Math.sqrt(5));
    let before = 0;
    clusters.forEach((list, c) => {
      list.sort((a, b) => g.back[b] - g.back[a]);
      const d = Math.sqrt(before + list.length / 2) * 2.4;
      const cx = d * Math.cos(c * golden);
      const cy = d * Math.sin(c * golden);
      list.forEach((i, k) => {
        const r = Math.sqrt(k + 0.5);
        g.x[i] = cx + r * Math.cos(k * golden);
        g.y[i] = cy + r * Math.sin(k * golden);
      });
      before += list.length;
    });
    g.clusters = clusters.length;
  }

  // -- the graphology graphs -------------------------------------------------------------
  function buildWhole(g) {
    const graph = new graphology.Graph({type: 'directed', multi: false, allowSelfLoops: false});
    for (let i = 0; i < g.n; i++) {
      graph.addNode(String(i), {x: g.x[i], y: g.y[i], size: sizeOf(i), label: g.title[i],
        color: theme.types[TYPES[g.type[i]]], i});
    }
    const color = theme.edge;
    for (let j = 0; j < g.es.length; j++) {
      graph.addEdgeWithKey(String(j), String(g.es[j]), String(g.et[j]), {k: g.ek[j], j, color, size: 1});
    }
    return graph;
  }

  function buildSub(indices, edgeList, positions, arrows) {
    const graph = new graphology.Graph({type: 'directed', multi: false, allowSelfLoops: false});
    indices.forEach((i, k) => {
      const title = G.title[i];
      graph.addNode(String(i), {x: positions[k][0], y: positions[k][1], size: sizeOf(i) + 1,
        label: title.length > 30 ? title.slice(0, 28) + '…' : title, color: theme.types[TYPES[G.type[i]]], i});
    });
    for (const [s, t, k, j] of edgeList) {
      const a = String(s);
      const b = String(t);
      if (!graph.hasEdge(a, b)) {
        graph.addEdgeWithKey(String(j), a, b, {k, j, type: arrows ? 'arrow' : 'line', size: 1.5,
          color: k & PREREQ_MASK ? theme.strong : theme.edge});
      }
    }
    return graph;
  }

  // -- filters and reducers --------------------------------------------------------------
  function computeVisible() {
    visible = new Uint8Array(G.n);
    const wanted = state.tags;
    for (let i = 0; i < G.n; i++) {
      if (!state.types.has(TYPES[G.type[i]])) continue;
      if (wanted.length && !G.tags[i].some((t) => wanted.includes(t))) continue;
      visible[i] = 1;
    }
    allVisible = state.mode === 'all' && visible.every((x) => x === 1);
  }

  function nodeReducer(node, data) {
    const i = data.i;
    if (!focusSet && allVisible && state.selected < 0) return data; // the common case: no copy
    if (state.mode === 'all' && !visible[i] && i !== state.selected) return {...data, hidden: true};
    if (i === state.selected) {
      return {...data, highlighted: true, forceLabel: true, zIndex: 2, color: data.color};
    }
    if (focusSet && !focusSet.has(i)) return {...data, color: theme.dim, label: '', zIndex: 0};
    if (focusSet) return {...data, zIndex: 1};
    return data;
  }

  function edgeReducer(edge, data) {
    if (!focusSet && allVisible && (data.k & state.kinds)) return data; // no copy
    if (!(data.k & state.kinds) && state.mode !== 'plan') return {...data, hidden: true};
    const j = data.j;
    const s = G.es[j];
    const t = G.et[j];
    if (state.mode === 'all' && (!visible[s] || !visible[t])) return {...data, hidden: true};
    if (focusSet) {
      if (s !== state.selected && t !== state.selected) return {...data, hidden: true};
      return {...data, color: theme.strong, size: 1.5, zIndex: 1};
    }
    return data;
  }

  // -- hover label in the page's colours (sigma's default box is always white) -----------
  function drawHover(ctx, data, settings) {
    const size = settings.labelSize;
    ctx.font = `${settings.labelWeight} ${size}px ${settings.labelFont}`;
    const label = G.title[data.i] || data.label || '';
    const width = ctx.measureText(label).width + 10;
    const h = size + 8;
    const x = data.x + data.size + 2;
    const y = data.y - h / 2;
    ctx.save();
    ctx.shadowColor = 'rgba(0,0,0,0.3)';
    ctx.shadowBlur = 6;
    ctx.fillStyle = theme.surface;
    ctx.beginPath();
    ctx.arc(data.x, data.y, data.size + 3, 0, Math.PI * 2);
    ctx.fill();
    ctx.fillRect(x, y, width, h);
    ctx.restore();
    ctx.fillStyle = theme.text;
    ctx.fillText(label, x + 5, data.y + size / 3);
  }

  function drawLabel(ctx, data, settings) {
    if (!data.label) return;
    const size = settings.labelSize;
    ctx.font = `${settings.labelWeight} ${size}px ${settings.labelFont}`;
    ctx.lineWidth = 3;
    ctx.strokeStyle = theme.surface;
    ctx.strokeText(data.label, data.x + data.size + 3, data.y + size / 3);
    ctx.fillStyle = theme.text;
    ctx.fillText(data.label, data.x + data.size + 3, data.y + size / 3);
  }

  // -- layout worker ---------------------------------------------------------------------
  function startLayout(budget) {
    stopLayout();
    if (state.mode !== 'all' || G.n < 2 || !G.es.length) return;
    try {
      worker = new Worker(SCRIPT_BASE + 'graph-layout-worker.js');
    } catch (err) {
      worker = null; // file:// pages and old browsers: the seed layout stays
      return;
    }
    const nodes = new Float32Array(G.n * PPN);
    for (let i = 0, o = 0; i < G.n; i++, o += PPN) {
      nodes[o] = G.x[i]; nodes[o + 1] = G.y[i];
      nodes[o + 7] = 1; nodes[o + 6] = 1; nodes[o + 8] = 1;
    }
    const edges = new Float32Array(G.es.length * PPE);
    for (let j = 0, o = 0; j < G.es.length; j++, o += PPE) {
      const s = G.es[j] * PPN;
      const t = G.et[j] * PPN;
      edges[o] = s; edges[o + 1] = t; edges[o + 2] = 1;
      nodes[s + 6] += 1; nodes[t + 6] += 1; // mass: 1 + degree
    }
    const settings = {linLogMode: false, outboundAttractionDistribution: true, adjustSizes: false,
      edgeWeightInfluence: 1, scalingRatio: 4, strongGravityMode: true, gravity: 0.05,
      slowDown: 1 + Math.log(G.n), barnesHutOptimize: G.n > 1500, barnesHutTheta: 0.6};
    if (app.dataset.fa2) Object.assign(settings, JSON.parse(app.dataset.fa2)); // dev: tuning
    worker.onmessage = (event) => {
      const msg = event.data;
      if (msg.type !== 'positions' || !whole) return;
      const xy = msg.xy;
      for (let i = 0; i < G.n; i++) {
        if (dragged !== null && Number(dragged) === i) continue;
        G.x[i] = xy[2 * i]; G.y[i] = xy[2 * i + 1];
      }
      if (state.mode === 'all') {
        whole.updateEachNodeAttributes((node, attr) => {
          attr.x = G.x[attr.i]; attr.y = G.y[attr.i];
          return attr;
        }, {attributes: ['x', 'y']});
      }
      if (msg.done) {
        layoutRunning = false;
        timings.layoutDone = performance.now() - timings.start;
        timings.layoutIterations = msg.iterations;
        updateLayoutButton();
        summary();
      }
    };
    worker.onerror = () => { stopLayout(); };
    worker.postMessage({type: 'start', nodes, edges, settings, budget},
      [nodes.buffer, edges.buffer]);
    layoutRunning = true;
    updateLayoutButton();
  }

  function stopLayout() {
    if (worker) worker.terminate();
    worker = null;
    layoutRunning = false;
    updateLayoutButton();
  }

  function updateLayoutButton() {
    if (!els.layout) return;
    els.layout.textContent = layoutRunning ? 'Stop layout' : 'Improve layout';
    els.layout.setAttribute('aria-pressed', layoutRunning ? 'true' : 'false');
    els.layout.disabled = state.mode !== 'all';
  }

  // -- views: neighbourhood rings and the prerequisite layers ----------------------------
  function around(center, steps) {
    const dist = new Map([[center, 0]]);
    const parent = new Map();
    let frontier = [center];
    for (let d = 1; d <= steps && frontier.length; d++) {
      const next = [];
      for (const i of frontier) {
        for (let p = G.adjStart[i]; p < G.adjStart[i + 1]; p++) {
          const e = G.adjEdge[p];
          const j = e < 0 ? ~e : e;
          if (!(G.ek[j] & state.kinds)) continue;
          const nb = G.adj[p];
          if (dist.has(nb) || !state.types.has(TYPES[G.type[nb]])) continue;
          if (state.tags.length && !G.tags[nb].some((t) => state.tags.includes(t))) continue;
          dist.set(nb, d);
          parent.set(nb, i);
          next.push(nb);
        }
      }
      frontier = next;
      if (dist.size > 3000) break; // a hub two steps out is most of the vault: stop here
    }
    const nodes = Array.from(dist.keys());
    // rings: each ring ordered by its parents' angles, radius growing with its size
    const angle = new Map([[center, 0]]);
    const pos = new Map([[center, [0, 0]]]);
    const rings = [];
    for (let d = 1; d <= steps; d++) rings.push(nodes.filter((i) => dist.get(i) === d));
    const need = (ring) => (ring.length * 1.6) / (2 * Math.PI);
    const gap = Math.max(3, Math.max(0, ...rings.map(need)) / (steps + 0.5));
    let radius = 0;
    for (const ring of rings) {
      if (!ring.length) break;
      ring.sort((a, b) => (angle.get(parent.get(a)) - angle.get(parent.get(b))) || (G.back[b] - G.back[a]));
      radius = Math.max(radius + gap, need(ring));
      ring.forEach((i, k) => {
        const a = (2 * Math.PI * k) / ring.length;
        angle.set(i, a);
        pos.set(i, [radius * Math.cos(a), radius * Math.sin(a)]);
      });
    }
    const inside = new Set(nodes);
    const edges = [];
    for (const i of nodes) {
      for (let p = G.adjStart[i]; p < G.adjStart[i + 1]; p++) {
        const e = G.adjEdge[p];
        if (e < 0) continue;
        if (inside.has(G.adj[p]) && (G.ek[e] & state.kinds)) edges.push([i, G.adj[p], G.ek[e], e]);
      }
    }
    return {nodes, edges, positions: nodes.map((i) => pos.get(i)), arrows: nodes.length < 400};
  }

  function prerequisites(target, direction) {
    // what the target requires or covers, and onwards; shown prerequisite -> dependant
    const seen = new Set([target]);
    const order = [target];
    const links = [];
    for (let q = 0; q < order.length; q++) {
      const i = order[q];
      for (let p = G.adjStart[i]; p < G.adjStart[i + 1]; p++) {
        const e = G.adjEdge[p];
        if (e < 0 || !(G.ek[e] & PREREQ_MASK)) continue;
        const nb = G.adj[p];
        links.push([nb, i, G.ek[e] & PREREQ_MASK, e]);
        if (!seen.has(nb)) { seen.add(nb); order.push(nb); }
      }
      if (order.length > 2000) break;
    }
    const nodes = order;
    const local = new Map(nodes.map((i, k) => [i, k]));
    const succ = nodes.map(() => []);
    const pred = nodes.map(() => []);
    // drop back edges (prerequisite loops) so that layers are defined
    const colour = new Uint8Array(nodes.length);
    const keep = [];
    const adjacency = nodes.map(() => []);
    for (const link of links) {
      if (local.has(link[0]) && local.has(link[1])) adjacency[local.get(link[0])].push(link);
    }
    for (let r = 0; r < nodes.length; r++) {
      if (colour[r]) continue;
      const stack = [[r, 0]];
      colour[r] = 1;
      while (stack.length) {
        const top = stack[stack.length - 1];
        const u = top[0];
        if (top[1] < adjacency[u].length) {
          const link = adjacency[u][top[1]++];
          const v = local.get(link[1]);
          if (colour[v] === 1) continue; // back edge: a loop
          keep.push(link);
          if (!colour[v]) { colour[v] = 1; stack.push([v, 0]); }
        } else {
          colour[u] = 2;
          stack.pop();
        }
      }
    }
    for (const [a, b] of keep) { succ[local.get(a)].push(local.get(b)); pred[local.get(b)].push(local.get(a)); }
    // longest path from the sources: what has no prerequisite is in layer 0
    const layer = new Int32Array(nodes.length);
    const indeg = pred.map((p) => p.length);
    const queue = [];
    indeg.forEach((d, k) => { if (!d) queue.push(k); });
    for (let q = 0; q < queue.length; q++) {
      const u = queue[q];
      for (const v of succ[u]) {
        layer[v] = Math.max(layer[v], layer[u] + 1);
        if (--indeg[v] === 0) queue.push(v);
      }
    }
    const layers = [];
    layer.forEach((l, k) => { (layers[l] = layers[l] || []).push(k); });
    const rank = new Float64Array(nodes.length);
    layers.forEach((list) => list.forEach((k, r) => { rank[k] = r; }));
    // a few barycentre sweeps to reduce crossings
    for (let sweep = 0; sweep < 6; sweep++) {
      const down = sweep % 2 === 0;
      const seq = down ? layers : layers.slice().reverse();
      for (const list of seq) {
        if (!list) continue;
        const bary = new Map();
        for (const k of list) {
          const nb = down ? pred[k] : succ[k];
          bary.set(k, nb.length ? nb.reduce((s, x) => s + rank[x], 0) / nb.length : rank[k]);
        }
        list.sort((a, b) => bary.get(a) - bary.get(b));
        list.forEach((k, r) => { rank[k] = r; });
      }
    }
    const positions = new Array(nodes.length);
    if (direction !== 'TB' && direction !== 'LR') {
      // auto: labels run to the right, so many short layers read best top to bottom
      const widest = Math.max(...layers.map((list) => (list ? list.length : 0)));
      direction = widest > layers.length * 2 ? 'LR' : 'TB';
    }
    layers.forEach((list, l) => {
      if (!list) return;
      list.forEach((k, r) => {
        const across = (r - (list.length - 1) / 2);
        positions[k] = direction === 'TB' ? [across * 7, -l * 3] : [l * 12, -across * 2.2];
      });
    });
    return {nodes, edges: keep, positions, arrows: true};
  }

  // -- rendering -------------------------------------------------------------------------
  // labels: every node may have one, whatever its size (the whole graph showed none
  // until zoomed), and sigma's label grid keeps at most one per cell, the most linked
  // node's, so that a ring of neighbours is not a pile of overlapping labels
  const LABEL_DENSITY = 1;
  const LABEL_CELL = 150;

  function show(graph) {
    if (!renderer) {
      const t0 = performance.now();
      renderer = new Sigma(graph, els.canvas, {
        nodeReducer, edgeReducer, defaultDrawNodeHover: drawHover, defaultDrawNodeLabel: drawLabel,
        labelFont: theme.font, labelSize: 13, labelWeight: '500', labelColor: {color: theme.text},
        labelDensity: LABEL_DENSITY, labelGridCellSize: LABEL_CELL,
        labelRenderedSizeThreshold: 0,
        hideEdgesOnMove: G.es.length > 20000, minCameraRatio: 0.01, maxCameraRatio: 3,
        allowInvalidContainer: true, defaultEdgeColor: theme.edge,
      });
      timings.sigmaMs = performance.now() - t0;
      wireRenderer();
      return false;
    }
    if (renderer.getGraph() !== graph) renderer.setGraph(graph);
    return true;
  }

  function applyMode() {
    if (!G) return;
    focusSet = null;
    const center = state.center >= 0 ? state.center : state.selected;
    if (state.mode !== 'all' && center < 0) {
      say('Choose a document with the search box first.');
      state.mode = 'all';
      if (els.mode) els.mode.value = 'all';
    }
    if (state.mode === 'all' && state.selected >= 0) focusSet = neighbours(state.selected);
    let reused;
    if (state.mode === 'all') {
      reused = show(whole);
    } else {
      stopLayout();
      const view = state.mode === 'around' ? around(center, state.steps)
        : prerequisites(center, state.direction);
      reused = show(buildSub(view.nodes, view.edges, view.positions, view.arrows));
    }
    updateLayoutButton();
    useZIndex();
    if (reused) {
      renderer.refresh();
      // the sub views: zoomed out a little, so that labels right of the last nodes fit
      const camera = renderer.getCamera();
      const target = state.mode === 'all' ? {x: 0.5, y: 0.5, ratio: 1, angle: 0}
        : {x: state.mode === 'plan' ? 0.56 : 0.5, y: 0.5, ratio: 1.2, angle: 0};
      camera.animate(target, {duration: reduceMotion.matches ? 0 : 300});
    }
    summary();
    writeURL();
  }

  function summary() {
    if (!renderer) return;
    const graph = renderer.getGraph();
    let nodes = 0;
    let edges = 0;
    if (state.mode === 'all') {
      for (let i = 0; i < G.n; i++) nodes += visible[i];
      for (let j = 0; j < G.es.length; j++) {
        if ((G.ek[j] & state.kinds) && visible[G.es[j]] && visible[G.et[j]]) edges++;
      }
    } else {
      nodes = graph.order;
      edges = graph.size;
    }
    const fmt = (x) => x.toLocaleString('en');
    let text = state.mode === 'all'
      ? `${fmt(nodes)} of ${fmt(G.n)} documents and ${fmt(edges)} links shown`
      : state.mode === 'around'
        ? `${fmt(nodes)} documents within ${state.steps} steps of “${G.title[state.center]}”`
        : `Prerequisite graph of “${G.title[state.center]}”: ${fmt(nodes)} documents, ${fmt(edges)} requires/covers links`;
    say(text + (layoutRunning ? '; improving the layout…' : '.'));
  }

  // -- selection, info panel, search -----------------------------------------------------
  function neighbours(i) {
    const set = new Set([i]);
    for (let p = G.adjStart[i]; p < G.adjStart[i + 1]; p++) {
      const e = G.adjEdge[p];
      if (G.ek[e < 0 ? ~e : e] & state.kinds) set.add(G.adj[p]);
    }
    return set;
  }

  function safeURL(url) {
    if (!url) return '';
    try {
      const u = new URL(url, location.href);
      return ['http:', 'https:', 'file:'].includes(u.protocol) ? u.href : '';
    } catch (err) {
      return '';
    }
  }

  function openNode(i, newTab) {
    const url = safeURL(G.url[i]);
    if (!url) return;
    if (newTab) window.open(url, '_blank', 'noopener');
    else window.location.assign(url);
  }

  function useZIndex() {
    // draw the selection's neighbours above the dimmed rest (sorting costs: only then)
    if (renderer && renderer.getSetting('zIndex') !== !!focusSet) renderer.setSetting('zIndex', !!focusSet);
  }

  function select(i, options) {
    const opts = options || {};
    state.selected = i;
    if (opts.center && state.mode !== 'all') {
      state.center = i;
      applyMode();
    } else if (state.mode === 'all') {
      focusSet = i >= 0 ? neighbours(i) : null;
      useZIndex();
      renderer.refresh({skipIndexation: true});
    } else {
      renderer.refresh({skipIndexation: true});
    }
    renderInfo();
    if (i >= 0 && opts.camera !== false) {
      const shown = renderer.getGraph().hasNode(String(i)) && renderer.getNodeDisplayData(String(i));
      if (shown) {
        renderer.getCamera().animate({x: shown.x, y: shown.y, ratio: Math.min(renderer.getCamera().ratio, 0.25)},
          {duration: reduceMotion.matches ? 0 : 450});
      }
    }
    writeURL();
  }

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    if (attrs) for (const k of Object.keys(attrs)) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function renderInfo() {
    const box = els.info;
    if (!box) return;
    box.replaceChildren();
    const i = state.selected;
    if (i < 0) {
      box.append(el('p', {class: 'graph-hint'},
        'Search for a document, or click a node to open it. Drag nodes to move them; scroll to zoom.'));
      return;
    }
    const h = el('h2', {class: 'graph-info-title', id: 'graph-info-title'});
    const url = safeURL(G.url[i]);
    if (url) h.append(el('a', {href: url}, G.title[i]));
    else h.textContent = G.title[i];
    box.append(h);
    const facts = el('p', {class: 'graph-facts'});
    facts.append(el('span', {class: 'badge type-' + TYPES[G.type[i]]}, TYPES[G.type[i]]));
    facts.append(document.createTextNode(` ${G.back[i]} backlink${G.back[i] === 1 ? '' : 's'}`));
    if (G.tags[i].length) facts.append(document.createTextNode(' · ' + G.tags[i].slice(0, 6).join(', ')));
    box.append(facts);
    const actions = el('p', {class: 'graph-actions'});
    const b1 = el('button', {type: 'button', 'data-action': 'around'}, 'Neighbourhood');
    const b2 = el('button', {type: 'button', 'data-action': 'plan'}, 'Prerequisite graph');
    actions.append(b1, document.createTextNode(' '), b2);
    box.append(actions);
    const outs = [];
    const ins = [];
    for (let p = G.adjStart[i]; p < G.adjStart[i + 1]; p++) {
      const e = G.adjEdge[p];
      const j = e < 0 ? ~e : e;
      const kinds = KINDS.filter((k) => G.ek[j] & KIND_BIT[k]).join(', ');
      (e < 0 ? ins : outs).push([G.adj[p], kinds]);
    }
    const list = (label, items) => {
      if (!items.length) return;
      items.sort((a, b) => G.back[b[0]] - G.back[a[0]]);
      box.append(el('h3', null, `${label} (${items.length})`));
      const ul = el('ul', {class: 'graph-neighbours'});
      for (const [nb, kinds] of items.slice(0, 40)) {
        const li = el('li');
        const b = el('button', {type: 'button', class: 'linklike', 'data-node': String(nb)}, G.title[nb]);
        li.append(b, el('span', {class: 'muted'}, ' ' + kinds));
        ul.append(li);
      }
      if (items.length > 40) ul.append(el('li', {class: 'muted'}, `… and ${items.length - 40} more`));
      box.append(ul);
    };
    list('Links to', outs);
    list('Linked from', ins);
  }

  function match(query) {
    const q = query.trim().toLowerCase();
    if (!q) return [];
    const scored = [];
    for (let i = 0; i < G.n; i++) {
      const at = G.hay[i].indexOf(q);
      if (at < 0) continue;
      let s = at === 0 ? 3 : G.hay[i][at - 1] === ' ' || G.hay[i][at - 1] === '/' ? 2 : 1;
      if (G.title[i].toLowerCase() === q || G.name[i].toLowerCase() === q) s = 5;
      scored.push([s + Math.log1p(G.back[i]) / 10, i]);
    }
    scored.sort((a, b) => b[0] - a[0]);
    return scored.slice(0, 12).map((x) => x[1]);
  }

  let options = [];
  let active = -1;
  function renderSuggestions() {
    const ul = els.suggestions;
    ul.replaceChildren();
    options.forEach((i, k) => {
      const li = el('li', {role: 'option', id: 'graph-option-' + k, 'data-node': String(i),
        'aria-selected': k === active ? 'true' : 'false'});
      li.append(el('span', {class: 'swatch swatch-' + TYPES[G.type[i]], 'aria-hidden': 'true'}));
      li.append(document.createTextNode(G.title[i]));
      li.append(el('span', {class: 'muted'}, ' ' + TYPES[G.type[i]]));
      ul.append(li);
    });
    const open = options.length > 0;
    ul.hidden = !open;
    els.search.setAttribute('aria-expanded', open ? 'true' : 'false');
    if (active >= 0) els.search.setAttribute('aria-activedescendant', 'graph-option-' + active);
    else els.search.removeAttribute('aria-activedescendant');
  }

  function choose(i) {
    options = [];
    active = -1;
    renderSuggestions();
    els.search.value = G.title[i];
    select(i, {center: true});
  }

  function wireSearch() {
    if (!els.search) return;
    let pending = 0;
    els.search.addEventListener('input', () => {
      clearTimeout(pending);
      pending = setTimeout(() => {
        options = match(els.search.value);
        active = options.length ? 0 : -1;
        renderSuggestions();
      }, 60);
    });
    els.search.addEventListener('keydown', (event) => {
      if (event.key === 'ArrowDown' && options.length) {
        active = (active + 1) % options.length; renderSuggestions(); event.preventDefault();
      } else if (event.key === 'ArrowUp' && options.length) {
        active = (active - 1 + options.length) % options.length; renderSuggestions(); event.preventDefault();
      } else if (event.key === 'Enter') {
        event.preventDefault();
        if (!options.length) options = match(els.search.value);
        if (options.length) choose(options[Math.max(0, active)]);
      } else if (event.key === 'Escape') {
        options = []; active = -1; renderSuggestions();
      }
    });
    els.search.addEventListener('blur', () => {
      setTimeout(() => { options = []; active = -1; renderSuggestions(); }, 150);
    });
    els.suggestions.addEventListener('mousedown', (event) => {
      const li = event.target.closest('[data-node]');
      if (!li) return;
      event.preventDefault();
      choose(Number(li.dataset.node));
    });
  }

  // -- controls --------------------------------------------------------------------------
  function wireControls() {
    const form = app.querySelector('form');
    if (form) form.addEventListener('submit', (event) => event.preventDefault());
    typeBoxes.forEach((box) => box.addEventListener('change', () => {
      if (box.checked) state.types.add(box.value);
      else state.types.delete(box.value);
      refilter();
    }));
    kindBoxes.forEach((box) => box.addEventListener('change', () => {
      state.kinds = kindBoxes.reduce((m, b) => (b.checked ? m | KIND_BIT[b.value] : m), 0);
      refilter();
    }));
    if (els.tag) {
      els.tag.addEventListener('change', () => {
        state.tags = els.tag.value.split(',').map((t) => t.trim().toLowerCase()).filter(Boolean);
        refilter();
      });
    }
    if (els.mode) els.mode.addEventListener('change', () => { state.mode = els.mode.value; state.center = state.selected; applyMode(); });
    if (els.steps) els.steps.addEventListener('change', () => {
      state.steps = Math.max(1, Math.min(6, Number(els.steps.value) || 2));
      if (state.mode === 'around') applyMode();
    });
    if (els.direction) els.direction.addEventListener('change', () => {
      state.direction = ['TB', 'LR'].includes(els.direction.value) ? els.direction.value : 'auto';
      if (state.mode === 'plan') applyMode();
    });
    if (els.layout) els.layout.addEventListener('click', () => {
      if (layoutRunning) { stopLayout(); summary(); } else { startLayout(5000); summary(); }
    });
    if (els.reset) els.reset.addEventListener('click', () => {
      state.selected = -1; focusSet = null;
      if (els.search) els.search.value = '';
      renderInfo();
      if (state.mode !== 'all') { state.mode = 'all'; if (els.mode) els.mode.value = 'all'; applyMode(); }
      else { renderer.refresh({skipIndexation: true}); renderer.getCamera().animatedReset(); writeURL(); }
    });
    if (els.info) els.info.addEventListener('click', (event) => {
      const node = event.target.closest('[data-node]');
      if (node) { select(Number(node.dataset.node), {center: true}); return; }
      const action = event.target.closest('[data-action]');
      if (!action || state.selected < 0) return;
      state.mode = action.dataset.action;
      state.center = state.selected;
      if (els.mode) els.mode.value = state.mode;
      applyMode();
    });
    // keyboard on the canvas: arrows pan, + and - zoom, 0 resets, Enter opens, Escape clears
    els.canvas.addEventListener('keydown', (event) => {
      const camera = renderer.getCamera();
      const s = camera.getState();
      const step = 0.1 * s.ratio;
      const moves = {ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step]};
      if (moves[event.key]) {
        camera.setState({x: s.x + moves[event.key][0], y: s.y + moves[event.key][1]});
      } else if (event.key === '+' || event.key === '=') camera.animatedZoom({duration: 150});
      else if (event.key === '-') camera.animatedUnzoom({duration: 150});
      else if (event.key === '0') camera.animatedReset({duration: 150});
      else if (event.key === 'Enter' && state.selected >= 0) openNode(state.selected, event.ctrlKey || event.metaKey);
      else if (event.key === 'Escape') { select(-1, {camera: false}); return; }
      else return;
      event.preventDefault();
    });
    window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      readTheme();
      if (!whole) return;
      whole.updateEachNodeAttributes((node, attr) => {
        attr.color = theme.types[TYPES[G.type[attr.i]]];
        return attr;
      }, {attributes: ['color']});
      renderer.setSetting('labelColor', {color: theme.text});
      applyMode();
    });
  }

  function refilter() {
    computeVisible();
    if (state.mode === 'all') {
      if (state.selected >= 0) focusSet = neighbours(state.selected);
      renderer.refresh();
      summary();
    } else applyMode();
    writeURL();
  }

  function wireRenderer() {
    renderer.on('downNode', (event) => {
      if (state.mode === 'plan') return;
      dragged = event.node;
      dragMoved = false;
      if (!renderer.getCustomBBox()) renderer.setCustomBBox(renderer.getBBox());
    });
    renderer.on('moveBody', ({event}) => {
      if (dragged === null) return;
      const graph = renderer.getGraph();
      const pos = renderer.viewportToGraph(event);
      graph.setNodeAttribute(dragged, 'x', pos.x);
      graph.setNodeAttribute(dragged, 'y', pos.y);
      dragMoved = true;
      event.preventSigmaDefault();
      event.original.preventDefault();
      event.original.stopPropagation();
    });
    const up = () => {
      if (dragged !== null && dragMoved) {
        const i = Number(dragged);
        const attr = renderer.getGraph().getNodeAttributes(dragged);
        if (state.mode === 'all') {
          G.x[i] = attr.x; G.y[i] = attr.y;
          if (worker) worker.postMessage({type: 'pin', index: i, x: attr.x, y: attr.y, fixed: true});
        }
      }
      dragged = null;
    };
    renderer.on('upNode', up);
    renderer.on('upStage', up);
    renderer.on('clickNode', (event) => {
      if (dragMoved) { dragMoved = false; return; }
      const i = Number(event.node);
      const original = event.event.original;
      openNode(i, original && (original.ctrlKey || original.metaKey));
    });
    renderer.on('clickStage', () => { if (state.selected >= 0 && state.mode === 'all') select(-1, {camera: false}); });
    renderer.on('enterNode', () => { els.canvas.classList.add('over-node'); });
    renderer.on('leaveNode', () => { els.canvas.classList.remove('over-node'); });
  }

  // -- URL state -------------------------------------------------------------------------
  function readURL() {
    const p = new URLSearchParams(location.search);
    const focus = p.get('focus') || app.dataset.focus || '';
    const mode = p.get('mode') || app.dataset.mode || 'all';
    state.mode = ['all', 'around', 'plan'].includes(mode) ? mode : 'all';
    state.steps = Math.max(1, Math.min(6, Number(p.get('steps') || app.dataset.steps || 2) || 2));
    const dir = (p.get('dir') || '').toUpperCase();
    state.direction = dir === 'TB' || dir === 'LR' ? dir : state.direction;
    const i = G.index.has(focus) ? G.index.get(focus) : -1;
    state.selected = i;
    state.center = i;
    if (els.mode) els.mode.value = state.mode;
    if (els.steps) els.steps.value = String(state.steps);
    if (els.direction) els.direction.value = state.direction;
    if (els.search && i >= 0) els.search.value = G.title[i];
  }

  function writeURL() {
    if (!history.replaceState || location.protocol === 'file:') return;
    const p = new URLSearchParams(location.search);
    const set = (k, v) => (v ? p.set(k, v) : p.delete(k));
    set('focus', state.selected >= 0 ? G.ids[state.selected] : '');
    set('mode', state.mode !== 'all' ? state.mode : '');
    set('steps', state.mode === 'around' && state.steps !== 2 ? String(state.steps) : '');
    set('dir', state.mode === 'plan' && state.direction !== 'auto' ? state.direction : '');
    const qs = p.toString();
    history.replaceState(null, '', location.pathname + (qs ? '?' + qs : '') + location.hash);
  }

  function fillTags() {
    if (!els.tagList) return;
    const counts = new Map();
    for (const tags of G.tags) for (const t of tags) counts.set(t, (counts.get(t) || 0) + 1);
    const top = Array.from(counts).sort((a, b) => b[1] - a[1]).slice(0, 300);
    els.tagList.replaceChildren(...top.map(([t]) => el('option', {value: t})));
  }

  function fillLegend() {
    if (!els.legend) return;
    const counts = new Array(TYPES.length).fill(0);
    for (let i = 0; i < G.n; i++) counts[G.type[i]]++;
    for (const box of typeBoxes) {
      const out = app.querySelector(`[data-graph-count="${box.value}"]`);
      if (out) out.textContent = counts[TYPES.indexOf(box.value)].toLocaleString('en');
    }
  }

  // -- load ------------------------------------------------------------------------------
  function load(data, keep) {
    let old = null;
    if (keep && G) {
      old = new Map();
      for (let i = 0; i < G.n; i++) old.set(G.ids[i], [G.x[i], G.y[i]]);
    }
    const selectedId = G && state.selected >= 0 ? G.ids[state.selected] : null;
    G = prepare(data, old);
    timings.prepared = performance.now() - timings.start;
    if (!G.hasXY) {
      seedLayout(G);
      timings.seeded = performance.now() - timings.start;
    }
    whole = buildWhole(G);
    timings.built = performance.now() - timings.start;
    computeVisible();
    fillTags();
    fillLegend();
    if (keep) {
      state.selected = selectedId !== null && G.index.has(selectedId) ? G.index.get(selectedId) : -1;
      if (state.center >= 0 && state.center >= G.n) state.center = -1;
    } else {
      readURL();
    }
    applyMode();
    renderInfo();
  }

  function fail(message) {
    say(message);
    app.classList.add('graph-failed');
  }

  async function main() {
    const url = app.dataset.graphUrl;
    let data;
    const script = app.dataset.graphScript;
    if (!window.StudykbGraphData && script && location.protocol === 'file:') {
      // opened from disk: no fetch, but the site's graph-data.js sets the same JSON
      await new Promise((resolve) => {
        const el = document.createElement('script');
        el.src = script;
        el.onload = el.onerror = resolve;
        document.head.append(el);
      });
    }
    if (window.StudykbGraphData) {
      data = window.StudykbGraphData; // the dev page may hand data over without a request
    } else {
      if (!url) { fail('No graph to show.'); return; }
      say('Loading the graph…');
      try {
        const response = await fetch(url, {headers: {Accept: 'application/json'}});
        if (!response.ok) throw new Error(response.status + ' ' + response.statusText);
        timings.response = performance.now() - timings.start;
        const text = await response.text();
        timings.downloaded = performance.now() - timings.start;
        data = JSON.parse(text);
      } catch (err) {
        fail(location.protocol === 'file:'
          ? 'The graph needs the site to be served over HTTP (for example: python -m http.server).'
          : 'Could not load the graph: ' + err.message);
        return;
      }
    }
    timings.fetched = performance.now() - timings.start;
    load(data, false);
    wireSearch();
    wireControls();
    // interactive once the first frame is drawn with every handler in place
    requestAnimationFrame(() => {
      timings.interactive = performance.now() - timings.start;
      timings.interactiveSinceNavigation = performance.now();
      performance.mark('studykb-graph-interactive');
      window.studykbGraph.ready = true;
      app.dataset.ready = 'true';
      const budget = Number(app.dataset.layoutMs || 3000);
      if (!G.hasXY && budget > 0) startLayout(budget);
      summary();
    });
    document.addEventListener('studykb:changed', async () => {
      try {
        const response = await fetch(url, {headers: {Accept: 'application/json'}});
        if (response.ok) load(await response.json(), true);
      } catch (err) { /* the next change tries again */ }
    });
  }

  window.studykbGraph.api = {
    select: (id) => G && G.index.has(id) && select(G.index.get(id), {center: true}),
    renderer: () => renderer,
    state,
  };
  main();
})();
