/* folio article script: fragment loader and table-of-contents tracking.
 *
 * Fragments. Every element whose id is "fragment-<name>" is filled with the HTML of
 * fragments/<name>.html, fetched by a *relative* URL so the page works under any path prefix.
 * Network errors (and 5xx answers) are retried after 1, 2 and 4 seconds; a 404 is final and
 * shows a polite message in place. After injection the fragment's <script> elements are
 * re-created so the browser runs them (scripts set through innerHTML never run). A fragment
 * may be injected again later (live reload calls window.folioFragments.reload(name)), so
 * fragment scripts must be safe to run more than once.
 *
 * Each container gets data-fragment-state="loading" | "loaded" | "error", and the document
 * receives a "folio:fragment" event ({detail: {name, state}}) after every attempt settles.
 */
(function () {
  'use strict';

  var RETRY_DELAYS_MS = [1000, 2000, 4000];
  var generation = Object.create(null);   // name -> counter, so a stale load never wins

  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }

  function fragmentName(el) { return el.id.slice('fragment-'.length); }

  function FragmentError(kind, message) { this.kind = kind; this.message = message; }

  async function fetchFragment(name) {
    var url = 'fragments/' + encodeURIComponent(name) + '.html';
    for (var attempt = 0; ; attempt++) {
      var res = null, failure;
      try {
        res = await fetch(url, { cache: 'no-cache', credentials: 'same-origin' });
      } catch (err) {
        failure = new FragmentError('network', 'the network request failed (' + (err && err.message || err) + ')');
      }
      if (res) {
        if (res.ok) return res.text();
        if (res.status === 404 || res.status === 410) {
          throw new FragmentError('missing', 'it was not found on the server (HTTP ' + res.status + ')');
        }
        failure = new FragmentError('http', 'the server answered HTTP ' + res.status);
        if (res.status < 500) throw failure;          // 4xx other than 404: retrying will not help
      }
      if (attempt >= RETRY_DELAYS_MS.length) throw failure;
      await sleep(RETRY_DELAYS_MS[attempt]);
    }
  }

  function runScripts(container) {
    var scripts = container.querySelectorAll('script');
    for (var i = 0; i < scripts.length; i++) {
      var old = scripts[i];
      var fresh = document.createElement('script');
      for (var j = 0; j < old.attributes.length; j++) {
        fresh.setAttribute(old.attributes[j].name, old.attributes[j].value);
      }
      fresh.textContent = old.textContent;
      old.parentNode.replaceChild(fresh, old);
    }
  }

  function showError(el, name, err) {
    el.innerHTML = '';
    var box = document.createElement('div');
    box.className = 'fragment-error';
    box.setAttribute('role', 'status');
    var p = document.createElement('p');
    p.style.margin = '0';
    p.appendChild(document.createTextNode('Sorry, this part of the article could not be loaded: '));
    var code = document.createElement('code');
    code.textContent = 'fragments/' + name + '.html';
    p.appendChild(code);
    p.appendChild(document.createTextNode(' ' + (err && err.kind === 'missing' ? 'is missing' : 'failed to load') +
      (err && err.message ? ' because ' + err.message : '') + '. The rest of the page is unaffected.'));
    box.appendChild(p);
    el.appendChild(box);
  }

  function announce(name, state) {
    document.dispatchEvent(new CustomEvent('folio:fragment', { detail: { name: name, state: state } }));
  }

  async function load(el) {
    var name = fragmentName(el);
    var mine = (generation[name] = (generation[name] || 0) + 1);
    el.setAttribute('data-fragment-state', 'loading');
    el.setAttribute('aria-busy', 'true');
    try {
      var html = await fetchFragment(name);
      if (generation[name] !== mine) return;       // a newer load of the same fragment took over
      el.innerHTML = html;
      runScripts(el);
      el.setAttribute('data-fragment-state', 'loaded');
      announce(name, 'loaded');
      revealHashTarget(el);
    } catch (err) {
      if (generation[name] !== mine) return;
      showError(el, name, err);
      el.setAttribute('data-fragment-state', 'error');
      announce(name, 'error');
      if (!(err instanceof FragmentError)) console.error(err);
    } finally {
      if (generation[name] === mine) el.removeAttribute('aria-busy');
    }
  }

  // If the address points at an element that only exists inside a fragment, go there once it
  // has arrived (the browser looked for it before the fragment existed).
  function revealHashTarget(el) {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var target = document.getElementById(id);
    if (target && el.contains(target)) target.scrollIntoView();
  }

  function containers() {
    return Array.prototype.filter.call(document.querySelectorAll('[id^="fragment-"]'), function (el) {
      return el.id.length > 'fragment-'.length;
    });
  }

  function loadAll() { return Promise.all(containers().map(load)); }

  function reload(name) {
    var el = document.getElementById('fragment-' + name);
    return el ? load(el) : Promise.resolve();
  }

  window.folioFragments = { loadAll: loadAll, reload: reload };

  /* ---- table of contents: highlight the section being read ------------------------------ */
  function setupToc() {
    var toc = document.getElementById('toc');
    if (!toc) return;
    var links = Array.prototype.slice.call(toc.querySelectorAll('a[href^="#"]'));
    var entries = links.map(function (a) {
      return { link: a, section: document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1))) };
    }).filter(function (e) { return e.section; });
    var bar = toc.querySelector('.toc-progress-bar');
    var current = null;
    var scheduled = false;

    function update() {
      scheduled = false;
      var line = window.innerHeight * 0.3;
      var active = entries.length ? entries[0] : null;
      for (var i = 0; i < entries.length; i++) {
        if (entries[i].section.getBoundingClientRect().top <= line) active = entries[i];
        else break;
      }
      if (window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 2 && entries.length) {
        active = entries[entries.length - 1];         // at the very bottom, the last section is current
      }
      if (active !== current) {
        if (current) { current.link.classList.remove('active'); current.link.removeAttribute('aria-current'); }
        if (active) { active.link.classList.add('active'); active.link.setAttribute('aria-current', 'location'); }
        current = active;
      }
      if (bar) {
        var max = document.documentElement.scrollHeight - window.innerHeight;
        bar.style.width = (max > 0 ? Math.min(100, Math.max(0, window.scrollY / max * 100)) : 0).toFixed(1) + '%';
      }
    }
    function schedule() {
      if (!scheduled) { scheduled = true; requestAnimationFrame(update); }
    }
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', schedule);
    document.addEventListener('folio:fragment', schedule);
    update();
  }

  /* ---- tap tips: a touch equivalent of hover text ----------------------------------------
   * Inside the fragments, SVG marks carry their details in a <title> (a mouse shows it on hover)
   * and other elements may carry a data-tip attribute. A tap with a finger or pen shows the same
   * text in a small box near the tap; the next tap elsewhere, a scroll or Escape hides it. */
  function setupTapTips() {
    var tip = null;
    var pointer = 'mouse';
    document.addEventListener('pointerdown', function (e) { pointer = e.pointerType || 'mouse'; }, true);
    function hide() { if (tip) tip.hidden = true; }
    function textFor(el) {
      for (var n = el; n && n.nodeType === 1; n = n.parentNode) {
        if (n.hasAttribute('data-tip')) return n.getAttribute('data-tip');
        if (n.namespaceURI === 'http://www.w3.org/2000/svg' && n.localName !== 'svg') {
          for (var c = n.firstElementChild; c; c = c.nextElementSibling) {
            if (c.localName === 'title' && c.textContent.trim()) return c.textContent.trim();
          }
        }
        if (n.classList.contains('fragment')) break;
      }
      return null;
    }
    function show(text, x, y) {
      if (!tip) {
        tip = document.createElement('div');
        tip.className = 'tap-tip';
        tip.setAttribute('role', 'status');
        document.body.appendChild(tip);
      }
      tip.textContent = text;
      tip.hidden = false;
      var w = tip.offsetWidth, h = tip.offsetHeight;
      var left = Math.max(8, Math.min(x - w / 2, window.innerWidth - w - 8));
      var top = y - h - 14;
      if (top < 8) top = y + 18;
      tip.style.left = left + 'px';
      tip.style.top = top + 'px';
    }
    document.addEventListener('click', function (e) {
      if (pointer === 'mouse') return;               // a mouse has the hover text already
      var inside = e.target.closest && e.target.closest('.fragment');
      var text = inside ? textFor(e.target) : null;
      if (text) show(text, e.clientX, e.clientY);
      else hide();
    });
    window.addEventListener('scroll', hide, { passive: true });
    document.addEventListener('keydown', function (e) { if (e.key === 'Escape') hide(); });
  }

  /* Presets: a link of the text (data-preset="WIDGET:NAME", href #preset-WIDGET-NAME) puts a
   * worked example into a widget. Each widget fragment puts its setter in window.folioPresets
   * (it returns true when it knew the name); this one listener serves them all, and a widget
   * that loads after the address named it asks folioPresetFromHash. */
  function setupPresets() {
    var setters = window.folioPresets = window.folioPresets || {};
    function reveal(w) {
      var el = document.getElementById('fragment-' + w);
      if (el) el.scrollIntoView({ block: 'start' });
    }
    function fromHash(only) {
      var h = decodeURIComponent(location.hash.slice(1));
      Object.keys(setters).forEach(function (w) {
        if ((!only || only === w) && h.indexOf('preset-' + w + '-') === 0 && setters[w](h.slice(8 + w.length))) reveal(w);
      });
    }
    window.folioPresetFromHash = fromHash;
    document.addEventListener('click', function (e) {
      var a = e.target.closest ? e.target.closest('[data-preset]') : null;
      if (!a) return;
      var spec = a.getAttribute('data-preset'), i = spec.indexOf(':'), fn = setters[spec.slice(0, i)];
      if (fn && fn(spec.slice(i + 1))) reveal(spec.slice(0, i));
    });
    window.addEventListener('hashchange', function () { fromHash(); });
  }

  // Code in table cells may wrap only at a space or after a comma or a dot, never inside a flag or an
  // identifier (the browser would break after a hyphen, or anywhere with overflow-wrap). Each run
  // between those points becomes a no-wrap span, with <wbr> after a comma or a dot; spaces stay plain
  // text between the spans. Without this script the CSS keeps such code on one line and the table scrolls.
  function setupCodeBreaks() {
    document.querySelectorAll('table code').forEach(function (code) {
      if (code.children.length || code.classList.contains('breaks')) return;
      var frag = document.createDocumentFragment();
      code.textContent.match(/\s+|\S+/g).forEach(function (tok) {
        if (/^\s/.test(tok)) { frag.appendChild(document.createTextNode(tok)); return; }
        tok.split(/(?<=[,.])(?=[^,.])/).forEach(function (piece, i) {
          if (i > 0) frag.appendChild(document.createElement('wbr'));
          var span = document.createElement('span');
          span.className = 'nw';
          span.textContent = piece;
          frag.appendChild(span);
        });
      });
      code.textContent = '';
      code.appendChild(frag);
      code.classList.add('breaks');
    });
  }

  function start() {
    setupCodeBreaks();
    setupToc();
    setupTapTips();
    setupPresets();
    loadAll();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
