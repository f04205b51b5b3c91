/* folio live reload client: served at __folio/reload.js, injected into pages
 * only. It finds the stream next to its own URL (works under any proxy
 * prefix), swaps stylesheets in place, re-injects fragments, reloads for the
 * rest, and reloads once when it reconnects to a restarted server. */
(function () {
  'use strict';
  var me = document.currentScript;
  if (!me || !window.EventSource || window.__folioReload) return;
  window.__folioReload = true;
  var streamUrl = new URL('events', me.src).href;
  var instance = null;
  var source = null;
  var delay = 500;

  function pathOf(href) {
    try { return new URL(href, document.baseURI).pathname; } catch (e) { return ''; }
  }

  /* A link matches when its path ends with the event's path, so a page
   * behind a proxy prefix (/playbook/style.css) matches /style.css. */
  var bust = 0;
  function swapCss(path) {
    var links = document.querySelectorAll('link[rel~="stylesheet"][href]');
    var found = false;
    for (var i = 0; i < links.length; i++) {
      var old = links[i];
      var p = pathOf(old.href);
      if (p !== path && p.slice(-path.length) !== path) continue;
      found = true;
      if (old.__folioReplaced) continue; /* already on its way out */
      old.__folioReplaced = true;
      var url = new URL(old.href);
      url.searchParams.set('folio', Date.now().toString(36) + (++bust).toString(36));
      var fresh = old.cloneNode(false);
      fresh.href = url.href;
      fresh.__folioOld = old;
      fresh.onload = fresh.onerror = retire(fresh);
      /* The old sheet stays until the new one has loaded: no flash of
       * unstyled content. */
      old.parentNode.insertBefore(fresh, old.nextSibling);
    }
    if (!found) location.reload();
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
   * fetch fragments/<name>.html relative to the page, inject, run scripts. */
  function swapFragment(name) {
    var el = document.getElementById('fragment-' + name);
    if (!el) { location.reload(); return; }
    var api = window.folioFragments;
    if (api && typeof api.reload === 'function') {
      Promise.resolve(api.reload(name)).catch(function () { location.reload(); });
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
    }).catch(function () { location.reload(); });
  }

  var handlers = {
    hello: function (id) {
      delay = 500;
      if (instance === null) instance = id;
      else if (instance !== id) location.reload(); /* a new server */
    },
    css: swapCss,
    fragment: swapFragment,
    reload: function () { location.reload(); },
    check: function (data) { if (window.__folioCheck) window.__folioCheck(data); } /* the panel, below */
  };

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

  function connect() {
    if (source) return;
    source = new EventSource(streamUrl);
    Object.keys(handlers).forEach(function (type) {
      source.addEventListener(type, function (e) {
        if (channel) channel.postMessage({ type: type, data: e.data });
        handlers[type](e.data);
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
      var h = e.data && handlers[e.data.type];
      if (h) h(e.data.data);
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
  start();
})();

/* ---- folio check, live: the panel of broken references (server side: src/check_live.c) -------
 * Apart from the reload client above, which hands each `check` event here through its one hook
 * (handlers.check). An event lists, for each file whose errors changed, the whole new list (empty:
 * fixed). A fragment that fails to load (the article's `folio:fragment` event, state "error") is
 * listed the same way until it loads. The server's lists live in sessionStorage, so the panel
 * survives the reload that follows a page's save. Dismissed, it stays away until the next change. */
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

  function problems() {
    var all = [];
    Object.keys(files).sort().forEach(function (f) { all = all.concat(files[f]); });
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

  function render() {
    var all = problems();
    if (!all.length || dismissed) {
      if (panel) { panel.remove(); panel = null; }
      return;
    }
    if (!panel || !panel.isConnected) build();
    panel.textContent = '';
    var head = document.createElement('div');
    head.style.cssText = 'display:flex;gap:1em;justify-content:space-between;align-items:baseline';
    var title = document.createElement('strong');
    title.textContent = 'folio check: ' + all.length + ' broken reference' + (all.length === 1 ? '' : 's');
    var close = document.createElement('button');
    close.type = 'button';
    close.textContent = '\u00d7';
    close.setAttribute('aria-label', 'Dismiss');
    close.style.cssText = 'border:0;background:none;font:inherit;font-size:16px;cursor:pointer;color:inherit';
    close.onclick = function () { dismissed = true; render(); };
    head.appendChild(title);
    head.appendChild(close);
    var list = document.createElement('ul');
    list.style.cssText = 'margin:4px 0 0;padding:0 0 0 1.2em';
    all.forEach(function (p) {
      var item = document.createElement('li');
      var where = document.createElement('code');
      where.textContent = p.file + (p.line ? ':' + p.line : '');
      item.appendChild(where);
      item.appendChild(document.createTextNode(' ' + p.message));
      list.appendChild(item);
    });
    panel.appendChild(head);
    panel.appendChild(list);
  }

  window.__folioCheck = function (data) {
    var event;
    try { event = JSON.parse(data); } catch (e) { return; }
    if (event.server !== server) files = {}; /* a restarted server: the old lists may be stale */
    server = event.server;
    (event.files || []).forEach(function (f) {
      if (f.problems && f.problems.length) files[f.file] = f.problems;
      else delete files[f.file];
    });
    try {
      sessionStorage.setItem(KEY, JSON.stringify({ server: server, files: files }));
    } catch (e) { /* private mode: the panel just does not survive a reload */ }
    dismissed = false;
    render();
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
  });

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', render);
  else render();
})();
