/* folio's first client part: served at __folio/early.js and put into a page before any of
 * its own scripts (html_early_offset), as a classic script that runs at once, so it hears
 * every error from the page's first byte on: uncaught errors, unhandled rejections and
 * console.error, each with where it came from, which only the moment of the error knows (the
 * script running, the stack). It keeps them until the rest of the client (reload.js, deferred,
 * before </head>) takes them: window.__folioEarly.take(fn) hands over what was kept, then
 * passes each later one straight on, fn(kind, message, at) with at = {source, line, column}
 * (or a fragment's script, which reload.js places in the fragment's file). At most 100 are
 * kept, each message cut to 1,000 characters. */
(function () {
  'use strict';
  var me = document.currentScript;
  if (!me || window.__folioEarly) return;
  var kept = [], sink = null;
  var folio = new URL('.', me.src).href;        /* this server's __folio/, under any prefix */
  var prefix = new URL('..', me.src).pathname;  /* the article's root */

  /* A script's URL as the article names it: its path below the server's prefix; a page's
   * inline script is its page's, a folder's page its index.html. */
  function sourceOf(url) {
    try {
      var u = new URL(url, document.baseURI);
      if (u.origin !== location.origin) return u.href;
      var p = u.pathname.indexOf(prefix) === 0 ? u.pathname.slice(prefix.length) : u.pathname;
      return p === '' || p.slice(-1) === '/' ? p + 'index.html' : p;
    } catch (e) { return String(url || ''); }
  }
  /* file, line, column of the first frame of @stack that is not folio's client. */
  function frameOf(stack) {
    var lines = String(stack || '').split('\n');
    for (var i = 0; i < lines.length; i++) {
      var m = /((?:https?|file):\/\/[^\s()]+?):(\d+):(\d+)/.exec(lines[i]);
      if (m && m[1].indexOf(folio) !== 0) return { source: sourceOf(m[1]), line: +m[2], column: +m[3] };
    }
    return { source: '', line: 0, column: 0 };
  }
  /* A fragment's inline script, run by the article's loader, reports no file (or the
   * loader's): name the fragment and which of its scripts threw (reload.js finds the line). */
  function scriptAt(e) {
    var cs = document.currentScript;
    var holder = cs && !cs.src && cs.closest ? cs.closest('[id^="fragment-"]') : null;
    if (!holder) return null;
    var name = holder.id.slice('fragment-'.length);
    return { fragment: name, script: Array.prototype.indexOf.call(holder.querySelectorAll('script'), cs),
             source: 'fragments/' + name + '.html', line: e.lineno, column: e.colno };
  }
  function caught(kind, message, at) {
    message = String(message);
    if (message.length > 1000) message = message.slice(0, 1000) + '\u2026';
    if (sink) sink(kind, message, at);
    else if (kept.length < 100) kept.push([kind, message, at]);
  }

  window.addEventListener('error', function (e) {
    if (e.target !== window && e.target && e.target.nodeType === 1) return; /* a failed load: the panel's audit */
    caught('error', e.message || 'error', scriptAt(e) || (e.filename ? { source: sourceOf(e.filename), line: e.lineno, column: e.colno }
                                                                     : frameOf(e.error && e.error.stack)));
  });
  window.addEventListener('unhandledrejection', function (e) {
    var r = e.reason;
    var text = r instanceof Error ? (r.name ? r.name + ': ' : '') + r.message : (function () {
      try { return typeof r === 'string' ? r : JSON.stringify(r); } catch (x) { return String(r); }
    })();
    caught('rejection', text, frameOf(r && r.stack));
  });
  var consoleError = console.error, inConsole = false;
  console.error = function () {
    consoleError.apply(console, arguments);
    if (inConsole) return;
    inConsole = true;
    try {
      var text = Array.prototype.map.call(arguments, function (a) {
        if (a instanceof Error) return (a.name ? a.name + ': ' : '') + a.message;
        if (typeof a === 'string') return a;
        try { return JSON.stringify(a); } catch (x) { return String(a); }
      }).join(' ');
      caught('console', text, frameOf(new Error().stack));
    } finally { inConsole = false; }
  };

  window.__folioEarly = {
    take: function (fn) {
      sink = fn;
      var was = kept;
      kept = [];
      was.forEach(function (k) { fn(k[0], k[1], k[2]); });
    }
  };
})();
