// The live explorers' figure view (posenc_lib/widgets/_live.py): an anywidget module.
//
// plotly.js comes once per page from a shared PlotlyLibrary model (posenc_lib's partial bundle,
// 1.8 MB, stored once per notebook, not once per figure), is evaluated once and kept on
// globalThis, and every figure model sends its figure as JSON; Plotly.react redraws in place.
const KEY = "__posencPlotly";

async function plotly(model) {
  const reference = model.get("library");
  const id = reference.slice("IPY_MODEL_".length);
  const library = await model.widget_manager.get_model(id);
  const version = library.get("version");
  const cache = (globalThis[KEY] = globalThis[KEY] || {});
  if (!cache[version]) {
    const source = library.get("source");
    cache[version] = new Function(source + "\n;return Plotly;")();
  }
  return cache[version];
}

async function render({ model, el }) {
  const Plotly = await plotly(model);
  const div = document.createElement("div");
  div.style.width = "100%";
  el.appendChild(div);
  let drawn = Promise.resolve();
  const draw = () => {
    const figure = JSON.parse(model.get("figure"));
    // One redraw at a time, in order: a fast slider never interleaves two Plotly.react calls.
    drawn = drawn.then(() =>
      Plotly.react(div, figure.data, figure.layout || {}, figure.config || {})
    );
    return drawn;
  };
  await draw();
  model.on("change:figure", draw);
  const resize = new ResizeObserver(() => Plotly.Plots.resize(div));
  resize.observe(el);
  return () => {
    resize.disconnect();
    model.off("change:figure", draw);
    Plotly.purge(div);
  };
}

export default { render };
