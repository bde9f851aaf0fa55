/*
 * Test data for the graph page: a vault-like graph in the shape /api/graph and graph.json
 * use ({nodes: [{id, name, path, title, type, tags, backlinks, url}], edges: [{source,
 * target, kind}]}), with realistic types, clusters (subject areas), power-law popularity
 * and edge kinds.
 *
 * Node:    node make-graph.js [--nodes 10000] [--edges 100000] [--seed 7] [--xy] > graph.json
 * Browser: <script src="make-graph.js"></script> then StudykbMakeGraph({nodes, edges, seed})
 *
 * --xy adds precomputed positions (a cluster-circle seed), as a server may send.
 */
(function (root) {
  'use strict';

  // mulberry32: a small seeded generator, so every run gives the same graph
  function rng(seed) {
    let a = seed >>> 0;
    return function () {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  const AREAS = ['tokenization', 'attention', 'kv-cache', 'speculative-decoding', 'cuda',
    'triton', 'gemm', 'flash-attention', 'ddp', 'fsdp2', 'tensor-parallel', 'pipeline-parallel',
    'moe', 'quantization', 'serving', 'batching', 'scheduling', 'nccl', 'rdma', 'checkpointing',
    'compilers', 'torch-compile', 'autograd', 'optimizers', 'mixed-precision', 'rope',
    'normalization', 'datasets', 'evaluation', 'rlhf', 'inference-engines', 'paged-attention',
    'memory', 'profiling', 'kernels', 'gpu-architecture', 'networking', 'storage',
    'orchestration', 'observability'];
  const ZH = ['注意力', '张量并行', '量化', '推理', '调度', '内存', '通信', '编译器', '算子',
    '分布式训练', '投机解码', '缓存'];
  const WORDS = ['A practical guide to', 'Understanding', 'Notes on', 'Deep dive:', 'How',
    'Benchmarking', 'Lecture:', 'Reading:', 'Why', 'Optimising', 'Scaling', 'Debugging'];
  const KINDS = ['article', 'talk', 'tutorial', 'paper', 'repo', 'video', 'docs', 'post'];

  function make(options) {
    const opts = Object.assign({nodes: 10000, edges: 100000, seed: 7, xy: false}, options || {});
    const rand = rng(opts.seed);
    const pick = (list) => list[Math.floor(rand() * list.length)];
    const N = opts.nodes;
    const nAreas = Math.max(4, Math.min(400, Math.round(Math.sqrt(N) * 0.6)));
    // type shares of a real vault: mostly curated entries, then units, notes and topics
    const shares = [['entry', 0.52], ['unit', 0.16], ['note', 0.15], ['topic', 0.12],
      ['list', 0.03], ['course', 0.02]];
    const nodes = [];
    const byType = {};
    const byArea = [];
    for (let a = 0; a < nAreas; a++) byArea.push({all: [], entry: [], topic: [], note: [],
      unit: [], list: [], course: []});
    // area sizes follow a power law: a few big subjects, many small ones
    const weights = [];
    let wsum = 0;
    for (let a = 0; a < nAreas; a++) { const w = 1 / Math.pow(a + 1, 0.7); weights.push(w); wsum += w; }
    const areaOf = () => {
      let r = rand() * wsum;
      for (let a = 0; a < nAreas; a++) { r -= weights[a]; if (r <= 0) return a; }
      return nAreas - 1;
    };
    let course = null;
    let unitNo = 0;
    for (let i = 0; i < N; i++) {
      let r = rand();
      let type = 'entry';
      for (const [t, s] of shares) { if (r < s) { type = t; break; } r -= s; }
      if (type === 'unit' && !course) type = 'course';
      const area = areaOf();
      const areaName = AREAS[area % AREAS.length] + (area >= AREAS.length ? '-' + area : '');
      let path;
      let id;
      let name;
      if (type === 'course') {
        name = 'course-' + i;
        path = 'courses/' + name + '.md';
        id = path;
        course = {id, area, units: 0};
        unitNo = 0;
      } else if (type === 'unit') {
        unitNo += 1;
        name = course.id.slice(8, -3) + '#lec-' + String(unitNo).padStart(2, '0');
        path = course.id;
        id = course.id + '#lec-' + String(unitNo).padStart(2, '0');
      } else {
        const folder = {entry: 'notes/entries/', topic: 'notes/topics/', list: 'notes/lists/',
          note: 'notes/'}[type];
        name = areaName + '-' + type + '-' + i;
        path = folder + areaName + '/' + name + '.md';
        id = path;
      }
      const zh = rand() < 0.2 ? ' ' + pick(ZH) : '';
      const title = type === 'topic' ? areaName.replace(/-/g, ' ') + ' ' + i + zh
        : type === 'unit' ? 'Lecture ' + unitNo + ': ' + areaName.replace(/-/g, ' ')
          : pick(WORDS) + ' ' + areaName.replace(/-/g, ' ') + ' #' + i + zh;
      const tags = [areaName];
      if (rand() < 0.5) tags.push(AREAS[Math.floor(rand() * AREAS.length)]);
      if (type === 'entry') tags.push(pick(KINDS));
      const node = {id, name, path, title, type, tags, backlinks: 0,
        url: '../doc/' + encodeURI(path) + (id.includes('#') ? '#' + id.split('#')[1] : '')};
      node._area = type === 'unit' ? course.area : area;
      node._i = i;
      if (type === 'unit') node._course = course.id;
      nodes.push(node);
      (byType[type] = byType[type] || []).push(i);
      byArea[node._area].all.push(i);
      byArea[node._area][type].push(i);
    }
    // popularity: Zipf over each area's members (earlier = more linked)
    const zipfPick = (list) => {
      if (!list.length) return -1;
      const u = rand();
      return list[Math.min(list.length - 1, Math.floor(list.length * u * u * u))];
    };
    const edges = [];
    const seen = new Set();
    const add = (s, t, kind) => {
      if (s < 0 || t < 0 || s === t) return false;
      const k = s * N + t + ':' + kind;
      if (seen.has(k)) return false;
      seen.add(k);
      edges.push({source: nodes[s].id, target: nodes[t].id, kind});
      nodes[t].backlinks += 1;
      return true;
    };
    // structural edges first: units -> course, list items, topic prerequisites, covers
    const courseIndex = {};
    for (const n of nodes) if (n.type === 'course') courseIndex[n.id] = n._i;
    for (const n of nodes) if (n.type === 'unit') add(courseIndex[n._course], n._i, 'course');
    const otherArea = (a) => (rand() < 0.85 ? a : Math.floor(rand() * nAreas));
    const budget = opts.edges;
    let guard = 0;
    while (edges.length < budget && guard++ < budget * 20) {
      const s = Math.floor(rand() * N);
      const src = nodes[s];
      const A = byArea[otherArea(src._area)];
      let kind;
      let t = -1;
      const r = rand();
      switch (src.type) {
        case 'entry':
          if (r < 0.45) { kind = 'covers'; t = zipfPick(A.topic); }
          else if (r < 0.65) { kind = 'requires'; t = zipfPick(A.topic); }
          else if (r < 0.8) { kind = 'related'; t = zipfPick(A.entry); }
          else { kind = 'link'; t = zipfPick(A.all); }
          break;
        case 'topic': {
          // prerequisites point to earlier topics of the area (no cycles in most areas)
          const before = A.topic.filter((x) => x < s);
          if (r < 0.6 && before.length) { kind = 'requires'; t = zipfPick(before); }
          else if (r < 0.8) { kind = 'related'; t = zipfPick(A.topic); }
          else { kind = 'link'; t = zipfPick(A.all); }
          break;
        }
        case 'note':
          if (r < 0.4) { kind = 'ref'; t = zipfPick(A.entry); }
          else if (r < 0.75) { kind = 'link'; t = zipfPick(A.all); }
          else if (r < 0.85) { kind = 'requires'; t = zipfPick(A.topic); }
          else if (r < 0.95) { kind = 'covers'; t = zipfPick(A.topic); }
          else { kind = 'course'; t = zipfPick(A.course); }
          break;
        case 'list':
          kind = r < 0.85 ? 'item' : 'link';
          t = zipfPick(kind === 'item' ? A.entry : A.all);
          break;
        case 'unit':
          if (r < 0.5) { kind = 'covers'; t = zipfPick(A.topic); }
          else if (r < 0.8) { kind = 'requires'; t = zipfPick(A.topic); }
          else { kind = 'ref'; t = zipfPick(A.entry); }
          break;
        default:
          kind = r < 0.5 ? 'item' : 'link';
          t = zipfPick(A.entry);
      }
      add(s, t, kind);
    }
    if (opts.xy) {
      // cluster circles on a sunflower spiral, members on a sunflower inside each
      const golden = Math.PI * (3 - Math.sqrt(5));
      let before = 0;
      byArea.forEach((area, a) => {
        const members = area.all.slice().sort((p, q) => nodes[q].backlinks - nodes[p].backlinks);
        const d = Math.sqrt(before + members.length / 2) * 2.2;
        const cx = d * Math.cos(a * golden);
        const cy = d * Math.sin(a * golden);
        members.forEach((i, k) => {
          nodes[i].x = +(cx + Math.sqrt(k + 0.5) * Math.cos(k * golden)).toFixed(3);
          nodes[i].y = +(cy + Math.sqrt(k + 0.5) * Math.sin(k * golden)).toFixed(3);
        });
        before += members.length;
      });
    }
    for (const n of nodes) { delete n._area; delete n._i; delete n._course; }
    return {nodes, edges};
  }

  root.StudykbMakeGraph = make;
  if (typeof module !== 'undefined' && module.exports) module.exports = make;
  if (typeof require !== 'undefined' && typeof process !== 'undefined' && require.main === module) {
    const args = process.argv.slice(2);
    const get = (flag, dflt) => {
      const i = args.indexOf(flag);
      return i >= 0 ? Number(args[i + 1]) : dflt;
    };
    const graph = make({nodes: get('--nodes', 10000), edges: get('--edges', 100000),
      seed: get('--seed', 7), xy: args.includes('--xy')});
    process.stdout.write(JSON.stringify(graph));
    process.stderr.write(`make-graph: ${graph.nodes.length} nodes, ${graph.edges.length} edges\n`);
  }
})(typeof self !== 'undefined' ? self : globalThis);
