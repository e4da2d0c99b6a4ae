// The sidebar toggles that a reader can see open the sidebars, on a phone as on a desktop.
// pydata-sphinx-theme 0.17.1 and sphinx-book-theme 1.3.0 bind their handlers to the FIRST
// ".primary-toggle" / ".secondary-toggle" of the page (document.querySelector), which is a header
// button this theme always hides; the visible ones, in the article header, do nothing (upstream
// pydata/pydata-sphinx-theme#2451, executablebooks/sphinx-book-theme#988). Every other toggle
// forwards its click to that bound button, so the themes' own code does the work: on a wide
// screen the primary toggle collapses the sidebar, on a narrow one each opens its drawer.
(function () {
  'use strict';
  function bind() {
    ['primary', 'secondary'].forEach(function (kind) {
      var toggles = document.querySelectorAll('.' + kind + '-toggle');
      var bound = toggles[0];
      Array.prototype.slice.call(toggles, 1).forEach(function (toggle) {
        toggle.addEventListener('click', function (event) {
          event.preventDefault();
          event.stopPropagation();
          bound.click();  // the theme remembers the focused toggle, to restore it on close
          toggle.blur();  // and its tooltip goes
        });
      });
    });
  }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', bind);
  } else {
    bind();
  }
})();

// Search matches: Sphinx's sphinx_highlight.js highlights, on the next page loaded, the terms the
// search page left in localStorage, whichever page that is, and highlights them inside words too
// ("p[rope]rties" for "rope"). Here: the terms are kept only when this page was opened from the
// search page's results, and a match inside a longer word is un-highlighted.
(function () {
  'use strict';
  var KEY = 'sphinx_highlight_terms';
  var fromSearch = false;
  try {
    fromSearch = /\/search\.html$/.test(new URL(document.referrer).pathname);
  } catch (e) { /* no referrer */ }
  try {
    if (!fromSearch) localStorage.removeItem(KEY);
  } catch (e) { /* storage blocked */ }

  function wordChar(ch) { return !!ch && /[\p{L}\p{N}_]/u.test(ch); }
  function unwrapInsideWords() {
    document.querySelectorAll('span.highlighted').forEach(function (span) {
      var before = span.previousSibling;
      var after = span.nextSibling;
      var prev = before && before.nodeType === 3 ? before.data.slice(-1) : '';
      var next = after && after.nodeType === 3 ? after.data.charAt(0) : '';
      if (wordChar(prev) || wordChar(next)) {
        var parent = span.parentNode;
        parent.replaceChild(document.createTextNode(span.textContent), span);
        parent.normalize();
      }
    });
  }
  // sphinx_highlight.js highlights 10 ms after its DOMContentLoaded handler runs, which on a long
  // page (the API reference) comes after other handlers: looked at again a few times.
  function later() {
    if (!fromSearch) return;
    [60, 300, 1000, 3000].forEach(function (ms) { window.setTimeout(unwrapInsideWords, ms); });
  }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', later);
  } else {
    later();
  }
})();

// Inline math wider than its line (MathJax 3 does not break it): on a phone such a formula ran past
// the screen's edge, cut (chapter 8's ∫ sin(α b^{-u}) du, chapter 5's long identities). It gets the
// class posenc-wide-inline, which phone.css turns into a box that scrolls sideways, as a wide
// display equation does. Measured again when the width changes.
(function () {
  'use strict';
  var CLASS = 'posenc-wide-inline';
  function lineWidth(el) {
    var block = el.closest('p, li, dd, dt, td, th, figcaption, .admonition') || el.parentElement;
    var style = getComputedStyle(block);
    return block.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  }
  function mark() {
    var inline = document.querySelectorAll('mjx-container:not([display="true"])');
    inline.forEach(function (el) { el.classList.remove(CLASS); });
    inline.forEach(function (el) {
      var width = el.getBoundingClientRect().width;
      if (width > 0 && width > lineWidth(el) + 0.5) el.classList.add(CLASS);
    });
  }
  var tries = 0;
  function whenTypeset() {
    var mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise && mj.startup.document) {
      mj.startup.promise.then(mark);
      return;
    }
    if (++tries < 100) window.setTimeout(whenTypeset, 200);  // MathJax loads after this script
  }
  if (!document.querySelector('.math')) return;
  whenTypeset();
  var timer = null;
  window.addEventListener('resize', function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(mark, 250);
  });
})();
