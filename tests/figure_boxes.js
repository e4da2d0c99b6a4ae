// Evaluated in a book page by tests/test_browser.py: for every drawn plotly figure, the boxes of
// its text (title, axis titles, annotations such as subplot titles, legend, dropdown menus,
// slider labels and current value, colour bars), and the problems found: two boxes that overlap,
// or a box cut by the figure's edge. Returns [{index, title, boxes, problems}].
(() => {
  const TOL = 1.5;  // px: anti-aliasing and glyph overhang are not collisions
  const visible = (el) => {
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden' || +style.opacity === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0.5 && r.height > 0.5 && (el.textContent || '').trim() !== '' ||
      (el.tagName !== 'text' && r.width > 0.5 && r.height > 0.5);
  };
  const rect = (el) => {
    const r = el.getBoundingClientRect();
    return { x0: r.left, y0: r.top, x1: r.right, y1: r.bottom };
  };
  const overlap = (a, b) => {
    const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
    const h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
    return w > TOL && h > TOL;
  };
  // Pairs that are not checked: tick labels among themselves (plotly spaces them), and what is
  // drawn in a plot on purpose (annotations, axis titles and tick labels hug or sit on it).
  const SKIP = new Set(['tick label|tick label', 'plot area|plot area', 'annotation|plot area',
    'axis title|plot area', 'plot area|tick label', 'annotation|tick label']);
  // A slider's rail and grip against its own labels: plotly lays those out around each other.
  const sameSlider = (a, b) => (a.kind === 'slider rail' || b.kind === 'slider rail') &&
    a.group.split('.')[0] === b.group.split('.')[0];
  const mayMeet = (a, b) => !SKIP.has([a.kind, b.kind].sort().join('|')) && !sameSlider(a, b);
  return Array.from(document.querySelectorAll('.plotly-graph-div')).map((gd, index) => {
    const boxes = [];
    const add = (kind, group, el) => {
      if (!el || !visible(el)) return;
      const text = (el.textContent || '').trim().slice(0, 40);
      boxes.push({ kind, group, text, ...rect(el) });
    };
    const q = (sel) => Array.from(gd.querySelectorAll(sel));
    // The 3-D scene's own axis labels are WebGL-drawn or SVG in the scene; titles are SVG.
    q('.infolayer .g-gtitle text').forEach((el) => add('title', 'title', el));
    q('.infolayer [class^="g-"][class$="title"] text, .infolayer [class*="g-x"][class$="title"] text')
      .forEach((el, i) => {
        if (!el.closest('.g-gtitle')) add('axis title', 'axis' + i, el);
      });
    q('.infolayer .annotation').forEach((el, i) => add('annotation', 'ann' + i, el.querySelector('.annotation-text-g') || el));
    q('.infolayer .legend').forEach((el, i) => {
      // its background and every entry (entries can spill past a background sized too early)
      add('legend', 'legend' + i, el.querySelector('.bg') || el);
      el.querySelectorAll('.traces').forEach((t) => add('legend', 'legend' + i, t));
    });
    q('.menulayer .updatemenu-header-group, .menulayer .updatemenu-button-group > .updatemenu-button')
      .forEach((el, i) => { if (!el.closest('.updatemenu-dropdown-button-group')) add('menu', 'menu' + i, el); });
    q('.slider-group').forEach((slider, s) => {
      // its current value and its tick labels
      slider.querySelectorAll('text').forEach((el, i) => add('slider label', `slider${s}.${i}`, el));
      // and its rail and grip, which nothing else may cover
      slider.querySelectorAll('.slider-rail-rect, .slider-grip-rect')
        .forEach((el) => add('slider rail', `slider${s}.rail`, el));
    });
    // a colour bar: its bar, ticks and title together
    q('.infolayer .colorbar').forEach((el, i) => add('colour bar', 'cb' + i, el));
    // each subplot's plot area (the data), and the axes' tick labels
    q('.draglayer .nsewdrag').forEach((el, i) => add('plot area', 'plot' + i, el));
    q('.cartesianlayer .xtick text, .cartesianlayer .ytick text, .cartesianlayer [class*="tick"] text')
      .forEach((el) => add('tick label', 'ticks', el));
    const frame = gd.getBoundingClientRect();
    const problems = [];
    boxes.forEach((a) => {
      if (a.x0 < frame.left - TOL || a.x1 > frame.right + TOL || a.y0 < frame.top - TOL || a.y1 > frame.bottom + TOL) {
        problems.push(`${a.kind} "${a.text}" cut by the figure's edge`);
      }
    });
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        if (a.group === b.group && (a.kind === 'colour bar' || a.kind === 'legend')) continue;
        if (!mayMeet(a, b)) continue;
        if (overlap(a, b)) problems.push(`${a.kind} "${a.text}" overlaps ${b.kind} "${b.text}"`);
      }
    }
    const title = gd._fullLayout && gd._fullLayout.title ? String(gd._fullLayout.title.text || '') : '';
    return { index, title, boxes: boxes.length, problems };
  });
})()
