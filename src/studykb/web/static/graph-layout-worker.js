/*
 * ForceAtlas2 in a web worker, from our own file (so a Content-Security-Policy with
 * `worker-src 'self'` allows it; the package's own worker is a blob: URL).
 *
 * Messages in:  {type: "start", nodes: Float32Array, edges: Float32Array, settings, budget}
 *               {type: "stop"} | {type: "resume", budget} | {type: "pin", index, x, y, fixed}
 * Messages out: {type: "positions", xy: Float32Array (x0, y0, x1, y1, ...), iterations, done}
 * The matrices are graphology-layout-forceatlas2's (10 floats a node, 3 an edge).
 */
/* global forceAtlas2Iterate */
'use strict';
importScripts('vendor/graphology-layout-forceatlas2/fa2-iterate.js');

const PPN = 10;
let nodes = null;
let edges = null;
let settings = null;
let deadline = 0;
let running = false;
let iterations = 0;
let timer = 0;

function positions(done) {
  const n = nodes.length / PPN;
  const xy = new Float32Array(n * 2);
  for (let i = 0, j = 0; i < n; i++, j += PPN) {
    xy[2 * i] = nodes[j];
    xy[2 * i + 1] = nodes[j + 1];
  }
  self.postMessage({type: 'positions', xy, iterations, done}, [xy.buffer]);
}

function run() {
  timer = 0;
  if (!running) return;
  const start = performance.now();
  // iterate for about 80 ms, then hand positions to the page (about 10 frames a second)
  do {
    forceAtlas2Iterate(settings, nodes, edges);
    iterations++;
  } while (performance.now() - start < 80 && performance.now() < deadline);
  const done = performance.now() >= deadline;
  if (done) running = false;
  positions(done);
  if (running) timer = setTimeout(run, 0);
}

self.onmessage = function (event) {
  const msg = event.data;
  if (msg.type === 'start') {
    nodes = msg.nodes;
    edges = msg.edges;
    settings = msg.settings;
    iterations = 0;
    running = true;
    deadline = performance.now() + (msg.budget || 3000);
    if (!timer) timer = setTimeout(run, 0);
  } else if (msg.type === 'stop') {
    running = false;
    if (nodes) positions(true);
  } else if (msg.type === 'resume' && nodes) {
    running = true;
    deadline = performance.now() + (msg.budget || 3000);
    if (!timer) timer = setTimeout(run, 0);
  } else if (msg.type === 'pin' && nodes) {
    const j = msg.index * PPN;
    nodes[j] = msg.x;
    nodes[j + 1] = msg.y;
    nodes[j + 9] = msg.fixed ? 1 : 0;
  }
};
