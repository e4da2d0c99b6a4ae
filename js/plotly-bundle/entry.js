// plotly.min.js: the traces of the book's flat figures: scatter (in plotly's core), heatmap.
'use strict';
var Plotly = require('plotly.js/lib/core');
Plotly.register([require('plotly.js/lib/heatmap')]);
module.exports = Plotly;
