/*
 * Search without a server, for `studykb site`: a prebuilt index, search-index.json,
 *   {"docs": [{"key", "title", "type", "url", "snippet", ...}],
 *    "terms": {"term": [[docIndex, weight], ...], ...}}
 * where the Python side has already segmented Chinese into terms (and lowercased English).
 * A doc may also carry "path", "tags", "status" and "level", used by the filters when there.
 *
 * Query terms are found the way the index was made: English (and any other script with
 * spaces) as lowercase words of letters, digits and "_"; a run of Chinese (Han) characters
 * by greedy longest match against the index's own terms, a character alone where nothing
 * longer matches. The score is BM25's, with the weight as the term's frequency:
 *   idf(t) * w * (k1 + 1) / (w + k1), idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)).
 * As the CLI ranks: the topic names in the query bring their other names (the index's
 * "thesaurus", shown as "also searched") at a lower weight, and a document whose title,
 * alias or id is the whole query comes first. The last word, while being typed, matches
 * as a prefix (at a lower score) only when nothing matched as written, as serve does.
 *
 * Browser: StudykbStaticSearch.load(url, scriptURL) -> Promise<index> (scriptURL: the
 * same index as a script setting StudykbSearchIndex, loaded instead on a file:// page); index.search(q, {type, tag,
 * status, level, limit}) -> {query, hits: [{id, key, path, title, type, score, snippet,
 * highlights, url}], also_searched}: the shape of /api/search. Node: module.exports.
 */
