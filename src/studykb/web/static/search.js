/*
 * The search page: results as you type.
 * Serve mode: GET {data-api-search}?q=&type=&tag=&status=&level=&limit= ->
 *   {"query", "hits": [{"id", "key", "path", "title", "type", "score", "snippet",
 *   "highlights": [[start, end], ...], "url"}], "also_searched": [...]}
 * Static site: the same from search-static.js over {data-search-index}.
 * Highlight ranges are code-point offsets into the snippet (Python string indices), end
 * excluded. Every text goes in with textContent; <mark> elements are made with the DOM.
 */
/* global StudykbStaticSearch */
(function () {
  'use strict';

  const form = document.querySelector('[data-search-form]');
  if (!form) return;
  const body = document.body;
  const results = document.querySelector('[data-search-results]');
  const status = document.querySelector('[data-search-status]');
  const input = form.querySelector('[name="q"]');
  const serve = body.dataset.mode === 'serve' && !!form.dataset.api;
  const LIMIT = Number(form.dataset.limit || 30);
  let controller = null;
  let staticIndex = null;
  let timer = 0;
  let lastKey = null;

  function params() {
    const p = new URLSearchParams();
    for (const name of ['q', 'type', 'tag', 'status', 'level']) {
      const field = form.elements.namedItem(name);
      const value = field ? String(field.value || '').trim() : '';
      if (value) p.set(name, value);
    }
    return p;
  }

  /** text with <mark> around the code-point ranges, as DOM nodes. */
  function marked(text, ranges) {
    const frag = document.createDocumentFragment();
    const chars = Array.from(String(text || ''));
    let at = 0;
    const spans = (Array.isArray(ranges) ? ranges : [])
      .filter((r) => Array.isArray(r) && r.length === 2 && Number.isInteger(r[0]) && Number.isInteger(r[1]))
      .map(([a, b]) => [Math.max(0, a), Math.min(chars.length, b)])
      .filter(([a, b]) => b > a)
      .sort((x, y) => x[0] - y[0]);
    for (const [a, b] of spans) {
      if (a < at) continue; // overlapping ranges: keep the first
      if (a > at) frag.append(document.createTextNode(chars.slice(at, a).join('')));
      const m = document.createElement('mark');
      m.textContent = chars.slice(a, b).join('');
      frag.append(m);
      at = b;
    }
    if (at < chars.length) frag.append(document.createTextNode(chars.slice(at).join('')));
    return frag;
  }

  function safeURL(url) {
    try {
      const u = new URL(url, location.href);
      return ['http:', 'https:', 'file:'].includes(u.protocol) ? u.href : '';
    } catch (err) {
      return '';
    }
  }

  function render(answer, query) {
    results.replaceChildren();
    const hits = Array.isArray(answer.hits) ? answer.hits : [];
    for (const hit of hits) {
      const li = document.createElement('li');
      li.className = 'hit';
      const h = document.createElement('h2');
      const url = safeURL(hit.url || '');
      const a = document.createElement(url ? 'a' : 'span');
      if (url) a.href = url;
      a.append(marked(hit.title || hit.key || '', hit.title_highlights));
      h.append(a);
      const facts = document.createElement('p');
      facts.className = 'facts';
      const badge = document.createElement('span');
      badge.className = 'badge type-' + String(hit.type || '').replace(/[^a-z]/g, '');
      badge.textContent = hit.type || '';
      const path = document.createElement('span');
      path.className = 'path';
      path.textContent = ' ' + (hit.path || hit.key || '');
      facts.append(badge, path);
      const snip = document.createElement('p');
      snip.className = 'snippet';
      snip.append(marked(hit.snippet, hit.highlights));
      li.append(h, facts, snip);
      results.append(li);
    }
    const also = Array.isArray(answer.also_searched) ? answer.also_searched : [];
    let text = query ? `${hits.length}${hits.length >= LIMIT ? '+' : ''} result${hits.length === 1 ? '' : 's'} for “${query}”`
      : 'Type to search titles, text and tags, in English or Chinese.';
    if (query && also.length) text += `; also searched: ${also.join(', ')}`;
    status.textContent = text + (query ? '.' : '');
  }

  async function staticSearch(query, p) {
    if (!staticIndex) {
      status.textContent = 'Loading the search index…';
      staticIndex = await StudykbStaticSearch.load(form.dataset.index, form.dataset.indexScript);
    }
    return staticIndex.search(query, {type: p.get('type'), tag: p.get('tag'),
      status: p.get('status'), level: p.get('level'), limit: LIMIT});
  }

  async function run(force) {
    const p = params();
    const key = p.toString();
    if (key === lastKey && !force) return;
    lastKey = key;
    if (history.replaceState && location.protocol !== 'file:') {
      history.replaceState(null, '', location.pathname + (key ? '?' + key : ''));
    }
    const query = p.get('q') || '';
    if (!query) {
      render({hits: []}, '');
      return;
    }
    try {
      let answer;
      if (serve) {
        if (controller) controller.abort();
        controller = new AbortController();
        p.set('limit', String(LIMIT));
        const response = await fetch(form.dataset.api + '?' + p.toString(),
          {headers: {Accept: 'application/json'}, signal: controller.signal});
        if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
        answer = await response.json();
      } else {
        answer = await staticSearch(query, p);
      }
      if (lastKey === key) render(answer, query);
    } catch (err) {
      if (err.name === 'AbortError') return;
      status.textContent = location.protocol === 'file:' && !serve
        ? 'Could not load the search index (search-index.js at the site\'s top): ' + err.message
        : 'Search failed: ' + err.message;
    }
  }

  // an input method's composition (pinyin "tou ji" before 投机 is chosen) is not the
  // query yet: keystrokes while composing wait, and the committed text searches at once
  let composing = false;
  form.addEventListener('compositionstart', () => {
    composing = true;
    clearTimeout(timer);
  });
  form.addEventListener('compositionend', () => {
    composing = false;
    clearTimeout(timer);
    timer = setTimeout(run, 0);
  });
  form.addEventListener('input', (event) => {
    if (composing || event.isComposing) return;
    clearTimeout(timer);
    timer = setTimeout(run, 120);
  });
  form.addEventListener('change', () => run());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    run(true);
  });
  document.addEventListener('studykb:changed', () => run(true));
  // a static site's page has no server to fill the form from the address (the header's
  // search box and tag links send ?q= and ?tag=): the page reads it itself
  if (!serve) {
    const given = new URLSearchParams(location.search);
    for (const name of ['q', 'type', 'tag', 'status', 'level']) {
      const field = form.elements.namedItem(name);
      if (field && given.get(name) && !field.value) field.value = given.get(name);
    }
    const header = document.getElementById('site-search-q');
    if (header && input && !header.value) header.value = input.value;
  }
  // results rendered by the server stay until the query changes; otherwise search now
  if (!results.children.length && input && input.value) run();
  else lastKey = params().toString();
})();
