// Builds ../../posenc_lib/static/plotly.min.js (from entry.js) and plotly-3d.min.js (from
// entry-3d.js) with plotly.js's own esbuild settings (node_modules/plotly.js/esbuild-config.js),
// each from its entry instead of plotly's full index.
const path = require('path');
const esbuild = require('esbuild');
const { environmentPlugin } = require('esbuild-plugin-environment');
const { glsl } = require('esbuild-plugin-glsl');
const InlineCSSPlugin = require('esbuild-plugin-inline-css');
const version = require('plotly.js/package.json').version;

const BUNDLES = [
  ['entry.js', 'plotly.min.js', 'scatter, heatmap'],
  ['entry-3d.js', 'plotly-3d.min.js', 'scatter, heatmap, scatter3d'],
];

for (const [entry, out, traces] of BUNDLES) {
  esbuild
    .build({
      entryPoints: [path.join(__dirname, entry)],
      outfile: path.join(__dirname, '..', '..', 'posenc_lib', 'static', out),
      format: 'iife',
      globalName: 'Plotly',
      bundle: true,
      minify: true,
      legalComments: 'none',
      banner: {
        js:
          `/*! plotly.js v${version} (https://github.com/plotly/plotly.js), MIT License, ` +
          `Copyright 2012-2026 Plotly, Inc. Partial bundle: ${traces}. ` +
          'Built by js/plotly-bundle (make plotly-bundle). */',
      },
      plugins: [InlineCSSPlugin(), glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false })],
      alias: { regl: '@plotly/regl', stream: 'stream-browserify' },
      define: { global: 'window', 'define.amd': 'false' },
      target: 'es2016',
      logLevel: 'warning',
    })
    .catch(() => process.exit(1));
}
