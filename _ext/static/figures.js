// Draws the book's plotly figures (posenc_lib/display.py writes them): each figure is an empty
// <div class="plotly-graph-div" id="ID"> and its JSON in <script type="application/json"
// data-plotly-figure="ID">. This script is deferred; it fetches plotly.js (the bundle named by its
// data-bundle attribute, from the same folder) only when the first figure nears the viewport, so
// plotly never competes with the page's own parsing, and it draws each figure as it comes near.
(function () {
  'use strict';
  var self = document.currentScript;
  var bundle = self.src.replace(/figures\.js(\?.*)?$/, self.getAttribute('data-bundle'));
  var loading = null;

  function plotly() {
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var script = document.createElement('script');
        script.src = bundle;
        script.onload = function () { resolve(window.Plotly); };
        script.onerror = function () { reject(new Error('could not load ' + bundle)); };
        document.head.appendChild(script);
      });
    }
    return loading;
  }

  function draw(div) {
    if (div.getAttribute('data-drawn')) return;
    var source = document.querySelector('script[data-plotly-figure="' + div.id + '"]');
    if (!source) return;
    div.setAttribute('data-drawn', '1');
    var figure = JSON.parse(source.textContent);
    plotly().then(function (Plotly) {
      return Plotly.newPlot(div, figure.data, figure.layout || {}, figure.config || {});
    });
  }

  var divs = Array.prototype.slice.call(document.querySelectorAll('div.plotly-graph-div'));
  if (!('IntersectionObserver' in window)) {
    divs.forEach(draw);
    return;
  }
  var observer = new IntersectionObserver(
    function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) {
          observer.unobserve(entry.target);
          draw(entry.target);
        }
      });
    },
    { rootMargin: '600px 0px' }
  );
  divs.forEach(function (div) {
    observer.observe(div);
  });
})();
