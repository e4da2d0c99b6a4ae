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
