/*
 * svg_check.js - what a person would see, checked in a real browser.
 *
 * tests/browser_check.sh writes a page that defines PICTURES (a list of
 * {name, svg}) and then this script. For each picture it:
 *   - parses the SVG as XML (a parse error fails it);
 *   - finds no reference to anything outside the document (href, src,
 *     url() other than #fragments, @import);
 *   - places it in the page and runs its inline scripts (an exception
 *     fails it);
 *   - checks that every drawn element lies inside the canvas and that no
 *     two labels overlap;
 *   - checks the key elements of its kind: the flame graph's boxes (each
 *     label inside its box, before and after a zoom; zoom, reset and
 *     search work), the frame-time chart's series, axes, reference lines.
 * The verdict goes into <pre id="result">: "PASS n" or "FAIL" and one line
 * per problem, read back through chromium --dump-dom.
 */
(function () {
  'use strict';
  var problems = [], checks = 0;

  function fail(name, msg) { problems.push(name + ': ' + msg); }
  function ok(cond, name, msg) { checks++; if (!cond) fail(name, msg); return cond; }
  function describe(el) {
    var t = el.textContent ? ' "' + el.textContent.slice(0, 40) + '"' : '';
    return '<' + el.tagName + (el.id ? ' id=' + el.id : '') + '>' + t;
  }
  function visible(el) {
    for (var e = el; e && e.nodeType === 1; e = e.parentNode)
      if (getComputedStyle(e).display === 'none') return false;
    return true;
  }

  function noExternal(name, root, src) {
    var all = root.querySelectorAll('*');
    for (var i = 0; i < all.length; i++) {
      var a = all[i].attributes;
      for (var j = 0; j < a.length; j++) {
        var n = a[j].name, v = a[j].value;
        if (/(^|:)(href|src)$/.test(n))
          fail(name, 'an external reference: ' + n + '="' + v + '"');
        if (/url\(\s*['"]?[^#'"\s]/.test(v))
          fail(name, 'an external url(): ' + v);
      }
    }
    ok(!/@import|url\(\s*['"]?(https?:|file:|data:|\/\/)/.test(src), name,
       'a style loads something from outside');
  }

  function inside(name, root) {
    var c = root.getBoundingClientRect(), e = 0.5;
    var els = root.querySelectorAll('text, rect, path, line, polyline');
    for (var i = 0; i < els.length; i++) {
      var el = els[i];
      if (!visible(el)) continue;
      var b = el.getBoundingClientRect();
      if (b.width === 0 && b.height === 0) continue;
      ok(b.left >= c.left - e && b.right <= c.right + e &&
         b.top >= c.top - e && b.bottom <= c.bottom + e, name,
         describe(el) + ' outside the canvas (' + [b.left - c.left, b.top - c.top,
         b.right - c.left, b.bottom - c.top].map(Math.round).join(',') + ')');
    }
  }

  function noOverlap(name, root) {
    var texts = [].filter.call(root.querySelectorAll('text'), function (t) {
      return visible(t) && t.textContent.length > 0;
    }).map(function (t) { return { t: t, b: t.getBoundingClientRect() }; });
    var e = 1; /* a pixel of anti-aliasing is not an overlap */
    for (var i = 0; i < texts.length; i++)
      for (var j = i + 1; j < texts.length; j++) {
        var a = texts[i].b, b = texts[j].b;
        var x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        var y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        ok(!(x > e && y > e + 2), name, describe(texts[i].t) + ' overlaps ' +
           describe(texts[j].t));
      }
  }

  /* flame graph: each label inside its box */
  function labelsInBoxes(name, root, when) {
    var gs = root.querySelectorAll('g.fg');
    for (var i = 0; i < gs.length; i++) {
      var t = gs[i].querySelector('text'), r = gs[i].querySelector('rect');
      if (!t || !visible(gs[i]) || !t.textContent) continue;
      var bt = t.getBoundingClientRect(), br = r.getBoundingClientRect();
      ok(bt.left >= br.left - 0.5 && bt.right <= br.right + 0.5, name,
         when + ': label ' + describe(t) + ' wider than its box (' +
         Math.round(bt.width) + ' px in ' + Math.round(br.width) + ')');
    }
  }

  function flame(name, root) {
    var gs = root.querySelectorAll('g.fg');
    if (!ok(gs.length > 0, name, 'no flame graph boxes')) return;
    for (var i = 0; i < gs.length; i++)
      ok(gs[i].querySelector('title') && gs[i].querySelector('rect'), name,
         'a box without its tooltip or rectangle');
    ok(root.querySelectorAll('g.sec').length > 0, name, 'no section');
    labelsInBoxes(name, root, 'as written');
    var W = +root.getAttribute('width');
    /* zoom into the narrowest box that has a parent */
    var target = null;
    for (i = 0; i < gs.length; i++) {
      var w = +gs[i].querySelector('rect').getAttribute('width');
      var y = +gs[i].querySelector('rect').getAttribute('y');
      var firstY = +gs[i].parentNode.querySelector('rect').getAttribute('y');
      if (y > firstY && (!target || w < target.w)) target = { g: gs[i], w: w };
    }
    if (!target) return;
    var before = [].map.call(gs, function (g) { return g.querySelector('rect').getAttribute('width'); });
    target.g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    var zw = +target.g.querySelector('rect').getAttribute('width');
    ok(Math.abs(zw - (W - 20)) < 1, name, 'a click did not zoom the box to the width (' + zw + ')');
    ok(getComputedStyle(root.getElementById('reset')).display !== 'none', name,
       '"Reset zoom" not shown after a zoom');
    labelsInBoxes(name, root, 'zoomed');
    inside(name, root);
    noOverlap(name, root);
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
    var after = [].map.call(gs, function (g) { return g.querySelector('rect').getAttribute('width'); });
    ok(before.join() === after.join(), name, 'Escape did not restore the layout');
    /* search: the first box's name */
    var q = gs[gs.length - 1].querySelector('title').textContent.split('\n')[0];
    var saved = window.prompt;
    window.prompt = function () { return q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); };
    root.getElementById('search').dispatchEvent(new MouseEvent('click', { bubbles: true }));
    window.prompt = saved;
    var hits = [].filter.call(gs, function (g) {
      return g.querySelector('rect').getAttribute('fill') === '#CC79A7';
    }).length;
    ok(hits > 0, name, 'a search for "' + q + '" highlighted nothing');
    ok(/match/.test(root.getElementById('matched').textContent), name,
       'a search did not say how many boxes matched');
  }

  function frames(name, root) {
    var ft = root.getElementById('frametime');
    if (!ok(ft, name, 'no frame-time series')) return;
    ok((ft.getAttribute('d').match(/,/g) || []).length >= 2, name,
       'the frame-time series has fewer than two points');
    ok(root.querySelectorAll('#yaxis text').length >= 3, name, 'fewer than 3 y ticks');
    ok(root.querySelectorAll('#xaxis text').length >= 2, name, 'fewer than 2 x ticks');
    ok(root.querySelectorAll('#reflines text').length === 3, name,
       'not 3 reference lines (median, p95, p99)');
    ok(root.getElementById('stutters'), name, 'no stutter group');
  }

  var kinds = { 'Flame graph': flame, 'Frame time': frames };

  PICTURES.forEach(function (p) {
    var doc = new DOMParser().parseFromString(p.svg, 'image/svg+xml');
    var err = doc.getElementsByTagName('parsererror');
    if (!ok(err.length === 0, p.name, 'not well-formed XML: ' +
            (err.length ? err[0].textContent.slice(0, 200) : ''))) return;
    var root = document.importNode(doc.documentElement, true);
    ok(root.namespaceURI === 'http://www.w3.org/2000/svg' &&
       root.localName === 'svg', p.name, 'the root is not an <svg>');
    var holder = document.createElement('div');
    holder.appendChild(root);
    document.body.appendChild(holder);
    noExternal(p.name, root, p.svg);
    var scripts = root.querySelectorAll('script');
    for (var i = 0; i < scripts.length; i++) {
      try { (new Function(scripts[i].textContent))(); }
      catch (e) { fail(p.name, 'its script threw: ' + e); }
    }
    var c = root.getBoundingClientRect();
    ok(Math.round(c.width) === +root.getAttribute('width') &&
       Math.round(c.height) === +root.getAttribute('height'), p.name,
       'the canvas is not drawn at its size');
    inside(p.name, root);
    noOverlap(p.name, root);
    var title = root.querySelector('title').textContent.split(':')[0];
    var k = kinds[title];
    if (ok(k, p.name, 'unknown kind of picture "' + title + '"')) k(p.name, root);
    document.body.removeChild(holder);
  });
  var out = document.getElementById('result');
  out.textContent = problems.length
    ? 'FAIL\n' + problems.slice(0, 50).join('\n')
    : 'PASS ' + PICTURES.length + ' pictures, ' + checks + ' checks';
})();
