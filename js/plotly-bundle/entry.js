// The traces posenc_lib.viz draws: scatter (in plotly's core), heatmap, scatter3d.
// A figure with another trace type fails tests/test_install.py's bundle check: add it here.
'use strict';
var Plotly = require('plotly.js/lib/core');
Plotly.register([require('plotly.js/lib/heatmap'), require('plotly.js/lib/scatter3d')]);
module.exports = Plotly;
