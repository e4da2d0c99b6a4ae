// The search page's result snippets (added to search.html only, by _ext/offline_assets.py).
// Search results' snippets (search.html). Sphinx's searchtools.js looks in the page's text for the
// query's *stemmed* words ("rotari" for "rotary"): when none is found, it shows the first 240
// characters of the page, which here are the header's buttons ("...Binder"). Its text also holds
// the math as raw TeX (\(\theta_i = b^{-2i/d}\)). Here a snippet is cut from the article's text
// around the first query word as typed (or a word starting with its stem), math written plainly.
(function () {
  'use strict';
  if (typeof Search === 'undefined' || !Search.makeSearchSummary) return;  // searchtools.js absent
  var SYMBOLS = {
    alpha: 'α', beta: 'β', gamma: 'γ', delta: 'δ', epsilon: 'ε', varepsilon: 'ε', zeta: 'ζ',
    eta: 'η', theta: 'θ', vartheta: 'θ', iota: 'ι', kappa: 'κ', lambda: 'λ', mu: 'μ', nu: 'ν',
    xi: 'ξ', pi: 'π', rho: 'ρ', sigma: 'σ', tau: 'τ', phi: 'φ', varphi: 'φ', chi: 'χ', psi: 'ψ',
    omega: 'ω', Gamma: 'Γ', Delta: 'Δ', Theta: 'Θ', Lambda: 'Λ', Pi: 'Π', Sigma: 'Σ', Phi: 'Φ',
    Psi: 'Ψ', Omega: 'Ω', cdot: '·', times: '×', le: '≤', leq: '≤', ge: '≥', geq: '≥', ne: '≠',
    neq: '≠', approx: '≈', sim: '∼', infty: '∞', to: '→', rightarrow: '→', sum: 'Σ', prod: 'Π',
    int: '∫', ldots: '…', dots: '…', cdots: '⋯', top: 'ᵀ', in: '∈', pm: '±', sqrt: '√',
    partial: '∂', nabla: '∇', odot: '⊙', otimes: '⊗', mid: '|', lVert: '‖', rVert: '‖',
    log: 'log', ln: 'ln', exp: 'exp', sin: 'sin', cos: 'cos', max: 'max', min: 'min',
    quad: ' ', qquad: ' ', ',': ' ', ';': ' ', '!': '', ' ': ' ',
  };
  function plainMath(tex) {
    var out = tex;
    for (var i = 0; i < 3; i++) {  // nested \frac{..}{..} and \mathrm{..}
      out = out.replace(/\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, '($1)/($2)')
        .replace(/\\(?:mathrm|text|mathbf|mathit|mathcal|operatorname|boldsymbol|bm)\s*\{([^{}]*)\}/g, '$1');
    }
    return out.replace(/\\(?:left|right|big|Big|bigg|Bigg)\b/g, '')
      .replace(/\\([a-zA-Z]+|[,;! ])/g, function (m, name) { return SYMBOLS[name] !== undefined ? SYMBOLS[name] : ''; })
      .replace(/[{}]/g, '').replace(/\s+/g, ' ').trim();
  }
  function plainText(text) {
    return text.replace(/\\\((.*?)\\\)|\\\[(.*?)\\\]|\$\$(.*?)\$\$/gs, function (m, a, b, c) {
      return plainMath(a || b || c || '');
    }).replace(/\s+/g, ' ').trim();
  }
  var typed = (new URLSearchParams(window.location.search).get('q') || '').toLowerCase()
    .split(/\s+/).filter(function (w) { return w.length > 1; });
  Search.makeSearchSummary = function (htmlString, keywords, anchor) {
    var doc = new DOMParser().parseFromString(htmlString, 'text/html');
    ['.headerlink', 'script', 'style'].forEach(function (q) {
      doc.querySelectorAll(q).forEach(function (el) { el.remove(); });
    });
    var main = doc.querySelector('[role="main"]');
    var block = (anchor && main && main.querySelector(anchor)) ||
      doc.querySelector('.bd-article') || main;
    if (!block) return null;
    var text = plainText(block.textContent);
    if (!text) return null;
    var lower = text.toLowerCase();
    var stems = Array.prototype.slice.call(keywords || []).map(function (k) { return String(k).toLowerCase(); });
    var at = -1;
    typed.concat(stems).some(function (word) { at = lower.indexOf(word); return at > -1; });
    var start = at > 60 ? at - 60 : 0;
    var summary = document.createElement('p');
    summary.classList.add('context');
    summary.textContent = (start > 0 ? '…' : '') + text.substr(start, 240).trim() +
      (start + 240 < text.length ? '…' : '');
    return summary;
  };
})();
