// Draws the book's plotly figures (posenc_lib/display.py writes them): each figure is an empty
// <div class="plotly-graph-div" id="ID"> and a <script type="application/json"
// data-plotly-figure="ID"> that holds its JSON or, in the built book, names in data-src the
// script _figures/ID.js that holds it (_ext/offline_assets.py moves it there). This script is
// deferred; when a figure nears the viewport it loads that figure's data and, the first time,
// plotly.js (the bundle named by its data-bundle attribute, from the same folder), then draws it.
// Scripts, not fetch(): they also load when the book is opened from disk (file://).
//
// Every figure is then fitted to the reader's screen, done once here rather than per figure:
// - narrow (a phone): smaller fonts, long titles wrapped to the width, legends laid flat, menus
//   moved to the left, slimmer colour bars;
// - at any width: the text boxes (title, axis titles, annotations, legend, menus, slider labels,
//   colour bars) are measured, and where two overlap or one is cut by the edge, room is made
//   (margins and the figure's height grow, menus/legends/sliders move), a few rounds at most;
// - on a touch screen a swipe scrolls the page: no drag-zoom, no scroll-zoom, no mode bar;
// - colours follow the book's light/dark theme (html[data-theme]);
// - each slider gets a real (visually hidden) range input: Tab reaches it, arrow keys move it;
//   each dropdown menu a real (visually hidden) <select>, likewise.
(function () {
  'use strict';
  var self = document.currentScript;
  var bundle = self.src.replace(/figures\.js(\?.*)?$/, self.getAttribute('data-bundle'));
  var loading = null;
  var NARROW = 600; // px: a figure narrower than this gets the phone layout
  var TOUCH = (window.matchMedia && window.matchMedia('(pointer: coarse)').matches) ||
    (navigator.maxTouchPoints || 0) > 0;
  var originals = {}; // id -> the figure's layout as built, before fitting
  var widths = {}; // id -> the width it was last fitted at

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

  function copy(value) { return JSON.parse(JSON.stringify(value)); }

  // --- narrow screens: a layout made for a phone, before drawing ---------------------------------

  function plainLength(text) {
    return String(text).replace(/<[^>]*>/g, '').length;
  }

  // Wrap text (plotly's <br>-separated lines, which may hold <sup>/<b> tags) at spaces so that no
  // line is longer than maxChars visible characters.
  function wrap(text, maxChars) {
    if (!text || maxChars < 8) return text;
    return String(text).split(/<br\s*\/?>/i).map(function (line) {
      if (plainLength(line) <= maxChars) return line;
      var words = line.split(' ');
      var lines = [];
      var current = '';
      words.forEach(function (word) {
        var candidate = current ? current + ' ' + word : word;
        if (current && plainLength(candidate) > maxChars) {
          lines.push(current);
          current = word;
        } else {
          current = candidate;
        }
      });
      if (current) lines.push(current);
      return lines.join('<br>');
    }).join('<br>');
  }

  function titleText(title) {
    if (title === undefined || title === null) return '';
    return typeof title === 'string' ? title : (title.text || '');
  }

  function axisKeys(layout) {
    return Object.keys(layout).filter(function (key) { return /^[xy]axis\d*$/.test(key); });
  }

  function narrowLayout(layout, width) {
    var fontSize = 12;
    var charWidth = 0.56; // of the font size: Noto Sans / Arial average, a little generous
    var margin = layout.margin || {};
    layout.margin = margin;
    margin.l = Math.min(margin.l === undefined ? 60 : margin.l, 46);
    margin.r = Math.min(margin.r === undefined ? 20 : margin.r, 14);
    layout.font = Object.assign({}, layout.font, { size: fontSize });
    var plotWidth = width - margin.l - margin.r;

    var title = layout.title;
    if (title !== undefined) {
      if (typeof title === 'string') title = { text: title };
      title.font = Object.assign({}, title.font, { size: 14 });
      title.x = 0.02;
      title.xanchor = 'left';
      // At the top of the figure, not in the middle of a top margin that fitting may have grown
      // (chapter 8's first figure had a 95 px blank band above its title on a phone).
      title.yref = 'container';
      title.y = 1;
      title.yanchor = 'top';
      title.pad = Object.assign({}, title.pad, { t: 8 });
      title.text = wrap(titleText(title), Math.floor((width - 16) / (14 * charWidth)));
      layout.title = title;
    }

    var firstYTitle = layout.yaxis ? titleText(layout.yaxis.title) : '';
    axisKeys(layout).forEach(function (key) {
      var axis = layout[key];
      var domain = axis.domain || [0, 1];
      var t = axis.title;
      var span = key.charAt(0) === 'x' ? plotWidth : (layout.height || 450) * 0.55;
      // Panels side by side: the second panel's y-axis title, when it repeats the first's, would
      // stand over the first panel's data (chapter 8's granularity figure); it is left out.
      if (key !== 'yaxis' && key.charAt(0) === 'y' && firstYTitle && titleText(t) === firstYTitle) {
        t = { text: '' };
        axis.title = t;
      }
      // A panel a third of a phone wide: three ticks, upright, instead of five turned sideways.
      if (key.charAt(0) === 'x' && (domain[1] - domain[0]) * plotWidth < 130 && !axis.tickvals &&
          axis.type !== 'category') {
        axis.nticks = Math.min(axis.nticks || 3, 3);
      }
      if (t !== undefined) {
        if (typeof t === 'string') t = { text: t };
        t.text = wrap(titleText(t), Math.floor(span * (domain[1] - domain[0]) / (fontSize * charWidth)));
        t.font = Object.assign({}, t.font, { size: 12 });
        axis.title = t;
      }
      axis.tickfont = Object.assign({}, axis.tickfont, { size: 11 });
    });

    // Annotations (subplot titles above all): wrapped to the width of their subplot.
    var domains = axisKeys(layout).filter(function (k) { return k.charAt(0) === 'x'; })
      .map(function (k) { return layout[k].domain || [0, 1]; });
    (layout.annotations || []).forEach(function (note) {
      var size = Math.min((note.font && note.font.size) || fontSize, 11);
      note.font = Object.assign({}, note.font, { size: size });
      if (note.xref && note.xref !== 'paper') return;
      var span = 1;
      domains.forEach(function (d) {
        if (note.x >= d[0] - 1e-6 && note.x <= d[1] + 1e-6) span = Math.min(span, d[1] - d[0]);
      });
      note.text = wrap(note.text, Math.floor(span * plotWidth / (size * charWidth)));
    });

    // A legend is laid flat and put above the plot, where it covers no data.
    var showsLegend = layout.showlegend !== false;
    if (showsLegend) {
      var legend = layout.legend || {};
      var below = legend.y !== undefined && legend.y < 0;
      legend.orientation = 'h';
      legend.font = Object.assign({}, legend.font, { size: 11 });
      legend.x = 0;
      legend.xanchor = 'left';
      if (!below) {
        legend.y = 1.02;
        legend.yanchor = 'bottom';
      }
      layout.legend = legend;
    }

    // Dropdown menus: at the left, so that the wrapped title keeps the width.
    (layout.updatemenus || []).forEach(function (menu, index) {
      if (menu.type === 'buttons') return;
      menu.x = 0;
      menu.xanchor = 'left';
      if (menu.y !== undefined && menu.y < 0.5) {
        menu.y = 1;
        menu.yanchor = 'bottom';
      }
      menu.font = Object.assign({}, menu.font, { size: 11 });
      void index;
    });
    (layout.sliders || []).forEach(function (slider) {
      slider.font = Object.assign({}, slider.font, { size: 10 });
      if (slider.currentvalue) {
        slider.currentvalue.font = Object.assign({}, slider.currentvalue.font, { size: 12 });
      }
    });
    return layout;
  }

  // Legend entries: long trace names wrapped, also those that slider steps and menus set.
  var NAME_CHARS = 44;
  function wrapNames(update) {
    if (!update || typeof update !== 'object' || !('name' in update)) return;
    var names = update.name;
    update.name = Array.isArray(names)
      ? names.map(function (n) { return typeof n === 'string' ? wrap(n, NAME_CHARS) : n; })
      : (typeof names === 'string' ? wrap(names, NAME_CHARS) : names);
  }

  function narrowTraces(data, layout) {
    (layout.sliders || []).forEach(function (slider) {
      (slider.steps || []).forEach(function (step) { wrapNames((step.args || [])[0]); });
    });
    (layout.updatemenus || []).forEach(function (menu) {
      (menu.buttons || []).forEach(function (button) { wrapNames((button.args || [])[0]); });
    });
    data.forEach(function (trace) {
      if (typeof trace.name === 'string') trace.name = wrap(trace.name, NAME_CHARS);
      if (trace.colorbar || trace.type === 'heatmap' || trace.type === 'contour') {
        trace.colorbar = Object.assign({ thickness: 12 }, trace.colorbar, {
          thickness: 12,
          tickfont: Object.assign({}, trace.colorbar && trace.colorbar.tickfont, { size: 10 }),
        });
      }
    });
    return data;
  }

  // --- any width: measure the text boxes and make room where they collide ------------------------

  var TOL = 1.5;

  function rectOf(el, frame) {
    var r = el.getBoundingClientRect();
    return { x0: r.left - frame.left, y0: r.top - frame.top, x1: r.right - frame.left, y1: r.bottom - frame.top };
  }

  function shown(el) {
    var r = el.getBoundingClientRect();
    if (r.width < 0.5 || r.height < 0.5) return false;
    var style = window.getComputedStyle(el);
    return style.visibility !== 'hidden' && style.display !== 'none';
  }

  // 'xaxis2' for a subplot id such as 'x2y2'; for an axis title id ('y2'), its anchor's x axis.
  function xAxisOf(gd, id) {
    id = String(id || '').split(' ').filter(function (c) { return /^x\d*y\d*$/.test(c); })[0] || id;
    var m = /^x(\d*)/.exec(id);
    if (m) return 'xaxis' + m[1];
    var y = /^y(\d*)$/.exec(id);
    if (y) {
      var yaxis = gd._fullLayout['yaxis' + y[1]];
      var anchor = yaxis && yaxis.anchor && yaxis.anchor !== 'free' ? yaxis.anchor : 'x';
      return 'xaxis' + anchor.slice(1);
    }
    return null;
  }

  function union(kind, ref, rs) {
    return {
      kind: kind, ref: ref,
      x0: Math.min.apply(null, rs.map(function (r) { return r.x0; })),
      y0: Math.min.apply(null, rs.map(function (r) { return r.y0; })),
      x1: Math.max.apply(null, rs.map(function (r) { return r.x1; })),
      y1: Math.max.apply(null, rs.map(function (r) { return r.y1; })),
    };
  }

  function boxes(gd) {
    var frame = gd.getBoundingClientRect();
    var out = [];
    function add(kind, ref, el) {
      if (!el || !shown(el)) return;
      var box = rectOf(el, frame);
      box.kind = kind;
      box.ref = ref;
      out.push(box);
    }
    var q = function (sel) { return Array.prototype.slice.call(gd.querySelectorAll(sel)); };
    q('.infolayer .g-gtitle text').forEach(function (el) { add('title', 'title', el); });
    q('.infolayer > g[class^="g-"][class$="title"]').forEach(function (g) {
      if (g.classList.contains('g-gtitle')) return;
      var axis = g.getAttribute('class').replace(/^g-/, '').replace(/title$/, '');
      add('axis title', axis.charAt(0) + 'axis' + axis.slice(1), g.querySelector('text'));
    });
    q('.infolayer .annotation').forEach(function (el) {
      add('annotation', +el.getAttribute('data-index'), el.querySelector('.annotation-text-g') || el);
    });
    q('.infolayer .legend').forEach(function (el) {
      // The background and every entry: entries can spill past a background sized too early.
      var parts = [el.querySelector('.bg')].concat(Array.prototype.slice.call(el.querySelectorAll('.traces')))
        .filter(function (p) { return p && shown(p); });
      if (!parts.length) return;
      out.push(union('legend', 'legend', parts.map(function (p) { return rectOf(p, frame); })));
    });
    q('.menulayer .updatemenu-header-group').forEach(function (el) {
      var d = el.__data__;
      add('menu', d && d._index !== undefined ? d._index : 0, el);
    });
    q('.menulayer .updatemenu-button-group').forEach(function (el) {
      var d = el.__data__;
      if (d && d.type === 'buttons') add('menu', d._index, el);
    });
    q('.slider-group').forEach(function (el, i) {
      var d = el.__data__;
      var ref = d && d._index !== undefined ? d._index : i;
      el.querySelectorAll('text, .slider-rail-rect, .slider-grip-rect').forEach(function (t) {
        add('slider', ref, t);
      });
    });
    q('.infolayer .colorbar').forEach(function (el, i) { add('colour bar', i, el); });
    // Obstacles for colour bars: plot areas, tick labels and axis titles, by their x axis.
    q('.draglayer .nsewdrag').forEach(function (el) {
      add('plot area', xAxisOf(gd, el.parentNode.getAttribute('class')), el);
    });
    q('.cartesianlayer .subplot').forEach(function (sub) {
      var ref = xAxisOf(gd, sub.getAttribute('class').replace('subplot', '').trim());
      sub.querySelectorAll('.xaxislayer-above text, .yaxislayer-above text').forEach(function (t) { add('tick label', ref, t); });
    });
    return out;
  }

  function overlap(a, b) {
    var w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
    var h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
    return w > TOL && h > TOL ? { w: w, h: h } : null;
  }

  // Figure out one change that separates the first colliding pair (or un-cuts a box), as a
  // relayout update; null when every box is clear.
  function remedy(gd) {
    var full = gd._fullLayout;
    var size = full._size;
    var plotTop = size.t;
    var plotBottom = size.t + size.h;
    var height = full.height;
    var list = boxes(gd);
    var update = {};
    var layout = gd.layout;

    function grow(where, px) {
      px = Math.ceil(px + 4);
      var margin = layout.margin || {};
      var key = where === 'top' ? 't' : 'b';
      update['margin.' + key] = (margin[key] !== undefined ? margin[key] : full.margin[key]) + px;
      update.height = height + px;
      // Keep what hangs below the plot (paper y < 0) where it was, relative to the plot.
      return px;
    }
    function moveY(box, px) { // px > 0 moves up
      var dy = px / size.h;
      if (box.kind === 'menu') {
        update['updatemenus[' + box.ref + '].y'] = full.updatemenus[box.ref].y + dy;
        return true;
      }
      if (box.kind === 'legend') {
        update['legend.y'] = full.legend.y + dy;
        return true;
      }
      if (box.kind === 'slider') {
        update['sliders[' + box.ref + '].y'] = full.sliders[box.ref].y + dy;
        return true;
      }
      return false;
    }
    var movable = function (b) { return b.kind === 'menu' || b.kind === 'legend' || b.kind === 'slider'; };

    // A box cut at the top or bottom edge: more room there.
    for (var i = 0; i < list.length; i++) {
      var box = list[i];
      if (box.kind === 'title' && box.y0 < 4 - TOL && full.title.yref === 'container') {
        // A title pinned to the figure's top (a phone's) whose first line is cut: more padding
        // (plotly anchors a title of several lines by one of them).
        update['title.pad.t'] = ((full.title.pad && full.title.pad.t) || 0) + Math.ceil(4 - box.y0);
        return update;
      }
      if (box.y0 < -TOL) { grow('top', -box.y0); return update; }
      if (box.y1 > height + TOL) { grow('bottom', box.y1 - height); return update; }
    }
    // A box cut at the left or right edge: a smaller font, and its left end at the figure's.
    var width = full.width;
    for (var c = 0; c < list.length; c++) {
      var cut = list[c];
      if (cut.x0 >= -TOL && cut.x1 <= width + TOL) continue;
      var scale = Math.min(1, (width - 8) / (cut.x1 - cut.x0));
      if (cut.kind === 'annotation') {
        var note = full.annotations[cut.ref];
        update['annotations[' + cut.ref + '].font.size'] = Math.max(8, Math.floor(note.font.size * scale));
        update['annotations[' + cut.ref + '].xanchor'] = 'left';
        update['annotations[' + cut.ref + '].x'] = (4 - size.l) / size.w;
        if (note.font.size > 8 || note.xanchor !== 'left') return update;
      } else if (cut.kind === 'legend' && full.legend.font.size > 8) {
        update['legend.font.size'] = Math.max(8, Math.min(full.legend.font.size - 1,
          Math.floor(full.legend.font.size * scale)));
        return update;
      }
    }
    for (var a = 0; a < list.length; a++) {
      for (var b = a + 1; b < list.length; b++) {
        var A = list[a];
        var B = list[b];
        if (A.kind === B.kind && A.ref === B.ref) continue; // one slider's labels, one colour bar
        var o = overlap(A, B);
        if (!o) continue;
        if (A.kind === 'colour bar' || B.kind === 'colour bar') {
          // A colour bar between two subplots: the subplot on its right starts further right.
          var cb = A.kind === 'colour bar' ? A : B;
          var hit = cb === A ? B : A;
          var axisKey = hit.kind === 'axis title' ? xAxisOf(gd, hit.ref.replace('axis', '')) : hit.ref;
          var axis = typeof axisKey === 'string' ? full[axisKey] : null;
          if (axis && axis.domain && (hit.x0 + hit.x1) / 2 > (cb.x0 + cb.x1) / 2) {
            var shift = (cb.x1 + 6 - hit.x0) / size.w;
            update[axisKey + '.domain'] = [Math.min(axis.domain[0] + shift, axis.domain[1] - 0.2), axis.domain[1]];
            return update;
          }
          continue;
        }
        if ((A.kind === 'axis title' && /^yaxis/.test(A.ref) && (B.kind === 'plot area' || B.kind === 'tick label')) ||
            (B.kind === 'axis title' && /^yaxis/.test(B.ref) && (A.kind === 'plot area' || A.kind === 'tick label'))) {
          // A right-hand panel's y-axis title over the panel on its left: that panel ends
          // before the title (panels side by side on a phone).
          var yTitle = A.kind === 'axis title' ? A : B;
          var area = yTitle === A ? B : A;
          var own = xAxisOf(gd, yTitle.ref.replace('axis', ''));
          var left = typeof area.ref === 'string' ? full[area.ref] : null;
          if (area.ref !== own && left && left.domain && (area.x0 + area.x1) / 2 < (yTitle.x0 + yTitle.x1) / 2) {
            var cutBack = (area.x1 - yTitle.x0 + 6) / size.w;
            update[area.ref + '.domain'] = [left.domain[0], Math.max(left.domain[0] + 0.2, left.domain[1] - cutBack)];
            return update;
          }
          continue;
        }
        if (A.kind === 'title' || B.kind === 'title') {
          // The title hangs from the top of the figure, everything else from the plot: more
          // room at the top moves the rest down, below the title.
          var t = A.kind === 'title' ? A : B;
          var other = t === A ? B : A;
          grow('top', t.y1 - other.y0);
          return update;
        }
        if (A.kind === 'plot area' || B.kind === 'plot area' || A.kind === 'tick label' || B.kind === 'tick label') {
          var area = A.kind === 'plot area' || A.kind === 'tick label' ? A : B;
          var thing = area === A ? B : A;
          if (thing.kind === 'plot area' || thing.kind === 'tick label' || !movable(thing)) continue;
          // A legend, menu or slider over the data: above the plot if it is in its upper half.
          if ((thing.y0 + thing.y1) / 2 < plotTop + size.h / 2) {
            moveY(thing, thing.y1 - plotTop + 4);
            return update;
          }
          continue;
        }
        var upper = (A.y0 + A.y1) <= (B.y0 + B.y1) ? A : B;
        var lower = upper === A ? B : A;
        var px = upper.y1 - lower.y0 + 4;
        if (upper.y1 <= plotTop + 2 * TOL && lower.y0 < plotTop + TOL) {
          // Both above the plot: lift the upper one if it can move, else the lower one down (no).
          if (movable(upper) && moveY(upper, px)) return update;
          if (movable(lower) && lower.y1 <= plotTop + TOL) {
            // a menu below a subplot title: put the menu above it
            if (moveY(lower, (lower.y1 - upper.y0) + 4)) return update;
          }
        }
        if (lower.y0 >= plotBottom - 2 * TOL || upper.y0 >= plotBottom - 2 * TOL) {
          // Below the plot: push the lower one (and the figure's bottom) down.
          if (movable(lower)) {
            moveY(lower, -px);
            list.forEach(function (other) {
              if (other !== lower && movable(other) && other.y0 >= lower.y0 - TOL &&
                  !(other.kind === lower.kind && other.ref === lower.ref)) moveY(other, -px);
            });
            grow('bottom', px);
            return update;
          }
          if (movable(upper)) {
            // e.g. a legend just below the plot, over the x-axis title: below that title
            var pxDown = lower.y1 - upper.y0 + 4;
            moveY(upper, -pxDown);
            list.forEach(function (other) {
              if (other !== upper && movable(other) && other.y0 >= upper.y0 - TOL &&
                  !(other.kind === upper.kind && other.ref === upper.ref)) moveY(other, -pxDown);
            });
            grow('bottom', pxDown);
            return update;
          }
        }
        if (movable(upper) && moveY(upper, px)) return update;
        if (A.kind === 'annotation' && B.kind === 'annotation' && A.y0 >= plotBottom - TOL &&
            B.y0 >= plotBottom - TOL) {
          // Two notes side by side below the plot (e.g. two config.json blocks): one under the other.
          var left = A.x0 <= B.x0 ? A : B;
          var right = left === A ? B : A;
          var drop = left.y1 + 8 - right.y0;
          update['annotations[' + right.ref + '].x'] = full.annotations[left.ref].x;
          update['annotations[' + right.ref + '].xanchor'] = full.annotations[left.ref].xanchor;
          update['annotations[' + right.ref + '].y'] = full.annotations[right.ref].y - drop / size.h;
          grow('bottom', drop);
          return update;
        }
        if (A.kind === 'annotation' && B.kind === 'annotation') {
          // Two notes on one row (subplot titles): a smaller font for both.
          [A, B].forEach(function (note) {
            var n = full.annotations[note.ref];
            update['annotations[' + note.ref + '].font.size'] = Math.max(9, (n.font.size || 12) - 1);
          });
          if ((full.annotations[A.ref].font.size || 12) > 9) return update;
        }
      }
    }
    return Object.keys(update).length ? update : null;
  }

  // A phone's title sits at the figure's top; what the fitting left between it and the first box
  // below it (legend, menu, subplot title or plot) beyond 14 px is given back.
  function tighten(gd, Plotly) {
    var full = gd._fullLayout;
    if (!full || full.width >= NARROW) return Promise.resolve();
    var list = boxes(gd);
    var titles = list.filter(function (b) { return b.kind === 'title'; });
    if (!titles.length) return Promise.resolve();
    var titleBottom = Math.max.apply(null, titles.map(function (b) { return b.y1; }));
    var below = list.filter(function (b) { return b.kind !== 'title' && b.y1 > titleBottom; });
    var firstBelow = Math.min.apply(null, below.map(function (b) { return b.y0; }).concat([full._size.t]));
    var gap = Math.floor(firstBelow - titleBottom - 14);
    if (gap < 8 || full.margin.t - gap < 20) return Promise.resolve();
    var update = { 'margin.t': full.margin.t - gap, height: full.height - gap };
    gd.style.height = update.height + 'px';
    return Plotly.relayout(gd, update);
  }

  function fit(gd, Plotly, rounds) {
    gd.setAttribute('data-fit-rounds', String(16 - rounds));
    if (rounds <= 0 || !gd._fullLayout) return Promise.resolve();
    var update = remedy(gd);
    if (!update) return tighten(gd, Plotly);
    if (update.height) gd.style.height = update.height + 'px';
    return Plotly.relayout(gd, update).then(function () { return fit(gd, Plotly, rounds - 1); });
  }

  // --- light and dark -----------------------------------------------------------------------------

  var DARK = { ink: '#e6edf3', muted: '#9da7b3', grid: '#30363d', line: '#6e7681', paper: 'rgba(0,0,0,0)',
    menu: '#21262d', legend: 'rgba(20,24,30,0.85)' };
  var INKS = ['#1f2328', '#000000', '#000', 'black'];

  function dark() { return document.documentElement.getAttribute('data-theme') === 'dark'; }

  // The relayout that dresses a drawn figure for the dark theme.
  function darkUpdate(gd) {
    var full = gd._fullLayout;
    var u = {
      paper_bgcolor: DARK.paper, plot_bgcolor: DARK.paper, 'font.color': DARK.ink,
      'legend.bgcolor': DARK.legend, 'legend.font.color': DARK.ink, 'title.font.color': DARK.ink,
    };
    Object.keys(full).forEach(function (key) {
      if (/^[xy]axis\d*$/.test(key)) {
        u[key + '.gridcolor'] = DARK.grid;
        u[key + '.zerolinecolor'] = DARK.line;
        u[key + '.linecolor'] = DARK.line;
        u[key + '.tickcolor'] = DARK.line;
        u[key + '.tickfont.color'] = DARK.ink;
        u[key + '.title.font.color'] = DARK.ink;
      }
      if (/^scene\d*$/.test(key)) {
        ['xaxis', 'yaxis', 'zaxis'].forEach(function (ax) {
          u[key + '.' + ax + '.gridcolor'] = DARK.grid;
          u[key + '.' + ax + '.backgroundcolor'] = DARK.paper;
          u[key + '.' + ax + '.color'] = DARK.ink;
        });
      }
    });
    (full.updatemenus || []).forEach(function (menu, i) {
      u['updatemenus[' + i + '].bgcolor'] = DARK.menu;
      u['updatemenus[' + i + '].font.color'] = DARK.ink;
    });
    (full.sliders || []).forEach(function (slider, i) {
      u['sliders[' + i + '].bgcolor'] = DARK.menu;
      u['sliders[' + i + '].font.color'] = DARK.ink;
      u['sliders[' + i + '].currentvalue.font.color'] = DARK.ink;
      u['sliders[' + i + '].tickcolor'] = DARK.line;
    });
    (full.annotations || []).forEach(function (note, i) {
      var color = note.font && note.font.color;
      if (!color || INKS.indexOf(String(color).toLowerCase()) >= 0 || color === '#57606a') {
        u['annotations[' + i + '].font.color'] = color === '#57606a' ? DARK.muted : DARK.ink;
      }
    });
    return u;
  }

  function darkRestyle(gd) {
    var updates = [];
    (gd.data || []).forEach(function (trace, i) {
      ['line', 'marker'].forEach(function (part) {
        var color = trace[part] && trace[part].color;
        if (typeof color === 'string' && INKS.indexOf(color.toLowerCase()) >= 0) {
          var u = {};
          u[part + '.color'] = DARK.ink;
          updates.push([u, [i]]);
        }
      });
      if (trace.colorbar || trace.type === 'heatmap') {
        updates.push([{ 'colorbar.tickfont.color': DARK.ink, 'colorbar.title.font.color': DARK.ink }, [i]]);
      }
    });
    return updates;
  }

  // The current values of an update's keys, to undo it.
  function snapshot(obj, update) {
    var back = {};
    Object.keys(update).forEach(function (key) {
      var value = obj;
      key.replace(/\[(\d+)\]/g, '.$1').split('.').forEach(function (part) {
        value = value === undefined || value === null ? undefined : value[part];
      });
      back[key] = value === undefined ? null : value;
    });
    return back;
  }

  // A dropdown's arrow (▼) keeps the colour its menu had when first drawn (plotly styles it only
  // when it creates it): it takes its menu's colour again after each change of theme.
  function paintMenuArrows(gd) {
    var menus = (gd._fullLayout && gd._fullLayout.updatemenus) || [];
    gd.querySelectorAll('.updatemenu-header-group').forEach(function (group, i) {
      var menu = group.__data__ || menus[i];
      var arrow = group.querySelector('.updatemenu-header-arrow');
      if (arrow && menu && menu.font && menu.font.color) arrow.style.fill = menu.font.color;
    });
  }

  function applyTheme(gd, Plotly) {
    var want = dark() ? 'dark' : 'light';
    var now = gd.getAttribute('data-figure-theme') || 'light';
    if (want === now || !gd._fullLayout) return Promise.resolve();
    gd.setAttribute('data-figure-theme', want);
    var done = function () { paintMenuArrows(gd); };
    if (want === 'dark') {
      var update = darkUpdate(gd);
      var restyles = darkRestyle(gd);
      gd._posencLight = {
        layout: snapshot(gd.layout, update),
        restyles: restyles.map(function (r) { return [snapshot(gd.data[r[1][0]], r[0]), r[1]]; }),
      };
      return Plotly.relayout(gd, update).then(function () {
        return Promise.all(restyles.map(function (r) { return Plotly.restyle(gd, r[0], r[1]); }));
      }).then(done);
    }
    var light = gd._posencLight || { layout: {}, restyles: [] };
    return Plotly.relayout(gd, light.layout).then(function () {
      return Promise.all(light.restyles.map(function (r) { return Plotly.restyle(gd, r[0], r[1]); }));
    }).then(done);
  }

  // A slider step or menu entry of method "update" may replace a whole axis or the annotations
  // (chapter 1's orderings, chapter 9's scale menu): in the dark theme the figure is dressed again.
  function keepTheme(gd, Plotly) {
    if (gd._posencKeepsTheme || !gd.on) return;
    gd._posencKeepsTheme = true;
    gd.on('plotly_afterplot', function () { inkOnData(gd); });
    gd.on('plotly_update', function () {
      if (!dark() || gd.getAttribute('data-figure-theme') !== 'dark') return;
      Plotly.relayout(gd, darkUpdate(gd)).then(function () { paintMenuArrows(gd); });
    });
  }

  // --- text drawn on the data: black or white, whichever contrasts more with what is under it ----
  // Heatmap cell labels (plotly picks white or #444 by a brightness rule: 3.2:1 on mid-viridis) and
  // labels printed on markers (chapter 6's white digits on orange and yellow dots, 2.3:1 and 1.3:1).
  // The better of black and white always reaches 4.58:1 (WCAG 2.x contrast), in either theme.

  function channels(css) {
    var m = /rgba?\(([^)]+)\)/.exec(css || '');
    if (!m) return null;
    return m[1].split(/[ ,/]+/).filter(Boolean).slice(0, 3).map(Number);
  }

  function luminance(rgb) {
    var lin = rgb.map(function (c) {
      c /= 255;
      return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
  }

  function inkFor(rgb) {
    var l = luminance(rgb);
    return (1.05 / (l + 0.05)) >= ((l + 0.05) / 0.05) ? '#ffffff' : '#000000';
  }

  function centre(el) {
    var r = el.getBoundingClientRect();
    return { x: (r.left + r.right) / 2, y: (r.top + r.bottom) / 2 };
  }

  function inkOnMarkers(gd) {
    gd.querySelectorAll('.scatterlayer .trace').forEach(function (trace) {
      var labels = trace.querySelectorAll('.textpoint text');
      if (!labels.length) return;
      var points = Array.prototype.map.call(trace.querySelectorAll('.points path.point'), function (pt) {
        return { box: pt.getBoundingClientRect(), fill: channels(getComputedStyle(pt).fill) };
      });
      labels.forEach(function (label) {
        var c = centre(label);
        points.forEach(function (pt) {
          var b = pt.box;
          if (pt.fill && c.x >= b.left && c.x <= b.right && c.y >= b.top && c.y <= b.bottom) {
            label.style.fill = inkFor(pt.fill);
          }
        });
      });
    });
  }

  // A heatmap is drawn as an <image> of one pixel per cell (a data: URL, so readable).
  function inkOnHeatmaps(gd) {
    var jobs = Array.prototype.map.call(gd.querySelectorAll('.heatmaplayer .hm'), function (hm) {
      var labels = hm.querySelectorAll('.heatmap-label text');
      var image = hm.querySelector('image');
      var href = image && (image.getAttribute('href') || image.getAttribute('xlink:href'));
      if (!labels.length || !href || href.indexOf('data:') !== 0) return Promise.resolve();
      var picture = new Image();
      picture.src = href;
      return picture.decode().then(function () {
        var canvas = document.createElement('canvas');
        canvas.width = picture.naturalWidth;
        canvas.height = picture.naturalHeight;
        var ctx = canvas.getContext('2d', { willReadFrequently: true });
        ctx.drawImage(picture, 0, 0);
        var box = image.getBoundingClientRect();
        labels.forEach(function (label) {
          var c = centre(label);
          var x = Math.floor((c.x - box.left) / box.width * canvas.width);
          var y = Math.floor((c.y - box.top) / box.height * canvas.height);
          if (x < 0 || y < 0 || x >= canvas.width || y >= canvas.height) return;
          var px = ctx.getImageData(x, y, 1, 1).data;
          if (px[3] > 0) label.style.fill = inkFor([px[0], px[1], px[2]]);
        });
      });
    });
    return Promise.all(jobs);
  }

  function inkOnData(gd) {
    inkOnMarkers(gd);
    return inkOnHeatmaps(gd).catch(function (error) { console.warn('figure ' + gd.id + ': ' + error); });
  }

  // --- sliders reachable by keyboard ---------------------------------------------------------------

  // What plotly does when a slider step or menu button is picked (Plots.executeAPICommands, which
  // the partial bundle does not export): the step's method called with its args.
  function executeStep(gd, Plotly, method, args) {
    args = Array.isArray(args) ? args : [];
    switch (method) {
      case 'restyle': return Plotly.restyle(gd, args[0], args[1]);
      case 'relayout': return Plotly.relayout(gd, args[0]);
      case 'update': return Plotly.update(gd, args[0], args[1], args[2]);
      case 'animate': return Plotly.animate(gd, args[0], args[1]);
      case 'skip': case undefined: case null: return Promise.resolve();
      default: return Promise.reject(new Error('slider step method ' + method + ' is not handled'));
    }
  }

  function runStep(gd, Plotly, sliderIndex, stepIndex) {
    var slider = gd._fullLayout.sliders[sliderIndex];
    var step = slider.steps[stepIndex];
    var update = {};
    update['sliders[' + sliderIndex + '].active'] = stepIndex;
    var run = executeStep(gd, Plotly, step.method, step.args);
    return run.then(function () { return Plotly.relayout(gd, update); }).then(function () {
      gd.emit && gd.emit('plotly_sliderchange', { slider: slider, step: step, interaction: false });
    });
  }

  function addSliderInputs(gd, Plotly) {
    var sliders = (gd._fullLayout && gd._fullLayout.sliders) || [];
    if (!sliders.length || gd.parentNode.querySelector('.posenc-slider-input[data-figure="' + gd.id + '"]')) return;
    sliders.forEach(function (slider, i) {
      var input = document.createElement('input');
      input.type = 'range';
      input.className = 'posenc-slider-input';
      input.setAttribute('data-figure', gd.id);
      input.setAttribute('data-slider', String(i));
      input.min = '0';
      input.max = String(slider.steps.length - 1);
      input.step = '1';
      input.value = String(slider.active || 0);
      var prefix = (slider.currentvalue && slider.currentvalue.prefix) || 'slider ' + (i + 1);
      var figureTitle = titleText(gd._fullLayout.title).replace(/<[^>]*>/g, ' ');
      input.setAttribute('aria-label', prefix.replace(/[:=\s]+$/, '') + ' — ' + figureTitle);
      var label = function () {
        var step = gd._fullLayout.sliders[i].steps[+input.value];
        input.setAttribute('aria-valuetext', prefix + (step ? step.label : input.value));
      };
      label();
      input.addEventListener('input', function () {
        runStep(gd, Plotly, i, +input.value).then(label);
      });
      var group = function () { return gd.querySelectorAll('.slider-group')[i]; };
      input.addEventListener('focus', function () { var g = group(); if (g) g.classList.add('posenc-focus'); });
      input.addEventListener('blur', function () { var g = group(); if (g) g.classList.remove('posenc-focus'); });
      gd.parentNode.insertBefore(input, gd.nextSibling);
    });
    gd.on('plotly_sliderchange', function (event) {
      var index = (gd._fullLayout.sliders || []).indexOf(event.slider);
      var inputs = gd.parentNode.querySelectorAll('.posenc-slider-input[data-figure="' + gd.id + '"]');
      inputs.forEach(function (input) {
        var i = +input.getAttribute('data-slider');
        if (index === -1 || index === i) input.value = String(gd._fullLayout.sliders[i].active || 0);
      });
    });
  }

  // Each dropdown menu gets a real (visually hidden) <select>: plotly's menus are SVG that Tab never
  // reaches. Picking an option runs that button's method, as a click on it would.
  function runButton(gd, Plotly, menuIndex, buttonIndex) {
    var menu = gd._fullLayout.updatemenus[menuIndex];
    var button = menu.buttons[buttonIndex];
    var update = {};
    update['updatemenus[' + menuIndex + '].active'] = buttonIndex;
    return executeStep(gd, Plotly, button.method, button.args)
      .then(function () { return Plotly.relayout(gd, update); });
  }

  function addMenuInputs(gd, Plotly) {
    var menus = (gd._fullLayout && gd._fullLayout.updatemenus) || [];
    if (!menus.length || gd.parentNode.querySelector('.posenc-menu-input[data-figure="' + gd.id + '"]')) return;
    var figureTitle = titleText(gd._fullLayout.title).replace(/<[^>]*>/g, ' ');
    menus.forEach(function (menu, i) {
      if (!menu.visible && menu.visible !== undefined) return;
      var select = document.createElement('select');
      select.className = 'posenc-menu-input';
      select.setAttribute('data-figure', gd.id);
      select.setAttribute('data-menu', String(i));
      select.setAttribute('aria-label', 'menu ' + (i + 1) + ' — ' + figureTitle);
      menu.buttons.forEach(function (button, k) {
        var option = document.createElement('option');
        option.value = String(k);
        option.textContent = String(button.label || 'option ' + (k + 1)).replace(/<[^>]*>/g, ' ');
        select.appendChild(option);
      });
      select.value = String(menu.active || 0);
      select.addEventListener('change', function () { runButton(gd, Plotly, i, +select.value); });
      // Only dropdowns have a header (a row of buttons has none): the i-th menu's is the n-th one.
      var n = menus.slice(0, i).filter(function (m) { return m.type !== 'buttons'; }).length;
      var header = function () {
        return menu.type === 'buttons' ? null : gd.querySelectorAll('.menulayer .updatemenu-header-group')[n];
      };
      select.addEventListener('focus', function () { var h = header(); if (h) h.classList.add('posenc-focus'); });
      select.addEventListener('blur', function () { var h = header(); if (h) h.classList.remove('posenc-focus'); });
      gd.parentNode.insertBefore(select, gd.nextSibling);
    });
    gd.on('plotly_buttonclicked', function () {
      gd.parentNode.querySelectorAll('.posenc-menu-input[data-figure="' + gd.id + '"]')
        .forEach(function (select) {
          var menu = gd._fullLayout.updatemenus[+select.getAttribute('data-menu')];
          if (menu) select.value = String(menu.active || 0);
        });
    });
  }

  // --- drawing ---------------------------------------------------------------------------------------

  function layoutFor(gd, figure) {
    var layout = copy(figure.layout || {});
    var width = gd.getBoundingClientRect().width || window.innerWidth;
    var data = figure.data;
    if (width < NARROW) {
      layout = narrowLayout(layout, width);
      data = narrowTraces(copy(figure.data), layout);
    }
    if (TOUCH) {
      layout.dragmode = false;
      (layout.scene ? [layout.scene] : []).forEach(function (scene) { scene.dragmode = scene.dragmode || 'orbit'; });
    }
    if (layout.height) gd.style.height = layout.height + 'px';
    return { data: data, layout: layout, width: width };
  }

  function configFor(figure, width) {
    var config = Object.assign({}, figure.config || {}, { scrollZoom: false });
    var menus = (figure.layout && figure.layout.updatemenus) || [];
    // The mode bar would sit over the menus, and a phone has no hover to reveal it.
    if (TOUCH || width < NARROW || menus.length) config.displayModeBar = false;
    return config;
  }

  function render(gd, figure, Plotly) {
    var fitted = layoutFor(gd, figure);
    widths[gd.id] = fitted.width;
    gd.removeAttribute('data-figure-theme');
    return Plotly.react(gd, fitted.data, fitted.layout, configFor(figure, fitted.width))
      .then(function () { return fit(gd, Plotly, 16); })
      .then(function () { return applyTheme(gd, Plotly); })
      .then(function () { return inkOnData(gd); })
      .then(function () {
        keepTheme(gd, Plotly);
        addSliderInputs(gd, Plotly);
        addMenuInputs(gd, Plotly);
        gd.setAttribute('data-fitted', '1');
      });
  }

  function draw(div) {
    if (div.getAttribute('data-drawn')) return;
    var source = document.querySelector('script[data-plotly-figure="' + div.id + '"]');
    if (!source) return;
    div.setAttribute('data-drawn', '1');
    // The figure's data and plotly.js load side by side.
    Promise.all([figureData(source, div.id), plotly()]).then(function (loaded) {
      originals[div.id] = loaded[0];
      return render(div, loaded[0], loaded[1]);
    }).catch(function (error) {
      // A figure that could not be fitted is still drawn; the console says why.
      console.error('figure ' + div.id + ': ' + error);
      div.setAttribute('data-fitted', 'error');
    });
  }

  // When the theme changes, every drawn figure follows.
  new MutationObserver(function () {
    if (!window.Plotly) return;
    Object.keys(originals).forEach(function (id) {
      var gd = document.getElementById(id);
      if (gd && gd.getAttribute('data-fitted')) applyTheme(gd, window.Plotly);
    });
  }).observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });

  // A figure that changes sides of the narrow breakpoint (a phone turned) is laid out again.
  var resizeTimer = null;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      if (!window.Plotly) return;
      Object.keys(originals).forEach(function (id) {
        var gd = document.getElementById(id);
        if (!gd || !gd.getAttribute('data-fitted')) return;
        var width = gd.getBoundingClientRect().width;
        if ((width < NARROW) !== (widths[id] < NARROW) || Math.abs(width - widths[id]) > 40) {
          render(gd, originals[id], window.Plotly);
        }
      });
    }, 250);
  });

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
