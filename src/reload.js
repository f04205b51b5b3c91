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
  function swapCss(path) {
    var links = document.querySelectorAll('link[rel~="stylesheet"][href]');
    var found = false;
    for (var i = 0; i < links.length; i++) {
      var old = links[i];
      var p = pathOf(old.href);
      if (p !== path && p.slice(-path.length) !== path) continue;
      if (old.__folioReplaced) continue;
      found = true;
      old.__folioReplaced = true;
      var url = new URL(old.href);
      url.searchParams.set('folio', String(Date.now()));
      var fresh = old.cloneNode(false);
      fresh.href = url.href;
      var done = (function (o, n) {
        return function () {
          n.onload = n.onerror = null;
          if (o.parentNode) o.parentNode.removeChild(o);
        };
      })(old, fresh);
      /* The old sheet stays until the new one has loaded: no flash of
       * unstyled content. */
      fresh.onload = fresh.onerror = done;
      old.parentNode.insertBefore(fresh, old.nextSibling);
    }
    if (!found) location.reload();
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

  function swapFragment(name) {
    var el = document.getElementById('fragment-' + name);
    if (!el) { location.reload(); return; }
    var url = new URL('fragments/' + name + '.html', document.baseURI);
    fetch(url.href, { cache: 'no-store' }).then(function (r) {
      if (!r.ok) throw new Error(String(r.status));
      return r.text();
    }).then(function (html) {
      el.innerHTML = html;
      runScripts(el);
      el.dispatchEvent(new CustomEvent('folio:fragment', { bubbles: true, detail: name }));
    }).catch(function () { location.reload(); });
  }

  function connect() {
    source = new EventSource(streamUrl);
    source.addEventListener('hello', function (e) {
      delay = 500;
      if (instance === null) instance = e.data;
      else if (instance !== e.data) location.reload(); /* a new server */
    });
    source.addEventListener('css', function (e) { swapCss(e.data); });
    source.addEventListener('fragment', function (e) { swapFragment(e.data); });
    source.addEventListener('reload', function () { location.reload(); });
    source.onerror = function () {
      /* EventSource retries by itself while CONNECTING; once CLOSED (an
       * error status, a wrong type) it gives up, so retry with backoff. */
      if (source.readyState !== EventSource.CLOSED) return;
      source = null;
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10000);
    };
  }

  window.addEventListener('pagehide', function () { if (source) source.close(); });
  connect();
})();
