// Draws every figure on the page: an element with data-figure="ID" gets the plotly figure stored in
// the <script type="application/json" id="ID"> that Django's json_script wrote. A figure that cannot
// be drawn is reported on the console (which the browser tests treat as a failure) and in the page.
(function () {
  "use strict";
  function fail(element, reason) {
    element.dataset.drawn = "failed";
    element.textContent = "This chart could not be drawn.";
    console.error("Figure " + element.dataset.figure + " could not be drawn: " + reason);
  }
  function draw(element) {
    var source = document.getElementById(element.dataset.figure);
    if (!source) { fail(element, "no figure data on the page"); return; }
    var figure;
    try {
      figure = JSON.parse(source.textContent);
    } catch (error) {
      fail(element, "invalid figure JSON (" + error.message + ")");
      return;
    }
    if (!figure || !Array.isArray(figure.data)) { fail(element, "figure has no data array"); return; }
    if (typeof Plotly === "undefined") { fail(element, "plotly.js is not loaded"); return; }
    var layout = figure.layout || {};
    // A figure that sets its own height (one row per model) gets a box of that height.
    if (layout.height) { element.style.minHeight = layout.height + "px"; }
    var config = { responsive: true, displaylogo: false };
    // Narrow screens (phones): smaller margins and fonts, the title wrapped to the width, and the
    // legend in its own band under the plot (one line per entry), so that it never covers the
    // axis labels or the bars; the tool bar, which would cover the title, is left out.
    if (element.clientWidth && element.clientWidth < 500) {
      var entries = figure.data.filter(function (trace) { return trace.showlegend !== false && trace.name; }).length;
      var legendBand = entries > 1 ? 20 * entries + 10 : 0;
      var plotHeight = layout.height || 320;
      layout.margin = Object.assign({}, layout.margin, { l: 40, r: 10, t: 50, b: 50 + legendBand });
      layout.font = Object.assign({}, layout.font, { size: 10 });
      layout.yaxis = Object.assign({}, layout.yaxis, { automargin: true });
      layout.xaxis = Object.assign({}, layout.xaxis, { automargin: true });
      if (legendBand) {
        layout.legend = { orientation: "v", x: 0, xanchor: "left", y: 0, yanchor: "bottom", yref: "container", font: { size: 10 } };
        layout.height = plotHeight + legendBand;
        element.style.minHeight = layout.height + "px";
      }
      if (layout.title && layout.title.text) {
        var words = String(layout.title.text).split(" ");
        var lines = [""];
        words.forEach(function (word) {
          var line = lines[lines.length - 1];
          if (line && (line + " " + word).length > 42) { lines.push(word); } else { lines[lines.length - 1] = line ? line + " " + word : word; }
        });
        layout.title = Object.assign({}, layout.title, { text: lines.join("<br>"), font: { size: 12 }, x: 0, xanchor: "left" });
      }
      config.displayModeBar = false;
      topModelsOnly(element, figure.data);
    }
    Plotly.newPlot(element, figure.data, layout, config)
      .then(function () {
        element.dataset.drawn = "true";
        // A heatmap cell whose customdata is "pair:<query>:<document>" opens the pair view of this page.
        if (element.on) {
          element.on("plotly_click", function (event) {
            var point = event && event.points && event.points[0];
            var parts = point && typeof point.customdata === "string" ? point.customdata.split(":") : [];
            if (parts.length === 3 && parts[0] === "pair") {
              var url = new URL(window.location.href);
              url.searchParams.set("query_language", parts[1]);
              url.searchParams.set("document_language", parts[2]);
              url.hash = "pair-view";
              window.location.href = url.toString();
            }
          });
        }
      })
      .catch(function (error) { fail(element, error && error.message ? error.message : String(error)); });
  }
  // A bar chart of many models (T2: 8 models × 12 languages, 96 bars) is unreadable on a phone: it
  // starts with the first TOP_N models (the figures list the best first) and a button shows them all;
  // the legend still names every model, and a tap on an entry shows or hides it.
  var TOP_N = 3;
  var MAX_BARS = 36;
  function topModelsOnly(element, traces) {
    var bars = traces.filter(function (trace) { return trace.type === "bar"; });
    var count = bars.reduce(function (total, trace) { return total + ((trace.x || trace.y || []).length || 0); }, 0);
    if (bars.length <= TOP_N || count <= MAX_BARS) { return; }
    bars.slice(TOP_N).forEach(function (trace) { trace.visible = "legendonly"; });
    var button = document.createElement("button");
    button.type = "button";
    button.className = "secondary show-all-bars";
    button.textContent = "Show all " + bars.length + " models";
    button.addEventListener("click", function () {
      Plotly.restyle(element, { visible: true });
      button.remove();
    });
    element.insertAdjacentElement("afterend", button);
  }
  function drawAll() { document.querySelectorAll("[data-figure]").forEach(draw); }
  // filters.js swaps the page body in place and asks for the new figures to be drawn.
  window.NirdeshaFigures = { drawAll: drawAll };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", drawAll);
  } else {
    drawAll();
  }
})();
