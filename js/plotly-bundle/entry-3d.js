// plotly-3d.min.js: the same plus scatter3d, for pages with a 3-D figure and the live widgets.
'use strict';
var Plotly = require('plotly.js/lib/core');
Plotly.register([require('plotly.js/lib/heatmap'), require('plotly.js/lib/scatter3d')]);
module.exports = Plotly;
