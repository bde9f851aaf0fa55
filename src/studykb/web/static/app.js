/*
 * studykb: behaviour shared by every page (a classic script, loaded with defer).
 *
 *  - "/" puts the cursor in the search box (the page's own, else the header's);
 *  - math: the server marks TeX up as <span class="math inline"> and <div class="math
 *    display"> (or "math block"); KaTeX is loaded only when a page has some, and renders
 *    those elements only, from their text;
 *  - mark buttons ([data-mark-key]): POST {"key", "status"} to /api/mark with the
 *    X-Studykb-Token header from <meta name="studykb-token">, then show the new state;
 *  - live reload (serve mode): an EventSource on /api/events; an event {"changed": [keys]}
 *    that names this page's key (any key, on list pages) re-fetches the page and swaps
 *    <main>; pages with data-live="event" get a "studykb:changed" DOM event instead.
 * Nothing here needs a server: in a static site (data-mode="static") it does nothing
 * that would fail. Text from the server is always set with textContent.
 */
(function () {
  'use strict';

  const body = document.body;
  const STATIC = new URL('.', document.currentScript ? document.currentScript.src : location.href).href;
  const mode = body.dataset.mode || 'static';
  const meta = (name) => {
    const el = document.querySelector(`meta[name="${name}"]`);
    return el ? el.getAttribute('content') || '' : '';
  };
  const LIST_KINDS = ['home', 'status', 'topics', 'lists', 'courses', 'plan', 'search', 'graph'];

  // -- a polite live region for announcements ---------------------------------------------
  let live = document.getElementById('live-status');
  function announce(text) {
    if (!live) {
      live = document.createElement('div');
      live.id = 'live-status';
      live.className = 'visually-hidden';
      live.setAttribute('role', 'status');
      body.append(live);
    }
    live.textContent = '';
    setTimeout(() => { live.textContent = text; }, 30);
  }

  // -- "/" focuses search ---------------------------------------------------------------
  document.addEventListener('keydown', (event) => {
    if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
    const t = event.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    const box = document.querySelector('[data-search-primary]') ||
      document.querySelector('[data-graph-search]') || document.getElementById('site-search-q');
    if (!box) return;
    event.preventDefault();
    box.focus();
    if (box.select) box.select();
  });

  // -- math -----------------------------------------------------------------------------
  let katexLoading = null;
  function loadKatex() {
    if (window.katex) return Promise.resolve(window.katex);
    if (katexLoading) return katexLoading;
    katexLoading = new Promise((resolve, reject) => {
      const css = document.createElement('link');
      css.rel = 'stylesheet';
      css.href = STATIC + 'vendor/katex/katex.min.css';
      document.head.append(css);
      const script = document.createElement('script');
      script.src = STATIC + 'vendor/katex/katex.min.js';
      script.onload = () => resolve(window.katex);
      script.onerror = () => reject(new Error('KaTeX did not load'));
      document.head.append(script);
    });
    return katexLoading;
  }

  function stripDelimiters(tex, display) {
    const t = tex.trim();
    const pairs = display ? [['$$', '$$'], ['\\[', '\\]']] : [['$', '$'], ['\\(', '\\)']];
    for (const [open, close] of pairs) {
      if (t.length >= open.length + close.length && t.startsWith(open) && t.endsWith(close)) {
        return t.slice(open.length, t.length - close.length);
      }
    }
    return t;
  }

  function renderMath(root) {
    const nodes = Array.from((root || document).querySelectorAll(
      '.math.inline, .math.display, .math.block')).filter((el) => !el.dataset.tex);
    if (!nodes.length) return;
    loadKatex().then((katex) => {
      for (const el of nodes) {
        const display = !el.classList.contains('inline');
        const tex = stripDelimiters(el.textContent, display);
        el.dataset.tex = tex;
        try {
          katex.render(tex, el, {displayMode: display, throwOnError: false, trust: false,
            strict: 'ignore', maxExpand: 1000, output: 'htmlAndMathml'});
        } catch (err) {
          el.textContent = tex; // leave the source readable
        }
      }
    }).catch(() => { /* the TeX source stays as text */ });
  }

  // -- mark buttons ---------------------------------------------------------------------
  function setMarked(key, status) {
    const done = status === 'done';
    for (const b of document.querySelectorAll('[data-mark-key]')) {
      if (b.dataset.markKey !== key) continue;
      b.setAttribute('aria-pressed', done ? 'true' : 'false');
      b.dataset.status = status;
      const label = b.querySelector('[data-mark-label]') || b;
      label.textContent = done ? (b.dataset.labelDone || 'Done') : (b.dataset.labelTodo || 'Mark done');
      const row = b.closest('[data-item]');
      if (row) row.classList.toggle('is-done', done);
    }
    for (const s of document.querySelectorAll('[data-status-of]')) {
      if (s.dataset.statusOf !== key) continue;
      s.textContent = status;
      s.className = s.className.replace(/\bstatus-\w+/g, '').trim() + ' status-' + status;
    }
  }

  document.addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-mark-key]');
    if (!button || button.disabled) return;
    const key = button.dataset.markKey;
    const wasDone = button.getAttribute('aria-pressed') === 'true';
    const status = wasDone ? (button.dataset.undoStatus || 'todo') : 'done';
    const url = body.dataset.apiMark;
    const token = meta('studykb-token');
    const row = button.closest('[data-item]') || button.parentElement;
    const old = row && row.querySelector('.mark-error');
    if (old) old.remove();
    if (mode !== 'serve' || !url || !token) return;
    button.disabled = true;
    try {
      const response = await fetch(url, {method: 'POST', credentials: 'same-origin',
        headers: {'Content-Type': 'application/json', 'X-Studykb-Token': token},
        body: JSON.stringify({key, status})});
      let answer = {};
      try { answer = await response.json(); } catch (err) { answer = {}; }
      if (!response.ok) throw new Error(answer.error || answer.detail || `${response.status} ${response.statusText}`);
      const now = typeof answer.status === 'string' ? answer.status : status;
      setMarked(key, now);
      announce(`${button.dataset.title || key}: ${now}`);
    } catch (err) {
      const note = document.createElement('span');
      note.className = 'mark-error';
      note.setAttribute('role', 'alert');
      note.textContent = 'Not saved: ' + err.message;
      if (row) row.append(note);
    } finally {
      button.disabled = false;
    }
  });

  // -- topic/list filter boxes ([data-filter-for="#id"]) --------------------------------
  for (const input of document.querySelectorAll('input[data-filter-for]')) {
    const list = document.querySelector(input.dataset.filterFor);
    if (!list) continue;
    const count = document.querySelector(input.dataset.filterCount || '#none');
    input.hidden = false;
    if (input.labels) for (const l of input.labels) l.hidden = false;
    input.addEventListener('input', () => {
      const q = input.value.trim().toLowerCase();
      let shown = 0;
      for (const li of list.children) {
        const hit = !q || li.textContent.toLowerCase().includes(q);
        li.hidden = !hit;
        shown += hit;
      }
      if (count) count.textContent = `${shown} shown`;
    });
  }

  // -- live reload ----------------------------------------------------------------------
  function concerns(keys) {
    const kind = body.dataset.pageKind || '';
    if (LIST_KINDS.includes(kind)) return keys.length > 0;
    const mine = (body.dataset.pageKey || '').split('#')[0];
    return !!mine && keys.some((k) => String(k).split('#')[0] === mine);
  }

  async function swapMain() {
    const main = document.getElementById('main');
    if (!main) return;
    try {
      const response = await fetch(location.href, {headers: {'X-Studykb-Live': '1'},
        credentials: 'same-origin', cache: 'no-store'});
      if (!response.ok) throw new Error(String(response.status));
      const doc = new DOMParser().parseFromString(await response.text(), 'text/html');
      const fresh = doc.getElementById('main');
      if (!fresh) throw new Error('no main');
      const focusedId = document.activeElement && main.contains(document.activeElement)
        ? document.activeElement.id : '';
      main.replaceChildren(...Array.from(fresh.childNodes).map((n) => document.adoptNode(n)));
      if (doc.title) document.title = doc.title;
      renderMath(main);
      if (focusedId && document.getElementById(focusedId)) document.getElementById(focusedId).focus();
      announce('Page updated.');
    } catch (err) {
      location.reload();
    }
  }

  function startLive() {
    const url = body.dataset.apiEvents;
    if (mode !== 'serve' || !url || !window.EventSource) return;
    let source;
    try { source = new EventSource(url); } catch (err) { return; }
    let pending = new Set();
    let timer = 0;
    const onEvent = (event) => {
      let data;
      try { data = JSON.parse(event.data); } catch (err) { return; }
      const keys = Array.isArray(data && data.changed) ? data.changed.map(String) : [];
      if (!concerns(keys)) return;
      keys.forEach((k) => pending.add(k));
      clearTimeout(timer);
      timer = setTimeout(() => {
        const changed = Array.from(pending);
        pending = new Set();
        if (body.dataset.live === 'event') {
          document.dispatchEvent(new CustomEvent('studykb:changed', {detail: {changed}}));
        } else if (body.dataset.live !== 'off') {
          swapMain();
        }
      }, 120);
    };
    source.addEventListener('message', onEvent);
    source.addEventListener('changed', onEvent);
    window.addEventListener('pagehide', () => source.close());
  }

  renderMath(document.getElementById('main') || document);
  startLive();
  window.studykb = {renderMath, setMarked, announce, staticBase: STATIC};
})();