(function (root) {
  'use strict';

  const K1 = 1.2;
  const HAN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u{20000}-\u{2ebef}]/u;
  // runs of Han characters, or of word characters in any other script
  const TOKEN = /([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u{20000}-\u{2ebef}]+)|([\p{L}\p{N}_]+)/gu;
  const MAX_PREFIX = 30;
  const OTHER_NAMES = 0.6; // studykb.search.ranking.OTHER_NAMES
  const EXACT = 100; // studykb.search.ranking.EXACT

  /** The query's terms: [{term, prefix}] in order, without repeats. */
  function tokenize(query, hasTerm, maxLen) {
    const out = [];
    const seen = new Set();
    const push = (term, prefix) => {
      if (!term || seen.has(term)) return;
      seen.add(term);
      out.push({term, prefix: !!prefix});
    };
    const text = String(query || '').normalize('NFKC').toLowerCase();
    const matches = Array.from(text.matchAll(TOKEN));
    matches.forEach((m, n) => {
      if (m[1]) {
        const chars = Array.from(m[1]);
        let i = 0;
        while (i < chars.length) {
          let found = 0;
          for (let len = Math.min(maxLen, chars.length - i); len >= 2; len--) {
            if (hasTerm(chars.slice(i, i + len).join(''))) { found = len; break; }
          }
          if (found) { push(chars.slice(i, i + found).join('')); i += found; }
          else { push(chars[i]); i += 1; }
        }
      } else {
        const last = n === matches.length - 1 && !/\s$/.test(text);
        push(m[2], last);
      }
    });
    return out;
  }

  /** Highlight ranges [[start, end], ...] of the terms in text, in code points. */
  function highlight(text, terms) {
    const chars = Array.from(text || '');
    const lower = chars.map((c) => c.toLowerCase());
    const ranges = [];
    for (const {term} of terms) {
      const t = Array.from(term);
      if (!t.length) continue;
      for (let i = 0; i + t.length <= lower.length; i++) {
        let ok = true;
        for (let j = 0; j < t.length && ok; j++) ok = lower[i + j] === t[j];
        if (!ok) continue;
        // an English term starts at a word boundary; Han terms may sit anywhere
        const before = i > 0 ? lower[i - 1] : ' ';
        if (!HAN.test(t[0]) && /[\p{L}\p{N}_]/u.test(before)) continue;
        ranges.push([i, i + t.length]);
        i += t.length - 1;
      }
    }
    ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const merged = [];
    for (const r of ranges) {
      const last = merged[merged.length - 1];
      if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
      else merged.push([r[0], r[1]]);
    }
    return merged;
  }

  class StaticIndex {
    constructor(data, baseURL) {
      this.docs = Array.isArray(data && data.docs) ? data.docs : [];
      this.terms = (data && data.terms) || {};
      this.base = baseURL || '';
      this.sorted = Object.keys(this.terms).sort();
      this.maxLen = 1;
      for (const t of this.sorted) {
        if (HAN.test(t)) this.maxLen = Math.max(this.maxLen, Array.from(t).length);
      }
      this.maxLen = Math.min(this.maxLen, 16);
      const thesaurus = (data && data.thesaurus) || {};
      this.thesaurus = thesaurus;
      // longest names first: 张量并行 is one name before 并行 is another
      this.names = Object.keys(thesaurus).sort((a, b) => b.length - a.length);
    }

    /** The other names the CLI searches too for the topic names in the query (its "also
     *  searched"), in the order the names stand in the query. */
    alsoNames(folded) {
      const found = [];
      const taken = [];
      const word = /[\p{L}\p{N}_]/u;
      for (const name of this.names) {
        let at = folded.indexOf(name);
        while (at >= 0) {
          const end = at + name.length;
          const edge = (i) => i < 0 || i >= folded.length || !word.test(folded[i]) || HAN.test(folded[i]);
          const bounded = (HAN.test(name[0]) || edge(at - 1)) && (HAN.test(name[name.length - 1]) || edge(end));
          if (bounded && !taken.some(([a, b]) => at < b && a < end)) {
            taken.push([at, end]);
            found.push([at, this.thesaurus[name]]);
          }
          at = folded.indexOf(name, at + 1);
        }
      }
      found.sort((a, b) => a[0] - b[0]);
      const out = [];
      for (const [, names] of found) for (const n of names) if (!out.includes(n)) out.push(n);
      return out;
    }

    has(term) {
      return Object.prototype.hasOwnProperty.call(this.terms, term);
    }

    /** Index terms starting with prefix (not the prefix itself), at most MAX_PREFIX. */
    expand(prefix) {
      const out = [];
      let lo = 0;
      let hi = this.sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.sorted[mid] < prefix) lo = mid + 1; else hi = mid;
      }
      for (let i = lo; i < this.sorted.length && out.length < MAX_PREFIX; i++) {
        if (!this.sorted[i].startsWith(prefix)) break;
        if (this.sorted[i] !== prefix) out.push(this.sorted[i]);
      }
      return out;
    }

    url(doc) {
      if (!doc.url) return '';
      try { return this.base ? new URL(doc.url, this.base).href : doc.url; } catch (err) { return doc.url; }
    }

    search(query, options) {
      const opts = options || {};
      const limit = Math.max(1, Math.min(200, Number(opts.limit) || 20));
      const terms = tokenize(query, (t) => this.has(t), this.maxLen);
      const N = this.docs.length || 1;
      const scores = new Map();
      const matched = new Map(); // doc -> how many query terms it has
      const also = [];
      const add = (term, factor, qi) => {
        const postings = this.terms[term];
        if (!Array.isArray(postings)) return false;
        const df = postings.length;
        const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5));
        for (const p of postings) {
          const d = p[0];
          const w = Number(p[1]) || 1;
          scores.set(d, (scores.get(d) || 0) + factor * idf * (w * (K1 + 1)) / (w + K1));
          let seen = matched.get(d);
          if (!seen) matched.set(d, (seen = new Set()));
          seen.add(qi);
        }
        return true;
      };
      // as the CLI: the query's words, and the other names of the topics it names at
      // OTHER_NAMES; a word still being typed is a prefix only when nothing matched
      const folded = String(query || '').normalize('NFKC').replace(/,/g, ' ')
        .split(/\s+/).filter(Boolean).join(' ').toLowerCase();
      const own = new Set(terms.map((t) => t.term));
      terms.forEach(({term}, qi) => add(term, 1, qi));
      for (const name of this.alsoNames(folded)) {
        also.push(name);
        for (const {term} of tokenize(name, (t) => this.has(t), this.maxLen)) {
          if (!own.has(term)) { own.add(term); add(term, OTHER_NAMES, terms.length); }
        }
      }
      if (!scores.size) {
        terms.forEach(({term, prefix}, qi) => {
          if (!prefix || term.length < 2) return;
          for (const longer of this.expand(term)) {
            if (add(longer, 0.5, qi) && also.length < 8) also.push(longer);
          }
        });
      }
      const want = (doc) => {
        if (opts.type && doc.type !== opts.type) return false;
        if (opts.status && doc.status !== undefined && doc.status !== opts.status) return false;
        if (opts.level && doc.level !== undefined && String(doc.level) !== String(opts.level)) return false;
        if (opts.tag && Array.isArray(doc.tags) &&
            !doc.tags.some((t) => String(t).toLowerCase() === String(opts.tag).toLowerCase())) return false;
        return true;
      };
      const nTerms = terms.length;
      const ranked = [];
      for (const [d, score] of scores) {
        const doc = this.docs[d];
        if (!doc || !want(doc)) continue;
        // documents that have every query term first, as a search box user expects
        const coverage = Math.min(1, matched.get(d).size / (nTerms || 1));
        // a document whose title, alias or id is the whole query first (the CLI's EXACT)
        const exact = Array.isArray(doc.names) && doc.names.includes(folded) ? EXACT : 0;
        ranked.push([score * (0.5 + coverage) + exact, d]);
      }
      ranked.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
      const hlTerms = terms.concat(also.map((term) => ({term})));
      const hits = ranked.slice(0, limit).map(([score, d]) => {
        const doc = this.docs[d];
        const snippet = String(doc.snippet || '');
        return {id: doc.id || doc.key, key: doc.key, path: doc.path || doc.key, title: doc.title,
          type: doc.type, score: Math.round(score * 1000) / 1000, snippet,
          highlights: highlight(snippet, hlTerms), title_highlights: highlight(doc.title, hlTerms),
          url: this.url(doc)};
      });
      return {query: String(query || ''), hits, also_searched: also, total: ranked.length};
    }
  }

  /** Run the script at src (a page opened from disk may load scripts, not fetch). */
  function script(src) {
    return new Promise((resolve, reject) => {
      const el = document.createElement('script');
      el.src = src;
      el.onload = resolve;
      el.onerror = () => reject(new Error('cannot load ' + src));
      document.head.append(el);
    });
  }

  async function load(url, scriptURL) {
    if (location.protocol === 'file:' && scriptURL) {
      // the site's search-index.js sets StudykbSearchIndex to the same JSON
      if (!root.StudykbSearchIndex) await script(scriptURL);
      return new StaticIndex(root.StudykbSearchIndex, new URL(url, location.href).href);
    }
    const response = await fetch(url, {headers: {Accept: 'application/json'}});
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    const base = new URL(url, location.href).href;
    return new StaticIndex(await response.json(), base);
  }

  const api = {load, script, StaticIndex, tokenize, highlight};
  root.StudykbStaticSearch = api;
  if (typeof module !== 'undefined' && module.exports) module.exports = api;
})(typeof self !== 'undefined' ? self : globalThis);
