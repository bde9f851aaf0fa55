/* Dev page helper: chooses the demo's data before graph.js runs (see graph-demo.html). */
/* global StudykbMakeGraph */
(function () {
  'use strict';
  const p = new URLSearchParams(location.search);
  const app = document.querySelector('[data-graph-app]');
  if (p.get('data')) {
    app.dataset.graphUrl = p.get('data');
  } else {
    const t0 = performance.now();
    window.StudykbGraphData = StudykbMakeGraph({nodes: Number(p.get('nodes') || 10000),
      edges: Number(p.get('edges') || 100000), seed: Number(p.get('seed') || 7), xy: p.has('xy')});
    window.studykbDemoGenerateMs = performance.now() - t0;
  }
  if (p.get('layout')) app.dataset.layoutMs = p.get('layout');
  if (p.get('fa2')) app.dataset.fa2 = p.get('fa2'); // ForceAtlas2 settings, as JSON
})();
