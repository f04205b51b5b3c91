/* folio live reload client: served at __folio/reload.js, injected into pages
 * only. It finds the stream next to its own URL (works under any proxy
 * prefix) and, per event:
 *   css       swaps the stylesheet in place;
 *   fragment  re-injects the fragment;
 *   page      patches an edit to this page into the live document (only the
 *             elements that changed; only the stretch of source that changed is
 *             parsed again, checked by a whole parse at idle), or reloads the
 *             iframe that shows it;
 *   image     swaps the image or media file in place, cache-busted;
 *   reload    reloads (a script, data, an overflow).
 * Every reload keeps the reader's place: the element at the top of the
 * viewport and the offset into it go to sessionStorage, and the next page
 * scrolls back there once it and its fragments have settled. A reconnect to
 * a restarted server reloads once. window.__folioReload tells tests and
 * benchmarks what happened: ready (the page's source is known), hellos
 * (streams opened, its own or another tab's, as each hello came), patched
 * (edits applied in place), spans (of them, by re-parsing a stretch only),
 * settled and healed (idle whole-parse checks, and those that found a
 * difference to patch), place ('restored' once the place is back); set
 * profile to true for performance marks (folio:<stage>). */
(function () {
  'use strict';
  var me = document.currentScript;
  if (!me || !window.EventSource || window.__folioReload) return;
  var status = window.__folioReload = { ready: false, hellos: 0, patched: 0, place: null };
  var streamUrl = new URL('events', me.src).href;
  var instance = null;
  var source = null;
  var delay = 500;

  /* The path of @href resolved against @base (the document's), '' if not a URL. */
  function pathOf(href, base) {
    try { return new URL(href, base || document.baseURI).pathname; } catch (e) { return ''; }
  }

  /* An event's path matches a URL whose path ends with it, so a page behind
   * a proxy prefix (/playbook/style.css) matches /style.css; event paths
   * start with '/', so the match is always at a segment boundary. */
  function samePath(p, path) {
    return p === path || (p.length > path.length && p.slice(-path.length) === path);
  }

  /* The path of the page @href shows: a folder's is its index.html. */
  function pagePath(href) {
    var p = pathOf(href);
    return p.slice(-1) === '/' ? p + 'index.html' : p;
  }

  var bust = 0;
  /* A fresh cache-busting token. */
  function stamp() { return Date.now().toString(36) + (++bust).toString(36); }
  /* @href with a fresh ?folio= token, absolute. */
  function busted(href, base) {
    var url = new URL(href, base || document.baseURI);
    url.searchParams.set('folio', stamp());
    return url.href;
  }

  /* Attribute values as the page's source had them, for the elements this
   * client rewrote (cache-busted URLs): a later page edit compares the live
   * document with the source through these. */
  var original = new WeakMap();
  /* Sets an attribute, remembering the source's value the first time. */
  function setAttr(el, name, value) {
    var o = original.get(el);
    if (!o) original.set(el, (o = {}));
    if (!(name in o)) o[name] = el.getAttribute(name);
    el.setAttribute(name, value);
  }
  /* An attribute's value as the page's source had it. */
  function attrOf(el, name) {
    var o = original.get(el);
    return o && name in o ? o[name] : el.getAttribute(name);
  }

  /* ---- the reader's place ------------------------------------------------------------ */

  var PLACE_KEY = 'folio-place:' + location.pathname;

  /* Nodes of the client's own making (this script, a panel marked
   * data-folio or with an id starting folio-, as `folio check`'s) are not
   * the page's: never compared, never a place. */
  function ours(n) {
    return n === me || (n.nodeType === 1 && (n.hasAttribute('data-folio') || /^folio-/.test(n.id)));
  }
  /* @el's element children that belong to the page. */
  function elementKids(el) {
    var out = [];
    for (var c = el.firstElementChild; c; c = c.nextElementSibling) if (!ours(c)) out.push(c);
    return out;
  }

  /* The element at the top of the viewport: descend from <body> into the
   * first visible in-flow child that reaches below the top edge. Returns its
   * path (child indices, with ids where there are some, so the path survives
   * edits elsewhere) and the offset of the viewport's top into it. */
  function where() {
    var el = document.body, steps = [], rect = null;
    while (el) {
      var kids = elementKids(el), next = null, r = null;
      for (var i = 0; i < kids.length; i++) {
        var cs = getComputedStyle(kids[i]);
        if (cs.position === 'fixed' || cs.position === 'sticky' || cs.display === 'none') continue;
        r = kids[i].getBoundingClientRect();
        if (r.height > 0 && r.bottom > 0) { next = kids[i]; steps.push({ i: i, id: next.id || null }); break; }
      }
      if (!next) break;
      el = next;
      rect = r;
      if (r.top > 0 || getComputedStyle(next).display === 'inline') break;
    }
    if (!rect) return null;
    return { steps: steps, offset: -rect.top, height: rect.height, tag: el.tagName, at: Date.now() };
  }

  /* The element a recorded place names (as far as the page has it yet). */
  function find(place) {
    var el = document.body;
    for (var k = 0; el && k < place.steps.length; k++) {
      var s = place.steps[k];
      var byId = s.id && document.getElementById(s.id);
      var next = byId || elementKids(el)[s.i];
      if (!next) return { el: el, exact: false };
      el = next;
    }
    return { el: el, exact: !!el && el.tagName === place.tag };
  }

  /* Scrolls so that @place's element is where it was. */
  function putBack(place) {
    var f = find(place);
    if (!f.el || f.el === document.body) return f;
    var dy = f.el.getBoundingClientRect().top + (f.exact ? place.offset : 0);
    if (Math.abs(dy) >= 1) window.scrollBy(0, dy);
    return f;
  }

  var reloading = false;
  /* Reloads once, noting the reader's place for the next page to restore. */
  function reload() {
    if (reloading) return;
    reloading = true;
    try {
      var place = where();
      if (place) sessionStorage.setItem(PLACE_KEY, JSON.stringify(place));
      /* Ours to restore, not the browser's pixel count. */
      history.scrollRestoration = 'manual';
    } catch (e) { /* no storage: a plain reload */ }
    location.reload();
  }

  /* After a reload: keep the place pinned while the page and its fragments
   * arrive (each changes the height above it), until the page and its fonts
   * have loaded, no fragment is loading, and nothing has changed for half a
   * second; or until the reader scrolls themselves. */
  function restore() {
    var place = null;
    try {
      place = JSON.parse(sessionStorage.getItem(PLACE_KEY) || 'null');
      sessionStorage.removeItem(PLACE_KEY);
    } catch (e) { place = null; }
    if (!place || Date.now() - place.at > 60000) return;
    status.place = 'restoring';
    var QUIET_MS = 500, CAP_MS = 15000, t0 = Date.now(), last = Date.now();
    var loaded = document.readyState === 'complete';
    var stopped = false;
    window.addEventListener('load', function () { loaded = true; last = Date.now(); });
    var mo = new MutationObserver(function () { last = Date.now(); });
    mo.observe(document.documentElement, { childList: true, subtree: true, attributes: true });
    function stop(state) {
      if (stopped) return;
      stopped = true;
      mo.disconnect();
      ['wheel', 'touchstart', 'keydown', 'mousedown'].forEach(function (t) {
        window.removeEventListener(t, byReader, true);
      });
      history.scrollRestoration = 'auto';
      status.place = state;
      document.dispatchEvent(new CustomEvent('folio:place', { detail: { state: state } }));
    }
    function byReader() { stop('left'); }
    ['wheel', 'touchstart', 'keydown', 'mousedown'].forEach(function (t) {
      window.addEventListener(t, byReader, true);
    });
    (function frame() {
      if (stopped) return;
      putBack(place);
      var busy = document.querySelector('[data-fragment-state="loading"], [aria-busy="true"]') ||
        (document.fonts && document.fonts.status !== 'loaded');
      if (loaded && !busy && Date.now() - last > QUIET_MS) { putBack(place); stop('restored'); return; }
      if (Date.now() - t0 > CAP_MS) { stop('restored'); return; }
      requestAnimationFrame(frame);
    })();
  }

  /* ---- stylesheets -------------------------------------------------------------------- */

  /* The sheet that @imports @path leads back to its top-level <link>. */
  function importsPath(sheet, path, depth) {
    var rules;
    try { rules = sheet.cssRules; } catch (e) { return false; }
    for (var i = 0; rules && i < rules.length && depth < 8; i++) {
      var s = rules[i].styleSheet;
      if (s && ((s.href && samePath(pathOf(s.href), path)) || importsPath(s, path, depth + 1))) return true;
    }
    return false;
  }

  /* Swaps every stylesheet of this document that is, or @imports, @path. */
  function swapCss(path) {
    var links = document.querySelectorAll('link[rel~="stylesheet"][href]');
    for (var i = 0; i < links.length; i++) {
      var old = links[i];
      if (!samePath(pathOf(old.href), path) && !(old.sheet && importsPath(old.sheet, path, 0))) continue;
      if (old.__folioReplaced) continue; /* already on its way out */
      old.__folioReplaced = true;
      var fresh = old.cloneNode(false);
      fresh.href = busted(old.href);
      original.set(fresh, { href: attrOf(old, 'href') });
      fresh.__folioOld = old;
      fresh.onload = fresh.onerror = retire(fresh);
      /* The old sheet stays until the new one has loaded: no flash of
       * unstyled content. */
      old.parentNode.insertBefore(fresh, old.nextSibling);
    }
    /* Not linked from this document: nothing here uses it. */
  }

  /* Once @fresh has loaded, the sheets it replaces go: its predecessor and,
   * when saves came quicker than loads, every one before that still there. */
  function retire(fresh) {
    return function () {
      fresh.onload = fresh.onerror = null;
      for (var o = fresh.__folioOld; o; o = o.__folioOld) {
        if (o.parentNode) o.parentNode.removeChild(o);
      }
      fresh.__folioOld = null;
    };
  }

  /* ---- fragments ---------------------------------------------------------------------- */

  /* Scripts inserted with innerHTML do not run: replace each by a copy. */
  function runScripts(root) {
    var scripts = root.querySelectorAll('script');
    for (var i = 0; i < scripts.length; i++) {
      var old = scripts[i];
      var s = document.createElement('script');
      for (var j = 0; j < old.attributes.length; j++) {
        s.setAttribute(old.attributes[j].name, old.attributes[j].value);
      }
      s.text = old.text;
      old.parentNode.replaceChild(s, old);
    }
  }

  /* The article's own loader, when it offers one, re-injects the fragment
   * (it keeps its state attributes and its events); otherwise do as it does:
   * fetch fragments/<name>.html relative to the page, inject, run scripts.
   * A fragment this page does not show changes nothing here. */
  function swapFragment(name) {
    var el = document.getElementById('fragment-' + name);
    if (!el) return;
    var api = window.folioFragments;
    if (api && typeof api.reload === 'function') {
      Promise.resolve(api.reload(name)).catch(reload);
      return;
    }
    var url = new URL('fragments/' + name + '.html', document.baseURI);
    fetch(url.href, { cache: 'no-store' }).then(function (r) {
      if (!r.ok) throw new Error(String(r.status));
      return r.text();
    }).then(function (html) {
      el.innerHTML = html;
      runScripts(el);
      document.dispatchEvent(new CustomEvent('folio:fragment',
        { detail: { name: name, state: 'loaded' } }));
    }).catch(reload);
  }

  /* ---- the page itself: patch in place ---------------------------------------------- */

  /* The source the live document was built from (as a script fetches it:
   * no client injected), kept to compare the next version against. */
  var baseline = null, baselineDoc = null;
  /* Where baselineDoc's elements start in baseline (indexSource), once known. */
  var sourceIndex = null, indexed = null;
  /* On this machine bytes cost nothing, while compressing a just-saved page
   * does, on the path of every edit (bench/README.md, Measurements behind
   * the code): a range request makes the browser ask for identity, so the
   * file comes as it is. */
  var loopback = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(location.hostname);
  /* The page's current source, as a script fetches it. */
  function fetchSource() {
    function get(range) {
      return fetch(location.href.split('#')[0], { cache: 'no-store', credentials: 'same-origin',
        headers: range ? { Range: 'bytes=0-' } : {} });
    }
    return get(loopback).then(function (r) {
      return r.status === 416 ? get(false) : r; /* an empty page has no byte 0 */
    }).then(function (r) {
      if (!r.ok) throw new Error(String(r.status));
      return r.text();
    });
  }
  var errorPage = false;

  /* With __folioReload.profile set (a bench, a curious author), each stage
   * of a page patch is a performance mark, folio:<stage>, to read with the
   * Performance API or see in a trace. */
  function mark(stage) { if (status.profile) performance.mark('folio:' + stage); }

  /* A detached document parsed from @src. */
  function parse(src) { return new DOMParser().parseFromString(src, 'text/html'); }

  /* Every <script> of @doc, in order, as one string to compare. */
  function scriptsOf(doc) {
    return Array.prototype.map.call(doc.querySelectorAll('script'), function (s) {
      return s.outerHTML;
    }).join('\u0000');
  }

  /* @n's child nodes as an array. */
  function kids(n) { return Array.prototype.slice.call(n.childNodes); }
  /* @n's child nodes that belong to the page. */
  function liveKids(n) { return kids(n).filter(function (c) { return !ours(c); }); }

  /* Same node type and, for elements, the same tag: one may be patched into the other. */
  function sameKind(a, b) {
    return a.nodeType === b.nodeType && (a.nodeType !== 1 ||
      (a.localName === b.localName && a.namespaceURI === b.namespaceURI));
  }

  /* Attributes of live @l (as the source had them) against parsed @o. */
  function sameAttrs(l, o) {
    if (l.attributes.length !== o.attributes.length) return false;
    for (var i = 0; i < o.attributes.length; i++) {
      var a = o.attributes[i];
      if (attrOf(l, a.name) !== a.value) return false;
    }
    return true;
  }

  /* Live @l is exactly what the source @o built: no script changed it. */
  function sameTree(l, o) {
    if (!sameKind(l, o)) return false;
    if (l.nodeType !== 1) return l.nodeType === o.nodeType && l.data === o.data;
    if (!sameAttrs(l, o)) return false;
    var lk = liveKids(l), ok = kids(o);
    if (lk.length !== ok.length) return false;
    for (var i = 0; i < ok.length; i++) if (!sameTree(lk[i], ok[i])) return false;
    return true;
  }

  /* Whose contents the page's scripts own: a fragment container. */
  function rewritten(el) { return /^fragment-./.test(el.id || ''); }

  /* Replacing @n wholesale would lose or re-run what scripts did: a script, a fragment. */
  function unsafeInside(n) {
    return n.nodeType === 1 && (n.localName === 'script' || rewritten(n) ||
      !!n.querySelector('script, [id^="fragment-"]'));
  }

  /* Plans the changes that turn live @l (built from @o) into what @n says,
   * onto @ops. False when that cannot be done safely: the live element is
   * not what the old source built (a script rewrote it) where it changed. */
  function diff(l, o, n, ops) {
    if (o.isEqualNode(n)) return true;
    if (rewritten(l)) return false;
    if (!sameAttrs(o, n)) {
      if (!sameAttrs(l, o)) return false;
      ops.push(function () {
        /* Only what the edit changed: a cache-busted URL the edit left
         * alone stays busted. */
        for (var i = o.attributes.length - 1; i >= 0; i--) {
          if (!n.hasAttribute(o.attributes[i].name)) l.removeAttribute(o.attributes[i].name);
        }
        for (var j = 0; j < n.attributes.length; j++) {
          var at = n.attributes[j];
          if (o.getAttribute(at.name) === at.value) continue;
          l.setAttribute(at.name, at.value);
          var orig = original.get(l);
          if (orig) delete orig[at.name];
        }
      });
    }
    return diffKids(l, kids(o), kids(n), ops);
  }

  /* diff() for the children: live @l's page nodes were built from @oc, and
   * become what @nc says (nodes both share are the same objects, or equal). */
  function diffKids(l, oc, nc, ops) {
    var all = liveKids(l), lc = aligned(all, oc);
    if (!lc) return false;
    var a = 0, b = 0;
    while (a < oc.length && a < nc.length && same(oc[a], nc[a])) a++;
    while (b < oc.length - a && b < nc.length - a && same(oc[oc.length - 1 - b], nc[nc.length - 1 - b])) b++;
    var om = oc.slice(a, oc.length - b), nm = nc.slice(a, nc.length - b);
    var lm = lc.slice(a, lc.length - b);
    /* New nodes at the end go after the source's last one, before what a script added there. */
    var after = b > 0 ? lc[lc.length - b] : all[lc.length ? all.indexOf(lc[lc.length - 1]) + 1 : 0] || null;
    if (isShaped(om, nm)) return patchRun(l, lm, om, nm, after, ops);
    /* Nodes added or removed: keep the longest run of nodes the edit left
     * equal, in order, and patch or replace the stretches between them. */
    var pairs = alignEqual(om, nm);
    var i0 = 0, j0 = 0;
    for (var p = 0; p <= pairs.length; p++) {
      var i1 = p < pairs.length ? pairs[p][0] : om.length;
      var j1 = p < pairs.length ? pairs[p][1] : nm.length;
      var ref = p < pairs.length ? lm[i1] : after;
      if (!patchRun(l, lm.slice(i0, i1), om.slice(i0, i1), nm.slice(j0, j1), ref, ops)) return false;
      i0 = i1 + 1;
      j0 = j1 + 1;
    }
    return true;
  }

  /* The page nodes @lc of a live element matched in order to @oc, the
   * source's nodes they were built from, or null when they do not match up.
   * Elements a script inserted among them are passed over, and stay: what it
   * appends to <body> (a dialog, a footer), distill's byline before the
   * article and a table of contents at its start. A node with an id is only
   * ever matched to one with that id, so an inserted element of the same
   * kind is not taken for a source's. */
  function aligned(lc, oc) {
    if (lc.length === oc.length) return lc;
    if (lc.length < oc.length) return null;
    var out = [], j = 0;
    for (var i = 0; i < oc.length; i++) {
      var o = oc[i];
      while (j < lc.length && lc[j].nodeType === 1 &&
             (!sameKind(lc[j], o) || (o.id || '') !== (lc[j].id || '') && o.id)) j++;
      if (j === lc.length || !sameKind(lc[j], o)) return null;
      out.push(lc[j++]);
    }
    return out;
  }

  /* Old @x and new @y are equal: the very same node (a stretch the fast path
   * did not re-parse), or equal ones. */
  function same(x, y) { return x === y || x.isEqualNode(y); }

  /* The same number of nodes, pairwise of a kind: patchable one by one. */
  function isShaped(om, nm) {
    return om.length === nm.length && om.every(function (x, i) { return sameKind(x, nm[i]); });
  }

  /* Index pairs of a longest common subsequence of equal nodes of @om and
   * @nm (none when the stretch is too long to align cheaply). */
  function alignEqual(om, nm) {
    var n = om.length, m = nm.length;
    if (n === 0 || m === 0 || n * m > 40000) return [];
    var t = new Uint16Array((n + 1) * (m + 1)), w = m + 1;
    for (var i = n - 1; i >= 0; i--) {
      for (var j = m - 1; j >= 0; j--) {
        t[i * w + j] = om[i].isEqualNode(nm[j]) ? t[(i + 1) * w + j + 1] + 1
          : Math.max(t[(i + 1) * w + j], t[i * w + j + 1]);
      }
    }
    var out = [];
    for (var x = 0, y = 0; x < n && y < m;) {
      if (om[x].isEqualNode(nm[y]) && t[x * w + y] === t[(x + 1) * w + y + 1] + 1) { out.push([x, y]); x++; y++; }
      else if (t[(x + 1) * w + y] >= t[x * w + y + 1]) x++;
      else y++;
    }
    return out;
  }

  /* Plans turning the live stretch @lm (built from @om) of @l's children
   * into @nm, placed before @after: node by node when the shapes match,
   * else by replacing the stretch, which must be untouched by scripts. */
  function patchRun(l, lm, om, nm, after, ops) {
    if (om.length === 0 && nm.length === 0) return true;
    if (isShaped(om, nm)) {
      /* The same nodes, changed: recurse, so untouched elements (a playing
       * video, a filled-in form) stay the very same objects. */
      for (var i = 0; i < om.length; i++) {
        if (!sameKind(lm[i], om[i])) return false;
        if (om[i].nodeType === 1) {
          if (!diff(lm[i], om[i], nm[i], ops)) return false;
        } else if (om[i].data !== nm[i].data) {
          if (lm[i].data !== om[i].data) return false;
          ops.push((function (t, data) { return function () { t.data = data; }; })(lm[i], nm[i].data));
        }
      }
      return true;
    }
    for (var k = 0; k < om.length; k++) {
      if (unsafeInside(om[k]) || !sameTree(lm[k], om[k])) return false;
    }
    for (var m = 0; m < nm.length; m++) if (unsafeInside(nm[m])) return false;
    ops.push(function () {
      lm.forEach(function (x) { if (x.parentNode) x.parentNode.removeChild(x); });
      nm.forEach(function (x) {
        var copy = document.importNode(x, true);
        if (after && after.parentNode === l) l.insertBefore(copy, after);
        else if (!after && l === document.head && me.parentNode === l) l.insertBefore(copy, me);
        else l.appendChild(copy);
      });
    });
    return true;
  }

  /* Applies the edit from @oldSrc, parsed as @o, to @newSrc; returns the new
   * source parsed (the next edit's old one), or null when only a reload will
   * do. Re-parses only the stretch that changed where it safely can. */
  function patch(o, oldSrc, newSrc) {
    var ops = [], n = o, commit = null;
    /* The stretch is only ever the quicker way: where it throws, the whole parse decides. */
    try { commit = patchSpan(o, oldSrc, newSrc, ops); } catch (e) { commit = null; }
    if (!commit) {
      ops = [];
      n = parse(newSrc);
      mark('parsed');
      if (scriptsOf(o) !== scriptsOf(n)) return null;
      if (!diff(document.documentElement, o.documentElement, n.documentElement, ops)) return null;
    }
    mark('diffed');
    run(ops);
    if (commit) commit();
    return n;
  }

  /* Runs planned @ops, the reader's place kept. */
  function run(ops) {
    var place = where();
    ops.forEach(function (op) { op(); });
    mark('applied');
    if (place) putBack(place);
    mark('placed');
  }

  /* ---- re-parsing only what changed ------------------------------------------------- */

  /* Start tags (name, then the tag), and what to step over: comments, end
   * tags, doctypes, processing instructions. A quoted value may hold '>'. */
  var TAG = /<!--[\s\S]*?(?:-->|$)|<[\/!?][^>]*>?|<([a-zA-Z][^\s\/>]*)(?:[^>"']|"[^"]*"|'[^']*')*>/g;
  /* Elements whose content is text up to their end tag. */
  var RAW = /^(script|style|textarea|title|xmp|iframe|noembed|noframes|plaintext)$/;
  /* Elements the parser adds where the source leaves them out: implied
   * ones, and formatting elements it re-opens after a misnested end tag. */
  var IMPLIED = /^(html|head|body|tbody|colgroup)$/;
  var ADDED = /^(html|head|body|tbody|colgroup|a|b|big|code|em|font|i|nobr|s|small|strike|strong|tt|u)$/;
  /* Elements whose content parses by rules of its own, or not as HTML. */
  var CONTEXT = /^(table|thead|tbody|tfoot|tr|colgroup|select|template|svg|math|head|html)$/;

  /* Where each element of @doc (parsed from @src) starts in @src: a Map
   * element -> [start of its tag, end of its tag], as far as the source's
   * start tags and the document's elements match up in order (past a tag
   * the parser moved or dropped, elements are not in it). */
  function indexSource(doc, src) {
    var at = new Map(), els = doc.getElementsByTagName('*'), i = 0, m;
    TAG.lastIndex = 0;
    while (i < els.length && (m = TAG.exec(src))) {
      if (!m[1]) continue;
      var name = m[1].toLowerCase();
      while (i < els.length && els[i].localName.toLowerCase() !== name && ADDED.test(els[i].localName)) i++;
      if (i === els.length) break;
      if (els[i].localName.toLowerCase() !== name) {
        if (IMPLIED.test(name)) continue; /* a second <body>: the parser merges it */
        break;
      }
      at.set(els[i++], [m.index, TAG.lastIndex]);
      if (RAW.test(name)) {
        var end = new RegExp('</' + name + '[\\s/>]', 'ig');
        end.lastIndex = TAG.lastIndex;
        var e = name === 'plaintext' ? null : end.exec(src);
        TAG.lastIndex = e ? e.index : src.length;
      }
    }
    return at;
  }

  /* Parses @slice where it stood: inside @wrap's start tags (the element's
   * ancestors below <body>, so that an end tag or a block that would close
   * one does so here too), followed by @stop, the start tag of the node that
   * came after it. The nodes it made, or null unless it parsed as a whole
   * run of children of the innermost wrapper, closed by @stop. */
  function parseIn(doc, wrap, slice, stop, stopName) {
    var t = doc.createElement('template');
    t.innerHTML = wrap.map(function (w) { return '<' + w + '>'; }).join('') + slice + stop;
    var c = t.content;
    for (var d = 0; d < wrap.length; d++) {
      if (c.childNodes.length !== 1 || c.firstChild.localName !== wrap[d]) return null;
      c = c.firstChild;
    }
    var out = kids(c);
    var last = out.pop();
    if (!last || last.nodeType !== 1 || last.localName !== stopName || last.firstChild) return null;
    if (t.content.querySelector('script')) return null; /* a script changed: the full path decides */
    return out;
  }

  /* Plans the edit @oldSrc -> @newSrc onto @ops by re-parsing only the
   * stretch of one element's children the change falls in, and checks the
   * old stretch re-parses to exactly what the old source built there. A
   * function that brings @o up to date once @ops ran (and counts the patch
   * in __folioReload.spans), or null: the whole page is parsed instead. */
  function patchSpan(o, oldSrc, newSrc, ops) {
    if (!sourceIndex || indexed !== o) { sourceIndex = indexSource(o, oldSrc); indexed = o; }
    mark('indexed');
    var p = 0, min = Math.min(oldSrc.length, newSrc.length);
    /* First difference, then last: halving, so that the string compares run natively. */
    for (var step = 65536; step >= 1; step >>= 1) {
      while (p + step <= min && oldSrc.substr(p, step) === newSrc.substr(p, step)) p += step;
    }
    var s = 0, shift = newSrc.length - oldSrc.length;
    for (step = 65536; step >= 1; step >>= 1) {
      while (s + step <= min - p &&
             oldSrc.substr(oldSrc.length - s - step, step) === newSrc.substr(newSrc.length - s - step, step)) s += step;
    }
    var oldEnd = oldSrc.length - s;
    /* The deepest element whose start tag ends before the change... */
    var c = null, best = -1;
    sourceIndex.forEach(function (v, el) { if (v[1] <= p && v[1] > best) { best = v[1]; c = el; } });
    for (; c && c !== o.documentElement; c = c.parentElement) {
      if (CONTEXT.test(c.localName) || c.namespaceURI !== 'http://www.w3.org/1999/xhtml' ||
          !o.body || !o.body.contains(c)) continue;
      /* ...or its nearest ancestor with an element child after the change. */
      var own = sourceIndex.get(c); /* none for a <body> the source left out */
      var oc = kids(c), i = -1, j = -1, from = own ? own[1] : -1;
      for (var k = 0; k < oc.length && j < 0; k++) {
        var at = oc[k].nodeType === 1 ? sourceIndex.get(oc[k]) : null;
        if (oc[k].nodeType === 1 && !at) return null;
        if (at && at[0] <= p) { i = k; from = at[0]; }
        if (at && at[0] >= oldEnd) j = k;
      }
      if (j < 0 || from < 0) continue;
      if (i < 0) i = 0;
      var wrap = [], stop = sourceIndex.get(oc[j]);
      for (var w = c; w !== o.body; w = w.parentElement) wrap.unshift(w.localName);
      var stopTag = oldSrc.slice(stop[0], stop[1]);
      var was = parseIn(o, wrap, oldSrc.slice(from, stop[0]), stopTag, oc[j].localName);
      var run = oc.slice(i, j);
      if (!was || was.length !== run.length || !was.every(function (x, q) { return x.isEqualNode(run[q]); })) return null;
      var now = parseIn(o, wrap, newSrc.slice(from, stop[0] + shift), stopTag, oc[j].localName);
      /* Text right after text would be one node in a whole parse. */
      if (!now || (now.length && now[0].nodeType === 3 && i > 0 && oc[i - 1].nodeType === 3)) return null;
      mark('parsed');
      var l = liveOf(c);
      if (!l || !diffKids(l, oc, oc.slice(0, i).concat(now, oc.slice(j)), ops)) return null;
      return function () {
        status.spans = (status.spans || 0) + 1;
        run.forEach(function (x) { c.removeChild(x); });
        now.forEach(function (x) { c.insertBefore(x, oc[j]); });
        sourceIndex = null; /* offsets moved: indexed again when next needed */
      };
    }
    return null;
  }

  /* When the page is idle after an edit (or once its source is known): the
   * source parsed whole, so that the next edit starts from a document and an
   * index made by the browser's own parser. Where a re-parsed stretch came
   * out other than a whole parse makes it (the parser's state reached across
   * it), the live page is patched to the whole parse now. Tests read
   * __folioReload.settled (parses done) and healed (of them, patches). */
  function settle() {
    var src = baseline;
    (window.requestIdleCallback || setTimeout)(function () {
      if (src !== baseline || src === null) return; /* another edit came: it settles */
      var n = parse(src);
      if (baselineDoc && !baselineDoc.documentElement.isEqualNode(n.documentElement)) {
        var ops = [];
        if (!diff(document.documentElement, baselineDoc.documentElement, n.documentElement, ops)) { reload(); return; }
        run(ops);
        status.healed = (status.healed || 0) + 1;
      }
      baselineDoc = n;
      sourceIndex = indexSource(n, src);
      indexed = n;
      status.settled = (status.settled || 0) + 1;
    }, { timeout: 1000 });
  }

  /* The live element built from @c of the old source's document, or null
   * where the live page's shape differs on the way (a script added nodes). */
  function liveOf(c) {
    var path = [];
    for (var x = c; x.parentNode && x.parentNode.nodeType === 1; x = x.parentNode) {
      path.unshift(Array.prototype.indexOf.call(x.parentNode.childNodes, x));
    }
    var l = document.documentElement, n = c.ownerDocument.documentElement;
    for (var d = 0; d < path.length; d++) {
      if (rewritten(l)) return null;
      var lk = aligned(liveKids(l), kids(n));
      if (!lk) return null;
      l = lk[path[d]];
      n = n.childNodes[path[d]];
      if (!sameKind(l, n)) return null;
    }
    return rewritten(l) ? null : l;
  }

  var pageQueue = Promise.resolve();
  var ready = null;

  /* Reloads the frames that show @path and have no client of their own
   * (a frame with one reloads itself). */
  function reloadFrames(path) {
    var frames = document.querySelectorAll('iframe[src], frame[src]');
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      if (!samePath(pagePath(f.src), path)) continue;
      var w = null;
      try { w = f.contentWindow && f.contentWindow.__folioReload ? f.contentWindow : null; } catch (e) { w = null; }
      if (w) continue;
      try { f.contentWindow.location.reload(); } catch (e) { setAttr(f, 'src', busted(f.src)); }
    }
  }

  /* `page`: this page patched (or reloaded, in a frame), else frames showing it. */
  function onPage(path) {
    /* An error page (a 404 shows www/404.html) has no source of its own:
     * any page edit may be the missing page or the error page itself. */
    if (errorPage) { reload(); return; }
    if (!samePath(pagePath(location.href), path)) { reloadFrames(path); return; }
    if (window.top !== window) { reload(); return; } /* a frame's page: that frame reloads */
    mark('event');
    pageQueue = pageQueue.then(function () {
      return Promise.all([ready, fetchSource()]);
    }).then(function (r) {
      mark('fetched');
      if (baseline === null) throw new Error('no baseline');
      if (r[1] === baseline) return;
      var next = patch(baselineDoc || parse(baseline), baseline, r[1]);
      if (!next) throw new Error('unsafe');
      baseline = r[1];
      baselineDoc = next;
      settle();
      status.patched++;
      document.dispatchEvent(new CustomEvent('folio:patched', { detail: { path: path } }));
    }).catch(reload);
  }

  /* ---- images and media --------------------------------------------------------------- */

  var URL_ATTRS = [
    ['img', 'src'], ['img', 'srcset'], ['source', 'src'], ['source', 'srcset'],
    ['video', 'src'], ['video', 'poster'], ['audio', 'src'], ['input', 'src'],
    ['image', 'href'], ['image', 'xlink:href'], ['object', 'data'], ['embed', 'src'],
    ['link', 'href'],
  ];

  /* A srcset with every candidate naming @path cache-busted; null if none does. */
  function bustSrcset(value, path) {
    var hit = false;
    var out = value.split(',').map(function (c) {
      var parts = c.trim().split(/\s+/);
      if (parts[0] && samePath(pathOf(parts[0]), path)) { hit = true; parts[0] = busted(parts[0]); }
      return parts.join(' ');
    }).join(', ');
    return hit ? out : null;
  }

  /* A CSS value with every url() naming @path cache-busted; null if none does. */
  function bustCssValue(value, base, path) {
    var hit = false;
    var out = value.replace(/url\(\s*(['"]?)([^'")]*)\1\s*\)/g, function (all, q, u) {
      if (!u || !samePath(pathOf(u, base), path)) return all;
      hit = true;
      return 'url("' + busted(u, base) + '")';
    });
    return hit ? out : null;
  }

  /* Cache-busts every url() naming @path in one declaration block. */
  function bustStyle(style, base, path) {
    for (var i = 0; i < style.length; i++) {
      var name = style[i], v = style.getPropertyValue(name);
      if (v.indexOf('url(') < 0) continue;
      var nv = bustCssValue(v, base, path);
      if (nv) style.setProperty(name, nv, style.getPropertyPriority(name));
    }
  }

  /* bustStyle() over a rule list, into @media, @supports and @import. */
  function bustRules(rules, base, path, depth) {
    for (var i = 0; rules && i < rules.length && depth < 8; i++) {
      var r = rules[i];
      if (r.style) bustStyle(r.style, base, path);
      var inner;
      try { inner = r.cssRules || (r.styleSheet && r.styleSheet.cssRules); } catch (e) { inner = null; }
      if (inner) bustRules(inner, (r.styleSheet && r.styleSheet.href) || base, path, depth + 1);
    }
  }

  /* A media element keeps its time and whether it was playing. */
  function reloadMedia(el) {
    var t = el.currentTime, playing = !el.paused;
    el.addEventListener('loadedmetadata', function once() {
      el.removeEventListener('loadedmetadata', once);
      try { el.currentTime = t; } catch (e) { /* not seekable */ }
      if (playing) el.play().catch(function () {});
    });
    el.load();
  }

  /* `image`: every reference to @path in this document, cache-busted in place. */
  function onImage(path) {
    for (var k = 0; k < URL_ATTRS.length; k++) {
      var els = document.getElementsByTagName(URL_ATTRS[k][0]);
      var name = URL_ATTRS[k][1];
      for (var i = 0; i < els.length; i++) {
        var el = els[i], v = el.getAttribute(name);
        if (!v || (el.localName === 'link' && !/\bicon\b/i.test(el.rel || ''))) continue;
        var nv = name === 'srcset' ? bustSrcset(v, path) : samePath(pathOf(v), path) ? busted(v) : null;
        if (!nv) continue;
        setAttr(el, name, nv);
        var pic = el.localName === 'source' && el.parentNode;
        if (pic && pic.localName === 'picture') {
          /* A <source> change is seen when its <img> is told to look again. */
          var img = pic.querySelector('img');
          if (img) img.setAttribute('src', img.getAttribute('src') || '');
        } else if (pic && (pic.localName === 'video' || pic.localName === 'audio')) {
          reloadMedia(pic);
        } else if ((el.localName === 'video' || el.localName === 'audio') && name === 'src') {
          reloadMedia(el);
        }
      }
    }
    for (var s = 0; s < document.styleSheets.length; s++) {
      var sheet = document.styleSheets[s], rules;
      try { rules = sheet.cssRules; } catch (e) { continue; } /* another origin's */
      bustRules(rules, sheet.href || document.baseURI, path, 0);
    }
    var styled = document.querySelectorAll('[style*="url("]');
    for (var j = 0; j < styled.length; j++) bustStyle(styled[j].style, document.baseURI, path);
  }

  /* ---- talking back: the session, reports ------------------------------------------- */

  /* What this page's client learns once from the server (preview.c): the
   * secret its reports carry, whether tabs follow, the browser errors and
   * `folio check` findings so far (the panel shows them from the first load). */
  var session = fetch(new URL('session', me.src).href, { cache: 'no-store', credentials: 'same-origin' })
    .then(function (r) { return r.ok ? r.json() : null; }).catch(function () { return null; });
  var reportUrl = new URL('report', me.src).href;
  /* One report, form-encoded into a request field (report.h: folio reads no
   * bodies, and another origin cannot send this field without a preflight). */
  function send(fields) {
    return session.then(function (s) {
      if (!s) return null;
      var form = Object.keys(fields).map(function (k) {
        return encodeURIComponent(k) + '=' + encodeURIComponent(fields[k]);
      }).join('&');
      return fetch(reportUrl, { cache: 'no-store', credentials: 'same-origin',
        headers: { 'X-Folio-Key': s.key, 'X-Folio-Report': form } }).catch(function () { return null; });
    });
  }

  /* ---- follow mode: every tab shows where the last one scrolled ----------------------- */

  /* A place is the reload's (where()): the element at the top of the viewport
   * by its path of child indices and ids, and how far into it, as a fraction
   * of its height, so a 390 px phone and a wide desktop show the same words.
   * Written "TAG|fraction|i:id/i/..." with the ids encodeURIComponent'd. */
  function placeText(p) {
    var frac = p.height > 0 ? Math.max(0, Math.min(1, p.offset / p.height)) : 0;
    return p.tag + '|' + frac.toFixed(4) + '|' + p.steps.map(function (s) {
      return s.i + (s.id ? ':' + encodeURIComponent(s.id) : '');
    }).join('/');
  }
  function placeOf(text) {
    var parts = text.split('|');
    if (parts.length !== 3) return null;
    var steps = parts[2] ? parts[2].split('/').map(function (s) {
      var colon = s.indexOf(':');
      var id = null;
      try { id = colon < 0 ? null : decodeURIComponent(s.slice(colon + 1)); } catch (e) { id = null; }
      return { i: parseInt(s, 10) || 0, id: id };
    }) : [];
    return { tag: parts[0], frac: parseFloat(parts[1]) || 0, steps: steps };
  }

  var tabId = Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
  var FOLLOW_KEY = 'folio-follow';
  var following = false, byHandUntil = 0, touching = false, appliedY = null, scrolledAt = 0;
  var sentText = '', inFlight = false, pendingText = null, frameAsked = false;
  status.follow = false;
  status.followed = 0;  /* places taken from other tabs */
  status.held = 0;      /* and not taken then: this tab's reader was scrolling */
  status.places = 0;    /* places this tab sent */

  /* The reader is scrolling this tab themselves: a wheel, a touch, a key or a
   * press (a scrollbar) in the last 800 ms, a finger still down, or the page
   * still moving by a scroll not this client's (a fling's momentum). */
  function byHand() { return touching || Date.now() < byHandUntil || Date.now() - scrolledAt < 250; }
  function handled() { byHandUntil = Date.now() + 800; appliedY = null; }
  ['wheel', 'mousedown', 'pointerdown'].forEach(function (t) {
    window.addEventListener(t, handled, { capture: true, passive: true });
  });
  /* Of the keys, those that scroll. */
  var SCROLL_KEYS = /^(Arrow(Up|Down)|Page(Up|Down)|Home|End| |Spacebar)$/;
  window.addEventListener('keydown', function (e) { if (SCROLL_KEYS.test(e.key)) handled(); }, true);
  window.addEventListener('touchstart', function () { touching = true; handled(); }, { capture: true, passive: true });
  ['touchend', 'touchcancel'].forEach(function (t) {
    window.addEventListener(t, function () { touching = false; handled(); }, { capture: true, passive: true });
  });

  /* Sends the place, one request at a time: a newer one waits for the last. */
  function sendPlace(text) {
    if (inFlight) { pendingText = text; return; }
    inFlight = true;
    sentText = text;
    sentAt = Date.now();
    status.places++;
    send({ kind: 'place', from: tabId, place: text }).then(function () {
      inFlight = false;
      var next = pendingText;
      pendingText = null;
      if (next !== null && next !== sentText) sendPlace(next);
    });
  }
  /* At most one place a frame: the scroll events of a frame are one message. */
  window.addEventListener('scroll', function () {
    /* The scroll this tab made to follow another is not news. */
    if (appliedY !== null && Math.abs(window.scrollY - appliedY) < 2) return;
    scrolledAt = Date.now();
    if (!following || frameAsked) return;
    frameAsked = true;
    requestAnimationFrame(function () {
      frameAsked = false;
      appliedY = null;
      var p = where();
      var text = p ? placeText(p) : '';
      if (text && text !== sentText) sendPlace(text);
    });
  }, { passive: true });

  /* Scrolls to another tab's @place at once, whatever the page's scroll-behavior (a smooth
   * scroll's steps would go out as news). */
  function goTo(place) {
    var f = find(place);
    if (!f.el || f.el === document.body) return;
    var r = f.el.getBoundingClientRect();
    var dy = r.top + (f.exact ? place.frac * r.height : 0);
    if (Math.abs(dy) >= 1) window.scrollBy({ top: dy, behavior: 'instant' });
    appliedY = window.scrollY;
    sentText = placeText(where() || { steps: [], offset: 0, height: 0, tag: '' });
    status.followed++;
    document.dispatchEvent(new CustomEvent('folio:follow', { detail: { place: place } }));
  }
  /* A place that came while this tab's reader was scrolling: taken once they stop, unless they
   * scrolled on after it came (then theirs is the last place, and went out). */
  var held = null, heldTimer = 0, sentAt = 0;
  function takeHeld() {
    heldTimer = 0;
    if (!held) return;
    if (byHand()) { heldTimer = setTimeout(takeHeld, 100); return; }
    var h = held;
    held = null;
    if (sentAt <= h.at && following) goTo(h.place);
  }

  /* `follow`: another tab's place, taken unless this tab's reader is scrolling. */
  function onFollow(data) {
    var space = data.indexOf(' ');
    if (!following || space < 0 || data.slice(0, space) === tabId) return;
    var place = placeOf(data.slice(space + 1));
    if (!place) return;
    if (place.tag === '~DETAILS') { openAs(place); return; }
    if (byHand()) {
      status.held++;
      held = { place: place, at: Date.now() };
      if (!heldTimer) heldTimer = setTimeout(takeHeld, 100);
      return;
    }
    held = null;
    goTo(place);
  }

  /* A <details> opened or closed follows too: sent as a place whose tag is "~DETAILS" and whose
   * fraction is 1 (open) or 0, the element's path as a place's. */
  function pathTo(el) {
    var steps = [];
    for (var e = el; e && e !== document.body && e.parentElement; e = e.parentElement) {
      steps.unshift({ i: elementKids(e.parentElement).indexOf(e), id: e.id || null });
    }
    return e === document.body ? steps : null;
  }
  document.addEventListener('toggle', function (e) {
    var d = e.target;
    if (!following || !d || d.localName !== 'details' || ours(d)) return;
    if (d.__folioToggled) { d.__folioToggled = false; return; } /* ours, from another tab */
    var steps = pathTo(d);
    if (steps) send({ kind: 'place', from: tabId, place: placeText({ tag: '~DETAILS', steps: steps, offset: d.open ? 1 : 0, height: 1 }) });
  }, true);
  function openAs(place) {
    var f = find(place), open = place.frac >= 0.5;
    if (!f.el || f.el.localName !== 'details' || f.el.open === open) return;
    f.el.__folioToggled = true;
    f.el.open = open;
    status.followed++;
  }

  /* Turns follow mode on or off for this tab (kept for the tab's session). */
  function setFollow(on, quietly) {
    following = !!on;
    status.follow = following;
    try { sessionStorage.setItem(FOLLOW_KEY, following ? '1' : '0'); } catch (e) { /* private mode */ }
    if (!quietly) badge('follow ' + (following ? 'on: this tab shows where the last one scrolled' : 'off'));
  }
  /* A word in the corner for a moment, made by the client (never the page's). */
  function badge(text) {
    var b = document.createElement('div');
    b.setAttribute('data-folio', '');
    b.setAttribute('role', 'status');
    b.textContent = 'folio: ' + text;
    b.style.cssText = 'position:fixed;left:12px;bottom:12px;z-index:2147483647;padding:6px 10px;' +
      'background:#1a1a1a;color:#fff;border-radius:6px;font:13px/1.4 system-ui,sans-serif;pointer-events:none';
    (document.body || document.documentElement).appendChild(b);
    setTimeout(function () { b.remove(); }, 2000);
  }
  /* Alt+Shift+F toggles it (a key no browser takes for itself). */
  window.addEventListener('keydown', function (e) {
    if (e.altKey && e.shiftKey && !e.ctrlKey && !e.metaKey && e.code === 'KeyF') {
      e.preventDefault();
      setFollow(!following);
    }
  }, true);
  status.setFollow = function (on) { setFollow(on, true); };
  session.then(function (s) {
    var kept = null;
    try { kept = sessionStorage.getItem(FOLLOW_KEY); } catch (e) { kept = null; }
    setFollow(kept !== null ? kept === '1' : !!(s && s.follow), true);
  });

  /* ---- browser errors to folio's terminal --------------------------------------------- */

  /* Uncaught errors, unhandled rejections and console.error go to folio, which
   * prints each distinct one once with a count of repeats (report.c). The
   * client's first part (early.js, before the page's scripts) hears them from
   * the page's first byte on and hands them over here, those it kept first.
   * Here: the first of each at once, its repeats summed over 200 ms, 50
   * distinct ones a page at most, each message cut to 1,000 characters. */
  var faults = {}, faultCount = 0, faultTimer = 0;
  var device = (function () {
    var m = /(HeadlessChrome|Firefox|Edg|OPR|Chrome|Version)\/(\d+)/.exec(navigator.userAgent) || [];
    var names = { Edg: 'Edge', OPR: 'Opera', Version: 'Safari' };
    return (names[m[1]] || m[1] || 'a browser') + (m[2] ? ' ' + m[2] : '');
  })();
  /* A fragment's script is named by the fragment's file (early.js's scriptAt):
   * its line there is found by counting <script> tags in the fragment's source
   * (the loader runs them in order). */
  function located(at) {
    if (!at.fragment) return Promise.resolve(at);
    return fetch(new URL(at.source, document.baseURI).href).then(function (r) { return r.ok ? r.text() : ''; })
      .then(function (text) {
        var re = /<script\b/gi, m, k = 0;
        while ((m = re.exec(text))) {
          if (k++ === at.script) return { source: at.source, line: text.slice(0, m.index).split('\n').length + at.line - 1, column: at.column };
        }
        return at;
      }, function () { return at; });
  }
  function fault(kind, message, at) {
    message = String(message).replace(/^Uncaught /, '');
    if (message.length > 1000) message = message.slice(0, 1000) + '\u2026';
    var key = kind + '\u0000' + message + '\u0000' + at.source + ':' + at.line + ':' + at.column;
    var f = faults[key];
    if (f) { f.count++; if (!faultTimer) faultTimer = setTimeout(flushFaults, 200); return; }
    if (faultCount >= 50) return;
    faultCount++;
    faults[key] = { kind: kind, message: message, at: located(at), count: 0 };
    sendFault(faults[key], 1, true);
  }
  /* Tells folio; the first time, this page's panel too (the server's event
   * may come before this page's stream is open). */
  function sendFault(f, count, first) {
    var width = window.innerWidth;
    f.at.then(function (at) {
      var fields = { kind: f.kind, message: message(f), source: at.source, line: at.line, column: at.column,
                     device: device + ', ' + width + ' px', count: count };
      send(fields);
      if (first && window.__folioFault) window.__folioFault(fields);
    });
  }
  function message(f) {
    /* A field is bounded by the request head's limit: cut what escapes long. */
    var m = f.message;
    while (encodeURIComponent(encodeURIComponent(m)).length > 4000) m = m.slice(0, Math.floor(m.length / 2)) + '\u2026';
    return m;
  }
  function flushFaults() {
    faultTimer = 0;
    Object.keys(faults).forEach(function (k) {
      var f = faults[k];
      if (f.count > 0) { sendFault(f, f.count); f.count = 0; }
    });
  }
  if (window.__folioEarly) window.__folioEarly.take(fault);

  /* ---- events ------------------------------------------------------------------------- */

  /* Event name -> handler: every event the server sends has one entry. */
  var handlers = {
    hello: function (id) {
      delay = 500;
      status.hellos++;
      if (instance === null) instance = id;
      else if (instance !== id) reload(); /* a new server */
    },
    css: swapCss,
    fragment: swapFragment,
    page: onPage,
    image: onImage,
    reload: function () { reload(); },
    check: function (data) { if (window.__folioCheck) window.__folioCheck(data); }, /* the panel, below */
    fault: function (data) { if (window.__folioFault) window.__folioFault(data); },
    follow: onFollow
  };
  /* The panel's first word: what the server knew before this page loaded. */
  session.then(function (s) {
    if (!s) return;
    if (s.check && window.__folioCheck) window.__folioCheck(JSON.stringify(s.check));
    (s.faults || []).forEach(function (f) { if (f && window.__folioFault) window.__folioFault(f); });
  });

  /* Runs the handler of event @type, if there is one. */
  function dispatch(type, data) {
    var h = handlers[type];
    if (h) h(data);
  }

  /* One stream for every tab of this server. Over HTTP/1.1 a browser opens
   * at most six connections to an origin and each EventSource holds one, so
   * a seventh tab of the article would hang. The tab that holds a Web Lock
   * streams and passes each event on over a BroadcastChannel; when it goes,
   * the lock passes to another tab, which opens the stream. Where either API
   * is missing (an insecure context, an old browser) every tab streams. */
  var key = 'folio-reload:' + streamUrl;
  var channel = null;
  var release = null;  /* ends our hold on the lock */
  var waiting = null;  /* aborts our place in the lock's queue */

  /* Opens the event stream; each event is handled and passed to the other tabs. */
  function connect() {
    if (source) return;
    source = new EventSource(streamUrl);
    Object.keys(handlers).forEach(function (type) {
      source.addEventListener(type, function (e) {
        if (channel) channel.postMessage({ type: type, data: e.data });
        dispatch(type, e.data);
      });
    });
    source.onerror = function () {
      /* EventSource retries by itself while CONNECTING; once CLOSED (an
       * error status, a wrong type) it gives up, so retry with backoff. */
      if (source.readyState !== EventSource.CLOSED) return;
      source = null;
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10000);
    };
  }

  /* Streams, or waits for the lock to, when another tab streams already. */
  function start() {
    if (!channel) {
      connect();
      return;
    }
    waiting = new AbortController();
    navigator.locks.request(key, { signal: waiting.signal }, function () {
      waiting = null;
      connect();
      return new Promise(function (resolve) { release = resolve; });
    }).catch(function () { /* aborted on pagehide */ });
  }

  if (window.BroadcastChannel && navigator.locks) {
    channel = new BroadcastChannel(key);
    channel.onmessage = function (e) {
      if (e.data) dispatch(e.data.type, e.data.data);
    };
  }

  window.addEventListener('pagehide', function () {
    if (source) { source.close(); source = null; }
    if (release) { release(); release = null; }
    if (waiting) { waiting.abort(); waiting = null; }
  });
  /* Back from the back/forward cache: the stream was closed on the way out. */
  window.addEventListener('pageshow', function (e) {
    if (e.persisted) start();
  });
  restore();
  /* A frame's page reloads on an edit: only the top page needs its source. */
  ready = (window.top === window ? fetchSource() : Promise.resolve(null))
    .then(function (src) { baseline = src; status.ready = true; if (src !== null) settle(); },
          function (e) { baseline = null; errorPage = /^[45]\d\d$/.test(e.message); status.ready = true; });
  /* After the rest of this script: handlers added below are streamed too. */
  Promise.resolve().then(start);
})();

/* ---- folio check, live: the panel of broken references (server side: src/check_live.c) -------
 * Apart from the reload client above, which hands each `check` event here through its one hook
 * (handlers.check). An event lists, for each file whose errors changed, the whole new list (empty:
 * fixed). A fragment that fails to load (the article's `folio:fragment` event, state "error") is
 * listed the same way until it loads. The server's lists live in sessionStorage, so the panel
 * survives the reload that follows a page's save. Dismissed, it stays away until the next change.
 *
 * The rendered page is checked here too, where only a browser can: once the page and its
 * fragments have settled (no mutation for a moment after load), and again after each event,
 * every same-page #anchor (and name= target) against the live DOM, and every element's src or
 * href by what the browser loaded (Resource Timing's responseStatus, error events; a link a
 * script made, by a HEAD request). An anchor the server could not verify (code
 * "unverified-anchor": the page runs scripts) is listed only if the id is not in the live DOM.
 * A finding is placed at file:line in the page's or its fragment's source where that source has
 * it, else marked "made by a script". window.__folioReload.audits counts finished audits. */
(function () {
  'use strict';
  if (!window.__folioReload || window.__folioCheck) return;
  var KEY = 'folio-check';
  var files = {};  /* file -> [{file, line, column, message}] from the server */
  var server = '';  /* the instance that said so: another one knows nothing of it */
  var loads = {};  /* fragment name -> the problem of its failed load */
  var dismissed = false;
  var panel = null;
  try {
    var kept = JSON.parse(sessionStorage.getItem(KEY) || '{}') || {};
    files = kept.files || {};
    server = kept.server || '';
  } catch (e) { files = {}; }

  var me = document.currentScript;
  var found = [];  /* the rendered page's own problems, from the last audit */
  var more = {}, moreFiles = 0; /* what the server counted past its lists (check_live.c) */

  /* The id a same-page anchor href names, or null when @href goes elsewhere. */
  function anchorOf(href) {
    var u;
    try { u = new URL(href, document.baseURI); } catch (e) { return null; }
    if (u.origin + u.pathname + u.search !== location.origin + location.pathname + location.search) return null;
    if (u.hash.length < 2) return null;
    try { return decodeURIComponent(u.hash.slice(1)); } catch (e) { return u.hash.slice(1); }
  }
  /* True when the live DOM has what anchor @id scrolls to ("top" always works, HTML 7.4.6.4). */
  function inDom(id) {
    if (id.toLowerCase() === 'top' || document.getElementById(id)) return true;
    return Array.prototype.some.call(document.getElementsByName(id), function (e) { return e.localName === 'a'; });
  }
  /* This page's file as `folio check` names it: the root route's folder, www/. */
  function pageFile() {
    var prefix = me ? new URL('..', me.src).pathname : '/';
    var p = location.pathname.indexOf(prefix) === 0 ? location.pathname.slice(prefix.length) : location.pathname.slice(1);
    try { p = decodeURIComponent(p); } catch (e) { /* as written */ }
    return 'www/' + (p === '' || p.slice(-1) === '/' ? p + 'index.html' : p);
  }
  /* A server problem the live page settles: an unverified anchor into this page whose id is here. */
  function settled(p) {
    if (p.code !== 'unverified-anchor') return false;
    var hash = (p.resolved || '').lastIndexOf('#');
    if (hash < 0 || p.resolved.slice(0, hash) !== pageFile()) return true; /* another page: not ours to tell */
    return inDom(p.resolved.slice(hash + 1));
  }
  function keyOf(p) { return p.file + ':' + (p.line || 0) + ' ' + (p.reference || ''); }

  function problems() {
    var all = [], seen = {};
    Object.keys(files).sort().forEach(function (f) {
      files[f].forEach(function (p) {
        if (settled(p)) return;
        if (p.code === 'unverified-anchor') { /* confirmed: the rendered page lacks it too */
          p = Object.assign({}, p, { message: p.message.replace(/ in the source; may be made by a script$/, '') });
        }
        all.push(p);
        seen[keyOf(p)] = true;
      });
    });
    found.forEach(function (p) {
      if (!seen[keyOf(p)]) { all.push(Object.assign({ audit: true }, p)); seen[keyOf(p)] = true; }
    });
    Object.keys(loads).sort().forEach(function (n) { all.push(loads[n]); });
    return all;
  }

  function build() {
    panel = document.createElement('aside');
    panel.id = 'folio-check';
    panel.setAttribute('role', 'status');
    panel.setAttribute('aria-label', 'folio check');
    panel.style.cssText = 'position:fixed;right:12px;bottom:12px;z-index:2147483647;box-sizing:border-box;' +
      'max-width:min(44em,calc(100vw - 24px));max-height:40vh;overflow:auto;margin:0;padding:8px 12px;' +
      'background:#fff8e6;color:#1a1a1a;border:1px solid #b36b00;border-radius:6px;' +
      'box-shadow:0 2px 10px rgba(0,0,0,.25);font:13px/1.45 system-ui,sans-serif;text-align:left';
    (document.body || document.documentElement).appendChild(panel);
  }

  /* Problems the server counted but did not list (a save that broke hundreds), less those
   * the audit of the rendered page found itself (they may be among them): never counted twice. */
  function unlisted(all) {
    var counted = Object.keys(more).reduce(function (n, f) { return files[f] ? n + more[f] : n; }, 0);
    var audited = all.filter(function (p) { return p.audit; }).length;
    return Math.max(0, counted - audited);
  }

  /* Browser errors (report.c's `fault` events): key -> the latest word on it. */
  var faultList = {};
  function faultKey(f) { return [f.kind, f.message, f.source, f.line, f.column].join('\u0000'); }
  window.__folioFault = function (data) {
    var f;
    try { f = typeof data === 'string' ? JSON.parse(data) : data; } catch (e) { return; }
    if (!f || typeof f.message !== 'string') return;
    faultList[faultKey(f)] = f;
    dismissed = false;
    render();
  };
  var KIND = { error: 'Uncaught', rejection: 'Unhandled rejection:', console: 'console.error:' };

  /* A list item: where (code), then the words. */
  function item(where, words) {
    var li = document.createElement('li');
    var code = document.createElement('code');
    code.textContent = where;
    li.appendChild(code);
    li.appendChild(document.createTextNode(' ' + words));
    return li;
  }

  function render() {
    var all = problems(), extra = unlisted(all);
    var errs = Object.keys(faultList).map(function (k) { return faultList[k]; });
    if ((!all.length && !errs.length) || dismissed) {
      if (panel) { panel.remove(); panel = null; }
      return;
    }
    if (!panel || !panel.isConnected) build();
    panel.textContent = '';
    var head = document.createElement('div');
    head.style.cssText = 'display:flex;gap:1em;justify-content:space-between;align-items:baseline';
    var title = document.createElement('strong');
    var total = all.length + extra;
    title.textContent = total ? 'folio check: ' + total + ' broken reference' + (total === 1 ? '' : 's')
                              : 'folio: ' + errs.length + ' browser error' + (errs.length === 1 ? '' : 's');
    var close = document.createElement('button');
    close.type = 'button';
    close.textContent = '\u00d7';
    close.setAttribute('aria-label', 'Dismiss');
    close.style.cssText = 'border:0;background:none;font:inherit;font-size:16px;cursor:pointer;color:inherit';
    close.onclick = function () { dismissed = true; render(); };
    head.appendChild(title);
    head.appendChild(close);
    panel.appendChild(head);
    var list = document.createElement('ul');
    list.style.cssText = 'margin:4px 0 0;padding:0 0 0 1.2em';
    all.forEach(function (p) {
      list.appendChild(item(p.file ? p.file + (p.line ? ':' + p.line : '') : 'made by a script', p.message));
    });
    if (extra || moreFiles) {
      var rest = document.createElement('li');
      rest.textContent = '\u2026 and ' + (extra ? extra + ' more' : '') + (extra && moreFiles ? ', ' : '') +
        (moreFiles ? moreFiles + ' more file' + (moreFiles === 1 ? '' : 's') : '') + ': folio check lists every one';
      list.appendChild(rest);
    }
    if (all.length) panel.appendChild(list);
    if (!errs.length) return;
    if (total) {
      var sub = document.createElement('strong');
      sub.id = 'folio-faults-title';
      sub.style.cssText = 'display:block;margin-top:6px';
      sub.textContent = errs.length + ' browser error' + (errs.length === 1 ? '' : 's');
      panel.appendChild(sub);
    }
    var flist = document.createElement('ul');
    flist.id = 'folio-faults';
    flist.style.cssText = list.style.cssText;
    errs.forEach(function (f) {
      var where = (f.source || '(no source)') + (f.line ? ':' + f.line + ':' + f.column : '');
      flist.appendChild(item(where, (KIND[f.kind] || '') + ' ' + f.message +
        (f.count > 1 ? ' (\u00d7' + f.count + ')' : '') + (f.device ? ' \u2014 ' + f.device : '')));
    });
    panel.appendChild(flist);
  }

  /* ---- the audit of the rendered page ---- */

  /* URLs the browser failed to load: HTTP errors by Resource Timing, network errors by the
   * error events of elements that load something (captured: they do not bubble). */
  var failedLoads = {};
  document.addEventListener('error', function (e) {
    var t = e.target;
    if (t && t.nodeType === 1 && !ours(t) && /^(img|script|link|iframe|embed)$/.test(t.localName)) {
      var u = t.currentSrc || t.src || t.href;
      if (u) failedLoads[u] = true;
      schedule(); /* a load that failed after the last audit is news for the next */
    }
  }, true);
  function loadStatus() {
    var status = {};
    (performance.getEntriesByType ? performance.getEntriesByType('resource') : []).forEach(function (r) {
      if (typeof r.responseStatus === 'number' && r.responseStatus > 0) status[r.name] = r.responseStatus;
    });
    return status;
  }
  function ours(n) {
    return n === me || (n.closest && n.closest('#folio-check,[data-folio]') !== null);
  }

  /* The sources the live page came from, as a script fetches them: the page, and each fragment
   * its elements name. name -> text; '' for the page. Fetched when an audit first needs them
   * and kept until the page is patched or a fragment re-injected (fresh()), so an audit after,
   * say, a stylesheet swap asks the server nothing. */
  var kept = null, keptAt = -1;
  var injected = {};  /* fragment name -> true once a folio:fragment event said it loaded */
  function fresh() { kept = null; heads = {}; }
  function sources() {
    var patched = window.__folioReload.patched;
    if (kept && keptAt === patched) return kept;
    keptAt = patched;
    heads = {};
    var want = [['', location.href]], status = loadStatus();
    document.querySelectorAll('[id^="fragment-"]').forEach(function (el) {
      var name = el.id.slice('fragment-'.length);
      var url = new URL('fragments/' + encodeURIComponent(name) + '.html', document.baseURI).href;
      /* Only a fragment the page did load: a missing one is not asked for again. */
      if (injected[name] || status[url] < 400) want.push([name, url]);
    });
    kept = Promise.all(want.map(function (w) {
      return fetch(w[1], { cache: 'no-cache' }).then(function (r) { return r.ok ? r.text() : ''; },
        function () { return ''; }).then(function (text) { return [w[0], text]; });
    })).then(function (list) {
      var out = {};
      list.forEach(function (x) { out[x[0]] = x[1]; });
      return out;
    });
    return kept;
  }

  /* Where attribute value @value of @el is written: {file, line} in its fragment's source or the
   * page's, or null when no source has it (a script made it). */
  function locate(el, name, value, src) {
    var holder = el.closest('[id^="fragment-"]');
    var key = holder ? holder.id.slice('fragment-'.length) : '';
    var text = src[key] || '';
    var forms = [value, value.replace(/&/g, '&amp;')];
    for (var i = 0; i < forms.length; i++) {
      var re = new RegExp('\\s' + name + '\\s*=\\s*["\']?' + forms[i].replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '(?=["\'\\s>])', 'i');
      var m = re.exec(text);
      if (m) {
        return { file: key ? 'fragments/' + key + '.html' : pageFile(),
                 line: text.slice(0, m.index + m[0].length).split('\n').length };
      }
    }
    return null;
  }

  /* What may be wrong in the rendered page, from the DOM and the loads alone: {el, what, name,
   * value, message}; message null for a same-origin link, which only its source can clear. */
  function suspects() {
    var out = [], status = loadStatus();
    document.querySelectorAll('a[href], area[href]').forEach(function (el) {
      if (ours(el)) return;
      var value = el.getAttribute('href'), id = anchorOf(value), u;
      var what = el.localName + ' href';
      if (id !== null) {
        if (!inDom(id)) out.push({ el: el, what: what, name: 'href', value: value, message: 'points at no element with id "' + id + '"' });
        return;
      }
      try { u = new URL(value, document.baseURI); } catch (e) { return; }
      if (u.origin === location.origin && !/\/__folio\//.test(u.pathname)) {
        out.push({ el: el, what: what, name: 'href', value: value, message: null, url: u.href });
      }
    });
    document.querySelectorAll('img[src], script[src], iframe[src], embed[src], source[src], track[src], ' +
                              'audio[src], video[src], link[href]').forEach(function (el) {
      if (ours(el)) return;
      var name = el.localName === 'link' ? 'href' : 'src', value = el.getAttribute(name), u;
      try { u = new URL(value, document.baseURI); } catch (e) { return; }
      if (u.origin !== location.origin) return;
      var code = status[u.href], message = null;
      if (code >= 400) message = 'not found (HTTP ' + code + ')';
      else if (code === undefined && failedLoads[u.href]) message = 'failed to load';
      if (message) out.push({ el: el, what: el.localName + ' ' + name, name: name, value: value, message: message });
    });
    return out;
  }

  /* Every finding of the rendered page, placed in its source; resolves to the list. A link
   * its source has is the server's to check; one a script made is asked for with HEAD (50 at
   * most, each URL once until the sources change). */
  var heads = {};
  function audit() {
    var list = suspects();
    if (!list.length) return Promise.resolve([]);
    return sources().then(function (src) {
      var out = [], asked = [];
      function note(c, at, message) {
        out.push({ file: at ? at.file : '', line: at ? at.line : 0, reference: c.value,
                   message: c.what + ' "' + c.value + '" ' + message });
      }
      list.forEach(function (c) {
        var at = locate(c.el, c.name, c.value, src);
        if (c.message) { note(c, at, c.message); return; }
        if (at) return;
        if (!heads[c.url] && Object.keys(heads).length < 50) {
          heads[c.url] = fetch(c.url, { method: 'HEAD', cache: 'no-cache' }).then(function (r) { return r.status; },
            function () { return 0; });
        }
        if (heads[c.url]) {
          asked.push(heads[c.url].then(function (code) { if (code >= 400) note(c, null, 'not found (HTTP ' + code + ')'); }));
        }
      });
      return Promise.all(asked).then(function () { return out; });
    });
  }

  /* Audits once the page has settled: after load, when nothing but the panel changed the DOM
   * for QUIET ms; each event or fragment load asks again. One audit at a time. */
  var QUIET = 150, timer = 0, running = false, again = false, loaded = document.readyState === 'complete';
  function schedule() {
    if (!loaded) return;
    clearTimeout(timer);
    timer = setTimeout(run, QUIET);
  }
  function run() {
    if (running) { again = true; return; }
    running = true;
    audit().then(function (list) {
      found = list;
      running = false;
      window.__folioReload.audits = (window.__folioReload.audits || 0) + 1;
      render();
      if (again) { again = false; schedule(); }
    }, function () { running = false; });
  }
  /* A mutation of the page's own, not one of the panel coming or going. */
  function theirs(r) {
    if (ours(r.target)) return false;
    var nodes = Array.prototype.slice.call(r.addedNodes || []).concat(Array.prototype.slice.call(r.removedNodes || []));
    return r.type !== 'childList' || !nodes.length || !nodes.every(function (n) { return n.id === 'folio-check'; });
  }
  new MutationObserver(function (records) {
    if (records.some(theirs)) schedule();
  }).observe(document.documentElement, { subtree: true, childList: true, attributes: true,
                                           attributeFilter: ['id', 'name', 'href', 'src'] });
  window.addEventListener('load', function () { loaded = true; schedule(); });

  window.__folioCheck = function (data) {
    var event;
    try { event = JSON.parse(data); } catch (e) { return; }
    if (event.server !== server || event.full) { files = {}; more = {}; } /* a restarted server's, or all of them */
    server = event.server;
    (event.files || []).forEach(function (f) {
      if (f.problems && f.problems.length) files[f.file] = f.problems;
      else delete files[f.file];
      if (f.more) more[f.file] = f.more; else delete more[f.file];
    });
    moreFiles = event.more_files || 0; /* the server keeps an event small: the rest is counted */
    try {
      sessionStorage.setItem(KEY, JSON.stringify({ server: server, files: files }));
    } catch (e) { /* private mode: the panel just does not survive a reload */ }
    dismissed = false;
    fresh();
    render();
    schedule();
  };

  document.addEventListener('folio:fragment', function (e) {
    var d = e.detail || {};
    if (!d.name) return;
    var had = !!loads[d.name];
    if (d.state === 'error') {
      loads[d.name] = { file: 'fragments/' + d.name + '.html', line: 0,
        message: 'fragment "' + d.name + '" failed to load' };
      dismissed = false;
    } else if (d.state === 'loaded') {
      delete loads[d.name];
    }
    if (had !== !!loads[d.name]) render();
    if (d.state === 'loaded') { injected[d.name] = true; fresh(); }
    schedule();
  });

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', render);
  else render();
})();
