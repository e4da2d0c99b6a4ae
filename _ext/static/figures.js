// Draws the book's plotly figures (posenc_lib/display.py writes them): each figure is an empty
// <div class="plotly-graph-div" id="ID"> and its JSON in <script type="application/json"
// data-plotly-figure="ID">. This script is deferred after plotly.min.js, so the page's text is
// interactive before plotly is parsed; a figure is drawn when it comes near the viewport.
(function () {
  'use strict';
  function draw(div) {
    if (div.getAttribute('data-drawn')) return;
    var source = document.querySelector('script[data-plotly-figure="' + div.id + '"]');
    if (!source) return;
    div.setAttribute('data-drawn', '1');
    var figure = JSON.parse(source.textContent);
    window.Plotly.newPlot(div, figure.data, figure.layout || {}, figure.config || {});
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
