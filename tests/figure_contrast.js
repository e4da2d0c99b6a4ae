// Evaluated in a book page by tests/test_browser.py to measure, for every piece of a figure's
// text, its contrast with the colour actually painted behind it (WCAG 2.x contrast ratio).
// Two calls around a screenshot of the figure taken with its text hidden:
//   collect(gd)            -> the text pieces: their box (relative to the figure) and colour,
//                             and hides the figure's text for the screenshot;
//   measure(pieces, png)   -> shows the text again; for each piece the backdrop (the median
//                             pixel of its box in the screenshot) and the contrast ratio.
// The screenshot is what the reader sees behind the text: the page, the theme's output box, the
// figure's paper, plot area, legend or menu background, a heatmap's cells.
({
  collect: (gd) => {
    const frame = gd.getBoundingClientRect();
    const parse = (css) => {
      const m = /rgba?\(([^)]+)\)/.exec(css || '');
      if (!m) return null;
      const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
    };
    const pieces = [];
    gd.querySelectorAll('svg text').forEach((el) => {
      const text = (el.textContent || '').trim();
      if (!text) return;
      const style = getComputedStyle(el);
      if (style.display === 'none' || style.visibility === 'hidden') return;
      const r = el.getBoundingClientRect();
      if (r.width < 2 || r.height < 4) return;
      if (r.right < frame.left || r.left > frame.right || r.bottom < frame.top || r.top > frame.bottom) return;
      const fill = parse(style.fill);
      if (!fill) return;
      // The text's own opacity and that of every group it is drawn in.
      let alpha = fill[3] * (+style.fillOpacity);
      for (let node = el; node && node !== gd; node = node.parentElement) {
        alpha *= +getComputedStyle(node).opacity;
      }
      if (alpha < 0.05) return;
      const kind = el.closest('.legend') ? 'legend' : el.closest('.slider-group') ? 'slider'
        : el.closest('.updatemenu-container, .menulayer') ? 'menu'
        : el.closest('.annotation') ? 'annotation' : el.closest('.g-gtitle') ? 'title'
        : el.closest('.colorbar') ? 'colour bar'
        : el.closest('.xtick, .ytick, .xaxislayer-above, .yaxislayer-above') ? 'tick label'
        : el.closest('[class$="title"]') ? 'axis title' : 'text';
      pieces.push({
        kind, text: text.slice(0, 40), colour: fill.slice(0, 3), alpha,
        x0: Math.max(0, r.left - frame.left), y0: Math.max(0, r.top - frame.top),
        x1: Math.min(frame.width, r.right - frame.left), y1: Math.min(frame.height, r.bottom - frame.top),
      });
    });
    gd.setAttribute('data-contrast-probe', '1');
    const hide = document.createElement('style');
    hide.id = 'contrast-probe-style';
    hide.textContent = '[data-contrast-probe] svg text { visibility: hidden !important; }';
    document.head.appendChild(hide);
    return pieces;
  },
  measure: async ([gdSelector, pieces, png]) => {
    document.querySelectorAll(gdSelector).forEach((gd) => gd.removeAttribute('data-contrast-probe'));
    const style = document.getElementById('contrast-probe-style');
    if (style) style.remove();
    const image = new Image();
    image.src = 'data:image/png;base64,' + png;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.naturalWidth;
    canvas.height = image.naturalHeight;
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    ctx.drawImage(image, 0, 0);
    const linear = (c) => { c /= 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    const luminance = (rgb) => 0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2]);
    return pieces.map((p) => {
      const x0 = Math.floor(p.x0), y0 = Math.floor(p.y0);
      const w = Math.max(1, Math.min(canvas.width - x0, Math.ceil(p.x1) - x0));
      const h = Math.max(1, Math.min(canvas.height - y0, Math.ceil(p.y1) - y0));
      const data = ctx.getImageData(x0, y0, w, h).data;
      const pixels = [];
      for (let i = 0; i < data.length; i += 4) pixels.push([data[i], data[i + 1], data[i + 2]]);
      pixels.sort((a, b) => luminance(a) - luminance(b));
      const backdrop = pixels[Math.floor(pixels.length / 2)];
      // The text's colour as painted: its alpha blended over the backdrop.
      const ink = p.colour.map((c, i) => c * p.alpha + backdrop[i] * (1 - p.alpha));
      const [hi, lo] = [luminance(ink), luminance(backdrop)].sort((a, b) => b - a);
      return { ...p, backdrop, ratio: (hi + 0.05) / (lo + 0.05) };
    });
  },
})
