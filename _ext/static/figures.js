// Draws the book's plotly figures (posenc_lib/display.py writes them): each figure is an empty
// <div class="plotly-graph-div" id="ID"> and a <script type="application/json"
// data-plotly-figure="ID"> that holds its JSON or, in the built book, names in data-src the
// script _figures/ID.js that holds it (_ext/offline_assets.py moves it there). This script is
// deferred; when a figure nears the viewport it loads that figure's data and, the first time,
// plotly.js (the bundle named by its data-bundle attribute, from the same folder), then draws it.
// Scripts, not fetch(): they also load when the book is opened from disk (file://).
(function () {
  'use strict';
  var self = document.currentScript;
  var bundle = self.src.replace(/figures\.js(\?.*)?$/, self.getAttribute('data-bundle'));
  var loading = null;

  function load(src) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement('script');
      script.src = src;
      script.onload = resolve;
      script.onerror = function () { reject(new Error('could not load ' + src)); };
      document.head.appendChild(script);
    });
  }

  function plotly() {
    if (!loading) {
      loading = load(bundle).then(function () { return window.Plotly; });
    }
    return loading;
  }

  function figureData(source, id) {
    var src = source.getAttribute('data-src');
    if (!src) return Promise.resolve(JSON.parse(source.textContent));
    return load(src).then(function () { return window.posencFigures[id]; });
  }

  function draw(div) {
    if (div.getAttribute('data-drawn')) return;
    var source = document.querySelector('script[data-plotly-figure="' + div.id + '"]');
    if (!source) return;
    div.setAttribute('data-drawn', '1');
    // The figure's data and plotly.js load side by side.
    Promise.all([figureData(source, div.id), plotly()]).then(function (loaded) {
      var figure = loaded[0];
      return loaded[1].newPlot(div, figure.data, figure.layout || {}, figure.config || {});
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
